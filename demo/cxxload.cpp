// cxxload - a C++ workload with the names that trip up stack collapsers:
// namespaces, an anonymous namespace, templates whose arguments hold
// parentheses, lambdas, std::function and operator().
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

static volatile unsigned long sink;

namespace {
struct Runner {
	__attribute__((noinline)) void run(int n)
	{
		for (int i = 0; i < n; i++)
			sink += static_cast<unsigned long>(i) * 7;
	}
};
} // namespace

namespace shop {
template <typename F> struct Task {
	F f;
	__attribute__((noinline)) void operator()(int n) { f(n); }
};

template <typename T>
__attribute__((noinline)) T accumulate(const std::vector<T> &v)
{
	T s{};
	for (auto &x : v)
		s += x;
	return s;
}

__attribute__((noinline)) void churn(std::map<std::string, int> &m, int n)
{
	for (int i = 0; i < n; i++)
		m[std::to_string(i % 500)] += i;
}
} // namespace shop

int main(int argc, char **argv)
{
	double secs = argc > 1 ? std::stod(argv[1]) : 1.0;
	auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(secs);
	std::function<void(int)> cb = [](int n) { Runner().run(n); };
	auto lam = [](unsigned long n) { sink += n; Runner().run(static_cast<int>(n)); };
	shop::Task<decltype(lam)> task{lam};
	std::vector<double> v(20000, 1.5);
	std::map<std::string, int> m;

	while (std::chrono::steady_clock::now() < end) {
		cb(200000);
		task(100000);
		sink += static_cast<unsigned long>(shop::accumulate(v));
		shop::churn(m, 20000);
	}
	return 0;
}
