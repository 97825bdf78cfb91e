# Hearth: two commands on a fresh Debian machine.
#   make run   — install what is missing, build release, start every emulator on its defaults
#   make test  — install what is missing, build, run every Swift test and every real-client suite
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

SWIFT ?= swift
DEB_PACKAGES := libsqlite3-dev libssl-dev libmicrohttpd-dev libnghttp2-dev nghttp2-client zlib1g-dev protobuf-compiler python3-venv golang-go golang-google-cloud-dev
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
VENV := .build/venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=
SWIFT_TEST_ARGS ?=

.PHONY: help deps browser s3-clients venv build build-debug run test swift-test compat rules-test bench bench-quick s3-conformance test-asan test-tsan soak clean fuzz fuzz-build fuzz-smoke fuzz-cached

help:
	@echo "make run     install missing packages, build release, start hearth on its defaults"
	@echo "make test    install missing packages, build, run swift test and the real-client suites"
	@echo "make bench   benchmarks against peers and ceilings (QUICK=1 for a short pass)"
	@echo "make fuzz    libFuzzer on every parser of untrusted input, FUZZ_SECONDS (60) each; make fuzz-smoke: 5 s each"
	@echo "make s3-conformance S3TESTS_DIR=…   ceph/s3-tests against the debug build"
	@echo "make test-asan / test-tsan   the Swift tests under AddressSanitizer (+LeakSanitizer) / ThreadSanitizer"
	@echo "make soak    SOAK_MINUTES (default 30) of mixed traffic; passes when memory, fds, threads, WAL and p99 stay flat"

# Debian packages, installed only when missing.
deps:
	@missing=""; for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

