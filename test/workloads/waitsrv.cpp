// waitsrv - a multi-process C++ request server whose threads block in
// libc and libstdc++ (mutexes, condition variables, sleeps, sockets,
// epoll, joins), and which times every one of its own waits: what
// test/scripts/offcpu-unwind.sh checks foldkit's off-CPU stacks against.
// Build it as such servers are built, with frame pointers in the program
// only (Debian's libc and libstdc++ have none):
//
//	c++ -O2 -g -fno-omit-frame-pointer -pthread -o waitsrv waitsrv.cpp
//	waitsrv MILLISECONDS REPORT
//
// It runs for MILLISECONDS, or with 0 until SIGTERM or SIGINT reaches the
// main process (a test that records it for a while of its own, however
// long a loaded machine takes to start the recording, then ends it).
//
// The main process ("waitsrv") forks two workers ("waitsrv-w0", "-w1")
// and talks to each over a socket pair:
//  - a thread "client-N" per worker sends requests (Client::send_request)
//    and blocks in recv() for each reply (Client::await_reply), pacing
//    itself with nanosleep (Client::pace);
//  - the main thread sleeps in ticks (Supervisor::tick), then joins the
//    clients (Supervisor::join_clients) and reaps the workers
//    (Supervisor::reap, waitpid).
// Each worker has:
//  - a thread "io" in epoll_wait (Io::poll_events) that reads requests and
//    queues them (Queue::push, under the queue's mutex);
//  - four threads "req-N" that take requests off the queue
//    (Queue::pop: a condition variable, an idle pool) and handle each
//    through a few frames of routing (Router::dispatch, Handler::run), a
//    mutex held while computing (Stats::add: contended), a call to a
//    backend waited for with a timed condition variable
//    (Backend::await), and a reply sent under a mutex (Reply::send);
//  - a thread "backend" that waits for calls (Backend::next_call) and
//    answers each (Backend::answer) after a short sleep
//    (Backend::latency, usleep).
// Every wait is one call into libc or libstdc++ made directly by the
// function named above (a frame-pointer frame of the program), timed with
// CLOCK_MONOTONIC around the call: each lock of a mutex too, the ones at a
// function's start included (a contended one blocks in
// pthread_mutex_lock(), and the test's check that no function has more
// off-CPU time than its own waits would otherwise fail on a busy machine).  At its end each process appends one
// line per thread and wait site to REPORT:
//	PID TID THREAD SITE CALLS NANOSECONDS
// (a thread blocked at a site is off-CPU for at most that long).
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <functional>
#include <map>
#include <mutex>
#include <pthread.h>
#include <signal.h>
#include <string>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <time.h>
#include <unistd.h>
#include <vector>

#define NOINLINE __attribute__((noinline))

