# fuzz/perfdata.mk - the perf plugin's perf.data reader (header, records,
# process names), which needs nothing but glib.
FUZZ_SRC_perfdata := perf-plugin/perfdata.c
FUZZ_LIBS_perfdata := -Iperf-plugin
