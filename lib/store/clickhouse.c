/*
 * clickhouse.c - the schema's statements, a profile's rows in RowBinary,
 * and the query that merges a selection in the engine.  Statements are
 * made of fixed text and fk_sql_quote()d literals only.
 */
#include "store/clickhouse.h"

#include "core/error.h"
#include "core/textesc.h"
#include "store/chtext.h"
#include "store/http.h"
#include "store/stackkey.h"

#include <string.h>

struct fk_ch {
	struct fk_store_url url;
	struct fk_http *http;
};

struct fk_ch *fk_ch_new(const struct fk_store_url *u)
{
	struct fk_ch *c = g_new0(struct fk_ch, 1);

	fk_store_url_copy(u, &c->url);
	c->http = fk_http_new(u);
	return c;
}

void fk_ch_free(struct fk_ch *c)
{
	if (!c)
		return;
	fk_http_free(c->http);
	fk_store_url_release(&c->url);
	g_free(c);
}

const char *fk_ch_server(const struct fk_ch *c)
{
	return c->url.display;
}

void fk_query_info_release(struct fk_query_info *info)
{
	g_free(info->unit);
	g_free(info->profile);
	memset(info, 0, sizeof(*info));
}

/* ClickHouse's codes for a user it does not let in */
static bool auth_code(int code)
{
	return code == 192 || code == 193 || code == 194 || code == 195 || code == 516;
}

enum { CH_NO_DATABASE = 1 };

struct ch_call {
	const char *sql;		/* in the URL (with a body of data), or */
	bool sql_in_body;		/* as the body */
	const char *settings;		/* "&name=value..." or NULL */
	unsigned flags;
	fk_http_source source;		/* the data after an INSERT's statement */
	void *source_data;
	GString *multipart;		/* or a multipart/form-data body */
	const char *boundary;
	fk_http_sink sink;
	void *sink_data;
	int code;			/* out: the exception's code, or 0 */
};

/* Runs one statement; an answer other than 200 becomes *err with the
 * server's message (and call->code its code). */
static int ch_call(struct fk_ch *c, struct ch_call *call, GError **err)
{
	GString *path = g_string_new("/?");
	struct fk_http_request rq = { 0 };
	struct fk_http_reply rep;
	char *ctype = NULL;
	int rc;

	if (!(call->flags & CH_NO_DATABASE)) {
		g_string_append(path, "database=");
		fk_http_escape(path, c->url.database, strlen(c->url.database));
	}
	if (!call->sql_in_body) {
		g_string_append(path, path->len > 2 ? "&query=" : "query=");
		fk_http_escape(path, call->sql, strlen(call->sql));
	}
	if (call->settings)
		g_string_append(path, call->settings);
	rq.path = path->str;
	if (call->sql_in_body) {
		rq.body = call->sql;
		rq.len = strlen(call->sql);
	}
	rq.source = call->source;
	rq.source_data = call->source_data;
	if (call->multipart) {
		ctype = g_strconcat("multipart/form-data; boundary=", call->boundary, NULL);
		rq.ctype = ctype;
		rq.body = call->multipart->str;
		rq.len = call->multipart->len;
	}
	rq.sink = call->sink;
	rq.sink_data = call->sink_data;
	call->code = 0;
	rc = fk_http_send(c->http, &rq, &rep, err);
	g_string_free(path, TRUE);
	g_free(ctype);
	if (rc < 0)
		return -1;
	if (rep.status != 200) {
		const char *body = rep.body ? rep.body->str : "";
		size_t blen = rep.body ? rep.body->len : 0;
		char *msg = fk_ch_exception(body, blen, &call->code);

		if (!msg) {
			GString *s = g_string_new(NULL);

			blen = MIN(blen, 300);
			while (blen && g_ascii_isspace(body[blen - 1]))
				blen--;
			fk_text_escape(s, body, blen, 0);
			msg = g_strdup_printf("HTTP status %ld%s%s", rep.status, s->len ? ": " : "",
					      s->str);
			g_string_free(s, TRUE);
		}
		if (auth_code(call->code) || rep.status == 401 || rep.status == 403)
			g_set_error(err, FK_ERROR, FK_ERROR_IO, "%s: authentication refused for user '%s': %s",
				    c->url.display, c->url.user ? c->url.user : "default", msg);
		else
			g_set_error(err, FK_ERROR, FK_ERROR_IO, "%s: %s", c->url.display, msg);
		g_free(msg);
		fk_http_reply_release(&rep);
		return -1;
	}
	fk_http_reply_release(&rep);
	return 0;
}

/* A small answer, kept whole (1 MiB at most). */
static int keep_text(const char *buf, size_t len, void *data, GError **err)
{
	GString *s = data;

	if (s->len + len > (1u << 20)) {
		g_set_error(err, FK_ERROR, FK_ERROR_RANGE, "an answer larger than expected");
		return -1;
	}
	g_string_append_len(s, buf, (gssize)len);
	return 0;
}

