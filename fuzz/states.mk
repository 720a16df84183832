# fuzz/states.mk - the states target links the perf plugin's thread-state
# accounting, which needs libtraceevent but not perf.
FUZZ_SRC_states := perf-plugin/states.c
FUZZ_LIBS_states := -Iperf-plugin $(shell pkg-config --cflags --libs libtraceevent 2>/dev/null)
