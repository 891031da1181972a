# One entry point for people and CI. `make run` opens the app, `make test` runs the tests.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
XVFB := xvfb-run -a -s "-screen 0 1920x1080x24 -nolisten tcp"
PYTEST_ARGS ?=

.PHONY: setup run test test-reliability check lint bench package clean

setup: $(STAMP)

$(STAMP): pyproject.toml packaging/apt-packages.txt scripts/setup-system.sh
	@scripts/setup-system.sh
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	@touch $(STAMP)

run: setup
	$(BIN)/osw-studio

test: setup
	$(XVFB) $(BIN)/pytest $(PYTEST_ARGS)

test-reliability: setup
	$(XVFB) $(BIN)/pytest tests/reliability -m reliability --reliability-full $(PYTEST_ARGS)

lint: setup
	$(BIN)/ruff format --check .
	$(BIN)/ruff check .
	$(BIN)/mypy
	$(BIN)/lint-imports

check: lint test

bench: setup
	$(XVFB) $(BIN)/python bench/run_all.py

clean:
	rm -rf $(VENV) build dist .mypy_cache .pytest_cache .ruff_cache
