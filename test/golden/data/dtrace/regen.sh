#!/bin/sh
# Re-makes perl/*.folded: stackcollapse.pl from a FlameGraph checkout on
# each input here (see README.md).
#
#   test/golden/data/dtrace/regen.sh FLAMEGRAPH_DIR
set -eu
FG=${1:?usage: regen.sh FLAMEGRAPH_DIR}
cd "$(dirname "$0")"
SC="perl $FG/stackcollapse.pl"
$SC flamegraph/example-dtrace-stacks.txt > perl/example-dtrace-stacks.folded
for f in inferno/*.txt compat/*.txt; do
	$SC "$f" > "perl/$(basename "$f" .txt).folded"
done
# ktap: the seed's own command (the sed removes ktap's tabs), and the same
# with three blank lines first, which stackcollapse.pl skips as DTrace's
# header instead of the first stack's first three frames
sed 's/\t//g' ktap/out.kstacks | $SC > perl/ktap-seed-command.folded
{ printf '\n\n\n'; sed 's/\t//g' ktap/out.kstacks; } | $SC > perl/ktap.folded
