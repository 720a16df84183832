# bench/lib.sh — helpers for bench/*.bench scripts (sourced).
#
#   secs=$(median_time RUNS cmd args...)   median wall seconds of RUNS runs,
#                                          stdout discarded
#   secs=$(median_cpu RUNS cmd args...)    median CPU seconds (user+sys) of
#                                          RUNS runs: on a shared machine
#                                          wall time also counts the time
#                                          other processes hold the CPUs
#   read -r med best < <(time_stats RUNS cmd args...)
#                                          median and least wall seconds of
#                                          the same RUNS runs: the least is
#                                          the code's speed with the least
#                                          interference from other jobs
#   mbps BYTES SECONDS                     MB/s (1 MB = 10^6 bytes)
#   peak_rss_kb cmd args...                peak RSS in KiB (stdout discarded)

time_stats() {
	local runs=$1 i t; shift
	for ((i = 0; i < runs; i++)); do
		t=$( { TIMEFORMAT=%3R; time "$@" > /dev/null 2>/dev/null; } 2>&1 )
		echo "$t"
	done | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)], a[1] }'
}

median_time() {
	time_stats "$@" | cut -d' ' -f1
}

median_cpu() {
	local runs=$1 i; shift
	for ((i = 0; i < runs; i++)); do
		{ TIMEFORMAT='%U %S'; time "$@" > /dev/null 2>/dev/null; } 2>&1 |
			awk '{ printf "%.3f\n", $1 + $2 }'
	done | sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'
}

mbps() {
	awk -v b="$1" -v s="$2" 'BEGIN { if (s <= 0) s = 0.0001; printf "%.0f", b / 1e6 / s }'
}

ratio() {
	awk -v a="$1" -v b="$2" 'BEGIN { if (b <= 0) b = 0.0001; printf "%.2f", a / b }'
}

peak_rss_kb() {
	# GNU time reads the kernel's figure; polling misses short runs
	if [ -x /usr/bin/time ]; then
		local f; f=$(mktemp)
		/usr/bin/time -f %M -o "$f" "$@" > /dev/null 2>/dev/null
		tail -n 1 "$f"; rm -f "$f"
		return
	fi
	"$@" > /dev/null 2>/dev/null &
	local pid=$! hwm=0 h
	while kill -0 $pid 2>/dev/null; do
		h=$(awk '/VmHWM/ { print $2 }' /proc/$pid/status 2>/dev/null)
		[ -n "$h" ] && hwm=$h
		sleep 0.02
	done
	wait $pid
	echo "$hwm"
}
export -f median_time time_stats median_cpu mbps ratio peak_rss_kb
