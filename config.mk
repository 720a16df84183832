# Build configuration.  Flags for the libraries come from pkg-config.
PREFIX   ?= /usr/local
BINDIR   ?= $(PREFIX)/bin
MANDIR   ?= $(PREFIX)/share/man
# perf looks for dlfilters by name in $(perf --exec-path)/dlfilters
PLUGINDIR ?= $(shell perf --exec-path 2>/dev/null || echo $(PREFIX)/libexec/perf-core)/dlfilters

ifeq ($(origin CC),default)
CC := cc
endif
AR       ?= ar
PKGS     := glib-2.0 libtraceevent libdw libprotobuf-c zlib
# libcurl: only lib/store (fold-push, fold-query) links it, so the other
# tools and the perf plugin do not load it and its dependencies
CURL_PKG := libcurl

# SANITIZE=address,undefined builds everything instrumented into its own tree.
SANITIZE ?=
ifneq ($(SANITIZE),)
BUILD    ?= build/san
SANFLAGS := -fsanitize=$(SANITIZE) -fno-sanitize-recover=all -fno-omit-frame-pointer
else
BUILD    ?= build
SANFLAGS :=
endif

# pprof's profile.proto, as Debian's golang-github-google-pprof-dev installs
# it (build/deps.mk finds it with dpkg -L); protoc-c turns it into C in
# build/gen/ at build time.
PROFILE_PROTO ?= $(DEPS_PROFILE_PROTO)
PROTOC_C ?= protoc-c

OPT      ?= -O2
CPPFLAGS += -D_GNU_SOURCE -Ilib -Ifilters/common -Ibuild $(PKG_CFLAGS) $(CURL_CFLAGS)
CFLAGS   += -std=gnu11 $(OPT) -g -Wall -Wextra -Werror -Wno-unused-parameter -fno-strict-aliasing $(SANFLAGS)
PIC      := -fPIC
LDFLAGS  += $(SANFLAGS)
LIBS     += $(PKG_LIBS) -liberty -lm
PLUGIN_LIBS :=

V ?= 0
ifeq ($(V),0)
Q_CC = @echo "  CC      $@";
Q_LD = @echo "  LD      $@";
Q_AR = @echo "  AR      $@";
endif
