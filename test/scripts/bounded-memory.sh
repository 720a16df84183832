#!/bin/bash
# test/scripts/bounded-memory.sh - memory must grow with the number of
# distinct stacks, never with the size of the input.
#
# Streams BOUNDED_MEMORY_BYTES (default 2 GiB) of real text with few
# distinct stacks through each tool and fails if its peak RSS reaches
# 100 MB or its output is not the block's output scaled by the number of
# copies:
#   fp-collapse   perf script text: the FlameGraph iperf recording, repeated;
#                 and as a regular file of 2 blocks, which it maps: the
#                 pages read must not all stay resident
#   kfold, fgrep-stacks, fold2svg (each only when built)
#                 folded text: the FlameGraph vertx profile, repeated
# Peak RSS comes from /usr/bin/time (Debian package `time`, in tools/deps),
# or else from polling VmHWM in /proc.  Exit 0 pass, 77 skip, 1 fail.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${BIN:-$ROOT/build/bin}
DATA=$ROOT/test/golden/data/flamegraph
BYTES=${BOUNDED_MEMORY_BYTES:-2147483648}
LIMIT_KB=$((100 * 1000))
export LC_ALL=C
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail=0

[ -x "$BIN/fp-collapse" ] || { echo "no $BIN/fp-collapse: run make first"; exit 77; }

# A block of 2^k copies of a real file (64 MiB or just over), so the stream
# is a few hundred cat calls.  copies_per_block is set for the caller.
make_block() { # file block
	cp "$1" "$2"
	copies_per_block=1
	while [ "$(stat -c %s "$2")" -lt $((64 << 20)) ]; do
		cat "$2" "$2" > "$2.tmp" && mv "$2.tmp" "$2"
		copies_per_block=$((copies_per_block * 2))
	done
}