static int ch_text(struct fk_ch *c, const char *sql, unsigned flags, GString *out, int *code,
		   GError **err)
{
	struct ch_call call = { .sql = sql, .sql_in_body = true, .flags = flags,
				.sink = keep_text, .sink_data = out };
	int rc;

	g_string_truncate(out, 0);
	rc = ch_call(c, &call, err);
	if (code)
		*code = call.code;
	return rc;
}

static int ch_exec(struct fk_ch *c, const char *sql, unsigned flags, GError **err)
{
	GString *out = g_string_new(NULL);
	int rc = ch_text(c, sql, flags, out, NULL, err);

	g_string_free(out, TRUE);
	return rc;
}

static bool parse_u64(const char *s, size_t len, uint64_t *out)
{
	uint64_t v = 0;

	if (len == 0 || len > 20)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (!g_ascii_isdigit(s[i]))
			return false;
		if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	*out = v;
	return true;
}

bool fk_ch_parse_decimal(const char *s, size_t len, fk_count *out)
{
	/* the largest fk_count's whole part, about 1.7e29 */
	const fk_count max_whole = (((fk_count)1 << 126) - 1 + ((fk_count)1 << 126)) / FK_COUNT_ONE;
	const char *dot = memchr(s, '.', len);
	size_t ilen = dot ? (size_t)(dot - s) : len, flen = dot ? len - ilen - 1 : 0;
	fk_count whole = 0, frac = 0;

	if (ilen == 0 || flen > FK_COUNT_FRAC_DIGITS || (dot && flen == 0))
		return false;
	for (size_t i = 0; i < ilen; i++) {
		if (!g_ascii_isdigit(s[i]) || whole > (max_whole - (s[i] - '0')) / 10)
			return false;
		whole = whole * 10 + (s[i] - '0');
	}
	for (size_t i = 0; i < FK_COUNT_FRAC_DIGITS; i++) {
		if (i < flen && !g_ascii_isdigit(dot[1 + i]))
			return false;
		frac = frac * 10 + (i < flen ? dot[1 + i] - '0' : 0);
	}
	*out = whole * FK_COUNT_ONE + frac;
	return true;
}

/* The schema */

static const char samples_columns[] =
	"(time DateTime, until DateTime, host String, service String, process String, "
	"role String, profile String, unit String, labels Nested(key String, value String), "
	"push UInt64, stack UInt64, value Decimal128(9))";

static const char samples_engine[] =
	"MergeTree PARTITION BY toYYYYMMDD(time) "
	"ORDER BY (service, profile, time, host, push, stack)";

/* check: a second hash of the text, made by the server, so that a text
 * is compared by 128 bits where it matters (see text_check()) and the
 * texts themselves are read only to be printed */
static const char stacks_columns[] =
	"(key UInt64, stack String, check UInt64 DEFAULT sipHash64(concat('foldkit:', stack)))";

static const char stacks_engine[] =
	"ReplacingMergeTree ORDER BY (key, check) PRIMARY KEY key";

/* The schema row of the database: 1 with *version and *cluster, 0 when
 * there is none (no database, no table, no row), -1 on another error. */
static int schema_row(struct fk_ch *c, uint32_t *version, char **cluster, GError **err)
{
	GString *out = g_string_new(NULL);
	GError *e = NULL;
	int code = 0, rc;

	*cluster = NULL;
	rc = ch_text(c, "SELECT version, cluster FROM foldkit_schema ORDER BY version DESC LIMIT 1 "
		     "FORMAT TabSeparated", 0, out, &code, &e);
	if (rc < 0) {
		g_string_free(out, TRUE);
		if (code == 60 || code == 81) {	/* no such table, no such database */
			g_error_free(e);
			return 0;
		}
		g_propagate_error(err, e);
		return -1;
	}
	if (out->len == 0) {
		g_string_free(out, TRUE);
		return 0;
	}
	{
		char *tab = memchr(out->str, '\t', out->len);
		uint64_t v;
		GString *cl = g_string_new(NULL);
		size_t end = out->len;

		if (out->str[end - 1] == '\n')
			end--;
		if (!tab || !parse_u64(out->str, (size_t)(tab - out->str), &v) || v > UINT32_MAX ||
		    memchr(tab + 1, '\n', end - (size_t)(tab + 1 - out->str)) ||
		    !fk_ch_tsv_unescape(tab + 1, end - (size_t)(tab + 1 - out->str), cl)) {
			g_set_error(err, FK_ERROR, FK_ERROR_PARSE, "%s: foldkit_schema holds something else than a version", c->url.display);
			g_string_free(cl, TRUE);
			g_string_free(out, TRUE);
			return -1;
		}
		*version = (uint32_t)v;
		*cluster = g_string_free(cl, FALSE);
	}
	g_string_free(out, TRUE);
	return 1;
}

