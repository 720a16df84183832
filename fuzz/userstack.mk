# fuzz/userstack.mk - the perf plugin's stack repair and unwinder, which
# need libdw and libelf (in LIBS) but not perf.
FUZZ_SRC_userstack := perf-plugin/unwind.c perf-plugin/userstack.c
FUZZ_LIBS_userstack := -Iperf-plugin
