/*
 * fold-push - folded profiles into a store: ClickHouse (each profile
 * whole or not at all) or Grafana Pyroscope.  See docs/fold-push.1.
 */
#include "core/error.h"
#include "store/clickhouse.h"
#include "store/http.h"
#include "store/profile.h"
#include "store/pyroscope.h"
#include "store/timearg.h"
#include "tool.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static struct opts {
	gboolean init, verbose;
	char *cluster, *from, *until, *unit;
	char **labels;
} opts;

static const GOptionEntry entries[] = {
	{ "label", 'l', 0, G_OPTION_ARG_STRING_ARRAY, &opts.labels, "Label every profile KEY=VALUE (host, service, process, role, profile, or one of yours)", "K=V" },
	{ "from", 0, 0, G_OPTION_ARG_STRING, &opts.from, "The profiles' window starts at T (default: when the file, or a directory's index, was written)", "T" },
	{ "until", 0, 0, G_OPTION_ARG_STRING, &opts.until, "The profiles' window ends at T (default: as --from)", "T" },
	{ "unit", 0, 0, G_OPTION_ARG_STRING, &opts.unit, "What a count is where the input does not say: ns, us, samples... (default: samples)", "U" },
	{ "init", 0, 0, G_OPTION_ARG_NONE, &opts.init, "Create the ClickHouse schema (no FILE)", NULL },
	{ "cluster", 0, 0, G_OPTION_ARG_STRING, &opts.cluster, "With --init: on every server of cluster NAME, with Distributed tables", "NAME" },
	{ "verbose", 'v', 0, G_OPTION_ARG_NONE, &opts.verbose, "Print a line for every profile stored", NULL },
	{ NULL },
};

static const char description[] =
	"Pushes folded profiles to a store.  URL is clickhouse://[USER[:PASSWORD]@]HOST[:PORT][/DB]\n"
	"(clickhouses:// for HTTPS) or pyroscope://HOST[:PORT] (pyroscopes://).  FILE is a folded\n"
	"file ('-' or none: standard input), a split= directory of foldkit.so, or an fp-record\n"
	"capture, which label their profiles themselves (process, pid, service, profile, unit).\n"
	"host is this machine's name unless given.  In ClickHouse a profile is stored whole or\n"
	"not at all, and one stored already is not stored again.\n"
	"\n"
	"Examples:\n"
	"  fold-push --init clickhouse://db1:8123/prof\n"
	"  fold-push --init clickhouse://db1:8123/prof --cluster fleet\n"
	"  fold-push clickhouse://db1/prof --label release=v2.1 fp-record-20241206-073000\n"
	"  fold-push pyroscope://pyro:4040 --label service=api --unit ns --from now-30s on.folded\n"
	"\n"
	"Exit status: 0 success, 1 a profile not stored (unreadable input, a server error),\n"
	"2 usage error.  See fold-push(1).";

/* Labels from the command line, over what the input says of itself. */
static struct fk_labels *labels_for(const struct fk_push_item *it, const struct fk_labels *cli)
{
	struct fk_labels *l = fk_labels_copy(it->labels);

	for (size_t i = 0; i < fk_labels_size(cli); i++)
		fk_labels_set(l, fk_labels_key(cli, i), fk_labels_value(cli, i));
	if (!*fk_labels_get(l, "host"))
		fk_labels_set(l, "host", g_get_host_name());
	if (!*fk_labels_get(l, "unit"))
		fk_labels_set(l, "unit", opts.unit ? opts.unit : "samples");
	return l;
}

