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

# A sanitizer build of the plugin needs its runtime loaded before perf
# (only into perf: other programs, awk included, have their own bugs).
PLUGIN_ENV=()
case $PLUGIN in
*/san/*)
	PLUGIN_ENV=(LD_PRELOAD="$(cc -print-file-name=libasan.so)"
		    ASAN_OPTIONS=detect_leaks=0:abort_on_error=1)
	;;
esac

# in_pid_namespace: true in a PID namespace other than the kernel's first
# (a container), where the tracepoints' pids are the kernel's and perf's
# sample pids the namespace's (the inode of the first is fixed, as
# lib/capture/record.c knows it)
in_pid_namespace() {
	[ "$(readlink /proc/self/ns/pid 2>/dev/null)" != "pid:[4026531836]" ]
}

# run_in_new_pid_namespace SCRIPT: runs SCRIPT in a new PID namespace with
# its own /proc, as perf runs in a container, with FK_OUTER_PIDNS naming
# the caller's namespace; its status is SCRIPT's.  unshare --mount-proc
# makes / private first, which fails where / is not a mount point (a
# chroot, such as a build root): there, /proc is made private instead, and
# a proc of the new namespace mounted over it.
run_in_new_pid_namespace() {
	export FK_OUTER_PIDNS
	FK_OUTER_PIDNS=$(readlink /proc/self/ns/pid)
	command -v unshare >/dev/null 2>&1 || unavailable "no unshare (util-linux)"
	if unshare --pid --fork --mount-proc true >"$T/err" 2>&1; then
		unshare --pid --fork --mount-proc "$1"
	elif unshare --pid --fork --mount --propagation unchanged \
		sh -c 'mount --make-rprivate /proc && mount -t proc proc /proc' >"$T/err2" 2>&1; then
		unshare --pid --fork --mount --propagation unchanged \
			sh -c 'mount --make-rprivate /proc && mount -t proc proc /proc && exec "$0"' "$1"
	else
		unavailable "cannot make a PID namespace with its own /proc (unshare, as root): $(head -1 "$T/err"); $(head -1 "$T/err2")"
	fi
}

# fp_record_perf: sets FOLDKIT_PERF, the perf fp-record runs.  A sanitizer
# build of the plugin needs its runtime loaded before perf, only into perf,
# and only when it loads the plugin: then a wrapper in $T.
fp_record_perf() {
	export FOLDKIT_PERF=perf
	[ ${#PLUGIN_ENV[@]} -gt 0 ] || return 0
	local real
	real=$(command -v perf)
	{
		echo '#!/bin/sh'
		echo 'case " $* " in *" --dlfilter "*)'
		printf '  exec env %q %q %q "$@";;\n' "${PLUGIN_ENV[@]}" "$real"
		echo 'esac'
		printf 'exec %q "$@"\n' "$real"
	} >"$T/perf-san"
	chmod +x "$T/perf-san"
	FOLDKIT_PERF=$T/perf-san
}

if ! perf record -q -o "$T/probe.data" -- true >"$T/probe.err" 2>&1; then
	unavailable "perf record is not permitted here: $(head -3 "$T/probe.err" | tr '\n' ' ')" \
		"(kernel.perf_event_paranoid=$(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null))"
fi
rm -f "$T/probe.data"

W=$T/fkwork
cc -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -pthread -o "$W" "$ROOT/test/workloads/fkwork.c" ||
	{ echo "cannot build the workload" >&2; exit 1; }

# build_exechop: $T/exechop-a and $T/exechop-b (test/workloads/exechop.c)
build_exechop() {
	local p
	for p in a b; do
		cc -O1 -g -fno-omit-frame-pointer -static -no-pie -DSYS=sys_$p -o "$T/exechop-$p" \
			"$ROOT/test/workloads/exechop.c" 2>"$T/cc.err" ||
			unavailable "cannot link a static program (libc.a): $(head -3 "$T/cc.err")"
	done
}

# plugin DATA [DLARG...]: the plugin's output for DATA; perf script gets
# $SCRIPT_ARGS too (split at blanks)
plugin() {
	local data=$1; shift
	local args=() a
	for a in "$@"; do args+=(--dlarg "$a"); done
	# shellcheck disable=SC2086
	env "${PLUGIN_ENV[@]}" perf script -i "$data" ${SCRIPT_ARGS:-} --dlfilter "$PLUGIN" "${args[@]}"
}

# same_as_pipeline NAME DATA "PERF-SCRIPT-ARGS" "FP-COLLAPSE-ARGS" "DLARGS":
# the plugin's output equals perf script | fp-collapse on DATA.  The
# arguments are split at spaces.  perf resolves symbols from the files on
# disk when it runs, and on a shared machine other programs come and go:
# if the outputs differ, both are made once more, back to back, so that
# they read the same files; a real difference stays.
same_as_pipeline() {
	local name=$1 data=$2 try
	for try in 1 2; do
		perf script -i "$data" $3 2>/dev/null | "$BIN/fp-collapse" $4 >"$T/want" 2>/dev/null
		if ! plugin "$data" $5 >"$T/got" 2>"$T/err"; then
			fail "$name: plugin failed: $(head -3 "$T/err")"
			return 1
		fi
		if [ ! -s "$T/want" ]; then
			fail "$name: the text pipeline printed nothing"
			return 1
		fi
		if cmp -s "$T/want" "$T/got"; then
			echo "ok $name: $(wc -l <"$T/got") stacks"
			[ $try = 2 ] && echo "   (equal on the second try: files on disk changed during the first)"
			return 0
		fi
	done
	fail "$name: plugin differs from perf script | fp-collapse"
	diff -u "$T/want" "$T/got" | head -20 | cut -c1-300 >&2
	return 1
}

# perf_records START [ALSO]: perf script's text on stdin, one line per
# record on stdout.  A thread may name itself with a line break, and perf
# prints the name as it is: a line that starts neither as a record (the
# awk regex START) nor as another line of one (ALSO: a call chain's)
# continues the line before, joined with a blank.
perf_records() {
	awk -v start="$1" -v also="${2:-^\$}" '
	$0 ~ start || $0 ~ also { if (n) print line; line = $0; n = 1; next }
	{ line = line " " $0 }
	END { if (n) print line }'
}

# AWK_SWITCH: an awk function, switch_fields(S), that sets prev, state and
# nxt from the text of a sched_switch record, 0 if there is none.  Read by
# the fields around the names, which a name cannot hold (15 bytes), so a
# name with blanks, "prev_pid=" or ';' in it changes nothing.
AWK_SWITCH='
function switch_fields(s,   a) {
	if (!match(s, / prev_pid=-?[0-9]+ prev_prio=-?[0-9]+ prev_state=[^ ]+ ==> next_comm=/))
		return 0
	split(substr(s, RSTART + 1, RLENGTH - 1), a, /[ =]/)
	prev = a[2]; state = a[6]
	if (!match(s, / next_pid=-?[0-9]+ next_prio=-?[0-9]+( |$)/))
		return 0
	split(substr(s, RSTART + 1, RLENGTH - 1), a, /[ =]/)
	nxt = a[2]
	return 1
}'

# hostile_sleeper: starts a thread named with a line break, blanks and ';'
# that wakes every millisecond, as other programs on a shared machine may
# be named; sets hostile (its pid).  A system-wide recording holds its
# switches, and nothing read from it may be thrown by its name.
hostile_sleeper() {
	cat >"$T/hostile.c" <<'EOC'
#include <sys/prctl.h>
#include <unistd.h>
int main(void)
{
	prctl(PR_SET_NAME, "fk\nzz ;x-1/2");
	for (int i = 0; i < 600000; i++)
		usleep(1000);
	return 0;
}
EOC
	cc -O1 -o "$T/hostile" "$T/hostile.c" || { echo "cannot build the renamed sleeper" >&2; exit 1; }
	"$T/hostile" &
	hostile=$!
}

# The bundled server, test/workloads/fkserver.c (fp-record*.sh):
# procs_of EXE: the pids whose /proc/PID/exe is EXE, ascending
procs_of() {
	local d
	for d in /proc/[0-9]*; do
		[ "$(readlink "$d/exe" 2>/dev/null)" = "$1" ] && echo "${d#/proc/}"
	done | sort -n
}
# wait_server EXE: until EXE runs as three processes of five threads each
wait_server() {
	local i p n
	for i in $(seq 200); do
		n=0
		for p in $(procs_of "$1"); do
			[ "$(ls "/proc/$p/task" 2>/dev/null | wc -l)" -eq 5 ] && n=$((n + 1))
		done
		[ $n -eq 3 ] && return 0
		sleep 0.05
	done
	return 1
}
# no_leftovers DIR NAME: no process names DIR, and DIR holds no temporary file
no_leftovers() {
	local left
	left=$(pgrep -af -- "$1" | grep -v pgrep)
	[ -z "$left" ] || fail "$2: processes left behind: $left"
	[ -z "$(ls -A "$1" 2>/dev/null | grep -e '^\.fp-record' -e '\.tmp$')" ] ||
		fail "$2: temporary files left behind: $(ls -A "$1")"
}

# Run as another user (root's tests run fp-record as nobody, by setpriv):
# NOBODY=(setpriv ...), and nobody_bin BINDIR PLUGIN, which sets NOBODY_BIN
# to a directory of BINDIR's programs that nobody can reach, the plugin
# beside it as in the build (../perf-plugin/foldkit.so, where fp-record
# looks).  A clone in a directory other users cannot enter (root's home, a
# mode-700 mktemp -d) gives nobody neither: fp-record then finds no plugin
# (issue 29, item 13).  There NOBODY_BIN is a copy in $T, made reachable,
# and the copy is said on stdout; without one nobody can reach (a private
# TMPDIR) it returns 1 and sets NOBODY_WHY.
NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups)
nobody_bin() {
	local bin=$1 plugin=$2 copy
	NOBODY_BIN= NOBODY_WHY=
	if "${NOBODY[@]}" test -x "$bin/fp-record" -a -r "$plugin"; then
		NOBODY_BIN=$bin
		return 0
	fi
	copy=$(mktemp -d "$T/nobody.XXXXXX") &&
		mkdir "$copy/bin" "$copy/perf-plugin" && cp -pR "$bin"/. "$copy/bin/" &&
		cp -p "$plugin" "$copy/perf-plugin/foldkit.so" && chmod -R a+rX "$copy" || {
		NOBODY_WHY="cannot copy $bin and $plugin to $T"
		return 1
	}
	if ! "${NOBODY[@]}" test -x "$copy/bin/fp-record" -a -r "$copy/perf-plugin/foldkit.so"; then
		NOBODY_WHY="nobody (uid 65534) can reach neither $bin nor a copy in $copy"
		return 1
	fi
	echo "(nobody cannot reach $bin or $plugin: the unprivileged cases run a copy in $copy)"
	NOBODY_BIN=$copy/bin
}