# Headless Chromium for the web UI's browser suite (Tests/CompatTests/ui), installed when missing.
# Only this is allowed to fail: the suite then skips, saying why, instead of failing the run.
UI_DEB_PACKAGES := chromium chromium-driver
browser:
	@missing=""; for p in $(UI_DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  ( $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing ) \
	    || echo "could not install$$missing: the web UI browser suite will be skipped"; \
	fi

# Independent S3 clients with SigV4 signers of their own (Tests/CompatTests/s3/test_s3_{rclone,s3cmd,restic}.py),
# installed when missing. Optional like the browser: a missing one makes its test file skip, saying why.
S3_CLIENT_DEB_PACKAGES := rclone s3cmd restic
s3-clients:
	@missing=""; for p in $(S3_CLIENT_DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  ( $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing ) \
	    || echo "could not install$$missing: their S3 client tests will be skipped"; \
	fi

# Python clients (boto3, AWS CLI, firebase-admin, …) from PyPI into a venv under .build/.
$(VENV)/.installed: Tests/CompatTests/requirements.txt | deps
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r Tests/CompatTests/requirements.txt
	touch $@

venv: $(VENV)/.installed

# The release build (the Dockerfile uses the same flags; test_packaging.py checks that it does), each
# flag for idle memory (docs/benchmarks.md, *Idle memory*, has the measurements):
# - the Swift runtime and Foundation linked statically: fewer shared libraries mapped at start;
# - lld with DT_RELR (glibc 2.36+): the ~80,000 relative relocations of the position-independent
#   binary packed from 1.9 MiB of .rela.dyn, which the loader reads at every start, into 16 KiB;
# - every function in its own section, and the functions start-up runs placed side by side
#   (linker/hearth.order, made by bench/startup_order.py): the kernel maps code in whole page-cache
#   folios, so start-up code spread over the binary kept most of its 18 MiB of text resident. The same
#   file first places the functions the S3 small-object requests run side by side (not for memory: for
#   time, as the instruction TLB and caches then hold a request's code; docs/benchmarks.md, *s3get30*).
RELEASE_FLAGS = --static-swift-stdlib -Xswiftc -Xfrontend -Xswiftc -function-sections -Xswiftc -use-ld=lld \
  -Xlinker -z -Xlinker pack-relative-relocs \
  -Xlinker --symbol-ordering-file=$(CURDIR)/linker/hearth.order -Xlinker --no-warn-symbol-ordering
build: deps
	@# SwiftPM does not see the order file as an input: a newer one must relink the binary.
	@bin=.build/release/hearth; if [ -e "$$bin" ] && [ linker/hearth.order -nt "$$bin" ]; then rm -f "$$bin"; fi
	$(SWIFT) build -c release --product hearth $(RELEASE_FLAGS)

build-debug: deps
	$(SWIFT) build --build-tests

run: build
	.build/release/hearth start

test: deps venv build-debug swift-test fuzz-cached rules-test compat bench-quick

# Every benchmark scenario briefly, on the debug build, so the harness itself stays working.
bench-quick:
	$(MAKE) --no-print-directory bench QUICK=1

# Scratch files of the tests (and of the servers and clients they start) go under one directory per
# checkout, emptied when a suite starts and removed when it passes (kept for a look when it fails):
# without it every run left ~300 MB of data directories and logs in /tmp.
TEST_TMP := $(or $(TMPDIR),/tmp)/hearth-test-$(shell printf '%s' '$(CURDIR)' | cksum | cut -d' ' -f1)
scratch = rm -rf $(TEST_TMP)/$(1) && mkdir -p $(TEST_TMP)/$(1) && TMPDIR=$(TEST_TMP)/$(1)
unscratch = rm -rf $(TEST_TMP)/$(1); rmdir $(TEST_TMP) 2>/dev/null || true

swift-test:
	$(call scratch,swift) $(SWIFT) test --skip-build --parallel $(SWIFT_TEST_ARGS)
	@$(call unscratch,swift)

# The shipped rules' own suites, through the CLI users run.
rules-test:
	@for suite in rules/tests/*.json; do \
	  [ -e "$$suite" ] || continue; \
	  echo "hearth rules test rules/firestore.rules $$suite"; \
	  .build/debug/hearth rules test rules/firestore.rules "$$suite"; \
	done
	@for suite in rules/tests/storage/*.json; do \
	  [ -e "$$suite" ] || continue; \
	  echo "hearth rules test rules/storage.rules $$suite"; \
	  .build/debug/hearth rules test rules/storage.rules "$$suite"; \
	done

# libFuzzer targets (Fuzz/), built with the toolchain's -sanitize=fuzzer,address into .build/fuzz
# (the manifest declares them only when HEARTH_FUZZ is set, so other builds are untouched).
FUZZ_SECONDS ?= 60
FUZZ_TARGETS ?= protobuf http2 grpc-frames rules sigv4 chunked multipart xml json firestore storage-upload \
  rules-eval value-order percent listen-write writes gunzip policy \
  firestore-requests import auth-requests

fuzz-build: deps
	HEARTH_FUZZ=1 $(SWIFT) build --build-path .build/fuzz --product hearth-fuzz -Xswiftc -sanitize=fuzzer,address

fuzz: fuzz-build
	Fuzz/run.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)

fuzz-smoke:
	$(MAKE) --no-print-directory fuzz FUZZ_SECONDS=5

# In `make test`: swift test has already replayed every seed and regression input and run a seeded
# mutation pass per target (HearthFuzzTests). libFuzzer adds 2 s per target only where that is
# cheap: an instrumented binary built by `make fuzz` that is newer than every source. Building one
# takes minutes, so otherwise this says why it skips.
fuzz-cached:
	@bin=.build/fuzz/debug/hearth-fuzz; \
	if [ ! -x "$$bin" ]; then \
	  echo "libFuzzer pass skipped: no instrumented build ($$bin; make fuzz-build makes one, ~8 min)"; \
	elif [ -n "$$(find Sources Fuzz/Sources -name '*.swift' -newer "$$bin" | head -1)" ]; then \
	  echo "libFuzzer pass skipped: $$bin is older than the sources (make fuzz-build)"; \
	else \
	  Fuzz/run.sh 2 $(FUZZ_TARGETS); \
	fi

compat: venv browser s3-clients
	$(call scratch,compat) HEARTH_BIN=$(CURDIR)/.build/debug/hearth PATH="$(CURDIR)/$(VENV)/bin:$$PATH" \
	  $(PY) -m pytest -q -p no:cacheprovider Tests/CompatTests $(PYTEST_ARGS)
	@$(call unscratch,compat)

# Benchmarks: wrk, h2load (nghttp2-client) and nginx from Debian (when missing), moto's server into the
# venv, then bench/run.py (which builds bench/grpcload with the Go packages of DEB_PACKAGES).
# The full run builds and measures release; QUICK=1 (what `make test` runs) uses the debug binary.
$(VENV)/.bench-installed: bench/requirements.txt | $(VENV)/.installed
	$(VENV)/bin/pip install -q --disable-pip-version-check -r bench/requirements.txt
	touch $@

bench: deps venv $(VENV)/.bench-installed $(if $(QUICK),,build)
	@need=""; command -v wrk >/dev/null 2>&1 || need="$$need wrk"; \
	command -v h2load >/dev/null 2>&1 || need="$$need nghttp2-client"; \
	if ! command -v nginx >/dev/null 2>&1 && [ ! -x /usr/sbin/nginx ]; then need="$$need nginx-light"; fi; \
	if [ -n "$$need" ]; then \
	  echo "installing:$$need"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$need; \
	fi
	$(if $(QUICK),[ -n "$${HEARTH_BIN:-}" ] || [ -x .build/debug/hearth ] || $(SWIFT) build --product hearth,)
	HEARTH_BIN="$${HEARTH_BIN:-$(CURDIR)/.build/$(if $(QUICK),debug,release)/hearth}" \
	  MOTO_SERVER="$(CURDIR)/$(VENV)/bin/moto_server" \
	  $(PY) bench/run.py $(if $(QUICK),--quick,)

# ceph/s3-tests (test_s3.py, test_headers.py) against the debug build, from a checkout you provide:
#   make s3-conformance S3TESTS_DIR=/path/to/s3-tests [S3TESTS_K='<pytest -k expression>']
# Nothing of the suite is part of Hearth; without S3TESTS_DIR this says so and does nothing.
S3TESTS_DIR ?=
S3TESTS_K ?=
S3TESTS_VENV := .build/s3tests-venv
$(S3TESTS_VENV)/.installed: Tests/S3Conformance/requirements.txt
	python3 -m venv $(S3TESTS_VENV)
	$(S3TESTS_VENV)/bin/pip install -q --disable-pip-version-check -r Tests/S3Conformance/requirements.txt
	touch $@

s3-conformance:
	@if [ -z "$(S3TESTS_DIR)" ] || [ ! -d "$(S3TESTS_DIR)/s3tests/functional" ]; then \
	  echo "s3-conformance: skipped — set S3TESTS_DIR to a checkout of https://github.com/ceph/s3-tests"; \
	else \
	  $(MAKE) --no-print-directory deps build-debug $(S3TESTS_VENV)/.installed && \
	  $(S3TESTS_VENV)/bin/python Tests/S3Conformance/run.py --suite "$(S3TESTS_DIR)" --hearth .build/debug/hearth \
	    --results .build/s3-conformance.json $(if $(S3TESTS_K),-k "$(S3TESTS_K)",); \
	fi

# The Swift tests under a sanitizer, each in its own build directory so the normal build is left
# alone (docs/reliability.md). LeakSanitizer runs inside AddressSanitizer on Linux. The tests that
# launch a hearth server get the same instrumented build (HEARTH_BIN), so the servers run under the
# sanitizer too; every process writes its reports to DIR/reports/TOOL.PID (log_path: a launched
# server's stderr goes to a log its test deletes), the run's output goes to DIR/test.log, and
# Tests/sanitizer-summary.sh ends with the tests run and every report counted. The exit status is
# swift test's, or 1 when a sanitizer reported anything.
SANITIZER_TEST_ARGS ?= $(SWIFT_TEST_ARGS)
define sanitizer-run
	rm -rf $(1)/reports && mkdir -p $(1)/reports
	status=0; $(2) HEARTH_BIN=$(CURDIR)/$(1)/debug/hearth \
	  $(SWIFT) test --sanitize=$(3) --scratch-path $(1) $(SANITIZER_TEST_ARGS) 2>&1 | tee $(1)/test.log || status=$$?; \
	Tests/sanitizer-summary.sh $(4) $(1)/test.log $(CURDIR)/$(1)/reports | tee $(1)/summary.txt \
	  || { [ $$status != 0 ] || status=1; }; exit $$status
endef

test-asan: deps
	$(call sanitizer-run,.build-asan,ASAN_OPTIONS=detect_leaks=1:log_path=$(CURDIR)/.build-asan/reports/asan LSAN_OPTIONS=suppressions=$(CURDIR)/Tests/lsan-suppressions.txt:print_suppressions=0,address,asan)

test-tsan: deps
	$(call sanitizer-run,.build-tsan,TSAN_OPTIONS=halt_on_error=0:log_path=$(CURDIR)/.build-tsan/reports/tsan,thread,tsan)

# Not part of `make test`: a long run of fixed-rate mixed traffic on the release build.
SOAK_MINUTES ?= 30
soak: deps venv build
	SOAK_MINUTES=$(SOAK_MINUTES) HEARTH_BIN="$${HEARTH_BIN:-$(CURDIR)/.build/release/hearth}" $(PY) bench/soak.py

clean:
	rm -rf .build .build-asan .build-tsan
