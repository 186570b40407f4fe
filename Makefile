# The two commands of the quick start:  make serve  and  make test
VENV      ?= .venv
PYTHON    ?= python3
BIN       := $(VENV)/bin
STAMP     := $(VENV)/.installed
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export ANONYMIZED_TELEMETRY := False

.PHONY: serve test install system-deps lint typecheck unit bench screenshots clean

## Create the virtual environment and install everything pinned (torch CPU 2.13.0, offline MiniLM).
install: $(STAMP)
$(STAMP): pyproject.toml requirements.lock
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet -c requirements.lock "torch==2.13.0"
	$(BIN)/pip install --quiet -c requirements.lock -e ".[dev]"
	touch $(STAMP)

## Install, build the knowledge-base index if it is missing, and serve on 127.0.0.1:8000.
serve: install
	$(BIN)/trust-gateway serve --host $${GATEWAY_HOST:-127.0.0.1} --port $${GATEWAY_PORT:-8000}

## Debian packages the test suite drives for real: headless Chromium, Prometheus (promtool), and the
## PostgreSQL and Redis servers of a replicated deployment (started by the tests on loopback).
system-deps:
	@command -v chromium >/dev/null && command -v prometheus >/dev/null && command -v promtool >/dev/null \
	  && test -x /usr/lib/postgresql/15/bin/initdb && command -v redis-server >/dev/null || { \
	  apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
	    chromium prometheus postgresql redis-server >/dev/null; }

lint: install
	$(BIN)/ruff check gateway tests bench
	$(BIN)/ruff format --check gateway tests bench

typecheck: install
	$(BIN)/mypy

## Install everything (Python and Debian packages) and run every check and test.
test: install system-deps lint typecheck
	$(BIN)/pytest -q -p no:cacheprovider -n 2 --dist loadfile --durations=15

## Refresh docs/screenshot-patient.png and docs/screenshot-clinician.png (the browser tests, writing
## their screenshots into docs/; a plain test run writes them into a temporary directory).
screenshots: install system-deps
	SCREENSHOTS_DIR=$(CURDIR)/docs $(BIN)/pytest -q -p no:cacheprovider tests/browser

bench: install
	$(BIN)/python bench/bench_gateway.py

clean:
	rm -rf $(VENV) var .pytest_cache .mypy_cache .ruff_cache
