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

pytest: test-deps
	$(VENV)/bin/pytest

test: lint pytest

bench: deps
	$(PY) -m benchmarks

schema: deps
	$(TOOLGOLD) schema --write docs/schema

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache .import_linter_cache
