// cxxserver - a small C++ "request server" for fold-report's golden
// recordings (test/golden/fold-report/data/README).  Build with frame
// pointers:
//
//	c++ -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer
//	    -pthread -o cxxserver cxxserver.cpp
//	cxxserver [MILLISECONDS] [WORKERS]        (default 1000 ms, 4 workers)
//
// WORKERS threads named "req-worker-N" take requests from a queue fed by
// the main thread and, for each one, do what a real server's hot paths do
// and what fold-report's findings look for:
//  - build a Request (a constructor that allocates: std::string, vector);
//  - dispatch it through a std::map of std::function handlers to templated
//    code (Pipeline<Stage>::run);
//  - update shared statistics under one std::mutex, holding it while
//    computing, so the workers contend for it;
//  - read the clock in a tight loop (std::chrono, through the vDSO);
//  - log each request synchronously with write(2) to /dev/null.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <fcntl.h>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <pthread.h>
#include <string>
#include <thread>
#include <unistd.h>
#include <vector>

#define NOINLINE __attribute__((noinline))

namespace srv {

static volatile unsigned long sink;

struct Request {
	std::string path;
	std::vector<unsigned long> body;

	NOINLINE Request(unsigned id) : path("/v1/items/" + std::to_string(id)), body(256)
	{
		for (size_t i = 0; i < body.size(); i++)
			body[i] = id * 2654435761u + i;
	}
};

template <int Rounds> struct Stage {
	NOINLINE static unsigned long apply(unsigned long x)
	{
		for (int i = 0; i < Rounds * 400; i++)
			x = x * 6364136223846793005ul + 1442695040888963407ul;
		return x;
	}
};

template <typename S1, typename S2> struct Pipeline {
	NOINLINE static unsigned long run(const Request &r)
	{
		unsigned long x = 0;
		for (auto v : r.body)
			x ^= v;
		return S2::apply(S1::apply(x));
	}
};

class Stats {
	std::mutex mu;
	std::map<std::string, unsigned long> hits;

public:
	NOINLINE void record(const Request &r, unsigned long v)
	{
		std::lock_guard<std::mutex> g(mu);
		hits[r.path.substr(0, 12)] += v & 1;
		sink += Stage<8>::apply(v);	// work while holding the lock
	}
};

class Logger {
	int fd = open("/dev/null", O_WRONLY);

public:
	~Logger() { close(fd); }
	NOINLINE void log(const Request &r, unsigned long v)
	{
		char line[128];
		int n = snprintf(line, sizeof(line), "%s -> %lu\n", r.path.c_str(), v);
		if (write(fd, line, (size_t)n) < 0)
			sink++;
	}
};

NOINLINE static void pace(std::chrono::microseconds us)
{
	auto until = std::chrono::steady_clock::now() + us;
	while (std::chrono::steady_clock::now() < until)
		sink++;
}

class Server {
	std::map<std::string, std::function<unsigned long(const Request &)>> handlers;
	Stats stats;
	Logger logger;
	std::mutex qmu;
	std::condition_variable qcv;
	std::deque<unsigned> queue;
	std::atomic<bool> done{false};

public:
	Server()
	{
		handlers["light"] = [](const Request &r) { return Pipeline<Stage<1>, Stage<2>>::run(r); };
		handlers["heavy"] = [](const Request &r) { return Pipeline<Stage<4>, Stage<8>>::run(r); };
	}

	NOINLINE void handle(unsigned id)
	{
		auto req = std::make_unique<Request>(id);
		unsigned long v = handlers[id % 3 ? "light" : "heavy"](*req);
		stats.record(*req, v);
		logger.log(*req, v);
		pace(std::chrono::microseconds(5));
	}

	NOINLINE void worker(int n)
	{
		char name[16];
		snprintf(name, sizeof(name), "req-worker-%d", n);
		pthread_setname_np(pthread_self(), name);
		for (;;) {
			unsigned id;
			{
				std::unique_lock<std::mutex> g(qmu);
				qcv.wait(g, [this] { return done || !queue.empty(); });
				if (queue.empty())
					return;
				id = queue.front();
				queue.pop_front();
			}
			handle(id);
		}
	}

	NOINLINE void feed(std::chrono::steady_clock::time_point end)
	{
		unsigned id = 0;
		while (std::chrono::steady_clock::now() < end) {
			{
				std::lock_guard<std::mutex> g(qmu);
				if (queue.size() < 256)
					for (int i = 0; i < 64; i++)
						queue.push_back(id++);
			}
			qcv.notify_all();
			std::this_thread::sleep_for(std::chrono::microseconds(100));
		}
		done = true;
		qcv.notify_all();
	}
};

} // namespace srv

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 1000;
	int workers = argc > 2 ? atoi(argv[2]) : 4;

	if (ms <= 0 || workers < 1 || workers > 64) {
		fprintf(stderr, "usage: cxxserver [MILLISECONDS] [WORKERS 1-64]\n");
		return 2;
	}
	srv::Server s;
	std::vector<std::thread> t;
	for (int i = 0; i < workers; i++)
		t.emplace_back([&s, i] { s.worker(i); });
	s.feed(std::chrono::steady_clock::now() + std::chrono::milliseconds(ms));
	for (auto &th : t)
		th.join();
	return 0;
}
