# One command runs the app, one runs the tests; each sets up its own virtual environment.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8501
N ?= 2
CLUSTER_PORT ?= 8500

.PHONY: run cluster test bench

run: $(VENV)/.runtime-installed
	$(BIN)/python -m lnlab.ui.serve --server.port $(PORT)

# N app processes behind HAProxy on CLUSTER_PORT; installs Debian's haproxy first if missing
# (scripts/ensure-haproxy says so when it does).
cluster: $(VENV)/.runtime-installed
	PYTHON=$(BIN)/python scripts/cluster $(N) --port $(CLUSTER_PORT)

test: $(VENV)/.dev-installed
	scripts/ensure-chromium
	scripts/ensure-postgresql
	scripts/ensure-haproxy
	scripts/ensure-node
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
