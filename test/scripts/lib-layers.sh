#!/bin/bash
# test/scripts/lib-layers.sh - lib/ is laid out by pipeline stage, and a
# stage may include only the stages it reads from (docs/design.md):
#
#   core/       nothing but core/
#   capture/    core/                  (processes -> perf recordings, fp-record)
#   collapse/   core/                  (a profiler's output -> stacks)
#   transform/  core/                  (stacks -> stacks)
#   render/     core/ transform/       (stacks -> pictures)
#   export/     core/ transform/       (stacks -> other formats)
#
# plus gen/ for collapse/ and export/: build/gen/profile.pb-c.h, the code
# protoc-c generates from pprof's profile.proto at build time.
#   report/     core/ transform/       (stacks -> findings)
#   store/      core/                  (stacks to and from ClickHouse, Pyroscope)
#
# Every #include "STAGE/x.h" in lib/STAGE2/ is checked against that table,
# and every module must sit in a stage folder.  Exit 0 pass, 1 fail.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT/lib" || exit 1
declare -A allowed=(
	[core]="core"
	[capture]="core capture"
	[collapse]="core collapse gen"
	[transform]="core transform"
	[render]="core transform render"
	[export]="core transform export gen"
	[report]="core transform report"
	[store]="core store"
)
fail=0
for f in *; do
	if [ -f "$f" ]; then
		echo "FAIL: lib/$f is outside every stage folder"; fail=1
	elif [ -z "${allowed[$f]+x}" ]; then
		echo "FAIL: lib/$f/ is not a stage (add it to this table and docs/design.md)"; fail=1
	fi
done
for stage in "${!allowed[@]}"; do
	[ -d "$stage" ] || continue
	while IFS=: read -r file line inc; do
		dep=${inc#*\"}; dep=${dep%%/*}
		case " ${allowed[$stage]} " in
			*" $dep "*) ;;
			*) echo "FAIL: lib/$file:$line: $stage/ includes $dep/ ($inc)"; fail=1 ;;
		esac
	done < <(grep -Hn '^#include "' "$stage"/* 2>/dev/null | sed "s|^$stage/|$stage/|")
	# an include without a stage folder would hide a layer
	if grep -Hn '^#include "[^/"]*"' "$stage"/* 2>/dev/null; then
		echo "FAIL: lib/$stage/: an include above names no stage"; fail=1
	fi
done
exit $fail
