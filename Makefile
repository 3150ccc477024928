# One command runs the app, one runs the tests; each sets up its own virtual environment.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PORT ?= 8501
N ?= 2
CLUSTER_PORT ?= 8500
CLUSTER_ARGS ?=

# axe-core (the browser tests' accessibility checks) and Lighthouse (bench.lighthouse), pinned
# in package-lock.json
NODE_TOOLS := node_modules/.package-lock.json

.PHONY: run dev cluster test test-fast bench compose-check

# The app as every deployment serves it (app.py's st.App), no file watching.
run: $(VENV)/.runtime-installed
	$(BIN)/streamlit run app.py --server.port $(PORT)

# While you edit: the same app, rerun when a file is saved (Streamlit's file watcher).
dev: $(VENV)/.runtime-installed
	$(BIN)/streamlit run app.py --server.port $(PORT) --server.fileWatcherType auto --server.runOnSave true

# N app processes behind HAProxy on CLUSTER_PORT; installs Debian's haproxy first if missing
# (scripts/ensure-haproxy says so when it does). CLUSTER_ARGS: more options of
# `python -m lnlab.serving.cluster` (--run-dir, per-address limits...).
cluster: $(VENV)/.runtime-installed
	PYTHON=$(BIN)/python scripts/cluster $(N) --port $(CLUSTER_PORT) $(CLUSTER_ARGS)

# The course's stack in containers (Docker installed and started if needed), a class of 60 run
# through it with a replica killed, then taken down: ends with "N passed, N failed".
compose-check: $(VENV)/.dev-installed
	PYTHON=$(BIN)/python scripts/compose-check

# Everything CI runs: lint, the tests that need no browser on every core (pytest-xdist), then
# the browser tests one at a time (each already drives a server and Chromium on both cores).
test: $(VENV)/.dev-installed $(NODE_TOOLS)
	scripts/ensure-chromium
	scripts/ensure-postgresql
	scripts/ensure-haproxy
	scripts/ensure-node
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -n auto -m "not browser"
	$(BIN)/python -m pytest -m browser

# Lint, and the tests that need no browser and no service: not `browser` (Chromium), not
# `services` (PostgreSQL, HAProxy, the app started as servers; tests/conftest.py marks them).
# On every core (pytest-xdist): about 5 minutes on 2 busy cores; `make test` runs everything.
test-fast: $(VENV)/.dev-installed $(NODE_TOOLS)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest -n auto -m "not browser and not services"

bench: $(VENV)/.dev-installed $(NODE_TOOLS)
	$(BIN)/python -m bench

$(VENV)/.runtime-installed: requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements.txt
	touch $@

$(VENV)/.dev-installed: requirements.txt requirements-dev.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --disable-pip-version-check -r requirements-dev.txt
	touch $@ $(VENV)/.runtime-installed

$(NODE_TOOLS): package.json package-lock.json
	scripts/ensure-node
	npm ci --no-audit --no-fund --loglevel=error
