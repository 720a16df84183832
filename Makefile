# foldkit — see README.md.  `make`, `make check`, `make demo`, `make bench`.
.DELETE_ON_ERROR:
.SECONDARY:
.SUFFIXES:
.DEFAULT_GOAL := all

include config.mk

# build/deps.mk is made before anything else (make restarts after creating an
# included file): it installs missing Debian packages, then records the flags
# pkg-config gives, so a fresh machine needs nothing but `make`.
DEPS_MK := build/deps.mk
ifeq ($(filter deps clean,$(MAKECMDGOALS)),)
include $(DEPS_MK)
endif
$(DEPS_MK): tools/deps
	@mkdir -p $(@D)
	@tools/deps install
	@{ echo "PKG_CFLAGS := $$(pkg-config --cflags $(PKGS))"; \
	   echo "PKG_LIBS := $$(pkg-config --libs $(PKGS))"; \
	   echo "CURL_CFLAGS := $$(pkg-config --cflags $(CURL_PKG))"; \
	   echo "CURL_LIBS := $$(pkg-config --libs $(CURL_PKG))"; \
	   echo "DEPS_PROFILE_PROTO := $$(dpkg -L golang-github-google-pprof-dev 2>/dev/null | grep '/proto/profile\.proto$$' | head -n 1)"; } > $@

