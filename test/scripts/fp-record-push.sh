#!/bin/bash
# fp-record-push.sh - fp-record --push: a real capture of the bundled
# multi-process workload (test/workloads/fkserver.c: a main process and two
# workers) pushed, as written, to a real ClickHouse server
# (test/store/clickhouse-servers.sh), then read back with fold-query:
#  - every profile of the capture is stored, labelled by the capture
#    itself: host, service (the executable's name), process, role, pid,
#    profile (on-cpu, off-cpu), unit (ns, us), and --push-label's;
#  - each process and side queried back is its folded file, byte for
#    byte; all of a side merged is the sum of its files;
#  - the stored window is the one fp-record timed: inside the test's own
#    clock readings around the run, as long as the window at least;
#  - a store that is down: fp-record says so naming the server, exits 1,
#    and the capture stays as written; a bad URL or label is a usage
#    error before anything is recorded.
set -u
. "$(dirname "$0")/plugin-lib.sh"
. "$ROOT/test/store/clickhouse-servers.sh"
export PATH="$BIN:$PATH"
trap 'ch_stop; rm -rf "$T"' EXIT
FPR=$BIN/fp-record
fp_record_perf
ch_start "$T/ch" 127.0.0.1
case $? in
0) ;;
2) echo "fp-record-push: $CH_WHY" >&2; exit 77 ;;
*) echo "fp-record-push test FAILED: $CH_WHY" >&2; exit 1 ;;
esac
URL=clickhouse://127.0.0.1:$CH_HTTP/cap
fold-push --init "$URL" > /dev/null || fail "--init"

S=$T/fkserver
cc -O1 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -pthread -o "$S" \
	"$ROOT/test/workloads/fkserver.c" || { echo "cannot build fkserver" >&2; exit 1; }

# sum FILE...: the merged profile, summed with awk and sorted bytewise
sum() {
	awk '{ c = $NF; s = substr($0, 1, length($0) - length(c) - 1); t[s] += c }
	     END { for (s in t) printf "%s %.0f\n", s, t[s] }' "$@" | sort
}
same() { # DESC EXPECTED ACTUAL
	cmp -s "$2" "$3" || { fail "$1"; diff "$2" "$3" | head -5 >&2; }
}
# col NAME: the column NAME of the capture's index.tsv, a line per process
col() {
	awk -F'\t' -v c="$1" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == c) k = i; next }
		{ print (k ? $k : "") }' "$C/index.tsv"
}

# ---- a capture pushed as written ----
C=$T/cap
before=$(date +%s)
"$FPR" -d 1 -o "$C" --push "$URL" --push-label release=v1 -- "$S" 4000 > "$T/out" 2> "$T/err"
st=$?
after=$(date +%s)
[ $st = 0 ] || fail "fp-record --push: exit $st: $(tail -5 "$T/err")"
[ -s "$C/index.tsv" ] || { fail "no capture: $(tail -5 "$T/err")"; exit 1; }
nfiles=$(( $(col on_folded | grep -vc '^-$') + $(col off_folded | grep -vc '^-$') ))
[ "$nfiles" -ge 4 ] || fail "a capture of $nfiles profiles: $(cat "$C/index.tsv")"
[ "$(grep -c '^stored ' "$T/err")" = "$nfiles" ] ||
	fail "fold-push's lines for $nfiles profiles: $(grep -e stored -e fold-push "$T/err")"
host=$(hostname)
paste -d "|" <(col process) <(col role) <(col pid) <(col on_folded) <(col off_folded) > "$T/rows"
while IFS="|" read -r proc role pid on off; do
	for side in on off; do
		f=${!side}
		[ "$f" = - ] && continue
		case $side in on) prof=on-cpu unit=ns ;; off) prof=off-cpu unit=us ;; esac
		fold-query "$URL" -l host="$host" -l service=fkserver -l process="$proc" \
			-l role="$role" -l pid="$pid" -l profile=$prof -l unit=$unit -l release=v1 \
			> "$T/q" 2> "$T/qerr" || { fail "query $proc $role $side: $(cat "$T/qerr")"; continue; }
		same "$proc $role ($pid) $side: what the store gives back" <(sum "$C/$f") "$T/q"
	done
done < "$T/rows"
fold-query "$URL" -l profile=on-cpu > "$T/q" || fail "query every on-CPU profile"
same "the on-CPU profiles merged" <(cd "$C" && sum $(col on_folded | grep -v '^-$')) "$T/q"
# the window: the one fp-record timed, within the test's clock readings
read -r t0 t1 n < <(ch_sql 127.0.0.1 "SELECT min(toUInt32(time)), max(toUInt32(until)), uniqExact(time, until) FROM cap.foldkit_samples")
[ "$n" = 1 ] || fail "the profiles of one capture have $n windows"
[ "$t0" -ge "$before" ] && [ "$t1" -le $((after + 1)) ] ||
	fail "window [$t0, $t1] is not inside the run [$before, $after]"
[ $((t1 - t0)) -ge 1 ] || fail "window [$t0, $t1] shorter than -d 1"
fold-query "$URL" -l profile=off-cpu --from "$t0" --until $((t0 + 1)) > /dev/null ||
	fail "--from/--until around the capture's window select nothing"

# ---- the store down: said, status 1, the capture kept ----
down=$(ch_pick_port)
"$FPR" -d 0.5 -o "$T/kept" --push "clickhouse://fk:s3cret@127.0.0.1:$down/cap" -- "$S" 3000 \
	> "$T/out" 2> "$T/err"
st=$?
[ $st = 1 ] || fail "a store down: exit $st, not 1"
grep -q "clickhouse://fk@127.0.0.1:$down/cap: cannot connect" "$T/err" ||
	fail "a store down: fold-push's message: $(tail -3 "$T/err")"
grep -q "$T/kept: not pushed to clickhouse://fk@127.0.0.1:$down/cap: fold-push exited with status 1 (the capture is kept)" "$T/err" ||
	fail "a store down: fp-record's message: $(tail -3 "$T/err")"
[ -s "$T/kept/index.tsv" ] && [ -s "$T/kept/report.md" ] || fail "a capture not pushed was not kept"
grep -q s3cret "$T/err" && fail "the password is in a message"

# ---- refused before the window: nothing recorded, no directory ----
for bad in "--push clickhouse://h/db?x=1" "--push clickhouse://h/db --push-label a-b=c" \
	"--push-label a=b"; do
	# shellcheck disable=SC2086
	"$FPR" -d 0.5 -o "$T/never" $bad -- "$S" 3000 > /dev/null 2> "$T/err"
	st=$?
	[ $st = 2 ] || fail "'$bad': exit $st, not 2"
	[ -e "$T/never" ] && fail "'$bad': a directory was made"
done
exit $FAILED
