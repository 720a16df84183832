# fuzz/offwake.mk - the offwake target links the perf plugin's off-wake
# accounting, which needs libtraceevent but not perf.
FUZZ_SRC_offwake := perf-plugin/offwake.c
FUZZ_LIBS_offwake := -Iperf-plugin $(shell pkg-config --cflags --libs libtraceevent 2>/dev/null)