LIB_SRC     := $(sort $(wildcard lib/*/*.c))
# code protoc-c generates from pprof's profile.proto (see config.mk)
GEN_SRC     := build/gen/profile.pb-c.c
GEN_OBJ     := $(GEN_SRC:build/%.c=$(BUILD)/%.o)
LIB_OBJ     := $(LIB_SRC:%.c=$(BUILD)/%.o) $(GEN_OBJ)
TOOL_SRC    := $(sort $(wildcard filters/*.c))
COMMON_SRC  := $(sort $(wildcard filters/common/*.c))
COMMON_OBJ  := $(COMMON_SRC:%.c=$(BUILD)/%.o)
TOOLS       := $(TOOL_SRC:filters/%.c=$(BUILD)/bin/%)
UNIT_SRC    := $(sort $(wildcard test/unit/*.c))
UNITS       := $(UNIT_SRC:test/unit/%.c=$(BUILD)/test/%)
PLUGIN_SRC  := $(sort $(wildcard perf-plugin/*.c))
PLUGIN      := $(if $(PLUGIN_SRC),$(BUILD)/perf-plugin/foldkit.so)
MANS        := $(sort $(wildcard docs/*.1))
LIBA        := $(BUILD)/libfoldkit.a

all: $(TOOLS) $(PLUGIN) $(UNITS)

# Build dependencies: `make deps` installs what is missing (apt-get, as root
# or through sudo); every other entry point only checks and calls it.
deps:
	@tools/deps install

$(BUILD)/lib/%.o: lib/%.c $(wildcard lib/*/*.h) build/gen/profile.pb-c.h
	@mkdir -p $(@D)
	$(Q_CC)$(CC) $(CPPFLAGS) $(CFLAGS) $(PIC) -c -o $@ $<

# --- pprof: C code for profile.proto, generated at build time from the copy
# Debian installs (never a copy in this tree).
build/gen/profile.pb-c.c build/gen/profile.pb-c.h &: $(PROFILE_PROTO)
	@test -n "$(PROFILE_PROTO)" || { echo "no profile.proto: apt-get install golang-github-google-pprof-dev (or make PROFILE_PROTO=PATH)" >&2; exit 1; }
	@mkdir -p build/gen
	$(Q_GEN)$(PROTOC_C) --c_out=build/gen --proto_path=$(dir $(PROFILE_PROTO)) $(PROFILE_PROTO)
$(BUILD)/gen/%.o: build/gen/%.c build/gen/%.h
	@mkdir -p $(@D)
	$(Q_CC)$(CC) $(CPPFLAGS) $(CFLAGS) $(PIC) -c -o $@ $<
# --- end of the pprof block

$(BUILD)/filters/%.o: filters/%.c $(wildcard lib/*/*.h filters/common/*.h)
	@mkdir -p $(@D)
	$(Q_CC)$(CC) $(CPPFLAGS) $(CFLAGS) -c -o $@ $<

$(LIBA): $(LIB_OBJ)
	@mkdir -p $(@D)
	$(Q_AR)rm -f $@ && $(AR) rcs $@ $(LIB_OBJ)

$(BUILD)/bin/%: $(BUILD)/filters/%.o $(COMMON_OBJ) $(LIBA)
	@mkdir -p $(@D)
	$(Q_LD)$(CC) $(LDFLAGS) -o $@ $< $(COMMON_OBJ) $(LIBA) $(LIBS)

# lib/store's users link libcurl (see config.mk)
STORE_USERS := $(BUILD)/bin/fold-push $(BUILD)/bin/fold-query $(BUILD)/test/store
$(STORE_USERS): LIBS += $(CURL_LIBS)

$(BUILD)/test/%: test/unit/%.c $(wildcard test/unit/*.h) $(LIBA)
	@mkdir -p $(@D)
	$(Q_CC)$(CC) $(CPPFLAGS) -Itest/unit $(CFLAGS) $(LDFLAGS) -o $@ $< $(LIBA) $(LIBS)

# the plugin has no use for lib/store (and so none for libcurl)
PLUGIN_LIB_OBJ := $(filter-out $(BUILD)/lib/store/%,$(LIB_OBJ))
$(BUILD)/perf-plugin/foldkit.so: $(PLUGIN_SRC) $(wildcard perf-plugin/*.h lib/*/*.h) $(PLUGIN_LIB_OBJ)
	@mkdir -p $(@D)
	$(Q_LD)$(CC) $(CPPFLAGS) $(CFLAGS) -fPIC -fno-semantic-interposition -shared -Wl,-Bsymbolic \
		$(LDFLAGS) -o $@ $(PLUGIN_SRC) $(PLUGIN_LIB_OBJ) $(LIBS) $(PLUGIN_LIBS)

# --- fold2svg: its interactive script, lib/render/fold2svg.js, embedded as a C
# string.  The script goes into a CDATA section, so it must not hold "]]>".
FOLD2SVG_JS_H := $(BUILD)/gen/fold2svg_js.h
Q_GEN = $(if $(filter 0,$(V)),@echo "  GEN     $@";)
$(FOLD2SVG_JS_H): lib/render/fold2svg.js
	@mkdir -p $(@D)
	@if grep -q ']]>' $<; then echo "$<: must not contain ]]>" >&2; exit 1; fi
	$(Q_GEN){ echo '/* generated from lib/render/fold2svg.js by the Makefile */'; \
	  echo 'static const char fold2svg_js[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; \
	  echo ';'; } > $@
$(BUILD)/filters/fold2svg.o: $(FOLD2SVG_JS_H)
$(BUILD)/filters/fold2svg.o: CPPFLAGS += -I$(BUILD)/gen
# --- end of the fold2svg block

# --- fold2html: its page's script, lib/render/fold2html.js, embedded as a C
# string.  The script lands in an HTML <script> element that is also a
# commented CDATA section (the page is well-formed XML too), so it must not
# hold "</script", "<script" or "<!--" (which end or confuse the element in
# HTML) nor "]]>" (which ends the section in XML), in any case.
FOLD2HTML_JS_H := $(BUILD)/gen/fold2html_js.h
$(FOLD2HTML_JS_H): lib/render/fold2html.js
	@mkdir -p $(@D)
	@if grep -qiE '</script|<script|<!--|]]>' $<; then \
		echo "$<: must not contain </script, <script, <!-- or ]]>" >&2; exit 1; fi
	$(Q_GEN){ echo '/* generated from lib/render/fold2html.js by the Makefile */'; \
	  echo 'static const char fold2html_js[] ='; \
	  sed -e 's/\\/\\\\/g' -e 's/"/\\"/g' -e 's/^/"/' -e 's/$$/\\n"/' $<; \
	  echo ';'; } > $@
$(BUILD)/filters/fold2html.o: $(FOLD2HTML_JS_H)
$(BUILD)/filters/fold2html.o: CPPFLAGS += -I$(BUILD)/gen
# --- end of the fold2html block

# fp-record looks for the plugin where `make install` puts it
$(BUILD)/filters/fp-record.o: CPPFLAGS += -DFK_PLUGINDIR='"$(PLUGINDIR)"'

# the workloads tests record, built as servers are: frame pointers in the
# program (leaf functions too), none in Debian's libc and libstdc++
WORKLOADS := $(BUILD)/workloads/ledgerd
$(BUILD)/workloads/%: test/workloads/%.cpp
	@mkdir -p $(@D)
	$(Q_CC)$(CXX) -O2 -g -fno-omit-frame-pointer -mno-omit-leaf-frame-pointer -pthread -o $@ $<

check: all $(WORKLOADS)
	@BIN=$(BUILD)/bin BUILD=$(BUILD) test/run-tests

demo: all
	@BIN=$(BUILD)/bin demo/run

bench: all
	@BIN=$(BUILD)/bin bench/run

install: all
	mkdir -p $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1
	cp -f $(TOOLS) $(DESTDIR)$(BINDIR)/
	cp -f $(MANS) $(DESTDIR)$(MANDIR)/man1/
	$(if $(PLUGIN),mkdir -p $(DESTDIR)$(PLUGINDIR) && cp -f $(PLUGIN) $(DESTDIR)$(PLUGINDIR)/)

uninstall:
	rm -f $(TOOLS:$(BUILD)/bin/%=$(DESTDIR)$(BINDIR)/%) $(MANS:docs/%=$(DESTDIR)$(MANDIR)/man1/%)
	$(if $(PLUGIN),rm -f $(DESTDIR)$(PLUGINDIR)/foldkit.so)

clean:
	rm -rf build

-include fuzz/fuzz.mk

.PHONY: all deps check demo bench install uninstall clean
