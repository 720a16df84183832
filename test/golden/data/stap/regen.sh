#!/bin/sh
# Re-makes perl/*.folded: stackcollapse-stap.pl from a FlameGraph checkout on
# each input here (see README.md).
#
#   test/golden/data/stap/regen.sh FLAMEGRAPH_DIR
set -eu
FG=${1:?usage: regen.sh FLAMEGRAPH_DIR}
cd "$(dirname "$0")"
for f in *.bt; do
	perl "$FG/stackcollapse-stap.pl" "$f" 2>/dev/null > "perl/$(basename "$f" .bt).folded"
done