int main(int argc, char **argv)
{
	struct fk_store_url url;
	struct fk_labels *cli = fk_labels_new();
	GPtrArray *items = g_ptr_array_new_with_free_func(fk_push_item_free);
	struct fk_ch *ch = NULL;
	struct fk_http *http = NULL;
	int64_t now = (int64_t)time(NULL), from = 0, until = 0;
	GError *err = NULL;
	int status = FK_EXIT_OK;
	guint stored = 0, already = 0, i;

	tool_init("fold-push");
	tool_parse(&argc, &argv, "URL [FILE|DIR...]", "Push folded profiles to ClickHouse or Pyroscope.",
		   description, entries);
	if (argc < 2)
		tool_usage_error("expected a URL");
	if (fk_store_url_parse(argv[1], &url, &err) < 0)
		tool_usage_error("%s", err->message);
	fk_store_url_take_password(&url, g_getenv("FOLDKIT_STORE_PASSWORD"));
	if (g_getenv("FOLDKIT_STORE_CA") && *g_getenv("FOLDKIT_STORE_CA"))
		url.ca_file = g_strdup(g_getenv("FOLDKIT_STORE_CA"));
	for (char **l = opts.labels; l && *l; l++) {
		char *k, *v;

		if (fk_label_parse(*l, &k, &v, &err) < 0)
			tool_usage_error("%s", err->message);
		fk_labels_set(cli, k, v);
		g_free(k);
		g_free(v);
	}
	if ((opts.from && fk_time_parse(opts.from, now, &from, &err) < 0) ||
	    (opts.until && fk_time_parse(opts.until, now, &until, &err) < 0))
		tool_usage_error("%s", err->message);
	if (opts.from && !opts.until)
		until = from;
	if (opts.until && !opts.from)
		from = until;
	if (from > until)
		tool_usage_error("--from is after --until");
	if (opts.unit && (!*opts.unit || strlen(opts.unit) > 32 || strpbrk(opts.unit, " \t\n,{}=")))
		tool_usage_error("bad --unit '%s': one word, such as ns, us or samples", opts.unit);
	if (opts.cluster && !opts.init)
		tool_usage_error("--cluster goes with --init");

	if (opts.init) {
		char *said;

		if (argc > 2)
			tool_usage_error("--init takes no FILE");
		if (url.kind != FK_STORE_CLICKHOUSE)
			tool_usage_error("--init is for ClickHouse: Pyroscope needs no schema");
		ch = fk_ch_new(&url);
		if (fk_ch_init(ch, opts.cluster, &said, &err) < 0) {
			tool_warn_error(err);
			status = FK_EXIT_FAILURE;
		} else {
			printf("%s\n", said);
			g_free(said);
		}
		goto out;
	}

	for (int a = argc == 2 ? 1 : 2; a < argc; a++)	/* none: standard input */
		if (fk_push_items(argc == 2 ? "-" : argv[a], items, &err) < 0) {
			tool_warn_error(err);
			err = NULL;
			status = FK_EXIT_FAILURE;
		}
	if (url.kind == FK_STORE_CLICKHOUSE) {
		ch = fk_ch_new(&url);
		if (items->len && fk_ch_check_schema(ch, &err) < 0) {
			tool_warn_error(err);
			status = FK_EXIT_FAILURE;
			goto out;
		}
	} else {
		http = fk_http_new(&url);
	}
	for (i = 0; i < items->len; i++) {
		struct fk_push_item *it = items->pdata[i];
		struct fk_profile *p = fk_profile_read(it->path, &err);
		struct fk_labels *l;
		enum fk_ch_pushed how = FK_CH_STORED;
		int64_t t0 = from, t1 = until;
		int rc;

		if (!p) {
			tool_warn_error(err);
			err = NULL;
			status = FK_EXIT_FAILURE;
			continue;
		}
		if (!opts.from && !opts.until)
			t0 = t1 = it->written ? it->written : p->mtime;
		l = labels_for(it, cli);
		if (p->n == 0) {
			tool_warn("%s: no stacks: nothing to push", it->path);
			rc = 0;
			how = FK_CH_ALREADY;
		} else if (ch) {
			rc = fk_ch_push(ch, p, l, t0, t1, &how, &err);
		} else {
			rc = fk_pyroscope_push(http, &url, p, l, t0, t1, &err);
		}
		if (rc == 0 && opts.verbose && p->n) {
			char *shown = fk_labels_show(l), num[FK_COUNT_BUFSZ];

			num[fk_count_format(p->total, num)] = '\0';
			printf("%s %s: %zu stacks, %s %s, %s\n", how == FK_CH_ALREADY ? "already stored"
			       : "stored", it->path, p->n, num, fk_labels_get(l, "unit"), shown);
			g_free(shown);
		}
		if (rc == 0) {
			stored += how == FK_CH_STORED && p->n;
			already += how == FK_CH_ALREADY && p->n;
		}
		fk_labels_free(l);
		fk_profile_free(p);
		if (rc < 0) {
			/* a server that refused one profile refuses the next */
			tool_warn_error(err);
			tool_warn("%u of %u profiles stored before this error%s; the others were not "
				  "(the same command again pushes only those)", stored + already,
				  items->len, already ? " (some were there already)" : "");
			status = FK_EXIT_FAILURE;
			break;
		}
	}
out:
	fk_ch_free(ch);
	fk_http_free(http);
	fk_store_url_release(&url);
	fk_labels_free(cli);
	g_ptr_array_unref(items);
	g_strfreev(opts.labels);
	return tool_finish(status);
}
