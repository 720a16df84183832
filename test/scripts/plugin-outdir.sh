#!/bin/bash
# plugin-outdir.sh - where the plugin's split= and output= write, as root
# where other users can write too (issue 29):
#  - split=DIR makes DIR, or takes an existing one of the caller's that no
#    other user may write to and that is empty or holds an earlier split=
#    output only (its index.tsv, the files it lists and their speedscope
#    files), which is replaced whole: no stale profile stays for a reader
#    to sum, and fold-report DIR adds up to this run's index;
#  - anything else in DIR, another user's DIR, one others may write to, or
#    a link, is refused and left as it was; a link planted where an earlier
#    profile was is removed, never followed;
#  - under strace, every file split= creates is made with
#    O_CREAT|O_EXCL|O_NOFOLLOW relative to DIR's descriptor and renamed
#    with RENAME_NOREPLACE;
#  - output=FILE where FILE is another user's link in a sticky directory
#    anyone may write to (/tmp) is refused, the file it names untouched.
set -u
. "$(dirname "$0")/plugin-lib.sh"

perf record -q -g -F 999 -o "$T/proc.data" -- "$W" 300 >/dev/null 2>"$T/rec.err" ||
	unavailable "perf record -g failed: $(head -3 "$T/rec.err")"
chmod 755 "$T"

# total DIR: the sum of index.tsv's totals; folded DIR: the sum of its files' counts
total() { awk -F'\t' 'NR > 1 { s += $6 } END { printf "%.0f\n", s }' "$1/index.tsv"; }
summed() { fold-report --json "$1" 2>/dev/null | awk -F'[:,]' '/"total"/ { gsub(/ /, "", $2); print $2; exit }'; }
PATH=$BIN:$PATH

# ---- 1. a second run replaces the first, whole ----
D=$T/split
plugin "$T/proc.data" pid "split=$D" >/dev/null 2>"$T/err" || fail "split=: $(head -2 "$T/err")"
n1=$(ls "$D" | grep -c '\.folded$')
[ "$n1" -eq 2 ] || fail "split=: $n1 profiles, want 2"
plugin "$T/proc.data" pid 'comm=^fkwork$' "split=$D" >/dev/null 2>"$T/err" ||
	fail "a second split= into the same directory: $(head -2 "$T/err")"
got=$(ls -A "$D" | tr '\n' ' ')
want=$( (awk -F'\t' 'NR > 1 { print $1 }' "$D/index.tsv"; echo index.tsv) | sort | tr '\n' ' ')
[ "$got" = "$want" ] && [ "$(ls "$D" | grep -c '\.folded$')" -eq 1 ] &&
	echo "ok a second split= replaced the first: $got" ||
	fail "after a second split=: $got (want $want)"
sum=$(summed "$D") tot=$(total "$D")
[ -n "$sum" ] && [ "$sum" = "$tot" ] && echo "ok fold-report DIR sums this run only: $sum" ||
	fail "fold-report DIR sums $sum, index.tsv $tot"
# an earlier profile replaced by a link to a file of the caller's (planted
# by whoever could): the link goes, the file stays
echo precious >"$T/victim"
prof=$(awk -F'\t' 'NR == 2 { print $1 }' "$D/index.tsv")
rm "$D/$prof" && ln -s "$T/victim" "$D/$prof"
plugin "$T/proc.data" pid "split=$D" >/dev/null 2>"$T/err" || fail "a third split=: $(head -2 "$T/err")"
[ "$(cat "$T/victim")" = precious ] && [ ! -L "$D/$prof" ] && [ -s "$D/$prof" ] &&
	echo "ok a link where an earlier profile was: removed, not followed" ||
	fail "a link planted in an earlier output: $(ls -l "$D" | tr '\n' ' ') victim: $(cat "$T/victim")"

