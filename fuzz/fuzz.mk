# fuzz/fuzz.mk - libFuzzer targets, included by the Makefile.
#
#   make fuzz                          build every target into build/fuzz/
#   make fuzz-run SECONDS=600          run each target in turn for SECONDS
#   make fuzz-run FUZZ_ONLY=count      ... or only the named ones
#   make fuzz-regress                  run each target once over its seeds
#                                      and fuzz/regress/NAME/ (no fuzzing)
#
# Every fuzz/NAME.c is a target (see fuzz/README.md).  lib/ is compiled
# again with clang, ASan, UBSan and libFuzzer's coverage hooks; the line
# reader's block is shrunk to 16 bytes so small inputs reach its refill and
# buffer-growth paths.  The work corpus goes to fuzz/corpus-NAME/ and
# crashes to fuzz/crash-NAME-* (both ignored by git); committed seeds live
# in fuzz/seeds/NAME/.  clang's -Wmissing-field-initializers is off: it
# flags the { NULL } terminators of GOptionEntry tables, which gcc accepts.

FUZZ_CC      ?= clang
FUZZ_DIR     := build/fuzz
FUZZ_CFLAGS  := -std=gnu11 -O1 -g -fno-omit-frame-pointer \
		-Wall -Wextra -Werror -Wno-unused-parameter -fno-strict-aliasing \
		-Wno-missing-field-initializers \
		-fsanitize=address,undefined -fno-sanitize-recover=all \
		-DFK_LINE_READER_BLOCK=16
FUZZ_TARGETS := $(patsubst fuzz/%.c,%,$(sort $(wildcard fuzz/*.c)))
FUZZ_ONLY    ?= $(FUZZ_TARGETS)
FUZZ_BINS    := $(FUZZ_TARGETS:%=$(FUZZ_DIR)/%)
FUZZ_LIB_OBJ := $(LIB_SRC:%.c=$(FUZZ_DIR)/obj/%.o) $(GEN_SRC:build/%.c=$(FUZZ_DIR)/obj/%.o)
SECONDS      ?= 60

fuzz: $(FUZZ_BINS)

# (every target is .SECONDARY: see the Makefile; a list here would narrow it)

$(FUZZ_DIR)/obj/lib/%.o: lib/%.c $(wildcard lib/*/*.h) build/gen/profile.pb-c.h
	@mkdir -p $(@D)
	$(Q_CC)$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

# protobuf-c's code for profile.proto (see the Makefile), instrumented too
$(FUZZ_DIR)/obj/gen/%.o: build/gen/%.c build/gen/%.h
	@mkdir -p $(@D)
	$(Q_CC)$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<

# A target may need code outside lib/ (the perf plugin's) or another
# library (libxml2 to check SVG): fuzz/NAME.mk sets FUZZ_SRC_NAME (extra
# sources, compiled into the target) and FUZZ_LIBS_NAME (link flags).
-include $(filter-out fuzz/fuzz.mk,$(wildcard fuzz/*.mk))

# (the plugin's sources too: FUZZ_SRC_NAME cannot be named here)
$(FUZZ_DIR)/%: fuzz/%.c fuzz/fuzz.h $(FUZZ_LIB_OBJ) $(wildcard fuzz/*.mk perf-plugin/*.[ch])
	@mkdir -p $(@D)
	$(Q_LD)$(FUZZ_CC) $(CPPFLAGS) -Ifuzz $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< \
		$(FUZZ_SRC_$*) $(FUZZ_LIB_OBJ) $(LIBS) $(CURL_LIBS) $(FUZZ_LIBS_$*)

# libFuzzer's own summary (final cov/ft/exec/s) ends each log; the log
# stays in build/fuzz/NAME.log.  A crash stops the loop with its status.
fuzz-run: fuzz
	@for t in $(FUZZ_ONLY); do \
		mkdir -p fuzz/corpus-$$t; \
		dict=; [ -f fuzz/dict/$$t.dict ] && dict=-dict=fuzz/dict/$$t.dict; \
		echo "fuzz: $$t for $(SECONDS)s (log: $(FUZZ_DIR)/$$t.log)"; \
		$(FUZZ_DIR)/$$t -max_total_time=$(SECONDS) -timeout=10 \
			-print_final_stats=1 -artifact_prefix=fuzz/crash-$$t- $$dict \
			fuzz/corpus-$$t fuzz/seeds/$$t > $(FUZZ_DIR)/$$t.log 2>&1; \
		st=$$?; \
		grep -E '^#[0-9]+.*(DONE|INITED)|^Done|stat::|ERROR|SUMMARY|artifact' $(FUZZ_DIR)/$$t.log | sed 's/^/  /'; \
		[ $$st -eq 0 ] || { echo "fuzz: $$t failed (status $$st)"; exit $$st; }; \
	done

fuzz-regress: fuzz
	@for t in $(FUZZ_ONLY); do \
		files=$$(find fuzz/seeds/$$t fuzz/regress/$$t -type f 2>/dev/null | sort); \
		[ -n "$$files" ] || continue; \
		$(FUZZ_DIR)/$$t $$files > $(FUZZ_DIR)/$$t.regress.log 2>&1 \
			&& echo "fuzz-regress: $$t ok ($$(echo "$$files" | wc -l) inputs)" \
			|| { tail -30 $(FUZZ_DIR)/$$t.regress.log; exit 1; }; \
	done

.PHONY: fuzz fuzz-run fuzz-regress
