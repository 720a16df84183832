#!/bin/bash
# pprof.sh — foldkit's pprof files against Google's pprof itself, built
# from Debian's sources (golang-go, golang-github-google-pprof-dev) into
# build/pprof when missing:
#
#  1. fold2pprof's profiles: pprof -raw (every sample, its locations and
#     labels), -traces (every stack as pprof prints it) and -top (the
#     total) give back the folded input's stacks, counts, labels and
#     total, for FlameGraph's collapsed test profiles;
#  2. a real gperftools CPU profile (Debian's libprofiler, preloaded into
#     the bundled demo workload), converted by pprof -proto: pprof-collapse
#     prints the stacks pprof -traces prints, with the same counts, and the
#     nanosecond total pprof -top gives.
# Expected values come from the input and from pprof's own output.  The
# tools are build and test dependencies (tools/deps): if one is missing the
# test FAILS rather than skipping.
set -u
ROOT=${ROOT:-$(cd "$(dirname "$0")/../.." && pwd)}
BIN=${BIN:-$ROOT/build/bin}
export PATH="$BIN:$PATH" LC_ALL=C
fail() { echo "pprof test FAILED: $*" >&2; exit 1; }
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
DATA=$ROOT/test/golden/data/flamegraph/collapsed

PPROF=$ROOT/build/pprof
if [ ! -x "$PPROF" ]; then
	command -v go >/dev/null || fail "no go compiler (apt-get install golang-go; see tools/deps)"
	[ -d /usr/share/gocode/src/github.com/google/pprof ] ||
		fail "no pprof sources (apt-get install golang-github-google-pprof-dev)"
	echo "building pprof into $PPROF" >&2
	mkdir -p "$ROOT/build"
	GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE=$ROOT/build/go-cache GOFLAGS= \
		go build -o "$PPROF.tmp" github.com/google/pprof >&2 || fail "go build github.com/google/pprof failed"
	mv "$PPROF.tmp" "$PPROF"
fi
export PPROF_TMPDIR=$T HOME=$T	# pprof keeps no history or cache of ours

checked=0
same() { # WHAT EXPECTED ACTUAL
	if ! cmp -s "$2" "$3"; then
		diff -u "$2" "$3" | head -20 | cut -c1-300 >&2
		fail "$1: pprof saw something else"
	fi
	checked=$((checked + 1))
}

# canonical FILE: the folded stacks summed and sorted, "STACK COUNT"
canonical() {
	awk '{ c = $NF; sub(/[ \t][^ \t]+[ \t]*$/, ""); s[$0] += c }
	     END { for (k in s) printf "%s %.0f\n", k, s[k] }' "$@" | sort
}

# traces FILE [pprof options]: pprof -traces as folded stacks, "STACK COUNT"
# (pprof prints leaf first, one stack per sample, counts in the first 10
# columns, labels as "KEY:  VALUE" lines, inlined frames with " (inline)",
# and a function with an empty name, as folded text may have, "<unknown>")
traces() {
	local f=$1; shift
	"$PPROF" -traces "$@" "$f" 2>/dev/null | awk '
	function flush() { if (n) { s = fr[n]; for (i = n - 1; i >= 1; i--) s = s ";" fr[i]; sum[s] += v } n = 0 }
	/^-+\+-+$/ { flush(); inblock = 1; next }
	!inblock { next }
	substr($0, 11, 3) == "   " {
		name = substr($0, 14); sub(/ \(inline\)$/, "", name)
		if (name == "<unknown>") name = ""
		val = substr($0, 1, 10); gsub(/ /, "", val)
		if (val != "") v = val
		fr[++n] = name
	}
	END { flush(); for (k in sum) printf "%s %.0f\n", k, sum[k] }' | sort
}

# raw FILE: pprof -raw as folded stacks with their labels as root frames
# "KEY=VALUE" (in pprof's order: strings, then numbers), "STACK COUNT"
raw() {
	"$PPROF" -raw "$1" 2>/dev/null | awk '
	/^Samples:/ { mode = "s"; getline; next }
	/^Locations/ { mode = "l"; next }
	/^Mappings/ { mode = "m"; next }
	mode == "s" && /^ *[0-9]+: / { ns++; val[ns] = $1 + 0; sub(/^ *[0-9]+: /, ""); ids[ns] = $0; next }
	mode == "s" && NF { labels[ns] = labels[ns] " " $0; next }
	mode == "l" && /^ *[0-9]+: / {	# "ID: ADDRESS M=MAPPING NAME FILE:LINE s=START"
		id = $1; sub(/:$/, "", id)
		n = $0; sub(/^ *[0-9]+: [^ ]+ M=[0-9]+ /, "", n); sub(/ [^ ]*:[0-9]+ s=[0-9]+.*$/, "", n)
		name[id] = n; next
	}
	END {
		for (i = 1; i <= ns; i++) {
			k = split(ids[i], loc, " ")
			s = ""
			nl = split(labels[i], lab, " ")
			for (j = 1; j <= nl; j++) {		# "pid:[12]" -> "pid=12"
				l = lab[j]; sub(/:\[/, "=", l); sub(/\]$/, "", l); s = s l ";"
			}
			for (j = k; j >= 1; j--) s = s name[loc[j]] (j > 1 ? ";" : "")
			sum[s] += val[i]
		}
		for (x in sum) printf "%s %.0f\n", x, sum[x]
	}' | sort
}