# ---- 2. what split= refuses, leaving it as it was ----
# refused DIR RE
refused() {
	local before
	before=$(ls -lAn "$1" 2>&1)
	plugin "$T/proc.data" pid "split=$1" >/dev/null 2>"$T/err"
	local st=$?
	if [ $st -ne 0 ] && grep -Eq "^foldkit: .*$2" "$T/err" && [ "$(ls -lAn "$1" 2>&1)" = "$before" ]; then
		echo "ok split= refused: $(grep '^foldkit: ' "$T/err" | tail -1)"
	else
		fail "split=$1: status $st, want a refusal ($2): $(head -2 "$T/err")"
	fi
}
echo "my notes" >"$D/notes.txt"
refused "$D" "refused: it holds 'notes.txt', which is not part of an earlier split= output"
rm "$D/notes.txt"
mkdir "$T/foreign" && echo 'a 1' >"$T/foreign/a-1.folded"
refused "$T/foreign" "refused: not empty, and not an earlier split= output"
mkdir -m 777 "$T/open" && chmod 777 "$T/open"
refused "$T/open" "refused: any user may write to the directory"
ln -s split "$T/link"
refused "$T/link" "refused: a symbolic link"
if [ "$(id -u)" = 0 ]; then
	mkdir "$T/theirs" && chown 65534:65534 "$T/theirs"
	refused "$T/theirs" "refused: the directory belongs to another user \(uid 65534\)"
fi

# ---- 3. every name made safely ----
if command -v strace >/dev/null; then
	env "${PLUGIN_ENV[@]}" strace -f -qq -y -s 4096 -o "$T/trace" \
		-e trace=open,openat,openat2,creat,mkdir,mkdirat,rename,renameat,renameat2,link,linkat,symlink,symlinkat \
		perf script -i "$T/proc.data" --dlfilter "$PLUGIN" --dlarg "split=$T/traced" \
		>/dev/null 2>"$T/err" || fail "split= under strace: $(head -2 "$T/err")"
	OUT=$(cd "$T/traced" && pwd -P)
	awk -v out="$OUT" '
	{
		line = $0; sub(/^[0-9]+ +/, "", line)
		if (line !~ /^(open|openat|openat2|creat|rename|renameat|renameat2|link|linkat|symlink|symlinkat)\(/) next
		call = line; sub(/\(.*/, "", call)
		args = line; sub(/^[a-z0-9]+\(/, "", args)
		dir = ""
		if (call ~ /at2?$/) {
			dir = args; sub(/,.*/, "", dir); sub(/^[^<]*</, "", dir); sub(/>$/, "", dir)
			args = substr(args, index(args, ",") + 2)
		}
		name = args; sub(/^"/, "", name); sub(/".*/, "", name)
		full = name ~ /^\// ? name : dir "/" name
		if (index(full, out "/") != 1) next
		if (call ~ /^open/) {
			if (line !~ /O_CREAT/) next
			if (line ~ /O_EXCL/ && line ~ /O_NOFOLLOW/ && dir == out) { made++; next }
			print "opened unsafely: " $0; bad++
		} else if (call == "renameat2" && line ~ /RENAME_NOREPLACE/) {
			renamed++
		} else {
			print "renamed or linked unsafely: " $0; bad++
		}
	}
	END {
		printf "%d files made with O_EXCL|O_NOFOLLOW at the directory, %d renamed with RENAME_NOREPLACE\n", made, renamed
		exit bad > 0 || made < 3 || renamed != made
	}' "$T/trace" >"$T/verdict" &&
		echo "ok split= under strace: $(tail -1 "$T/verdict")" ||
		fail "split= made names unsafely: $(cat "$T/verdict")"
else
	fail "strace is not installed (tools/deps install test)"
fi

# ---- 4. output= through another user's link in /tmp ----
if [ "$(id -u)" = 0 ]; then
	mkdir -m 1777 "$T/pub" && chmod 1777 "$T/pub"
	echo precious >"$T/target"
	ln -s "$T/target" "$T/pub/out.folded" && chown -h 65534:65534 "$T/pub/out.folded"
	plugin "$T/proc.data" "output=$T/pub/out.folded" >/dev/null 2>"$T/err"
	st=$?
	[ $st -ne 0 ] && grep -q "refused: the link .* belongs to another user (uid 65534)" "$T/err" &&
		[ "$(cat "$T/target")" = precious ] &&
		echo "ok output= refuses another user's link in a sticky directory" ||
		fail "output= through another user's link: status $st, $(cat "$T/target"): $(head -2 "$T/err")"
fi

exit $FAILED