int fk_ch_check_schema(struct fk_ch *c, GError **err)
{
	uint32_t version = 0;
	char *cluster = NULL;
	int rc = schema_row(c, &version, &cluster, err);

	g_free(cluster);
	if (rc < 0)
		return -1;
	if (rc == 0) {
		g_set_error(err, FK_ERROR, FK_ERROR_IO, "%s: no foldkit schema in database '%s' (create it with fold-push --init)",
			    c->url.display, c->url.database);
		return -1;
	}
	if (version != FK_CH_SCHEMA_VERSION) {
		g_set_error(err, FK_ERROR, FK_ERROR_IO, "%s: the foldkit schema in database '%s' is version %u; this foldkit "
			    "reads and writes version %d only", c->url.display, c->url.database,
			    version, FK_CH_SCHEMA_VERSION);
		return -1;
	}
	return 0;
}

/* Creates on one server what is missing: the database, the local tables
 * (local: with a cluster, NAME_local; without, the tables themselves),
 * the Distributed ones over the cluster, the schema row. */
static int create_on(struct fk_ch *c, const char *cluster, bool local, GError **err)
{
	GString *sql = g_string_new(NULL);
	const char *suffix = cluster ? "_local" : "";
	uint32_t version = 0;
	char *had = NULL;
	int rc;

	g_string_printf(sql, "CREATE DATABASE IF NOT EXISTS `%s`", c->url.database);
	rc = ch_exec(c, sql->str, CH_NO_DATABASE, err);
	if (rc == 0 && (rc = schema_row(c, &version, &had, err)) > 0) {
		if (version != FK_CH_SCHEMA_VERSION) {
			g_set_error(err, FK_ERROR, FK_ERROR_IO, "%s: database '%s' holds a foldkit schema of version %u; this "
				    "foldkit makes version %d: not changed", c->url.display,
				    c->url.database, version, FK_CH_SCHEMA_VERSION);
			rc = -1;
		} else if (strcmp(had, cluster ? cluster : "") != 0) {
			g_set_error(err, FK_ERROR, FK_ERROR_IO, "%s: database '%s' holds a foldkit schema %s%s%s; not changed",
				    c->url.display, c->url.database,
				    *had ? "for cluster '" : "without a cluster", had, *had ? "'" : "");
			rc = -1;
		} else {
			rc = 0;
		}
	}
	if (rc == 0 && local) {
		g_string_printf(sql, "CREATE TABLE IF NOT EXISTS foldkit_stacks%s %s ENGINE = %s",
				suffix, stacks_columns, stacks_engine);
		rc = ch_exec(c, sql->str, 0, err);
		if (rc == 0) {
			g_string_printf(sql, "CREATE TABLE IF NOT EXISTS foldkit_samples%s %s ENGINE = %s",
					suffix, samples_columns, samples_engine);
			rc = ch_exec(c, sql->str, 0, err);
		}
	}
	if (rc == 0 && cluster) {
		static const struct { const char *table, *columns, *key; } dist[] = {
			{ "foldkit_stacks", stacks_columns, "key" },
			{ "foldkit_samples", samples_columns, "cityHash64(host)" },
		};

		for (size_t i = 0; rc == 0 && i < G_N_ELEMENTS(dist); i++) {
			g_string_printf(sql, "CREATE TABLE IF NOT EXISTS %s %s ENGINE = Distributed(",
					dist[i].table, dist[i].columns);
			fk_sql_quote(sql, cluster, strlen(cluster));
			g_string_append(sql, ", ");
			fk_sql_quote(sql, c->url.database, strlen(c->url.database));
			g_string_append_printf(sql, ", '%s_local', %s)", dist[i].table, dist[i].key);
			rc = ch_exec(c, sql->str, 0, err);
		}
	}
	if (rc == 0 && !had) {
		rc = ch_exec(c, "CREATE TABLE IF NOT EXISTS foldkit_schema (version UInt32, cluster String) "
			     "ENGINE = TinyLog", 0, err);
		if (rc == 0) {
			g_string_printf(sql, "INSERT INTO foldkit_schema VALUES (%d, ", FK_CH_SCHEMA_VERSION);
			fk_sql_quote(sql, cluster ? cluster : "", cluster ? strlen(cluster) : 0);
			g_string_append_c(sql, ')');
			rc = ch_exec(c, sql->str, 0, err);
		}
	}
	g_free(had);
	g_string_free(sql, TRUE);
	return rc;
}

/* The hosts of cluster as c's server lists them, and whether c's server
 * is one of them. */
static GPtrArray *cluster_hosts(struct fk_ch *c, const char *cluster, bool *self, GError **err)
{
	GString *sql = g_string_new("SELECT max(is_local), host_name FROM system.clusters WHERE cluster = ");
	GString *out = g_string_new(NULL);
	GPtrArray *hosts = NULL;
	char **lines;

	fk_sql_quote(sql, cluster, strlen(cluster));
	g_string_append(sql, " GROUP BY host_name ORDER BY host_name FORMAT TabSeparated");
	*self = false;
	if (ch_text(c, sql->str, CH_NO_DATABASE, out, NULL, err) < 0)
		goto out;
	hosts = g_ptr_array_new_with_free_func(g_free);
	lines = g_strsplit(out->str, "\n", -1);
	for (int i = 0; lines[i]; i++) {
		char *tab = strchr(lines[i], '\t');
		GString *host;

		if (!*lines[i])
			continue;
		host = g_string_new(NULL);
		if (!tab || !fk_ch_tsv_unescape(tab + 1, strlen(tab + 1), host)) {
			g_string_free(host, TRUE);
			continue;
		}
		if (lines[i][0] == '1')
			*self = true;
		g_ptr_array_add(hosts, g_string_free(host, FALSE));
	}
	g_strfreev(lines);
	if (hosts->len == 0) {
		char *shown = fk_text_escape_dup(cluster, strlen(cluster), 0);

		g_set_error(err, FK_ERROR, FK_ERROR_IO, "%s: no cluster '%s' in its remote_servers",
			    c->url.display, shown);
		g_free(shown);
		g_ptr_array_unref(hosts);
		hosts = NULL;
	}
out:
	g_string_free(sql, TRUE);
	g_string_free(out, TRUE);
	return hosts;
}

