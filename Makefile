# Hearth: two commands on a fresh Debian machine.
#   make run   — install what is missing, build release, start every emulator on its defaults
#   make test  — install what is missing, build, run every Swift test and every real-client suite
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

SWIFT ?= swift
DEB_PACKAGES := libsqlite3-dev libssl-dev libmicrohttpd-dev libnghttp2-dev zlib1g-dev protobuf-compiler python3-venv golang-go golang-google-cloud-dev
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
VENV := .build/venv
PY := $(VENV)/bin/python
PYTEST_ARGS ?=
SWIFT_TEST_ARGS ?=

.PHONY: help deps venv build build-debug run test swift-test compat rules-test bench bench-quick clean

help:
	@echo "make run     install missing packages, build release, start hearth on its defaults"
	@echo "make test    install missing packages, build, run swift test and the real-client suites"
	@echo "make bench   benchmarks against peers and ceilings (QUICK=1 for a short pass)"

# Debian packages, installed only when missing.
deps:
	@missing=""; for p in $(DEB_PACKAGES); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  echo "installing:$$missing"; \
	  $(SUDO) apt-get update -qq && DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get install -y -qq $$missing; \
	fi

# Python clients (boto3, AWS CLI, firebase-admin, …) from PyPI into a venv under .build/.
$(VENV)/.installed: Tests/CompatTests/requirements.txt | deps
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q --disable-pip-version-check -r Tests/CompatTests/requirements.txt
	touch $@

venv: $(VENV)/.installed

build: deps
	$(SWIFT) build -c release --product hearth

build-debug: deps
	$(SWIFT) build --build-tests

run: build
	.build/release/hearth start

test: deps venv build-debug swift-test rules-test compat bench-quick

# Every benchmark scenario briefly, on the debug build, so the harness itself stays working.
bench-quick:
	$(MAKE) --no-print-directory bench QUICK=1

swift-test:
	$(SWIFT) test --skip-build --parallel $(SWIFT_TEST_ARGS)

# The shipped rules' own suites, through the CLI users run.
rules-test:
	@for suite in rules/tests/*.json; do \
	  [ -e "$$suite" ] || continue; \
	  echo "hearth rules test rules/firestore.rules $$suite"; \
	  .build/debug/hearth rules test rules/firestore.rules "$$suite"; \
	done

compat: venv
	HEARTH_BIN=$(CURDIR)/.build/debug/hearth PATH="$(CURDIR)/$(VENV)/bin:$$PATH" \
	  $(PY) -m pytest -q -p no:cacheprovider Tests/CompatTests $(PYTEST_ARGS)

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

clean:
	rm -rf .build
