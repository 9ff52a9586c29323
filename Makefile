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

.PHONY: run test lint typecheck pytest bench schema deps test-deps browser clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip

# Pinned install: constraints.txt is the lock; the stamp re-installs when it or pyproject.toml changes.
$(VENV)/.deps: $(PY) pyproject.toml constraints.txt
	$(PY) -m pip install --quiet -c constraints.txt -e .
	touch $@

$(VENV)/.test-deps: $(VENV)/.deps
	$(PY) -m pip install --quiet -c constraints.txt -e '.[test,postgres]'
	touch $@

deps: $(VENV)/.deps
test-deps: $(VENV)/.test-deps browser

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

test: lint pytest

bench: deps
	$(PY) -m benchmarks

schema: deps
	$(TOOLGOLD) schema --write docs/schema

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .import_linter_cache