# 1. fold2pprof, against pprof's readings of its files
for f in perf-java-stacks-01-collapsed-tid perf-vertx-stacks-01-collapsed-all \
	 perf-dd-stacks-01-collapsed-default perf-iperf-stacks-pidtid-01-collapsed-tid; do
	in=$DATA/$f.txt
	fold2pprof -o "$T/$f.pb.gz" "$in" || fail "fold2pprof $f"
	canonical "$in" > "$T/want"
	traces "$T/$f.pb.gz" > "$T/got"
	same "$f: pprof -traces" "$T/want" "$T/got"
	"$PPROF" -top "$T/$f.pb.gz" 2>/dev/null | awk '/^Showing nodes/ { print $NF == "total" ? $(NF - 1) : "" }' > "$T/got"
	awk '{ s += $NF } END { printf "%.0f\n", s }' "$in" > "$T/want"
	same "$f: pprof -top total" "$T/want" "$T/got"
	# -raw shows the labels: NAME-PID/TID roots give comm, pid, tid (pprof
	# reads a number label 0 as none: the idle task's tid 0 has none)
	raw "$T/$f.pb.gz" > "$T/got"
	awk '{ c = $NF; sub(/[ \t][^ \t]+[ \t]*$/, ""); r = $0; sub(/;.*/, "", r)
	       lab = ""
	       if (match(r, /-([0-9]+|\?)\/[0-9]+$/)) {
	           comm = substr(r, 1, RSTART - 1); pt = substr(r, RSTART + 1); split(pt, p, "/")
	           lab = "comm=" comm ";" (p[1] != "?" && p[1] != 0 ? "pid=" p[1] ";" : "") \
	                 (p[2] != 0 ? "tid=" p[2] ";" : "")
	       }
	       s[lab $0] += c }
	     END { for (k in s) printf "%s %.0f\n", k, s[k] }' "$in" | sort > "$T/want"
	same "$f: pprof -raw" "$T/want" "$T/got"
done
# the sample type --type names is pprof's
printf 'a;b 3\n' | fold2pprof --type off_cpu/microseconds > "$T/t.pb.gz"
"$PPROF" -raw "$T/t.pb.gz" 2>/dev/null | sed -n '/^Samples:/{n;p}' > "$T/got"
echo off_cpu/microseconds > "$T/want"
same "--type" "$T/want" "$T/got"

# 2. a gperftools CPU profile, converted by pprof -proto
cc -O1 -g -fno-omit-frame-pointer -pthread -o "$T/workload" "$ROOT/demo/workload.c" || fail "cannot build demo/workload.c"
LIBPROFILER=$(ldconfig -p | awk '/libprofiler\.so\.0 / { print $NF; exit }')
[ -n "$LIBPROFILER" ] || fail "no libprofiler.so.0 (apt-get install google-perftools; see tools/deps)"
LD_PRELOAD=$LIBPROFILER CPUPROFILE=$T/w.prof CPUPROFILE_FREQUENCY=1000 "$T/workload" 1 3 > /dev/null 2>&1 ||
	fail "the workload failed under libprofiler"
[ -s "$T/w.prof" ] || fail "libprofiler wrote no profile"
"$PPROF" -proto "$T/workload" "$T/w.prof" > "$T/w.pb.gz" 2> "$T/proto.err" || fail "pprof -proto: $(cat "$T/proto.err")"
pprof-collapse --sample-index=samples "$T/w.pb.gz" > "$T/collapsed" || fail "pprof-collapse"
cp "$T/collapsed" "$T/got"
traces "$T/w.pb.gz" -sample_index=samples > "$T/want"
[ "$(wc -l < "$T/want")" -ge 3 ] || fail "the gperftools profile has too few stacks to compare: $(cat "$T/want")"
grep -q ';spin ' "$T/want" || fail "the workload's spin() is not in the profile"
same "gperftools: pprof-collapse against pprof -traces" "$T/want" "$T/got"
pprof-collapse "$T/w.pb.gz" | awk '{ s += $NF } END { printf "%.0fns\n", s }' > "$T/got"
"$PPROF" -top -unit=ns "$T/w.pb.gz" 2>/dev/null | awk '/^Showing nodes/ { print $(NF - 1) }' > "$T/want"
same "gperftools: the cpu total in nanoseconds" "$T/want" "$T/got"
# and through fold2pprof again: the same stacks
fold2pprof "$T/collapsed" | pprof-collapse > "$T/got"
same "gperftools: through fold2pprof and back" "$T/collapsed" "$T/got"

echo "pprof agreed: $checked checks passed"
