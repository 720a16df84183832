/*
 * server-profile STACKS [SEED] - prints a synthetic folded profile shaped
 * like a big C++ server's call tree: STACKS distinct stacks (lines), a few
 * dozen thread pools at the root, deep call chains (30 to 60 frames) that
 * branch ever more sparsely towards the leaves, long template-laden names
 * drawn from a pool of popular and rare functions (so that allocators,
 * locks and memcpy appear under many callers, as they do in real servers),
 * and heavy-tailed counts.  With 200,000 stacks its prefix tree holds
 * about 2.4 million frames.  The same arguments print the same bytes.
 *
 * Used by bench/html.bench (the profile fold2html, fold2svg and speedscope
 * open) and by test/scripts/html-browser.sh (a small one).
 *
 *	cc -O2 -o server-profile bench/server-profile.c
 *	./server-profile 200000 > server.folded
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_state;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545F4914F6CDD1Dull;
}

static double unif(void)
{
	return (double)(rnd() >> 11) / (double)(1ull << 53);
}

/* 1 + a geometric count of further steps with the given mean of extra ones */
static int geometric(double mean)
{
	double p = 1 / (1 + mean);
	int n = 0;

	while (unif() > p && n < 200)
		n++;
	return n;
}

#define NFUNCS 40000
static char *funcs[NFUNCS];

