#!/bin/bash
# plugin-unit.sh - builds and runs the perf plugin's unit tests
# (perf-plugin/test/*-test.c: each includes the plugin source it tests and
# links with lib/), which need no perf and no permission to record.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
[ -f "$BUILD/libfoldkit.a" ] || { echo "no $BUILD/libfoldkit.a: run make" >&2; exit 1; }
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
san=
case $BUILD in */san) san="-fsanitize=address,undefined -fno-sanitize-recover=all" ;; esac
status=0
for src in "$ROOT"/perf-plugin/test/*-test.c; do
	name=$(basename "$src" .c)
	# shellcheck disable=SC2046
	if ! cc -std=gnu11 -O1 -g -Wall -Wextra -Werror -Wno-unused-parameter -D_GNU_SOURCE \
		-I"$ROOT/lib" -I"$ROOT/test/unit" $san $(pkg-config --cflags glib-2.0 libtraceevent) \
		-o "$T/$name" "$src" "$BUILD/libfoldkit.a" \
		$(pkg-config --libs glib-2.0 libtraceevent libdw libprotobuf-c zlib) -lm; then
		echo "FAIL: $name does not build" >&2; status=1; continue
	fi
	"$T/$name" || { echo "FAIL: $name" >&2; status=1; }
done
exit $status