int fk_ch_init(struct fk_ch *c, const char *cluster, char **said, GError **err)
{
	GPtrArray *hosts;
	bool self = false;
	int rc = 0;

	*said = NULL;
	if (!cluster) {
		if (create_on(c, NULL, true, err) < 0)
			return -1;
		*said = g_strdup_printf("%s: foldkit schema version %d ready", c->url.display,
					FK_CH_SCHEMA_VERSION);
		return 0;
	}
	if (!(hosts = cluster_hosts(c, cluster, &self, err)))
		return -1;
	for (guint i = 0; rc == 0 && i < hosts->len; i++) {
		struct fk_store_url u;
		struct fk_ch *other;

		if ((rc = fk_store_url_with_host(&c->url, hosts->pdata[i], &u, err)) < 0)
			break;
		other = fk_ch_new(&u);
		rc = create_on(other, cluster, true, err);
		fk_ch_free(other);
		fk_store_url_release(&u);
	}
	/* a server outside the cluster can still be the one that is asked */
	if (rc == 0 && !self)
		rc = create_on(c, cluster, false, err);
	if (rc == 0)
		*said = g_strdup_printf("%s: foldkit schema version %d ready on the %u servers of "
					"cluster '%s'%s", c->url.display, FK_CH_SCHEMA_VERSION,
					hosts->len, cluster, self ? "" : " and on this one");
	g_ptr_array_unref(hosts);
	return rc;
}

/* Pushing */

static void put_u32(GString *b, uint32_t v)
{
	char w[4];

	for (int i = 0; i < 4; i++)
		w[i] = (char)(v >> (8 * i));
	g_string_append_len(b, w, 4);
}

static void put_u64(GString *b, uint64_t v)
{
	char w[8];

	for (int i = 0; i < 8; i++)
		w[i] = (char)(v >> (8 * i));
	g_string_append_len(b, w, 8);
}

static void put_count(GString *b, fk_count v)
{
	unsigned __int128 u = (unsigned __int128)v;

	put_u64(b, (uint64_t)u);
	put_u64(b, (uint64_t)(u >> 64));
}

/* RowBinary's lengths: LEB128, seven bits a byte, low bits first */
static void put_varint(GString *b, size_t n)
{
	do {
		char byte = (char)(n & 0x7f);

		n >>= 7;
		g_string_append_c(b, (char)(byte | (n ? 0x80 : 0)));
	} while (n);
}

static void put_string(GString *b, const char *s, size_t len)
{
	put_varint(b, len);
	g_string_append_len(b, s, (gssize)len);
}

/* RowBinary rows made as curl asks for the body: one row at a time, so
 * the body's memory is one row, not the profile's. */
struct rows_source {
	const struct fk_profile *p;
	const uint64_t *keys;
	const bool *stored;	/* the stacks' rows: the texts to leave out */
	GString *prefix;	/* a sample row's columns before push (NULL:
				   the stacks' rows) */
	uint64_t push;
	size_t next;		/* the entry to encode next */
	GString *row;		/* encoded, not yet given */
	size_t given;
};

static long rows_produce(char *buf, size_t cap, void *data, GError **err)
{
	struct rows_source *s = data;
	size_t n = 0;

	while (n < cap) {
		if (s->given == s->row->len) {
			const struct fold_entry *e;

			while (!s->prefix && s->next < s->p->n && s->stored[s->next])
				s->next++;
			if (s->next == s->p->n)
				break;
			e = s->p->entries[s->next];
			g_string_truncate(s->row, 0);
			s->given = 0;
			if (s->prefix) {
				g_string_append_len(s->row, s->prefix->str, (gssize)s->prefix->len);
				put_u64(s->row, s->push);
				put_u64(s->row, s->keys[s->next]);
				put_count(s->row, e->count[0]);
			} else {
				put_u64(s->row, s->keys[s->next]);
				put_string(s->row, e->stack, e->len);
			}
			s->next++;
		}
		{
			size_t take = MIN(cap - n, s->row->len - s->given);

			memcpy(buf + n, s->row->str + s->given, take);
			n += take;
			s->given += take;
		}
	}
	return (long)n;
}

/* A second hash of a text, as the stacks table's check column has it
 * (sipHash64(concat('foldkit:', stack))): a key whose text in the store
 * has another check is a collision, and the text is stored again
 * (fk_ch_query() then refuses the key rather than mix two stacks). */
