# One entry point for people and CI. `make run` opens the app, `make test` runs the tests.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
XVFB := xvfb-run -a -s "-screen 0 1920x1080x24 -nolisten tcp"
PYTEST_ARGS ?=

.PHONY: setup setup-osworld run test test-qt-long test-reliability test-docker-osworld check lint bench package test-package dist install-desktop icons clean

REF_VENV := .venv-ref
REF_STAMP := $(REF_VENV)/.installed

OSWORLD_SERVER_VENV := .venv-osworld-server
OSWORLD_SERVER_STAMP := $(OSWORLD_SERVER_VENV)/.installed

CONSUMERS_VENV := .venv-consumers
CONSUMERS_STAMP := $(CONSUMERS_VENV)/.installed

setup: $(STAMP) $(REF_STAMP) $(OSWORLD_SERVER_STAMP) $(CONSUMERS_STAMP)

$(STAMP): pyproject.toml packaging/apt-packages.txt scripts/setup-system.sh
	@scripts/setup-system.sh
	@test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	@# pyautogui's mouseinfo pulls python3-xlib 0.15, which writes the same Xlib folder as python-xlib:
	@# whichever installs last wins, and 0.15 cannot reach a display with a cookie. Ours goes last.
	$(BIN)/pip install -q --force-reinstall --no-deps 'python-xlib>=0.33'
	$(BIN)/python -c "import Xlib, sys; sys.exit(Xlib.__version__ < (0, 33))"
	@touch $(STAMP)

# OSWorld's own code in a side environment: the judge of tests/parity and of `--evaluator osworld`.
$(REF_STAMP): packaging/reference-requirements.txt scripts/setup-reference.sh scripts/reference-version
	scripts/setup-reference.sh $(REF_VENV)
	@touch $(REF_STAMP)

# OSWorld's own guest server (../shared/osworld/server, unmodified) runs from this environment beside
# ours: tests/parity/test_guest_compat.py and bench/guest_vs_osworld.py.
$(OSWORLD_SERVER_STAMP): packaging/osworld-server-requirements.txt scripts/setup-osworld-server.sh
	scripts/setup-osworld-server.sh $(OSWORLD_SERVER_VENV)
	@touch $(OSWORLD_SERVER_STAMP)

# The trainers that read our exports (TRL, LLaMA-Factory's data code, a CPU torch; about 1.5 GB):
# tests/trajectory/test_consumers.py feeds them preference pairs and sharegpt data.
$(CONSUMERS_STAMP): packaging/consumers-requirements.txt scripts/setup-consumers.sh
	scripts/setup-consumers.sh $(CONSUMERS_VENV)
	@touch $(CONSUMERS_STAMP)

# The OSWorld desktop's applications (LibreOffice, GIMP, VLC, Thunderbird, Chromium; about 1 GB).
setup-osworld: setup
	@scripts/setup-system.sh packaging/osworld-packages.txt

run: setup
	$(BIN)/osw-studio

test: setup
	$(XVFB) env BIN=$(BIN) scripts/test.sh $(PYTEST_ARGS)

# Every bundled task through F5 in one window, alone (make test runs it too, beside the other tests; ~6 min).
test-qt-long: setup
	$(XVFB) $(BIN)/pytest tests/ui -m qt_many_windows $(PYTEST_ARGS)

# The Docker guest image with the OSWorld desktop (build.sh --desktop osworld; about 1.5 GB of packages,
# some 10-15 minutes the first time, cached after) and OSWorld's tasks in its containers. Needs root (dockerd).
test-docker-osworld: setup
	OSW_TEST_OSWORLD_IMAGE=1 $(BIN)/pytest tests/docker -m osworld_image $(PYTEST_ARGS)

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

# A one-folder app, dist/osw-studio/ (PyInstaller; see packaging/README.md for macOS and Windows).
PACKAGE_DIST ?= dist
PACKAGE_WORK ?= build/pyinstaller
package: setup
	$(BIN)/pyinstaller --noconfirm --log-level WARN --distpath $(PACKAGE_DIST) --workpath $(PACKAGE_WORK) \
		packaging/pyinstaller/osw-studio.spec
	@echo "built $(PACKAGE_DIST)/osw-studio/osw-studio"

test-package: setup
	$(BIN)/pytest tests/packaging $(PYTEST_ARGS)

# The sdist and wheel for `pip install osw-studio`, checked with twine.
dist: setup
	rm -rf dist/*.whl dist/*.tar.gz
	$(BIN)/python -m build --outdir dist .
	$(BIN)/twine check --strict dist/*.whl dist/*.tar.gz

# The launcher, AppStream metadata and icons in ~/.local/share (XDG_DATA_HOME), running this checkout.
install-desktop: setup
	packaging/linux/install-desktop.sh --exec $(abspath $(BIN))/osw-studio

icons: setup
	$(BIN)/python scripts/render_icons.py

clean:
	rm -rf $(VENV) $(REF_VENV) $(OSWORLD_SERVER_VENV) $(CONSUMERS_VENV) build dist .mypy_cache .pytest_cache .ruff_cache
