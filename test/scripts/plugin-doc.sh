#!/bin/bash
# test/scripts/plugin-doc.sh - docs/foldkit-dlfilter.1 says what the perf
# plugin does: mandoc -Tlint finds nothing at warning level, the SYNOPSIS
# is the help's usage line, every option of the help is in the page, every
# unit the plugin can write to index.tsv is in the page's Units, and every
# fold2svg example names its counts' unit (--countname), so that "samples"
# is never the only hint.  Exit 0 pass, 1 fail, 77 skip (no mandoc).
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
MAN=$ROOT/docs/foldkit-dlfilter.1
SRC=$ROOT/perf-plugin
command -v mandoc >/dev/null || { echo "no mandoc (tools/deps installs it)" >&2; exit 77; }
fail=0
bad() { echo "FAIL: $*"; fail=1; }

lint=$(mandoc -Tlint -W warning "$MAN" 2>&1) || bad "mandoc -Tlint: $lint"
text=$(MANWIDTH=200 mandoc -Tascii "$MAN" | col -b)

# the help is a C string in options.c: its lines, unquoted
help=$(sed -n '/^const char plugin_help\[\] =/,/;$/p' "$SRC/options.c" |
	sed -n 's/^[^"]*"\(.*\)\\n"[;]*$/\1/p')
[ -n "$help" ] || bad "cannot read the help from $SRC/options.c"
usage=$(echo "$help" | sed -n 's/^usage: //p')
synopsis=$(echo "$text" | sed -n '/^SYNOPSIS/{n;p}' | sed 's/^ *//')
[ "$usage" = "$synopsis" ] || bad "SYNOPSIS '$synopsis' is not the help's '$usage'"
for opt in $(echo "$help" | sed -n '/^options/,/^  help /p' | grep -oE '^  [a-z-]+=?' | tr -d ' '); do
	grep -qE "^\.It Cm $opt( |\$)" "$MAN" || bad "option $opt is not in the page's OPTIONS"
done

# units: each string the plugin returns as a unit is a tag of the page's
# Units list
units=$(sed -n '/^static const char \*unit_of(/,/^}/p' "$SRC/foldkit.c" | grep -oE 'return [^;]*;' |
	grep -oE '"[a-z]+"' | tr -d '"' | sort -u)
[ "$(echo "$units" | wc -w)" -ge 4 ] || bad "cannot find the units in $SRC/foldkit.c: '$units'"
for u in $units; do
	echo "$text" | sed -n '/^   Units/,/^   [A-Z]/p' | grep -qE "^[[:space:]]+$u([[:space:]]|\$)" ||
		bad "unit $u is not in the page's Units"
done

# every fold2svg command of EXAMPLES gives the unit
examples=$(echo "$text" | sed -n '/^EXAMPLES/,/^[A-Z]/p')
n=0
while read -r line; do
	n=$((n + 1))
	case $line in *--countname=*) ;; *) bad "an example without --countname: $line" ;; esac
done < <(echo "$examples" | grep -E '^[[:space:]]+fold2svg ')
[ $n -ge 3 ] || bad "only $n fold2svg examples (on-CPU, off-CPU, switches)"
[ $fail = 0 ] && echo "ok the page: lint, SYNOPSIS, options, $(echo $units) in Units, $n fold2svg examples with their unit"
exit $fail