static uint64_t text_check(const char *s, size_t len)
{
	struct fk_siphash h;

	fk_siphash_init(&h);
	fk_siphash_feed(&h, "foldkit:", 8);
	fk_siphash_feed(&h, s, len);
	return fk_siphash_finish(&h);
}

struct key_answer {
	GString *text;
	size_t max;		/* every key once: 21 bytes a key */
};

static int keep_keys(const char *buf, size_t len, void *data, GError **err)
{
	struct key_answer *a = data;

	if (a->text->len + len > a->max) {
		g_set_error(err, FK_ERROR, FK_ERROR_RANGE, "more stack keys in the answer than asked for");
		return -1;
	}
	g_string_append_len(a->text, buf, (gssize)len);
	return 0;
}

/*
 * Marks in stored[] the stacks whose text the store holds already, so
 * that a fleet pushing the same code's stacks sends each text once: the
 * keys and checks go as an external table (multipart, TabSeparated
 * digits, which cannot hold the boundary), and the store answers the
 * keys it has with the same text.
 */
static int find_stored(struct fk_ch *c, const struct fk_profile *p, const uint64_t *keys,
		       bool *stored, GError **err)
{
	static const char boundary[] = "foldkit-stack-keys-7f3a9c";
	GString *body = g_string_new(NULL), *out = g_string_new(NULL);
	GHashTable *have = g_hash_table_new(g_int64_hash, g_int64_equal);
	struct key_answer answer = { .text = out, .max = 21 * p->n + 64 };
	struct ch_call call = { .sink = keep_keys, .sink_data = &answer };
	int rc;

	g_string_append_printf(body, "--%s\r\nContent-Disposition: form-data; name=\"keys\"; "
			       "filename=\"keys\"\r\nContent-Type: text/tab-separated-values\r\n\r\n",
			       boundary);
	for (size_t i = 0; i < p->n; i++)
		g_string_append_printf(body, "%" G_GUINT64_FORMAT "\t%" G_GUINT64_FORMAT "\n", keys[i],
				       text_check(p->entries[i]->stack, p->entries[i]->len));
	g_string_append_printf(body, "\r\n--%s--\r\n", boundary);
	call.sql = "SELECT DISTINCT key FROM foldkit_stacks WHERE (key, check) IN keys "
		   "FORMAT TabSeparated";
	call.settings = "&keys_structure=key%20UInt64%2C%20check%20UInt64&keys_format=TabSeparated";
	call.multipart = body;
	call.boundary = boundary;
	rc = ch_call(c, &call, err);
	if (rc == 0) {
		char **lines = g_strsplit(out->str, "\n", -1);

		for (int i = 0; lines[i]; i++) {
			uint64_t k;

			if (!*lines[i])
				continue;
			if (!parse_u64(lines[i], strlen(lines[i]), &k)) {
				g_set_error(err, FK_ERROR, FK_ERROR_PARSE,
					    "%s: unexpected answer to a look-up of stack keys", c->url.display);
				rc = -1;
				break;
			}
			g_hash_table_add(have, g_memdup2(&k, sizeof(k)));
		}
		g_strfreev(lines);
		for (size_t i = 0; rc == 0 && i < p->n; i++)
			stored[i] = g_hash_table_contains(have, &keys[i]);
	}
	g_hash_table_foreach(have, (GHFunc)(void (*)(void))g_free, NULL);
	g_hash_table_destroy(have);
	g_string_free(body, TRUE);
	g_string_free(out, TRUE);
	return rc;
}

static void push_id_label(struct fk_siphash *h, const char *s)
{
	fk_siphash_feed(h, s, strlen(s) + 1);
}