static const char *const spaces[] = {
	"DB", "DB::detail", "std", "std::__1", "boost::asio::detail", "folly",
	"grpc_core", "absl::lts_20230125", "google::protobuf::internal",
	"server::http", "server::rpc", "storage::lsm", "storage::btree",
	"net::tcp", "cache::lru", "json", "auth", "sched", "metrics", "io_uring",
};
static const char *const classes[] = {
	"Aggregator", "PipelineExecutor", "HashTable", "Connection", "Session",
	"RequestHandler", "ThreadPoolImpl<std::thread>", "MergeTreeReader",
	"CompressedReadBuffer", "WriteBufferFromFile", "Context", "Block",
	"ColumnVector<unsigned long>", "ColumnString", "ExpressionActions",
	"Executor", "Scheduler", "Arena", "Allocator<false, false>", "Lexer",
	"Parser", "Serializer", "Deserializer", "Compactor", "MemTable",
	"SkipList<std::string, Comparator>", "Channel", "Socket", "Epoll",
	"TimerQueue", "Router", "Codec", "Encoder", "Decoder", "Reactor",
	"HashJoin<JoinKind::Left, JoinStrictness::All>", "SortCursorImpl",
	"PODArray<char8_t, 4096ul, Allocator<false, false>, 63ul, 64ul>",
};
static const char *const methods[] = {
	"execute", "run", "process", "onRead", "onWrite", "flush", "read",
	"write", "next", "insert", "find", "merge", "emplace", "resize",
	"serialize", "deserialize", "parse", "handle", "dispatch", "poll",
	"schedule", "wait", "notify", "compress", "decompress", "lookup",
	"compare", "hash", "operator()", "operator=", "push_back", "reserve",
	"executeImpl", "executeOnBlock", "consume", "prepare", "work", "step",
};
static const char *const leaves[] = {
	"memcpy", "memmove", "memset", "malloc", "free", "operator new(unsigned long)",
	"operator delete(void*)", "pthread_mutex_lock", "pthread_mutex_unlock",
	"__lll_lock_wait", "pthread_cond_wait", "epoll_wait", "read", "write",
	"__memcmp_avx2_movbe", "strlen", "clock_gettime", "futex_wait_[k]",
	"do_syscall_64_[k]", "copy_user_enhanced_fast_string_[k]",
	"tcp_sendmsg_[k]", "schedule_[k]", "__sched_yield", "LZ4_decompress_safe",
	"ZSTD_decompressBlock_internal", "CityHash_v1_0_2::CityHash128",
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void make_funcs(void)
{
	char buf[512];

	for (int i = 0; i < NFUNCS; i++) {
		if (i < (int)N(leaves)) {
			funcs[i] = strdup(leaves[i]);
			continue;
		}
		/* every name distinct: the index is in it */
		int s = (int)(rnd() % N(spaces)), c = (int)(rnd() % N(classes)),
		    m = (int)(rnd() % N(methods));
		if (rnd() % 4 == 0)
			snprintf(buf, sizeof(buf), "%s::%s::%s%d<%s::%s>", spaces[s],
				 classes[c], methods[m], i,
				 spaces[(s + 3) % N(spaces)], classes[(c + 5) % N(classes)]);
		else
			snprintf(buf, sizeof(buf), "%s::%s::%s%d", spaces[s],
				 classes[c], methods[m], i);
		funcs[i] = strdup(buf);
	}
}

/* A function, the popular ones (small indices) far more often. */
static int pick_func(int depth)
{
	double u = unif();
	int f;

	/* the leaves' functions are popular near the end of chains */
	if (depth > 12 && u < 0.08)
		return (int)(rnd() % N(leaves));
	f = (int)((NFUNCS - 32) * u * u * u);
	return f < (int)N(leaves) ? (int)N(leaves) + f : f;
}

#define MAXDEPTH 128
static int stack[MAXDEPTH];
static long emitted, target;

static void emit(int depth, unsigned long count)
{
	for (int i = 0; i < depth; i++) {
		if (i)
			putchar(';');
		fputs(funcs[stack[i]], stdout);
	}
	printf(" %lu\n", count);
	emitted++;
}

static unsigned long sample_count(void)
{
	/* heavy tail: most stacks were sampled a few times, some thousands */
	double u = unif();

	return 1 + (unsigned long)(0.5 / (u * u + 0.0002));
}

/* Frames in the order of their stacks sorted bytewise (as fp-collapse
 * prints them): a name ends where ';' would follow it. */
static int cmp_name(const void *a, const void *b)
{
	const unsigned char *x = (const unsigned char *)funcs[*(const int *)a];
	const unsigned char *y = (const unsigned char *)funcs[*(const int *)b];

	for (;; x++, y++) {
		int cx = *x ? *x : ';', cy = *y ? *y : ';';

		if (cx != cy || !*x || !*y)
			return cx != cy ? cx - cy : (*x != 0) - (*y != 0);
	}
}

/* The subtree under stack[0..depth) that ends in budget stacks. */
static void grow(int depth, long budget)
{
	int chain;

	/* a run of single callees */
	chain = budget == 1 ? 4 + geometric(6) : geometric(depth < 8 ? 0.3 : 1.2);
	for (int i = 0; i < chain && depth < MAXDEPTH - 1; i++, depth++)
		stack[depth] = pick_func(depth);
	if (budget == 1 || depth >= MAXDEPTH - 1) {
		emit(depth, sample_count());
		return;
	}
	/* some samples in the caller itself */
	if (unif() < 0.05) {
		emit(depth, sample_count());
		if (--budget == 0)
			return;
	}
	/* callees: many at the top (thread pools, handlers), few deeper */
	long want = depth < 4 ? 6 + geometric(10) : 2 + geometric(depth < 20 ? 2.5 : 1.0);
	int n = (int)(want < budget ? want : budget), kids[64];
	double w[64], sum = 0;

	if (n > 64)
		n = 64;
	for (int k = 0; k < n; k++) {
		int f, dup;

		do {
			f = pick_func(depth);
			dup = 0;
			for (int j = 0; j < k; j++)
				dup |= kids[j] == f;
		} while (dup);
		kids[k] = f;
		w[k] = unif();
		w[k] = w[k] * w[k] * w[k] + 0.001;	/* a few callees take most */
		sum += w[k];
	}
	qsort(kids, (size_t)n, sizeof(int), cmp_name);
	long left = budget;
	for (int k = 0; k < n; k++) {
		long b = k == n - 1 ? left : 1 + (long)((double)(budget - n) * w[k] / sum);

		if (b > left - (n - 1 - k))
			b = left - (n - 1 - k);
		if (b < 1)
			b = 1;
		left -= b;
		stack[depth] = kids[k];
		grow(depth + 1, b);
	}
}

int main(int argc, char **argv)
{
	static const char *const pools[] = {
		"TCPHandler", "HTTPHandler", "QueryPipelineEx", "BackgrProcPool",
		"MergeMutate", "BgSchPool", "IOThreadPool", "SystemLogFlush",
		"ReplicatedFetch", "AsyncLoader", "ConfigReloader", "TraceCollector",
	};
	char name[64];
	int order[64];

	if (argc < 2 || (target = atol(argv[1])) < 1) {
		fprintf(stderr, "usage: server-profile STACKS [SEED]\n");
		return 2;
	}
	rng_state = 0x9E3779B97F4A7C15ull ^ (argc > 2 ? strtoull(argv[2], NULL, 10) : 1);
	make_funcs();
	/* the thread pools' names, then clone3;start_thread;worker frames */
	int npools = N(pools);
	long left = target, share[64];

	/* each pool's stacks, then the pools in name order */
	for (int p = 0; p < npools; p++) {
		long b = p == npools - 1 ? left : (left * (p < 3 ? 22 : 6)) / 100;

		if (b < 1)
			b = 1;
		if (b > left - (npools - 1 - p))
			b = left - (npools - 1 - p);
		left -= b;
		share[p] = b;
		snprintf(name, sizeof(name), "server-%s", pools[p]);
		free(funcs[NFUNCS - 1 - p]);
		funcs[NFUNCS - 1 - p] = strdup(name);
		order[p] = NFUNCS - 1 - p;
	}
	qsort(order, (size_t)npools, sizeof(int), cmp_name);
	free(funcs[NFUNCS - 20]);
	free(funcs[NFUNCS - 21]);
	funcs[NFUNCS - 20] = strdup("clone3");
	funcs[NFUNCS - 21] = strdup("start_thread");
	for (int k = 0; k < npools; k++) {
		int p = NFUNCS - 1 - order[k];

		if (share[p] < 1)
			continue;
		stack[0] = order[k];
		stack[1] = NFUNCS - 20;
		stack[2] = NFUNCS - 21;
		grow(3, share[p]);
	}
	if (fflush(stdout) != 0 || ferror(stdout))
		return 1;
	fprintf(stderr, "server-profile: %ld stacks\n", emitted);
	return 0;
}