namespace waitsrv {

static uint64_t now_ns()
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

// Each thread's waits: site -> (calls, ns), reported at the end.  Keyed
// by the site's literal, so that counting a wait allocates nothing after
// its first (an allocation can wait for malloc's lock, in the function
// that made the wait, untimed).
struct ThreadWaits {
	int tid;
	std::string name;
	std::map<const char *, std::pair<uint64_t, uint64_t>> sites;
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

// One blocking call, timed: SITE is the function making it.
#define TIMED(site, call) ({ uint64_t t0_ = now_ns(); auto r_ = (call); account(site, t0_); r_; })
#define TIMED_VOID(site, call) do { uint64_t t0_ = now_ns(); call; account(site, t0_); } while (0)

static void report(const char *path)
{
	std::string out;
	char line[512];

	std::lock_guard<std::mutex> g(registry_lock);
	for (ThreadWaits *t : registry)
		for (auto &s : t->sites) {
			snprintf(line, sizeof(line), "%d %d %s %s %llu %llu\n", getpid(), t->tid,
				 t->name.c_str(), s.first,
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

NOINLINE static uint64_t spin(uint64_t x, int rounds)
{
	for (int i = 0; i < rounds; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

struct Request {
	uint32_t id;
	uint32_t cost;
};

// A queue of at most N, in place: the functions that wait allocate and
// free nothing (malloc's and free's locks would be waits of theirs that
// they do not time).  A client has 4 requests in flight, so a worker never
// holds more than 4 requests or 4 backend calls.
template <typename T, unsigned N> class Ring {
	T a[N];
	unsigned head = 0, n = 0;

public:
	bool empty() const { return n == 0; }
	void push(const T &x)
	{
		if (n == N)
			abort();
		a[(head + n++) % N] = x;
	}
	T pop()
	{
		T x = a[head];

		head = (head + 1) % N;
		n--;
		return x;
	}
};

// --- a worker process ---

class Queue {
	std::mutex m;
	std::condition_variable cv;
	Ring<Request, 64> q;
	bool closed = false;

public:
	NOINLINE void push(const Request &r)
	{
		TIMED_VOID("waitsrv::Queue::push", m.lock());
		q.push(r);
		m.unlock();
		// glibc's condition variables have a lock of their own
		TIMED_VOID("waitsrv::Queue::push", cv.notify_one());
	}
	NOINLINE void close()
	{
		TIMED_VOID("waitsrv::Queue::close", m.lock());
		closed = true;
		m.unlock();
		TIMED_VOID("waitsrv::Queue::close", cv.notify_all());
	}
	NOINLINE bool pop(Request *r)
	{
		std::unique_lock<std::mutex> l(m, std::defer_lock);

		TIMED_VOID("waitsrv::Queue::pop", l.lock());
		while (q.empty() && !closed)
			TIMED_VOID("waitsrv::Queue::pop", cv.wait(l));
		if (q.empty())
			return false;
		*r = q.pop();
		return true;
	}
};

class Stats {
	std::mutex m;
	uint64_t total = 0;

public:
	// held while computing: the request threads contend for it
	NOINLINE void add(uint64_t x, int rounds)
	{
		TIMED_VOID("waitsrv::Stats::add", m.lock());
		total += spin(x, rounds);
		m.unlock();
	}
};

class Backend {
	std::mutex m;
	std::condition_variable cv, done_cv;
	Ring<uint32_t, 64> calls;
	bool done[1024] = {};	// by id % 1024: the ids in flight are 4 in a row
	bool stopping = false;

public:
	NOINLINE bool next_call(uint32_t *id)
	{
		std::unique_lock<std::mutex> l(m, std::defer_lock);

		TIMED_VOID("waitsrv::Backend::next_call", l.lock());
		while (calls.empty() && !stopping)
			TIMED_VOID("waitsrv::Backend::next_call", cv.wait(l));
		if (calls.empty())
			return false;
		*id = calls.pop();
		return true;
	}
	NOINLINE void latency()
	{
		TIMED("waitsrv::Backend::latency", usleep(300));
	}
	NOINLINE void answer(uint32_t id)
	{
		TIMED_VOID("waitsrv::Backend::answer", m.lock());
		done[id % 1024] = true;
		m.unlock();
		TIMED_VOID("waitsrv::Backend::answer", done_cv.notify_all());
	}
	NOINLINE void stop()
	{
		TIMED_VOID("waitsrv::Backend::stop", m.lock());
		stopping = true;
		m.unlock();
		TIMED_VOID("waitsrv::Backend::stop", cv.notify_all());
	}
	// a call made from deep in a handler, waited for with a timeout
	NOINLINE void await(uint32_t id)
	{
		std::unique_lock<std::mutex> l(m, std::defer_lock);

		TIMED_VOID("waitsrv::Backend::await", l.lock());
		calls.push(id);
		TIMED_VOID("waitsrv::Backend::await", cv.notify_one());
		while (!done[id % 1024])
			TIMED("waitsrv::Backend::await",
			      done_cv.wait_for(l, std::chrono::milliseconds(20)));
		done[id % 1024] = false;
	}
};

class Reply {
	std::mutex m;
	int fd;

public:
	explicit Reply(int fd_) : fd(fd_) {}
	NOINLINE void send(const Request &r)
	{
		TIMED_VOID("waitsrv::Reply::send", m.lock());
		TIMED("waitsrv::Reply::send", ::send(fd, &r, sizeof(r), MSG_NOSIGNAL));
		m.unlock();
	}
};

struct Worker {
	Queue queue;
	Stats stats;
	Backend backend;
	Reply reply;
	explicit Worker(int fd) : reply(fd) {}
};

class Handler {
public:
	// a handler's own state on the stack, as real ones have
	NOINLINE static void run(Worker &w, const Request &r)
	{
		uint64_t fields[48];

		for (int i = 0; i < 48; i++)
			fields[i] = spin(r.id + i, 4);
		sink = fields[r.id % 48];
		w.stats.add(fields[0], (int)r.cost);
		if (r.id % 3 == 0)
			w.backend.await(r.id);
		w.reply.send(r);
	}
};

class Router {
public:
	// parses into a buffer on the stack, then calls the route's handler
	NOINLINE static void dispatch(Worker &w, const Request &r,
				      const std::function<void(Worker &, const Request &)> &route)
	{
		char path[384];

		snprintf(path, sizeof(path), "/v1/items/%u?cost=%u", r.id, r.cost);
		sink = strlen(path);
		route(w, r);
	}
};

class Io {
public:
	NOINLINE static int poll_events(int ep, struct epoll_event *ev)
	{
		return TIMED("waitsrv::Io::poll_events", epoll_wait(ep, ev, 1, 50));
	}
	NOINLINE static ssize_t read_request(int fd, Request *r)
	{
		return TIMED("waitsrv::Io::read_request", read(fd, r, sizeof(*r)));
	}
};

static void io_thread(Worker *w, int fd)
{
	register_thread("io");
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event ev = {};

	ev.events = EPOLLIN;
	epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
	for (;;) {
		Request r;

		if (Io::poll_events(ep, &ev) <= 0)
			continue;
		if (Io::read_request(fd, &r) != (ssize_t)sizeof(r))
			break;
		w->queue.push(r);
	}
	close(ep);
	w->queue.close();
}

static void request_thread(Worker *w, int n)
{
	char name[16];
	std::function<void(Worker &, const Request &)> route = Handler::run;

	snprintf(name, sizeof(name), "req-%d", n);
	register_thread(name);
	Request r;
	while (w->queue.pop(&r))
		Router::dispatch(*w, r, route);
}

static void backend_thread(Worker *w)
{
	register_thread("backend");
	uint32_t id;

	while (w->backend.next_call(&id)) {
		w->backend.latency();
		w->backend.answer(id);
	}
}

struct Joiner {
	NOINLINE static void join_all(std::vector<std::thread> &ts, const char *site)
	{
		for (auto &t : ts)
			TIMED_VOID(site, t.join());
	}
};

static void run_worker(int fd, int n, const char *path)
{
	char name[16];

	snprintf(name, sizeof(name), "waitsrv-w%d", n);
	prctl(PR_SET_NAME, name);
	register_thread(name);
	Worker *w = new Worker(fd);
	std::vector<std::thread> req;
	std::thread io(io_thread, w, fd), backend(backend_thread, w);

	for (int i = 0; i < 4; i++)
		req.emplace_back(request_thread, w, i);
	std::vector<std::thread> first{};
	first.push_back(std::move(io));
	Joiner::join_all(first, "waitsrv::Joiner::join_all");
	Joiner::join_all(req, "waitsrv::Joiner::join_all");
	w->backend.stop();
	std::vector<std::thread> last{};
	last.push_back(std::move(backend));
	Joiner::join_all(last, "waitsrv::Joiner::join_all");
	report(path);
}

// --- the main process ---

static std::atomic<bool> stopping;
static volatile sig_atomic_t told_to_stop;

static void on_stop_signal(int)
{
	told_to_stop = 1;
}

class Client {
public:
	NOINLINE static bool send_request(int fd, const Request &r)
	{
		return TIMED("waitsrv::Client::send_request",
			     ::send(fd, &r, sizeof(r), MSG_NOSIGNAL)) == (ssize_t)sizeof(r);
	}
	NOINLINE static bool await_reply(int fd, Request *r)
	{
		return TIMED("waitsrv::Client::await_reply",
			     recv(fd, r, sizeof(*r), MSG_WAITALL)) == (ssize_t)sizeof(*r);
	}
	NOINLINE static void pace(uint32_t id)
	{
		struct timespec ts = { 0, 200000 + (long)(id % 5) * 100000 };

		TIMED("waitsrv::Client::pace", nanosleep(&ts, nullptr));
	}
};

static void client_thread(int fd, int n)
{
	char name[16];

	snprintf(name, sizeof(name), "client-%d", n);
	register_thread(name);
	for (uint32_t id = (uint32_t)n; !stopping; id += 2) {
		// a few requests in flight, so that the request threads contend
		Request r[4], back;
		for (int k = 0; k < 4; k++) {
			r[k] = Request{ id * 4 + (uint32_t)k, 60000 + (id % 7) * 10000 };
			if (!Client::send_request(fd, r[k]))
				return;
		}
		for (int k = 0; k < 4; k++)
			if (!Client::await_reply(fd, &back))
				return;
		Client::pace(id);
	}
}

struct Supervisor {
	NOINLINE static void tick()
	{
		TIMED_VOID("waitsrv::Supervisor::tick",
			   std::this_thread::sleep_for(std::chrono::milliseconds(20)));
	}
	NOINLINE static void join_clients(std::vector<std::thread> &ts)
	{
		for (auto &t : ts)
			TIMED_VOID("waitsrv::Supervisor::join_clients", t.join());
	}
	NOINLINE static void reap(pid_t pid)
	{
		int status;

		TIMED("waitsrv::Supervisor::reap", waitpid(pid, &status, 0));
		if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
			_exit(1);
	}
};

} // namespace waitsrv

int main(int argc, char **argv)
{
	using namespace waitsrv;

	if (argc != 3) {
		fprintf(stderr, "usage: waitsrv MILLISECONDS REPORT\n");
		return 2;
	}
	uint64_t ms = strtoull(argv[1], nullptr, 10);
	uint64_t end = now_ns() + ms * 1000000u;
	int fds[2][2];
	pid_t pids[2];

	for (int n = 0; n < 2; n++) {
		if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds[n]) != 0) {
			perror("socketpair");
			return 1;
		}
		if ((pids[n] = fork()) == 0) {
			close(fds[n][0]);
			if (n == 1)
				close(fds[0][0]);
			run_worker(fds[n][1], n, argv[2]);
			_exit(0);
		}
		close(fds[n][1]);
	}
	register_thread("waitsrv");
	// the stop signals: the main process's main thread alone takes them
	// (the clients start with them blocked), so no other wait is cut
	// short; a tick's sleep is resumed after the handler
	sigset_t stop_set, old_set;
	sigemptyset(&stop_set);
	sigaddset(&stop_set, SIGTERM);
	sigaddset(&stop_set, SIGINT);
	if (ms == 0) {
		struct sigaction sa = {};

		sa.sa_handler = on_stop_signal;
		sa.sa_flags = SA_RESTART;
		sigaction(SIGTERM, &sa, nullptr);
		sigaction(SIGINT, &sa, nullptr);
	}
	pthread_sigmask(SIG_BLOCK, &stop_set, &old_set);
	std::vector<std::thread> clients;
	for (int n = 0; n < 2; n++)
		clients.emplace_back(client_thread, fds[n][0], n);
	pthread_sigmask(SIG_SETMASK, &old_set, nullptr);
	while (ms ? now_ns() < end : !told_to_stop)
		Supervisor::tick();
	stopping = true;
	Supervisor::join_clients(clients);
	for (int n = 0; n < 2; n++) {
		shutdown(fds[n][0], SHUT_RDWR);
		Supervisor::reap(pids[n]);
	}
	report(argv[2]);
	return 0;
}