int fk_ch_push(struct fk_ch *c, const struct fk_profile *p, const struct fk_labels *l,
	       int64_t from, int64_t until, enum fk_ch_pushed *how, GError **err)
{
	uint64_t *keys = g_new(uint64_t, p->n ? p->n : 1);
	bool *stored = g_new0(bool, p->n ? p->n : 1);
	struct rows_source src = { .p = p, .keys = keys, .stored = stored, .row = g_string_new(NULL) };
	GString *sql = g_string_new(NULL), *out = g_string_new(NULL), *prefix;
	GString *settings = g_string_new(NULL);
	struct fk_siphash h;
	unsigned char w[16];
	uint64_t push, nkey = 0;
	int rc = -1;

	*how = FK_CH_STORED;
	/* the push's id: the labels, the window and every stack's key and
	 * count, so the same profile pushed again is known */
	fk_siphash_init(&h);
	push_id_label(&h, "foldkit push 1");
	for (size_t i = 0; i < fk_labels_size(l); i++) {
		if (!*fk_labels_value(l, i))
			continue;
		push_id_label(&h, fk_labels_key(l, i));
		push_id_label(&h, fk_labels_value(l, i));
	}
	for (int i = 0; i < 8; i++)
		w[i] = (unsigned char)((uint64_t)from >> (8 * i));
	for (int i = 0; i < 8; i++)
		w[8 + i] = (unsigned char)((uint64_t)until >> (8 * i));
	fk_siphash_feed(&h, w, 16);
	for (size_t i = 0; i < p->n; i++) {
		unsigned __int128 u = (unsigned __int128)p->entries[i]->count[0];

		keys[i] = fk_stack_key(p->entries[i]->stack, p->entries[i]->len);
		for (int b = 0; b < 8; b++)
			w[b] = (unsigned char)(keys[i] >> (8 * b));
		fk_siphash_feed(&h, w, 8);
		for (int b = 0; b < 16; b++)
			w[b] = (unsigned char)(u >> (8 * b));
		fk_siphash_feed(&h, w, 16);
	}
	push = fk_siphash_finish(&h);

	/* every column of the sort key, so the index finds the rows at once */
	g_string_assign(sql, "SELECT count(), sum(value) FROM foldkit_samples WHERE service = ");
	fk_sql_quote(sql, fk_labels_get(l, "service"), strlen(fk_labels_get(l, "service")));
	g_string_append(sql, " AND profile = ");
	fk_sql_quote(sql, fk_labels_get(l, "profile"), strlen(fk_labels_get(l, "profile")));
	g_string_append_printf(sql, " AND time = toDateTime(%" G_GINT64_FORMAT ") AND host = ", from);
	fk_sql_quote(sql, fk_labels_get(l, "host"), strlen(fk_labels_get(l, "host")));
	g_string_append_printf(sql, " AND push = %" G_GUINT64_FORMAT " FORMAT TabSeparated", push);
	if (ch_text(c, sql->str, 0, out, NULL, err) < 0)
		goto out;
	{
		char *tab = strchr(out->str, '\t');
		size_t end = out->len && out->str[out->len - 1] == '\n' ? out->len - 1 : out->len;
		fk_count sum = 0;

		if (!tab || !parse_u64(out->str, (size_t)(tab - out->str), &nkey) ||
		    !fk_ch_parse_decimal(tab + 1, end - (size_t)(tab + 1 - out->str), &sum)) {
			g_set_error(err, FK_ERROR, FK_ERROR_PARSE, "%s: unexpected answer to a count",
				    c->url.display);
			goto out;
		}
		if (nkey == p->n && sum == p->total && nkey > 0) {
			*how = FK_CH_ALREADY;
			rc = 0;
			goto out;
		}
		if (nkey) {
			g_set_error(err, FK_ERROR, FK_ERROR_IO, "%s: %" G_GUINT64_FORMAT " rows of this profile are stored, not its %zu: "
				    "it was pushed twice at once, or the table was changed; not pushed again",
				    c->url.display, nkey, p->n);
			goto out;
		}
	}

	/* one block, so one part: the whole profile or nothing */
	g_string_printf(settings, "&insert_distributed_sync=1&max_insert_block_size=%zu",
			MAX(p->n, (size_t)1048576));
	if (find_stored(c, p, keys, stored, err) < 0)
		goto out;
	g_string_assign(sql, "INSERT INTO foldkit_stacks (key, stack) FORMAT RowBinary");
	while (src.next < p->n && stored[src.next])
		src.next++;
	if (src.next < p->n) {		/* else every text is there */
		struct ch_call call = { .sql = sql->str, .settings = settings->str,
					.source = rows_produce, .source_data = &src,
					.sink = keep_text, .sink_data = out };

		g_string_truncate(out, 0);
		if (ch_call(c, &call, err) < 0)
			goto out;
	}

	prefix = g_string_new(NULL);
	put_u32(prefix, (uint32_t)from);
	put_u32(prefix, (uint32_t)until);
	for (size_t i = 0; i < G_N_ELEMENTS(fk_label_standard); i++) {
		const char *v = fk_labels_get(l, fk_label_standard[i]);

		put_string(prefix, v, strlen(v));
	}
	{
		size_t nuser = 0;

		for (size_t i = 0; i < fk_labels_size(l); i++)
			nuser += !fk_label_is_standard(fk_labels_key(l, i)) && *fk_labels_value(l, i);
		/* labels.key, then labels.value: two arrays of nuser */
		for (int pass = 0; pass < 2; pass++) {
			put_varint(prefix, nuser);
			for (size_t i = 0; i < fk_labels_size(l); i++) {
				const char *k = fk_labels_key(l, i), *v = fk_labels_value(l, i);

				if (fk_label_is_standard(k) || !*v)
					continue;
				put_string(prefix, pass ? v : k, strlen(pass ? v : k));
			}
		}
	}
	src.prefix = prefix;
	src.push = push;
	src.next = 0;
	src.given = 0;
	g_string_truncate(src.row, 0);
	g_string_assign(sql, "INSERT INTO foldkit_samples (time, until, host, service, process, role, "
			"profile, unit, labels.key, labels.value, push, stack, value) FORMAT RowBinary");
	{
		struct ch_call call = { .sql = sql->str, .settings = settings->str,
					.source = rows_produce, .source_data = &src,
					.sink = keep_text, .sink_data = out };

		g_string_truncate(out, 0);
		rc = ch_call(c, &call, err);
	}
	g_string_free(prefix, TRUE);
out:
	g_string_free(settings, TRUE);
	g_string_free(out, TRUE);
	g_string_free(sql, TRUE);
	g_string_free(src.row, TRUE);
	g_free(stored);
	g_free(keys);
	return rc;
}

