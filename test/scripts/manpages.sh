#!/bin/bash
# test/scripts/manpages.sh - every tool has a man page, and every page in
# docs/ passes mandoc -Tlint at warning level (sections in their
# conventional order, SEE ALSO sorted, no skipped macros): a page that
# reads wrong in man(1) fails here, not in a user's terminal.
# Exit 0 pass, 1 fail, 77 skip (no mandoc; tools/deps installs it).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
command -v mandoc >/dev/null || { echo "no mandoc (tools/deps installs it)" >&2; exit 77; }
fail=0
pages=0
for f in "$ROOT"/filters/*.c; do
	tool=$(basename "$f" .c)
	[ -f "$ROOT/docs/$tool.1" ] || { echo "FAIL: $tool has no docs/$tool.1"; fail=1; }
done
for man in "$ROOT"/docs/*.1; do
	pages=$((pages + 1))
	# the database of installed pages is the machine's, not ours
	lint=$(mandoc -Tlint -W warning "$man" 2>&1 | grep -v 'outdated mandoc.db')
	[ -z "$lint" ] || { echo "FAIL: $lint"; fail=1; }
done
[ $pages -gt 0 ] || { echo "FAIL: no pages in docs/"; fail=1; }
[ $fail = 0 ] && echo "ok $pages man pages lint clean"
exit $fail
