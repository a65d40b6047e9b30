# The two commands of the quick start: `make run` (the app on the demo project) and `make test` (every test).
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8765

.PHONY: run test setup bench clean

run: setup
	$(BIN)/skmemory serve --demo --port $(PORT)

test: setup
	$(BIN)/python -m pytest -ra

setup: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml constraints.txt
	test -d $(VENV) || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -c constraints.txt -e '.[test]'
	touch $@

clean:
	rm -rf $(VENV) *.egg-info test-output
