/*
 * fold-query - the merged folded profile of stored profiles: summed by
 * ClickHouse, printed sorted as every foldkit tool prints stacks.  See
 * docs/fold-query.1.
 */
#include "core/error.h"
#include "store/clickhouse.h"
#include "store/splitout.h"
#include "store/timearg.h"
#include "tool.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static struct opts {
	gboolean verbose;
	char *from, *until, *by, *output;
	char **labels;
} opts;

static const GOptionEntry entries[] = {
	{ "label", 'l', 0, G_OPTION_ARG_STRING_ARRAY, &opts.labels, "Only profiles labelled KEY=VALUE (VALUE empty: without the label)", "K=V" },
	{ "from", 0, 0, G_OPTION_ARG_STRING, &opts.from, "Only profiles whose window starts at T or later", "T" },
	{ "until", 0, 0, G_OPTION_ARG_STRING, &opts.until, "Only profiles whose window starts before T", "T" },
	{ "by", 0, 0, G_OPTION_ARG_STRING, &opts.by, "One profile per value of LABEL, into the directory -o names", "LABEL" },
	{ "output", 'o', 0, G_OPTION_ARG_FILENAME, &opts.output, "With --by: the directory to write (new or empty)", "DIR" },
	{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &opts.verbose, "Say what was selected: profiles, rows, stacks, unit", NULL },
	{ NULL },
};

static const char description[] =
	"Prints the merged folded profile of the profiles stored in ClickHouse that match\n"
	"every --label and start in [--from, --until): summed by stack in ClickHouse, sorted\n"
	"bytewise, one \"STACK COUNT\" line each, as the other tools print them.  A selection\n"
	"must hold one unit and one kind of profile.  T is seconds since 1970, an ISO 8601\n"
	"time (UTC unless it says), or now-N[smhd].\n"
	"\n"
	"Examples:\n"
	"  fold-query clickhouse://db1/prof --label service=api --label profile=on-cpu | fold2svg > api.svg\n"
	"  fold-diff <(fold-query $DB -l release=v2.0 -l profile=on-cpu) \\\n"
	"            <(fold-query $DB -l release=v2.1 -l profile=on-cpu) | fold2svg > diff.svg\n"
	"  fold-query $DB -l profile=on-cpu --from now-1h --by host -o by-host\n"
	"\n"
	"Exit status: 0 success, 1 nothing selected or a server error, 2 usage error.\n"
	"See fold-query(1).";

struct sink {
	struct fold_table *t;		/* without --by */
	struct fk_split_dir *split;	/* with --by */
};

static int add_stack(const char *by, size_t by_len, const char *stack, size_t len, fk_count c,
		     void *data, GError **err)
{
	struct sink *s = data;

	fold_table_add(s->split ? fk_split_dir_table(s->split, by, by_len) : s->t, stack, len, c);
	return 0;
}

int main(int argc, char **argv)
{
	struct fk_store_url url;
	struct fk_labels *match = fk_labels_new();
	struct fk_query q = { .match = match };
	struct fk_query_info info = { 0 };
	struct sink s = { 0 };
	struct fk_ch *ch;
	int64_t now = (int64_t)time(NULL);
	GError *err = NULL;
	int status = FK_EXIT_OK;

	tool_init("fold-query");
	tool_parse(&argc, &argv, "URL", "Print the merged profile of profiles stored in ClickHouse.",
		   description, entries);
	if (argc != 2)
		tool_usage_error(argc < 2 ? "expected a URL" : "expected one URL, and no FILE");
	if (fk_store_url_parse(argv[1], &url, &err) < 0)
		tool_usage_error("%s", err->message);
	fk_store_url_take_password(&url, g_getenv("FOLDKIT_STORE_PASSWORD"));
	if (g_getenv("FOLDKIT_STORE_CA") && *g_getenv("FOLDKIT_STORE_CA"))
		url.ca_file = g_strdup(g_getenv("FOLDKIT_STORE_CA"));
	if (url.kind != FK_STORE_CLICKHOUSE)
		tool_usage_error("fold-query reads ClickHouse (clickhouse:// or clickhouses://)");
	for (char **l = opts.labels; l && *l; l++) {
		char *k, *v;

		if (fk_label_parse(*l, &k, &v, &err) < 0)
			tool_usage_error("%s", err->message);
		if (*fk_labels_get(match, k) && strcmp(fk_labels_get(match, k), v) != 0)
			tool_usage_error("two values for label %s: a profile has one", k);
		fk_labels_set(match, k, v);
		g_free(k);
		g_free(v);
	}
	if ((opts.from && fk_time_parse(opts.from, now, &q.from, &err) < 0) ||
	    (opts.until && fk_time_parse(opts.until, now, &q.until, &err) < 0))
		tool_usage_error("%s", err->message);
	q.has_from = opts.from != NULL;
	q.has_until = opts.until != NULL;
	if (q.has_from && q.has_until && q.from >= q.until)
		tool_usage_error("--from must be before --until");
	if (opts.by && !fk_label_key_ok(opts.by))
		tool_usage_error("bad --by '%s': a label key", opts.by);
	if (!opts.by != !opts.output)
		tool_usage_error(opts.by ? "--by needs -o DIR" : "-o goes with --by");
	q.by = opts.by;
	q.count = opts.verbose;

	if (opts.by)
		s.split = fk_split_dir_new();
	else
		s.t = fold_table_new();
	ch = fk_ch_new(&url);
	if (fk_ch_check_schema(ch, &err) < 0 || fk_ch_query(ch, &q, add_stack, &s, &info, &err) < 0) {
		tool_warn_error(err);
		status = FK_EXIT_FAILURE;
		goto out;
	}
	if (opts.verbose)
		tool_warn("%" G_GUINT64_FORMAT " profiles, %" G_GUINT64_FORMAT " sample rows, %"
			  G_GUINT64_FORMAT " stacks%s%s%s%s", info.profiles, info.rows, info.stacks,
			  info.unit ? ", unit " : "", info.unit ? info.unit : "",
			  info.profile && *info.profile ? ", profile " : "",
			  info.profile ? info.profile : "");
	if (info.stacks == 0) {
		tool_warn("%s: no stored profile matches", fk_ch_server(ch));
		status = FK_EXIT_FAILURE;
	} else if (s.split) {
		size_t n;

		if (fk_split_dir_write(s.split, opts.output, opts.by, info.unit, &n, &err) < 0) {
			tool_warn_error(err);
			status = FK_EXIT_FAILURE;
		}
	} else if (fold_table_write(s.t, stdout, 1, &err) < 0) {
		tool_warn_error(err);
		status = FK_EXIT_FAILURE;
	}
out:
	fk_query_info_release(&info);
	fk_ch_free(ch);
	if (s.t)
		fold_table_free(s.t);
	fk_split_dir_free(s.split);
	fk_store_url_release(&url);
	fk_labels_free(match);
	g_strfreev(opts.labels);
	return tool_finish(status);
}
