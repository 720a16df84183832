// ledgerd - a multi-process C++ ledger service with known performance
// problems planted in it, and which times each of its own waits: what
// test/scripts/report-findings.sh checks fold-report's findings against.
// Built as such services are, frame pointers in the program only (the
// Makefile builds it; Debian's libc and libstdc++ have none):
//
//	c++ -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
//	    -pthread -o ledgerd ledgerd.cpp
//	ledgerd MILLISECONDS REPORT JOURNAL
//
// The main process ("ledgerd") forks two workers ("ledgerd-w0", "-w1")
// and runs:
//  - its main thread, which journals every posting it is told of with a
//    synchronous write(2) per line (ledger::AuditLogger::record: the
//    synchronous logging), then reaps the workers;
//  - a thread "digest" that checksums blocks in one CPU-heavy function
//    (ledger::Digest::fold_block: the hot function).
// Each worker has:
//  - a thread "intake" that queues batches of postings and paces itself
//    with nanosleep (ledger::Intake::pace: a sleep);
//  - three threads "teller-N" that take postings off the queue
//    (ledger::PostingQueue::take: a condition variable, idle when the
//    queue is empty), build a voucher for each (ledger::Voucher::Voucher:
//    a per-request constructor doing real work) and apply it to the book
//    under one mutex held while computing (ledger::Book::apply: the
//    contended lock);
//  - a thread "throttle" that spins reading the clock
//    (ledger::Throttle::spin_until: the tight clock loop);
//  - a thread "auditor" that waits on a condition variable that is only
//    signalled at the end (ledger::Auditor::await_period: idle);
//  - two threads "spare-N", a pool never given work
//    (ledger::SparePool::idle: idle).
// Each wait is one call into libc or libstdc++ made by the function named,
// timed with CLOCK_MONOTONIC around it.  At its end each process appends a
// line per thread and wait site to REPORT:
//	PID TID THREAD SITE CALLS NANOSECONDS
// (a thread blocked at a site is off-CPU there for at most that long).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fcntl.h>
#include <map>
#include <mutex>
#include <pthread.h>
#include <string>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <thread>
#include <time.h>
#include <unistd.h>
#include <vector>

#define NOINLINE __attribute__((noinline))

namespace ledger {

static uint64_t now_ns()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct ThreadWaits {
	int tid;
	std::string name;
	std::map<std::string, std::pair<uint64_t, uint64_t>> sites;
};
static std::mutex registry_lock;
static std::vector<ThreadWaits *> registry;
static thread_local ThreadWaits *mine;

static void register_thread(const char *name)
{
	pthread_setname_np(pthread_self(), name);
	mine = new ThreadWaits{ gettid(), name, {} };
	std::lock_guard<std::mutex> g(registry_lock);
	registry.push_back(mine);
}

static void account(const char *site, uint64_t t0)
{
	auto &s = mine->sites[site];

	s.first++;
	s.second += now_ns() - t0;
}

#define TIMED_VOID(site, call) do { uint64_t t0_ = now_ns(); call; account(site, t0_); } while (0)

static void report(const char *path)
{
	std::string out;
	char line[512];

	std::lock_guard<std::mutex> g(registry_lock);
	for (ThreadWaits *t : registry)
		for (auto &s : t->sites) {
			snprintf(line, sizeof(line), "%d %d %s %s %llu %llu\n", getpid(), t->tid,
				 t->name.c_str(), s.first.c_str(),
				 (unsigned long long)s.second.first,
				 (unsigned long long)s.second.second);
			out += line;
		}
	int fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, out.data(), out.size()) != (ssize_t)out.size()) {
		perror(path);
		_exit(1);
	}
	close(fd);
}

static volatile uint64_t sink;

// rounds of a mixing function: the CPU work of each part, inlined in the
// function that does it (a leaf function gets no frame pointer from GCC
// whatever the options, and would hide its caller)
__attribute__((always_inline)) static inline uint64_t mix(uint64_t x, int rounds)
{
	for (int i = 0; i < rounds; i++)
		x = (x ^ (x >> 29)) * 0xbf58476d1ce4e5b9ull + 0x94d049bb133111ebull;
	return x;
}

