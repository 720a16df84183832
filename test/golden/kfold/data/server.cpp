// server.cpp - the program recorded for the filters' golden inputs: a
// scheduler thread and runner threads shaped like the server in the user's
// profiling workflow (a DecodeScheduler that takes a lock per request, a
// BlazeRunner that polls for responses), with system calls and sleeps so
// that recordings hold user, libc and kernel frames, on- and off-CPU.
//
//   g++ -O2 -g -fno-omit-frame-pointer -pthread -o server server.cpp
//   server SECONDS [CRITICAL]   (CRITICAL: work done holding the lock)
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <fcntl.h>
#include <mutex>
#include <thread>
#include <unistd.h>
#include <vector>

static std::atomic<bool> stop;
static volatile unsigned long sink;
static int devnull;

namespace tt::scheduler {
class DecodeScheduler {
public:
	explicit DecodeScheduler(int critical) : critical_(critical) {}
	__attribute__((noinline)) void handle_api_requests()
	{
		std::lock_guard<std::mutex> g(mu_);
		tokenize(critical_);
		queue_.push_back(static_cast<unsigned long>(sink));
		if (queue_.size() > 64)
			queue_.pop_front();
	}
	__attribute__((noinline)) bool try_pop_response(unsigned long &out)
	{
		std::lock_guard<std::mutex> g(mu_);
		if (queue_.empty())
			return false;
		out = queue_.front();
		queue_.pop_front();
		return true;
	}

private:
	__attribute__((noinline)) static void tokenize(int n)
	{
		unsigned long x = sink;
		for (int i = 0; i < n; i++)
			x = x * 6364136223846793005UL + 1442695040888963407UL;
		sink = x;
	}
	int critical_;
	std::mutex mu_;
	std::deque<unsigned long> queue_;
};
} // namespace tt::scheduler

class BlazeRunner {
public:
	explicit BlazeRunner(tt::scheduler::DecodeScheduler &s) : s_(s) {}
	__attribute__((noinline)) void step()
	{
		unsigned long r;
		if (s_.try_pop_response(r))
			emit(r);
		else
			std::this_thread::sleep_for(std::chrono::microseconds(20));
	}

private:
	__attribute__((noinline)) static void emit(unsigned long r)
	{
		char buf[2048] = { static_cast<char>(r) };
		if (write(devnull, buf, sizeof(buf)) < 0)
			std::abort();
	}
	tt::scheduler::DecodeScheduler &s_;
};

int main(int argc, char **argv)
{
	double secs = argc > 1 ? std::atof(argv[1]) : 2.0;
	int critical = argc > 2 ? std::atoi(argv[2]) : 20000;
	tt::scheduler::DecodeScheduler sched(critical);
	std::vector<std::thread> threads;

	devnull = open("/dev/null", O_WRONLY);
	for (int i = 0; i < 2; i++)
		threads.emplace_back([&] { while (!stop) sched.handle_api_requests(); });
	for (int i = 0; i < 2; i++)
		threads.emplace_back([&] { BlazeRunner r(sched); while (!stop) r.step(); });
	std::this_thread::sleep_for(std::chrono::duration<double>(secs));
	stop = true;
	for (auto &t : threads)
		t.join();
	return 0;
}
