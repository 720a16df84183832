# fuzz/html.mk - the html target checks the page with libxml2.
FUZZ_LIBS_html := $(shell pkg-config --cflags --libs libxml-2.0 2>/dev/null)