struct Posting {
	uint32_t account;
	uint32_t cents;
};

// --- a worker process ---

class PostingQueue {
	std::mutex m;
	std::condition_variable cv;
	std::deque<Posting> q;
	bool closed = false;

public:
	NOINLINE void put(const Posting *p, int n)
	{
		{
			std::lock_guard<std::mutex> g(m);
			q.insert(q.end(), p, p + n);
		}
		cv.notify_all();
	}
	NOINLINE size_t depth()
	{
		std::lock_guard<std::mutex> g(m);
		return q.size();
	}
	NOINLINE void close()
	{
		{
			std::lock_guard<std::mutex> g(m);
			closed = true;
		}
		cv.notify_all();
	}
	NOINLINE bool take(Posting *p)
	{
		std::unique_lock<std::mutex> l(m);

		while (q.empty() && !closed)
			TIMED_VOID("ledger::PostingQueue::take", cv.wait(l));
		if (q.empty())
			return false;
		*p = q.front();
		q.pop_front();
		return true;
	}
};

// A voucher: built for every posting, its constructor does real work
// (the check digits of its text), as a per-request object often does.
class Voucher {
	char text[96];
	uint64_t check;

public:
	NOINLINE Voucher(const Posting &p)
	{
		snprintf(text, sizeof(text), "voucher %u:%u", p.account, p.cents);
		check = mix(p.account ^ ((uint64_t)p.cents << 32), 4500);
	}
	uint64_t digits() const { return check ^ (uint8_t)text[8]; }
};

class Book {
	std::mutex m;
	uint64_t balance = 0;

public:
	// the lock is held while computing: the tellers contend for it
	NOINLINE void apply(const Voucher &v)
	{
		TIMED_VOID("ledger::Book::apply", m.lock());
		balance += mix(v.digits(), 60000);
		m.unlock();
	}
	uint64_t total() const { return balance; }
};

static std::atomic<bool> stopping{ false };

class Intake {
	PostingQueue &q;
	uint32_t next = 1;

public:
	explicit Intake(PostingQueue &q) : q(q) {}
	NOINLINE void pace()
	{
		struct timespec ts = { 0, 2000000 };

		TIMED_VOID("ledger::Intake::pace", nanosleep(&ts, nullptr));
	}
	NOINLINE void run()
	{
		Posting batch[6];

		while (!stopping.load()) {
			if (q.depth() < 12) {
				for (Posting &p : batch)
					p = Posting{ next++, next * 7 };
				q.put(batch, 6);
			}
			pace();
		}
	}
};

class Teller {
	PostingQueue &q;
	Book &book;

public:
	Teller(PostingQueue &q, Book &b) : q(q), book(b) {}
	NOINLINE void serve(const Posting &p)
	{
		Voucher v(p);

		book.apply(v);
	}
	NOINLINE void run()
	{
		Posting p;

		while (q.take(&p))
			serve(p);
	}
};

class Throttle {
	NOINLINE std::chrono::steady_clock::time_point now()
	{
		return std::chrono::steady_clock::now();
	}

public:
	// a deadline met by reading the clock as fast as it can
	NOINLINE void spin_until(std::chrono::steady_clock::time_point t)
	{
		while (now() < t)
			;
	}
	NOINLINE void run()
	{
		while (!stopping.load()) {
			spin_until(std::chrono::steady_clock::now() + std::chrono::microseconds(300));
			struct timespec ts = { 0, 3000000 };
			nanosleep(&ts, nullptr);
		}
	}
};

class Auditor {
	std::mutex m;
	std::condition_variable cv;
	bool done = false;

public:
	NOINLINE void await_period()
	{
		std::unique_lock<std::mutex> l(m);

		while (!done)
			TIMED_VOID("ledger::Auditor::await_period",
				   cv.wait_for(l, std::chrono::seconds(30)));
	}
	void finish()
	{
		{
			std::lock_guard<std::mutex> g(m);
			done = true;
		}
		cv.notify_all();
	}
};

