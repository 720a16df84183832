#!/bin/bash
# fp-record-unprivileged.sh - fp-record run by a user without privileges
# (nobody, by setpriv, when the tests run as root):
#  - another user's process (root's): refused before perf runs, with the
#    fix (run fp-record as root);
#  - its own process, off-CPU, where perf_event_paranoid forbids it:
#    refused with the fix, no output directory left;
#  - its own process, on-CPU (perf_event_paranoid <= 2): recorded.
# Each twice: from the build as it is, and from a copy of the build in a
# directory other users cannot enter (mode 700), as a clone in root's
# home or in a mktemp -d is (issue 29, item 13).  There nobody could not
# reach the plugin ("the perf plugin foldkit.so was not found"): these
# cases then run a copy of the programs and plugin that nobody can read
# (nobody_bin in plugin-lib.sh), and say so.
set -u
. "$(dirname "$0")/plugin-lib.sh"

PIDS_TO_KILL=()
cleanup() {
	local p
	for p in "${PIDS_TO_KILL[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${PIDS_TO_KILL[@]}"; do wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT

[ -x "$BIN/fp-record" ] || { echo "no $BIN/fp-record: run make" >&2; exit 1; }
if ! command -v setpriv >/dev/null || [ "$(id -u)" != 0 ]; then
	fail "cannot test permissions: not root, or no setpriv"
	exit 1
fi
fp_record_perf
chmod 755 "$T"
mkdir -m 777 "$T/nob"
S=$T/nob/fkserver
cc -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -pthread -o "$S" \
	"$ROOT/test/workloads/fkserver.c" && chmod 755 "$S" || { echo "cannot build fkserver" >&2; exit 1; }
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)

# root's process, and nobody's own server (setpriv becomes the server)
sleep 600 &
ROOTPID=$!
"${NOBODY[@]}" "$S" 0 &
NOBPID=$!
PIDS_TO_KILL+=("$ROOTPID" "$NOBPID")
wait_server "$S" || { fail "the unprivileged fkserver did not start"; exit 1; }

# cases LABEL BINDIR PLUGIN: the three cases, fp-record run by nobody from
# BINDIR (or the copy nobody_bin makes); output in $T/nob/LABEL-*
SKIPPED=
cases() {
	local label=$1 fpr rc
	if ! nobody_bin "$2" "$3"; then
		echo "skipped $label: $NOBODY_WHY"
		SKIPPED="the unprivileged cases $label: $NOBODY_WHY"
		return 0
	fi
	fpr=$NOBODY_BIN/fp-record
	"${NOBODY[@]}" "$fpr" --pid "$ROOTPID" -d 1 -o "$T/nob/$label-o1" >/dev/null 2>"$T/err"
	rc=$?
	[ $rc -eq 1 ] && grep -q "process $ROOTPID (sleep) belongs to another user: run fp-record as root (sudo)" "$T/err" &&
		echo "ok $label: another user's process: refused, with the fix" ||
		fail "$label: another user's process: exit $rc: $(cat "$T/err")"
	# off-CPU: tracepoints need root or perf_event_paranoid -1
	"${NOBODY[@]}" "$fpr" --pid "$NOBPID" -d 1 -o "$T/nob/$label-o2" >/dev/null 2>"$T/err"
	rc=$?
	if [ "$paranoid" -ge 0 ]; then
		[ $rc -eq 1 ] && grep -Eq "perf may not (make|read).*off-CPU.*run fp-record as root" "$T/err" &&
			echo "ok $label: unprivileged off-CPU (perf_event_paranoid=$paranoid): refused, with the fix" ||
			fail "$label: unprivileged off-CPU with perf_event_paranoid=$paranoid: exit $rc: $(cat "$T/err")"
		[ -e "$T/nob/$label-o2" ] && fail "$label: unprivileged: the output directory was left"
	else
		grep -q "perf may not" "$T/err" &&
			fail "$label: perf_event_paranoid=$paranoid allows it, yet: $(cat "$T/err")"
	fi
	# on-CPU of one's own process needs no privilege up to paranoid 2
	if [ "$paranoid" -le 2 ]; then
		"${NOBODY[@]}" "$fpr" --pid "$NOBPID" --on -d 1 -o "$T/nob/$label-o3" >/dev/null 2>"$T/err"
		rc=$?
		# the file's name is the process's and role's, as index.tsv lists it
		f=$(awk -F'\t' -v p="$NOBPID" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "on_folded") k = i; next }
			$2 == p { print $k }' "$T/nob/$label-o3/index.tsv" 2>/dev/null)
		[ $rc -eq 0 ] && [ -n "$f" ] && [ -s "$T/nob/$label-o3/$f" ] &&
			echo "ok $label: unprivileged on-CPU of one's own process" ||
			fail "$label: unprivileged --on: exit $rc: $(tail -2 "$T/err")"
	fi
}

cases build "$BIN" "$PLUGIN"

# the same build in a directory nobody cannot enter; named like the build
# (build/san keeps its name: plugin-lib.sh knows a sanitizer build by it)
P=$(mktemp -d)
trap 'cleanup; rm -rf "$P"' EXIT
chmod 700 "$P"
PB=$P/$(basename "$BUILD")
mkdir -p "$PB/perf-plugin" && cp -pR "$BIN" "$PB/bin" && cp -p "$PLUGIN" "$PB/perf-plugin/" ||
	{ fail "cannot copy the build to $P"; exit 1; }
if "${NOBODY[@]}" test -r "$PB/perf-plugin/foldkit.so"; then
	fail "nobody can read $PB: not a private directory"
else
	cases private "$PB/bin" "$PB/perf-plugin/foldkit.so"
	[ -n "$SKIPPED" ] || [ "$NOBODY_BIN" != "$PB/bin" ] ||
		fail "private: fp-record ran from $PB, which nobody cannot read"
fi

kill -TERM "$NOBPID" 2>/dev/null
wait "$NOBPID"
no_leftovers "$T/nob" "unprivileged"
[ $FAILED = 0 ] && [ -n "$SKIPPED" ] && { echo "skipped: $SKIPPED"; exit 77; }
exit $FAILED
