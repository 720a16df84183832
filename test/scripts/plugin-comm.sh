#!/bin/bash
# A ';' in a process name (a thread names itself, here a copy of dd run
# as "nginx;main") must not split the root frame: in the plugin's stacks,
# with pid and tid too, and in perf script | fp-collapse, it becomes ':'
# as in every frame name (issue 29, item 6).  fold-report then names the
# thread "nginx:main-PID/TID", and fold2pprof gives it the labels comm,
# pid and tid.
. "$(dirname "$0")/plugin-lib.sh"
export PATH="$BIN:$PATH"

cp "$(command -v dd)" "$T/nginx;main"
perf record -q -g -F 999 -o "$T/comm.data" -- sh -c \
	'timeout 0.3 "$1" if=/dev/zero of=/dev/null bs=64k 2>/dev/null; exit 0' sh "$T/nginx;main" \
	>/dev/null 2>"$T/rec.err" || unavailable "perf record -g failed: $(head -3 "$T/rec.err")"
pid=$(perf script -i "$T/comm.data" -F comm,pid 2>/dev/null | awk '$1 == "nginx;main" { print $2; exit }')
[ -n "$pid" ] || unavailable "the recording holds no sample of 'nginx;main' (a machine too busy?)"

# the root frames of the process's stacks, by the plugin and by the text pipeline
for opt in "" pid tid; do
	plugin "$T/comm.data" $opt >"$T/got.$opt" 2>"$T/err" || fail "plugin $opt: $(head -3 "$T/err")"
	perf script -i "$T/comm.data" -F comm,pid,tid,time,period,event,ip,sym,dso 2>/dev/null | fp-collapse ${opt:+--$opt} >"$T/text.$opt" 2>/dev/null
	case $opt in
	"") want="nginx:main" ;;
	pid) want="nginx:main-$pid" ;;
	tid) want="nginx:main-$pid/$pid" ;;
	esac
	for f in "$T/got.$opt" "$T/text.$opt"; do
		what="$( [ "$f" = "$T/got.$opt" ] && echo plugin || echo fp-collapse) ${opt:-default}"
		roots=$(grep '^nginx' "$f" | cut -d';' -f1 | sort -u)
		if [ "$roots" = "$want" ]; then
			echo "ok $what: root frame '$roots'"
		else
			fail "$what: root frames '$(echo $roots)', expected '$want'"
		fi
	done
done

# fold-report names the thread by its whole root frame
fold-report "$T/got.tid" >"$T/report.md" 2>"$T/err" || fail "fold-report: $(head -3 "$T/err")"
grep -q "^| \`nginx:main-$pid/$pid\` |" "$T/report.md" &&
	echo "ok fold-report: thread 'nginx:main-$pid/$pid'" ||
	fail "fold-report: no thread 'nginx:main-$pid/$pid': $(grep -A4 '^## Threads' "$T/report.md" | tail -2)"

# fold2pprof reads comm, pid and tid from the root frame
fold2pprof "$T/got.tid" >"$T/tid.pb.gz" 2>"$T/err" || fail "fold2pprof: $(head -3 "$T/err")"
labels=$(pprof-collapse --tagroot=comm,pid,tid "$T/tid.pb.gz" | grep ";nginx:main-" | cut -d';' -f1-3 | sort -u)
[ "$labels" = "comm=nginx:main;pid=$pid;tid=$pid" ] &&
	echo "ok fold2pprof: labels $labels" ||
	fail "fold2pprof: labels '$(echo $labels)', expected 'comm=nginx:main;pid=$pid;tid=$pid'"

exit $FAILED
