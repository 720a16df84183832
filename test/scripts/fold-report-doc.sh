#!/bin/bash
# test/scripts/fold-report-doc.sh - docs/fold-report.1 says what the tool
# does: mandoc -Tlint finds nothing at warning level, the SYNOPSIS is
# --help's usage line, and every option of --help, every rule of
# lib/report/rules.c, every built-in category and every JSON field the tool
# writes is in the page.  Exit 0 pass, 1 fail, 77 skip (no mandoc).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BIN=${BIN:-$ROOT/build/bin}
MAN=$ROOT/docs/fold-report.1
command -v mandoc >/dev/null || { echo "no mandoc (tools/deps installs it)" >&2; exit 77; }
fail=0
bad() { echo "FAIL: $*"; fail=1; }

lint=$(mandoc -Tlint -W warning "$MAN" 2>&1) || bad "mandoc -Tlint: $lint"
text=$(MANWIDTH=200 mandoc -Tascii "$MAN" | col -b)

# SYNOPSIS, with "…" as the page's " ..." and the page's spaces around '|'
usage=$("$BIN/fold-report" --help | sed -n 2p | sed 's/^ *//; s/…/ .../g')
synopsis=$(echo "$text" | sed -n '/^SYNOPSIS/{n;p}' | sed 's/^ *//; s/ | /|/; s/\[OPTION \.\.\.\]/[OPTION ...]/')
[ "$usage" = "$synopsis" ] || bad "SYNOPSIS '$synopsis' is not --help's '$usage'"

for opt in $("$BIN/fold-report" --help | grep -oE '^ +(-[a-z], )?--[a-z-]+' | grep -oE -- '--[a-z-]+'); do
	case $opt in --help|--version) ;; esac
	grep -qF -- "${opt#--}" "$MAN" || bad "option $opt is not in the page"
done
for rule in $(grep -oE '^	\{ "[a-z-]+", (0|PCT)' "$ROOT/lib/report/rules.c" | cut -d'"' -f2); do
	echo "$text" | grep -qE "^ +$rule\$" || bad "rule $rule is not in the page's Rules"
done
for cat in $(grep -oE '^	\{ "[a-z-]+", ' "$ROOT/lib/report/categories.c" | cut -d'"' -f2); do
	grep -qF "\"$cat\"" <(echo "$text" | tr '“”' '""') || bad "category $cat is not in the page"
done
for field in $(printf 'a;b 1\n' | "$BIN/fold-report" --json -g --offcpu /dev/stdin <(printf 'a;b 1\n') 2>/dev/null |
	       grep -oE '"[a-z_]+":' | tr -d '":' | sort -u); do
	echo "$text" | grep -qw -- "$field" || bad "JSON field $field is not in the page"
done
exit $fail