/* Querying */

/* The expression for label key in a sample row. */
static void label_expr(GString *sql, const char *key)
{
	if (fk_label_is_standard(key)) {
		g_string_append(sql, key);
	} else {
		g_string_append(sql, "labels.value[indexOf(labels.key, ");
		fk_sql_quote(sql, key, strlen(key));
		g_string_append(sql, ")]");
	}
}

static void where_clause(GString *sql, const struct fk_query *q)
{
	g_string_append(sql, " WHERE 1");
	for (size_t i = 0; q->match && i < fk_labels_size(q->match); i++) {
		const char *v = fk_labels_value(q->match, i);

		g_string_append(sql, " AND ");
		label_expr(sql, fk_labels_key(q->match, i));
		g_string_append(sql, " = ");
		fk_sql_quote(sql, v, strlen(v));
	}
	if (q->has_from)
		g_string_append_printf(sql, " AND time >= toDateTime(%" G_GINT64_FORMAT ")", q->from);
	if (q->has_until)
		g_string_append_printf(sql, " AND time < toDateTime(%" G_GINT64_FORMAT ")", q->until);
}

struct kinds {
	struct fk_ch *c;
	struct fk_query_info *info;
	GString *seen;		/* "unit/profile, ..." for a message */
	unsigned n;
};

/* A row of the kinds query: profiles, rows, unit, profile. */
static int on_kind(char **f, const size_t *lens, bool totals, void *data, GError **err)
{
	struct kinds *k = data;
	uint64_t profiles, rows;

	if (!parse_u64(f[0], lens[0], &profiles) || !parse_u64(f[1], lens[1], &rows)) {
		g_set_error(err, FK_ERROR, FK_ERROR_PARSE, "unexpected answer: counts that are not numbers");
		return -1;
	}
	if (totals) {
		k->info->rows = rows;
		return 0;
	}
	k->info->profiles += profiles;
	if (k->n++ == 0) {
		k->info->unit = g_strdup(f[2]);
		k->info->profile = g_strdup(f[3]);
	}
	if (k->seen->len)
		g_string_append(k->seen, ", ");
	fk_text_escape(k->seen, f[2], lens[2], 0);
	if (lens[3]) {
		g_string_append_c(k->seen, ' ');
		fk_text_escape(k->seen, f[3], lens[3], 0);
	}
	return 0;
}

struct answer {
	struct fk_ch *c;
	const struct fk_query *q;
	fk_ch_stack_fn fn;
	void *data;
	fk_count sum;
	uint64_t rows;
	GHashTable *checks;	/* key -> its text's check (both uint64) */
	GHashTable *seen;	/* with --by: key and value (GBytes), once */
};

/*
 * A row of the merged profile: key, found, check, total, [value,] text.
 * The texts' table may hold a text twice until ClickHouse merges its
 * parts (two pushes of a new stack at once), and the join then repeats
 * the key's row: it is counted once.  A key with two checks names two
 * texts (a collision) and is refused.
 */
static int on_stack(char **f, const size_t *lens, bool totals, void *data, GError **err)
{
	struct answer *a = data;
	int by = a->q->by ? 4 : -1, st = a->q->by ? 5 : 4;
	uint64_t key, check, *had;
	fk_count total;

	if (!parse_u64(f[0], lens[0], &key) || !parse_u64(f[2], lens[2], &check) ||
	    !fk_ch_parse_decimal(f[3], lens[3], &total) || lens[1] != 1) {
		g_set_error(err, FK_ERROR, FK_ERROR_PARSE,
			    "unexpected answer: a row that is not key, flag, check, count");
		return -1;
	}
	if (totals) {
		if (total != a->sum) {
			g_set_error(err, FK_ERROR, FK_ERROR_TRUNCATED,
				    "the answer's rows do not add up to its totals row: it is not whole");
			return -1;
		}
		return 0;
	}
	if (f[1][0] != '1') {
		g_set_error(err, FK_ERROR, FK_ERROR_IO,
			    "stack key %" G_GUINT64_FORMAT " has samples but no text in foldkit_stacks", key);
		return -1;
	}
	if ((had = g_hash_table_lookup(a->checks, &key)) && had[1] != check) {
		g_set_error(err, FK_ERROR, FK_ERROR_IO,
			    "stack key %" G_GUINT64_FORMAT " names two stacks in foldkit_stacks (a hash "
			    "collision): their samples cannot be told apart", key);
		return -1;
	}
	if (!had) {
		uint64_t *pair = g_new(uint64_t, 2);

		pair[0] = key;
		pair[1] = check;
		g_hash_table_insert(a->checks, pair, pair);
	}
	if (a->q->by) {
		GByteArray *b = g_byte_array_sized_new(8 + (guint)lens[by]);

		g_byte_array_append(b, (const guint8 *)&key, 8);
		g_byte_array_append(b, (const guint8 *)f[by], (guint)lens[by]);
		if (!g_hash_table_add(a->seen, g_byte_array_free_to_bytes(b)))
			return 0;	/* this value's row again */
	} else if (had) {
		return 0;		/* the same text twice */
	}
	a->sum += total;
	a->rows++;
	return a->fn(by >= 0 ? f[by] : "", by >= 0 ? lens[by] : 0, f[st], lens[st], total,
		     a->data, err);
}

