#!/bin/bash
# fp-record-files.sh - the files fp-record writes, as root where other
# users can write too (issue 29):
#  - it makes its output directory, and refuses an existing one that
#    another user owns (the predictable default name planted in a /tmp-like
#    directory included), that is not empty, that others may write to, or
#    that is a link;
#  - no name in the output tree is ever opened or renamed through a link:
#    under strace, every file fp-record creates there is made with
#    O_CREAT|O_EXCL|O_NOFOLLOW relative to a directory's descriptor, every
#    rename is RENAME_NOREPLACE, nothing is linked (the children write only
#    in the private mode-0700 directory fp-record made: perf record its
#    recording, the plugin its split files, checked by plugin-outdir.sh;
#    fold2svg to a descriptor fp-record opened);
#  - a directory named like an option (-o -evil, -o --title=x) is no option
#    to the tools fp-record runs.
set -u
. "$(dirname "$0")/plugin-lib.sh"

PIDS_TO_KILL=()
cleanup() {
	local p
	# fkwork's own child first (it would outlive its parent)
	for p in "${PIDS_TO_KILL[@]}"; do pkill -TERM -P "$p" 2>/dev/null; done
	for p in "${PIDS_TO_KILL[@]}"; do kill -TERM "$p" 2>/dev/null; done
	for p in "${PIDS_TO_KILL[@]}"; do wait "$p" 2>/dev/null; done
	rm -rf "$T"
}
trap cleanup EXIT

FPR=$BIN/fp-record
[ -x "$FPR" ] || { echo "no $FPR: run make" >&2; exit 1; }
fp_record_perf
chmod 755 "$T"

# a busy process with sleeps and lock waits (ended at the end)
"$W" 600000 1 >/dev/null 2>&1 &
BUSY=$!
PIDS_TO_KILL+=("$BUSY")

# ---- 1. which existing directory fp-record takes ----
# refused DIR RE: fp-record -o DIR fails before recording, saying RE, and
# leaves DIR as it was
refused() {
	local dir=$1 re=$2 before
	before=$(ls -lAn "$dir" 2>&1)
	"$FPR" --pid "$BUSY" -d 0.2 -o "$dir" >"$T/out" 2>"$T/err"
	local rc=$?
	if [ $rc -eq 1 ] && grep -Eq "^fp-record: .*$re" "$T/err" && ! grep -q 'recording for' "$T/err" &&
		[ "$(ls -lAn "$dir" 2>&1)" = "$before" ]; then
		echo "ok refused: $(tail -1 "$T/err")"
	else
		fail "-o $dir: exit $rc, want a refusal ($re): $(tail -2 "$T/err")"
	fi
}
PUB=$T/pub
mkdir -m 1777 "$PUB"
if [ "$(id -u)" = 0 ]; then
	# another user's empty directory: they could plant links in it
	mkdir "$PUB/theirs" && chown 65534:65534 "$PUB/theirs"
	refused "$PUB/theirs" "refused: the directory belongs to another user \(uid 65534\)"
	# fp-record's default name is predictable: planted for the next seconds
	# in a directory like /tmp, by another user
	now=$(date +%s)
	for i in 0 1 2 3 4 5 6 7 8 9; do
		setpriv --reuid=65534 --regid=65534 --clear-groups \
			mkdir "$PUB/fp-record-$(date -d "@$((now + i))" +%Y%m%d-%H%M%S)"
	done
	(cd "$PUB" && "$FPR" --pid "$BUSY" -d 0.2 >"$T/out" 2>"$T/err")
	rc=$?
	[ $rc -eq 1 ] && grep -q "fp-record-[0-9-]*: refused: the directory belongs to another user" "$T/err" &&
		echo "ok the default name planted by another user: refused" ||
		fail "the default name planted by another user: exit $rc: $(tail -2 "$T/err")"
else
	echo "(not root: another user's directory cannot be made here)"
fi
mkdir "$T/full" && echo x >"$T/full/notes"
refused "$T/full" "refused: not empty \(it holds 'notes'\)"
mkdir -m 777 "$T/open"
chmod 777 "$T/open"
refused "$T/open" "refused: any user may write to the directory \(mode 0777\)"
mkdir "$T/real" && ln -s real "$T/link"
refused "$T/link" "refused: a symbolic link"
# an existing empty directory of the caller's is taken (the capture
# written in it; on a loaded machine the busy process may get no sample
# in the window, which fp-record reports with status 1 and its files)
mkdir "$T/empty"
"$FPR" --pid "$BUSY" --on -d 0.3 -o "$T/empty" >"$T/out" 2>"$T/err"
rc=$?
[ -s "$T/empty/index.tsv" ] && ! grep -q 'refused' "$T/err" &&
	{ [ $rc -eq 0 ] || grep -q 'no on-CPU samples: it was idle' "$T/err"; } &&
	echo "ok an empty directory of one's own is taken" ||
	fail "an empty directory of one's own: exit $rc: $(tail -2 "$T/err")"