class SparePool {
	std::mutex m;
	std::condition_variable cv;
	bool done = false;

public:
	NOINLINE void idle()
	{
		std::unique_lock<std::mutex> l(m);

		while (!done)
			TIMED_VOID("ledger::SparePool::idle", cv.wait(l));
	}
	void finish()
	{
		{
			std::lock_guard<std::mutex> g(m);
			done = true;
		}
		cv.notify_all();
	}
};

static void worker(int n, int ms, const char *report_path)
{
	char name[16];
	PostingQueue q;
	Book book;
	Auditor auditor;
	SparePool spares;
	std::vector<std::thread> threads;

	snprintf(name, sizeof(name), "ledgerd-w%d", n);
	prctl(PR_SET_NAME, name);
	register_thread(name);
	threads.emplace_back([&] { register_thread("intake"); Intake(q).run(); });
	for (int i = 0; i < 3; i++)
		threads.emplace_back([&, i] {
			char t[16];

			snprintf(t, sizeof(t), "teller-%d", i);
			register_thread(t);
			Teller(q, book).run();
		});
	threads.emplace_back([&] { register_thread("throttle"); Throttle().run(); });
	threads.emplace_back([&] { register_thread("auditor"); auditor.await_period(); });
	for (int i = 0; i < 2; i++)
		threads.emplace_back([&, i] {
			char t[16];

			snprintf(t, sizeof(t), "spare-%d", i);
			register_thread(t);
			spares.idle();
		});
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
	nanosleep(&ts, nullptr);
	stopping = true;
	q.close();
	auditor.finish();
	spares.finish();
	for (auto &t : threads)
		t.join();
	sink = book.total();
	report(report_path);
}

// --- the main process ---

class AuditLogger {
	int fd;

public:
	explicit AuditLogger(int fd) : fd(fd) {}
	NOINLINE void emit(const char *line, int n)
	{
		if (write(fd, line, (size_t)n) != n)
			_exit(3);
	}
	// one line, written at once: synchronous logging
	NOINLINE void record(uint64_t seq, uint64_t value)
	{
		char line[128];
		int n = snprintf(line, sizeof(line), "posting %llu value %016llx ok\n",
				 (unsigned long long)seq, (unsigned long long)value);

		emit(line, n);
	}
};

class Digest {
public:
	NOINLINE uint64_t fold_block(uint64_t seed)
	{
		uint64_t x = seed;

		for (int i = 0; i < 200000; i++)
			x = (x << 7 | x >> 57) ^ (x * 0x9e3779b97f4a7c15ull);
		return x;
	}
	NOINLINE void run()
	{
		uint64_t x = 1;

		while (!stopping.load()) {
			x = fold_block(x);
			struct timespec ts = { 0, 1000000 };
			nanosleep(&ts, nullptr);
		}
		sink = x;
	}
};

NOINLINE static void journal(int fd)
{
	AuditLogger log(fd);
	uint64_t seq = 0;

	while (!stopping.load()) {
		for (int i = 0; i < 64; i++, seq++)
			log.record(seq, mix(seq, 40));
		struct timespec ts = { 0, 1000000 };
		nanosleep(&ts, nullptr);
	}
}

} // namespace ledger

int main(int argc, char **argv)
{
	using namespace ledger;

	if (argc != 4) {
		fprintf(stderr, "usage: ledgerd MILLISECONDS REPORT JOURNAL\n");
		return 2;
	}
	int ms = atoi(argv[1]);
	pid_t w[2];

	for (int i = 0; i < 2; i++)
		if ((w[i] = fork()) == 0) {
			worker(i, ms, argv[2]);
			_exit(0);
		}
	int fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(argv[3]);
		return 1;
	}
	register_thread("ledgerd");
	std::thread digest([] { register_thread("digest"); Digest().run(); });
	std::thread timer([ms] {
		register_thread("timer");
		struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000 };
		nanosleep(&ts, nullptr);
		stopping = true;
	});
	journal(fd);
	timer.join();
	digest.join();
	close(fd);
	for (int i = 0; i < 2; i++)
		waitpid(w[i], nullptr, 0);
	report(argv[2]);
	return 0;
}
