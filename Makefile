# One command runs the app, one runs the tests; each sets up its own virtual environment.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8501

.PHONY: run test bench

run: $(VENV)/.runtime-installed
	$(BIN)/python -m lnlab.ui.serve --server.port $(PORT)

test: $(VENV)/.dev-installed
	scripts/ensure-chromium
	scripts/ensure-postgresql
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest

bench: $(VENV)/.dev-installed
	$(BIN)/python -m bench

$(VENV)/.runtime-installed: requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

$(VENV)/.dev-installed: requirements.txt requirements-dev.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@ $(VENV)/.runtime-installed
