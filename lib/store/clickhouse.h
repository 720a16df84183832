/*
 * clickhouse.h - profiles in ClickHouse, through its HTTP interface: the
 * schema, pushing a profile whole, and a selection's merged profile back.
 *
 *	struct fk_ch *c = fk_ch_new(&url);                 // store/url.h
 *	if (fk_ch_check_schema(c, &err) < 0) ...           // version 1?
 *	enum fk_ch_pushed how;
 *	if (fk_ch_push(c, profile, labels, from, until, &how, &err) < 0) ...
 *	struct fk_query q = { .match = labels, .by = "host" };
 *	fk_ch_query(c, &q, on_stack, data, &info, &err);   // GROUP BY in ClickHouse
 *	fk_ch_free(c);
 *
 * The schema (version 1; docs/design.md has the reasons and the bytes a
 * row costs):
 *
 *	foldkit_schema   version UInt32, cluster String          one row
 *	foldkit_stacks   key UInt64, stack String,
 *	                 check UInt64 DEFAULT sipHash64(concat('foldkit:', stack))
 *	                 ReplacingMergeTree ORDER BY (key, check) PRIMARY KEY key
 *	foldkit_samples  time DateTime, until DateTime,
 *	                 host, service, process, role, profile, unit String,
 *	                 labels Nested(key String, value String),
 *	                 push UInt64, stack UInt64, value Decimal128(9)
 *	                 MergeTree PARTITION BY toYYYYMMDD(time)
 *	                 ORDER BY (service, profile, time, host, push, stack)
 *
 * A stack's text is stored once under its key (store/stackkey.h: the
 * store's sipHash64() of it); a sample row is one stack of one pushed
 * profile: its window (time is where it starts), its labels (the six
 * standard ones in columns, the user's in labels), the push's id and the
 * stack's key and count.  A count is a Decimal128(9): every count a folded
 * file can hold (integers to 2^64-1, nine decimals) is stored exactly,
 * and sums stay exact to 10^29.
 *
 * With a cluster (fk_ch_init()), every server of it holds
 * foldkit_samples_local and foldkit_stacks_local, and foldkit_samples and
 * foldkit_stacks are Distributed tables over them, samples sharded by
 * cityHash64(host) (a profile's rows land on one shard) and stacks by
 * key (a text is kept on one shard).  Pushes and queries use the same
 * names either way.
 */
#ifndef FOLDKIT_STORE_CLICKHOUSE_H
#define FOLDKIT_STORE_CLICKHOUSE_H

#include "core/count.h"
#include "store/labels.h"
#include "store/profile.h"
#include "store/url.h"

#include <glib.h>
#include <stdbool.h>
#include <stdint.h>

#define FK_CH_SCHEMA_VERSION 1

struct fk_ch;

/* A connection to u's server (u is copied); no request is made yet. */
struct fk_ch *fk_ch_new(const struct fk_store_url *u);
void fk_ch_free(struct fk_ch *c);

/* The server as messages name it (no password). */
const char *fk_ch_server(const struct fk_ch *c);

/*
 * Creates the database and the schema where they are missing, on this
 * server, or with cluster (not NULL) on every server of that cluster as
 * this server's system.clusters lists them, reached at this URL's port
 * with its user (so every server of the fleet must listen there), plus
 * this one.  A schema already there of this version is kept as it is;
 * one of another version, or with another cluster, is an error.  Returns
 * 0 with *said (free with g_free()) a line saying what was done, or -1
 * with *err set.
 */
int fk_ch_init(struct fk_ch *c, const char *cluster, char **said, GError **err);

/*
 * Checks that the database holds a foldkit schema of this version: 0, or
 * -1 with *err set ("SERVER: no foldkit schema in database 'db' (run
 * fold-push --init URL)", or another version's).
 */
int fk_ch_check_schema(struct fk_ch *c, GError **err);

enum fk_ch_pushed {
	FK_CH_STORED,		/* stored now */
	FK_CH_ALREADY,		/* the same profile was there already */
};

/*
 * Stores p with labels l (the six standard keys in their columns, any
 * other in labels) and the window [from, until] (Unix seconds).  The
 * stacks' texts go first (a text stored twice is one after a merge),
 * then every sample row in one INSERT of one block into one partition of
 * one shard, which ClickHouse writes as one part: the profile is stored
 * whole or not at all, and a query never sees half of it.  A profile
 * whose rows are there already (the same labels, window and counts: its
 * push id) is not stored again (*how is FK_CH_ALREADY), so a push that
 * failed part way can simply be run again.  Returns 0, or -1 with *err
 * set (the server's message, naming it).
 */
int fk_ch_push(struct fk_ch *c, const struct fk_profile *p, const struct fk_labels *l,
	       int64_t from, int64_t until, enum fk_ch_pushed *how, GError **err);

/* A selection of stored profiles. */
struct fk_query {
	const struct fk_labels *match;	/* every label must match; a value ""
					   matches profiles without the label */
	bool has_from, has_until;
	int64_t from, until;		/* profiles whose window starts in
					   [from, until) */
	const char *by;			/* a label key to split by, or NULL */
	bool count;			/* count the profiles and rows (a pass
					   more when match fixes the unit and
					   the profile kind) */
};

/* What a query selected. */
struct fk_query_info {
	char *unit;			/* the profiles' unit; NULL when none */
	char *profile;			/* their kind ("on-cpu"), "" when unsaid */
	uint64_t profiles;		/* pushed profiles in the selection, and */
	uint64_t rows;			/* their sample rows, when counted */
	uint64_t stacks;		/* lines of the answer */
};

void fk_query_info_release(struct fk_query_info *info);

/*
 * Gets one merged stack of the answer: its text, its count (the sum over
 * the selection, exact), and with q->by the label's value (else "", 0).
 * Returns 0, or -1 with *err set to stop.
 */
typedef int (*fk_ch_stack_fn)(const char *by, size_t by_len, const char *stack, size_t len,
			      fk_count count, void *data, GError **err);

/*
 * The merged profile of q's selection: ClickHouse sums the samples by
 * stack key (GROUP BY), joins each key to its text, and streams the
 * answer, which fn gets in no particular order (the caller sorts: see
 * core/foldtable.h).  Refused: a selection of more than one unit or
 * profile kind (no sum of nanoseconds and microseconds means anything;
 * checked by a first pass unless q->match fixes both),
 * a key whose stacks table holds two texts (a collision: its samples
 * cannot be told apart) or none, and an answer that is not whole (its
 * totals row missing, or not the sum of its rows).  Returns 0, or -1 with
 * *err set.
 */
int fk_ch_query(struct fk_ch *c, const struct fk_query *q, fk_ch_stack_fn fn, void *data,
		struct fk_query_info *info, GError **err);

/*
 * Parses a Decimal128(9) as ClickHouse prints it ("12.500000000"), up to
 * the largest fk_count; false when s[0..len) is not one.
 */
bool fk_ch_parse_decimal(const char *s, size_t len, fk_count *out);

#endif
