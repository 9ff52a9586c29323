# The documented entry points: make run, make test, make bench, make lint.
SHELL := /bin/bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
TOOLGOLD := $(VENV)/bin/toolgold
export TOOLGOLD_DB ?= data/toolgold.db
HOST ?= 127.0.0.1
PORT ?= 8501
CHROMIUM ?= /usr/bin/chromium

.PHONY: run test lint typecheck pytest pytest-pure bench schema deps test-deps native browser clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Pinned install: constraints.txt is the lock; the stamp re-installs when it or pyproject.toml changes.
$(VENV)/.deps: $(PY) pyproject.toml constraints.txt
	$(PY) -m pip install --quiet -c constraints.txt -e '.[native]'
	touch $@

# The compiled core (scorer/native.py): the scorer's hot modules built by mypyc, again whenever a scorer module
# changes (until then the changed code runs as Python). Without a C compiler it says so in one line and the
# scorer runs as Python; TOOLGOLD_REQUIRE_NATIVE=1 (set by .ci/run) makes that an error.
$(VENV)/.native: $(VENV)/.deps $(wildcard scorer/*.py)
	$(PY) -m scorer.native_build --quiet $(if $(TOOLGOLD_REQUIRE_NATIVE),--require)
	touch $@

$(VENV)/.test-deps: $(VENV)/.deps
	$(PY) -m pip install --quiet -c constraints.txt -e '.[test,postgres]'
	touch $@

native: $(VENV)/.native
deps: $(VENV)/.deps $(VENV)/.native
test-deps: $(VENV)/.test-deps $(VENV)/.native browser

# Browser tests drive Debian's Chromium; Playwright's own browser download is not reachable here.
browser:
	@if [ ! -x $(CHROMIUM) ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
	      || { echo "could not install chromium"; exit 1; }; \
	  else echo "browser tests need $(CHROMIUM): sudo apt-get install chromium"; exit 1; fi; \
	fi

run: deps
	$(TOOLGOLD) init --demo-if-empty
	$(TOOLGOLD) app --host $(HOST) --port $(PORT)

lint: test-deps
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(VENV)/bin/mypy scorer labeler

# The PostgreSQL tests need TOOLGOLD_TEST_POSTGRES_URL. When it is not set and PostgreSQL's binaries are
# installed, a throwaway server is started for the run (the same .ci/postgres.sh as .ci/run, on a free
# port) and stopped after it; .ci/run sets the variable first, so it starts only one.
PYTEST_ARGS ?=
pytest: test-deps
	@if [ -z "$$TOOLGOLD_TEST_POSTGRES_URL" ] && ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then \
	  source .ci/postgres.sh; \
	  export TOOLGOLD_PG_PORT=$${TOOLGOLD_PG_PORT:-$$($(PY) -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}; \
	  trap stop_throwaway_postgres EXIT; \
	  start_throwaway_postgres || exit 1; \
	  $(VENV)/bin/pytest $(PYTEST_ARGS); \
	else \
	  $(VENV)/bin/pytest $(PYTEST_ARGS); \
	fi

# The core's own tests once more with the compiled core off: the Python fallback stays right, and the tests that
# patch the core's internals (skipped above when it is compiled) run here.
pytest-pure: test-deps
	TOOLGOLD_PURE=1 $(VENV)/bin/pytest -q -p no:cacheprovider tests/scorer tests/golden

test: lint pytest pytest-pure

bench: deps
	$(PY) -m benchmarks

schema: deps
	$(TOOLGOLD) schema --write docs/schema

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .import_linter_cache
