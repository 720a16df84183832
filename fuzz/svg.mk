# fuzz/svg.mk - the svg target checks the document with libxml2.
FUZZ_LIBS_svg := $(shell pkg-config --cflags --libs libxml-2.0 2>/dev/null)
