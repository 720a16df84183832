# plugin-lib.sh - sourced by test/scripts/plugin*.sh: finds the plugin,
# checks that perf may record here, builds the bundled workload.
# Not executable itself, so test/run-tests does not run it.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
BIN=${BIN:-$BUILD/bin}
PLUGIN=$BUILD/perf-plugin/foldkit.so
export LC_ALL=C
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# Without a working perf record the test can prove nothing: say so loudly,
# and fail in CI rather than pass silently.
unavailable() {
	echo "##########################################################" >&2
	echo "$(basename "$0"): CANNOT TEST THE PERF PLUGIN: $*" >&2
	echo "##########################################################" >&2
	if [ "${CI:-}" = true ]; then exit 1; fi
	echo "skipped: $*"
	exit 77
}

fail() { echo "FAIL: $*" >&2; FAILED=1; }
FAILED=0

[ -f "$PLUGIN" ] || { echo "no $PLUGIN: run make" >&2; exit 1; }
command -v perf >/dev/null 2>&1 || unavailable "perf is not installed (apt-get install linux-perf)"
command -v cc >/dev/null 2>&1 || unavailable "no C compiler for the workload"

# A sanitizer build of the plugin needs its runtime loaded before perf.
case $PLUGIN in
*/san/*)
	export LD_PRELOAD=$(cc -print-file-name=libasan.so)
	export ASAN_OPTIONS=detect_leaks=0:abort_on_error=1
	;;
esac

if ! perf record -q -o "$T/probe.data" -- true >"$T/probe.err" 2>&1; then
	unavailable "perf record is not permitted here: $(head -3 "$T/probe.err" | tr '\n' ' ')" \
		"(kernel.perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null))"
fi
rm -f "$T/probe.data"

W=$T/fkwork
cc -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -pthread -o "$W" "$ROOT/test/workloads/fkwork.c" ||
	{ echo "cannot build the workload" >&2; exit 1; }

# plugin DATA [DLARG...]: the plugin's output for DATA
plugin() {
	local data=$1; shift
	local args=() a
	for a in "$@"; do args+=(--dlarg "$a"); done
	perf script -i "$data" --dlfilter "$PLUGIN" "${args[@]}"
}
