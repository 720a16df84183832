# fuzz/plugin.mk - the plugin target links the perf plugin's per-process
# profiles and off-CPU accounting, its frame cache and stack tree (with a
# stand-in for perf's resolve_address()), which need libtraceevent but not perf.
FUZZ_SRC_plugin := perf-plugin/profiles.c perf-plugin/offcpu.c \
	perf-plugin/frames.c perf-plugin/stacks.c
FUZZ_LIBS_plugin := -Iperf-plugin $(shell pkg-config --cflags --libs libtraceevent 2>/dev/null)