# Runs "$@" on blocks copies of block on stdin; sets rss (KB), secs, st.
measure() { # block blocks out cmd...
	local block=$1 blocks=$2 out=$3 t0 t1
	shift 3
	t0=$(date +%s.%N)
	if [ -x /usr/bin/time ]; then
		for ((i = 0; i < blocks; i++)); do cat "$block"; done |
			/usr/bin/time -f %M -o "$T/rss" "$@" > "$out" 2> "$T/err"
		st=$?
		rss=$(tail -1 "$T/rss")
		how="/usr/bin/time"
	else
		rm -f "$T/fifo.in"; mkfifo "$T/fifo.in"
		for ((i = 0; i < blocks; i++)); do cat "$block"; done > "$T/fifo.in" &
		"$@" < "$T/fifo.in" > "$out" 2> "$T/err" &
		local pid=$! v
		rss=0
		while kill -0 "$pid" 2>/dev/null; do
			v=$(awk '/^VmHWM/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
			[ -n "$v" ] && rss=$v
			sleep 0.05
		done
		wait "$pid"; st=$?
		wait
		how="VmHWM polling (install 'time' for an exact figure)"
	fi
	t1=$(date +%s.%N)
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
}

report() { # tool bytes
	local mb=$(($2 / 1000000))
	printf '%-13s %5d MB in %5s s (%4d MB/s), peak RSS %6d KB, status %d  [%s]\n' \
		"$1" "$mb" "$secs" "$(awk -v m="$mb" -v s="$secs" 'BEGIN { print (s > 0 ? int(m / s) : 0) }')" \
		"$rss" "$st" "$how"
	if [ "$st" -ne 0 ]; then
		echo "FAIL $1: exit status $st"; sed 's/^/    /' "$T/err" | head -5; fail=1
	fi
	if [ "$rss" -ge "$LIMIT_KB" ]; then
		echo "FAIL $1: peak RSS $rss KB, limit $LIMIT_KB KB"; fail=1
	fi
}

# Every count in got must be the count in one (same stack) times k, and
# the stacks must be the same.
check_scaled() { # tool one got k
	if ! awk -v k="$4" '
		function stack() { return substr($0, 1, length($0) - length($NF) - 1) }
		NR == FNR { want[stack()] = $NF * k; n++; next }
		{ s = stack()
		  if (!(s in want) || want[s] != $NF) { print "bad line: " substr($0, 1, 200); bad = 1; exit }
		  seen++ }
		END { if (!bad && seen != n) { print seen " stacks, want " n; bad = 1 }
		      exit bad }' "$2" "$3" > "$T/why"; then
		echo "FAIL $1: output is not the block's output times $4: $(cat "$T/why")"; fail=1
	fi
}

# --- fp-collapse on perf script text ---
{ cat "$DATA/perf-script/perf-iperf-stacks-pidtid-01.txt"; echo; } > "$T/one.perf"
make_block "$T/one.perf" "$T/block.perf"
bsize=$(stat -c %s "$T/block.perf")
blocks=$(( (BYTES + bsize - 1) / bsize ))
"$BIN/fp-collapse" "$T/one.perf" > "$T/one.out" 2>/dev/null
measure "$T/block.perf" "$blocks" "$T/out" "$BIN/fp-collapse"
report fp-collapse $((bsize * blocks))
check_scaled fp-collapse "$T/one.out" "$T/out" $((copies_per_block * blocks))
echo "  $(wc -l < "$T/out") distinct stacks from $((copies_per_block * blocks)) copies of a real recording"

# --- fp-collapse on a regular file, which it maps: the pages it has read
# must not stay in its resident memory (2 blocks: over 128 MiB) ---
cat "$T/block.perf" "$T/block.perf" > "$T/big.perf"
t0=$(date +%s.%N)
if [ -x /usr/bin/time ]; then
	/usr/bin/time -f %M -o "$T/rss" "$BIN/fp-collapse" "$T/big.perf" > "$T/out" 2> "$T/err"
	st=$?; rss=$(tail -1 "$T/rss"); how="/usr/bin/time"
	t1=$(date +%s.%N)
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
	report "fp-collapse (mapped file)" $((bsize * 2))
	check_scaled fp-collapse "$T/one.out" "$T/out" $((copies_per_block * 2))
else
	echo "  mapped file not checked: no /usr/bin/time"
fi
rm -f "$T/big.perf"

# --- the folded-text tools, when built ---
make_block "$DATA/collapsed/perf-vertx-stacks-01-collapsed-all.txt" "$T/block.folded"
bsize=$(stat -c %s "$T/block.folded")
blocks=$(( (BYTES + bsize - 1) / bsize ))
k=$((copies_per_block * blocks))
checked="fp-collapse"; missing=""
for tool in kfold fgrep-stacks fold2svg; do
	if [ ! -x "$BIN/$tool" ]; then
		missing="$missing $tool"; continue
	fi
	checked="$checked $tool"
	case $tool in
	kfold)
		"$BIN/kfold" "$DATA/collapsed/perf-vertx-stacks-01-collapsed-all.txt" > "$T/one.out"
		measure "$T/block.folded" "$blocks" "$T/out" "$BIN/kfold"
		report kfold $((bsize * blocks))
		check_scaled kfold "$T/one.out" "$T/out" "$k" ;;
	fgrep-stacks)
		"$BIN/fgrep-stacks" java "$DATA/collapsed/perf-vertx-stacks-01-collapsed-all.txt" > "$T/one.out"
		measure "$T/block.folded" "$blocks" "$T/out" "$BIN/fgrep-stacks" java
		report fgrep-stacks $((bsize * blocks))
		check_scaled fgrep-stacks "$T/one.out" "$T/out" "$k" ;;
	fold2svg)
		measure "$T/block.folded" "$blocks" "$T/out" "$BIN/fold2svg"
		report fold2svg $((bsize * blocks))
		if ! tail -c 100 "$T/out" | grep -q '</svg>'; then
			echo "FAIL fold2svg: the output does not end the SVG"; fail=1
		fi ;;
	esac
done
echo "checked:$(printf ' %s' $checked)${missing:+; not built, not checked:$missing}"
exit $fail