static int feed_rows(const char *buf, size_t len, void *data, GError **err)
{
	return fk_ch_rows_feed(data, buf, len, err);
}

/* Runs sql, reading its TabSeparated answer with totals into fn. */
static int ch_rows(struct fk_ch *c, const char *sql, int ncols, fk_ch_row_fn fn, void *data,
		   GError **err)
{
	struct fk_ch_rows *rows = fk_ch_rows_new(ncols, fn, data);
	struct ch_call call = { .sql = sql, .sql_in_body = true, .sink = feed_rows,
				.sink_data = rows };
	GError *e = NULL;
	int rc = ch_call(c, &call, &e);

	if (rc == 0)
		rc = fk_ch_rows_finish(rows, &e);
	if (rc < 0) {
		/* the rows' own errors do not name the server */
		if (e && !g_str_has_prefix(e->message, c->url.display))
			g_prefix_error(&e, "%s: ", c->url.display);
		g_propagate_error(err, e);
	}
	fk_ch_rows_free(rows);
	return rc;
}

int fk_ch_query(struct fk_ch *c, const struct fk_query *q, fk_ch_stack_fn fn, void *data,
		struct fk_query_info *info, GError **err)
{
	GString *sql = g_string_new(NULL), *where = g_string_new(NULL);
	struct kinds k = { .c = c, .info = info, .seen = g_string_new(NULL) };
	struct answer a = { .c = c, .q = q, .fn = fn, .data = data,
			    .checks = g_hash_table_new_full(g_int64_hash, g_int64_equal, g_free, NULL),
			    .seen = g_hash_table_new_full(g_bytes_hash, g_bytes_equal,
							  (GDestroyNotify)g_bytes_unref, NULL) };
	int rc = -1;

	memset(info, 0, sizeof(*info));
	if (q->by && !fk_label_key_ok(q->by)) {
		g_set_error(err, FK_ERROR, FK_ERROR_USAGE, "bad label key to split by");
		goto out;
	}
	where_clause(where, q);

	/* one unit and one kind of profile, or no sum means anything: a pass
	 * over the selection's labels, unless they fix both (and no count of
	 * profiles is asked for) */
	if (q->count || !q->match || !*fk_labels_get(q->match, "unit") ||
	    !*fk_labels_get(q->match, "profile")) {
		g_string_printf(sql, "SELECT uniqExact(push), count(), unit, profile FROM "
				"foldkit_samples%s GROUP BY unit, profile WITH TOTALS ORDER BY unit, "
				"profile FORMAT TabSeparated", where->str);
		if (ch_rows(c, sql->str, 4, on_kind, &k, err) < 0)
			goto out;
		if (k.n == 0) {		/* nothing selected: no stacks */
			rc = 0;
			goto out;
		}
		if (k.n > 1) {
			g_set_error(err, FK_ERROR, FK_ERROR_USAGE,
				    "%s: the selection holds profiles of %u kinds (%s), whose counts "
				    "cannot be added: choose one with --label unit=... or --label "
				    "profile=...", c->url.display, k.n, k.seen->str);
			goto out;
		}
	} else {
		info->unit = g_strdup(fk_labels_get(q->match, "unit"));
		info->profile = g_strdup(fk_labels_get(q->match, "profile"));
	}

	/* the sums by key, each joined to its text (ALL: see on_stack()) */
	g_string_assign(sql, "SELECT key, found, check, total");
	if (q->by)
		g_string_append(sql, ", lv");
	g_string_append(sql, ", text FROM (SELECT ");
	if (q->by) {
		label_expr(sql, q->by);
		g_string_append(sql, " AS lv, ");
	}
	g_string_append_printf(sql, "stack AS key, sum(value) AS total FROM foldkit_samples%s "
			       "GROUP BY ", where->str);
	if (q->by)
		g_string_append(sql, "lv, ");
	g_string_append_printf(sql, "key WITH TOTALS) ALL LEFT JOIN (SELECT key, stack AS text, "
			       "check, toUInt8(1) AS found FROM foldkit_stacks WHERE key GLOBAL IN "
			       "(SELECT stack FROM foldkit_samples%s)) USING key FORMAT TabSeparated",
			       where->str);
	rc = ch_rows(c, sql->str, q->by ? 6 : 5, on_stack, &a, err);
	info->stacks = a.rows;
out:
	g_hash_table_destroy(a.checks);
	g_hash_table_destroy(a.seen);
	g_string_free(k.seen, TRUE);
	g_string_free(where, TRUE);
	g_string_free(sql, TRUE);
	return rc;
}