# ---- 2. nothing in the output tree is opened or renamed through a link ----
S=$T/s
mkdir "$S"
if command -v strace >/dev/null; then
	# (fp-record alone, not its children: a traced child's exit reaches
	# its parent late, when at all.  A sanitizer build's leak check
	# cannot stop a thread strace traces, so it would see false leaks:
	# the runs above and below check for leaks)
	(cd "$S" && ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0 \
		strace -qq -y -s 4096 -o "$T/trace" \
		-e trace=open,openat,openat2,creat,mkdir,mkdirat,rename,renameat,renameat2,link,linkat,symlink,symlinkat \
		"$FPR" --pid "$BUSY" -d 0.5 -o out --keep-data \
		>"$T/out" 2>"$T/err")
	rc=$?
	[ $rc -eq 0 ] || fail "under strace: exit $rc: $(tail -3 "$T/err")"
	OUT=$(cd "$S/out" && pwd -P)
	# each call that makes a name: dirfd (with -y, its path) and name
	awk -v out="$OUT" '
	# with -y, strace shows a descriptor (AT_FDCWD too) with its path
	function intree(dir, name) {
		if (name ~ /^\//) return index(name, out) == 1
		if (dir == "" || dir == "AT_FDCWD") return 1	# no path: counted in
		return index(dir "/" name, out "/") == 1 || dir "/" name == out
	}
	{
		line = $0
		sub(/^[0-9]+ +/, "", line)
		if (line !~ /^(open|openat|openat2|creat|mkdir|mkdirat|rename|renameat|renameat2|link|linkat|symlink|symlinkat)\(/) next
		call = line; sub(/\(.*/, "", call)
		args = line; sub(/^[a-z0-9]+\(/, "", args)
		dir = ""
		if (call ~ /at2?$/ && call != "creat") {
			dir = args; sub(/,.*/, "", dir)
			if (dir ~ /</) { sub(/^[^<]*</, "", dir); sub(/>$/, "", dir) }
			args = substr(args, index(args, ",") + 2)
		}
		name = args; sub(/^"/, "", name); sub(/".*/, "", name)
		if (!intree(dir, name)) next
		if (call ~ /^open/ || call == "creat") {
			if (call != "creat" && line !~ /O_CREAT/) next
			made++
			if (line ~ /O_EXCL/ && line ~ /O_NOFOLLOW/ && dir != "") { excl++; next }
			print "opened without O_EXCL|O_NOFOLLOW at a directory: " $0; bad++
		} else if (call ~ /^mkdir/) {
			dirs++
		} else if (call == "renameat2") {
			if (line ~ /RENAME_NOREPLACE/) { renames++; next }
			print "renamed without RENAME_NOREPLACE: " $0; bad++
		} else if (call ~ /^rename/) {
			print "renamed over any name: " $0; bad++
		} else {
			print "linked: " $0; bad++
		}
	}
	END {
		printf "%d files made, all with O_EXCL|O_NOFOLLOW at a directory; %d directories, %d renames, all RENAME_NOREPLACE\n",
			made, dirs, renames
		# 4 logs, 2 graphs, 3 indexes, the report; as many renames
		# with the 2 profiles and 2 recordings moved
		exit bad > 0 || excl < 10 || renames < 10
	}' "$T/trace" >"$T/verdict"
	if [ $? -eq 0 ]; then
		echo "ok in the output tree: $(tail -1 "$T/verdict")"
	else
		fail "names made unsafely in the output tree: $(cat "$T/verdict")"
	fi
	# and what was made is all there, with no temporary file left
	(cd "$S/out" && find . | sort) >"$T/tree"
	for f in ./index.tsv ./report.md ./threads.tsv ./on.data ./off.data ./on/index.tsv ./off/index.tsv \
		./on/fkwork.main.folded ./on/fkwork.main.svg ./on/fkwork.main.html \
		./off/fkwork.main.folded; do
		grep -qx -- "$f" "$T/tree" || fail "under strace: no $f: $(tr '\n' ' ' <"$T/tree")"
	done
	grep -q '/\.' "$T/tree" && fail "under strace: temporary files left: $(grep '/\.' "$T/tree")"
else
	fail "strace is not installed (tools/deps install test)"
fi

# ---- 3. a directory named like an option ----
mkdir "$T/opt"
for name in -evil --title=x; do
	(cd "$T/opt" && "$FPR" --pid "$BUSY" --on -d 0.3 -o "$name" >"$T/out" 2>"$T/err")
	rc=$?
	if [ $rc -eq 0 ] && [ -s "$T/opt/$name/on/fkwork.main.svg" ] &&
		grep -q "^## fold-report" "$T/opt/$name/report.md" && ! grep -q "no graph" "$T/err"; then
		echo "ok -o $name: graphs and findings"
	else
		fail "-o $name: exit $rc, graph and findings: $(ls "$T/opt/$name/on" 2>&1 | tr '\n' ' ') $(tail -2 "$T/err")"
	fi
done

exit $FAILED
