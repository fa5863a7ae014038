# hitl-agent-server: `make dev` serves the agents, `make test` runs every test.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
REPLICAS_STAMP := .venv-replicas/.installed
N ?= 2
PORT ?= 2024
# pytest workers of `make test` (pytest-xdist, a module per worker at a time; tests/web and tests/wire each
# go whole to one worker, so their own server and Chromium start once: tests/conftest.py; each worker starts
# the servers its modules use; TEST_WORKERS=0 runs everything in one process). 3 on 2 cores: several modules
# mostly wait (on a deadline, a 10 s flush, a restarted replica), and a third worker keeps both cores busy
# meanwhile; a fourth costs more (its own session server, its collection) than it overlaps (6:53 vs 6:28).
# Modules go out in collected order, the `long` ones and those two folders first (tests/conftest.py);
# xdist's default reorder (most tests first) would start the few-test, minute-long modules last.
TEST_WORKERS ?= 3
# `make dev` serves in dev mode (the dev-* tokens of .env.example, one-click sign-in, loopback only).
# The server reads HITL_DEV_MODE from its environment only, so the .env copied from .env.example
# (HITL_DEV_MODE=false) does not turn it off here, nor would a .env turn it on anywhere else.
HITL_DEV_MODE ?= true
WEB := web
WEB_DEPS := $(WEB)/node_modules/.installed
WEB_BUILD := $(WEB)/dist/index.html
WEB_SOURCES := $(shell find $(WEB)/src -type f) $(wildcard $(WEB)/*.json $(WEB)/*.ts $(WEB)/index.html)
CHROMIUM := /usr/bin/chromium
# The agents langgraph.json serves (for `make dev`'s first line)
AGENTS = $(shell $(PYTHON) -c 'import json; print(", ".join(json.load(open("langgraph.json"))["graphs"]))')
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
export LANGGRAPH_CLI_NO_ANALYTICS := 1
export LANGGRAPH_NO_VERSION_CHECK := true
# Bytecode of the project's own modules is written once (to the __pycache__ folders git ignores). Where the
# shell sets PYTHONDONTWRITEBYTECODE (CI sandboxes do), every Python process a target starts would compile
# server/, hitl/, the agents and the test modules again: `make test` starts about 100 (servers, replicas,
# pytest workers, the CLI), 0.7 s of CPU each for a server's imports and 5 s for a pytest's collection.
unexport PYTHONDONTWRITEBYTECODE

.DEFAULT_GOAL := help
.PHONY: help setup dev serve-replicas local-services test test-web test-python lint schemas clean

# Targets of parts a project may not have live beside those parts (`make bench` in bench/, `make chaos`
# beside the replica tests, `make deploy-check` in deploy/check/), so `make help` lists only what this
# checkout can run.
-include bench/bench.mk tests/replicas/chaos.mk deploy/check/check.mk services/billing.mk
# A project's own targets and variables (`hitl new project` writes a first project.mk): no release of the
# layer ships or changes that file, so `hitl upgrade` never meets a team's line there (this Makefile it may).
-include project.mk

help: ## List the targets
	@grep -hE '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $@

# The replica engine (langhost + langgraph-runtime-pg) pins langgraph-api 0.11.1: its own venv.
$(REPLICAS_STAMP): pyproject.toml constraints-replicas.txt
	$(PYTHON) -m venv .venv-replicas
	.venv-replicas/bin/python -m pip install --quiet --upgrade pip
	.venv-replicas/bin/python -m pip install --quiet -c constraints-replicas.txt -e . langhost
	touch $@

$(WEB_DEPS): $(WEB)/package-lock.json
	cd $(WEB) && npm ci --no-audit --no-fund
	touch $@

$(WEB_BUILD): $(WEB_DEPS) $(WEB_SOURCES)
	cd $(WEB) && npm run build
	touch $@

.env:
	cp .env.example .env

$(CHROMIUM):
	$(SUDO) apt-get -o DPkg::Lock::Timeout=120 update
	$(SUDO) apt-get -o DPkg::Lock::Timeout=120 install -y chromium

setup: $(STAMP) $(WEB_DEPS) ## Set up .venv (with the hitl CLI) and the web app's packages; dev and test do it too

# Servers a project runs beside its agents under `make dev` (the demo's billing MCP server: services/billing.mk):
# DEV_PORTS lists each one's port and the make variable that sets it (port:VARIABLE), checked before anything
# starts; DEV_BESIDE starts each in the background (`command &`), stopped by its PID when `make dev` ends.
DEV_PORTS ?=
DEV_BESIDE ?=

dev: $(STAMP) $(WEB_BUILD) .env ## Set up, build the web app if needed, serve agents + app on http://127.0.0.1:$(PORT)
	@$(BIN)/python -m server.runtime.port_check $(PORT)
	@$(foreach p,$(DEV_PORTS),$(BIN)/python -m server.runtime.port_check $(subst :, ,$(p)) &&) true
	@$(BIN)/python -m hitl.proof.receipt_keys ensure
	@echo "Serving on http://127.0.0.1:$(PORT)  (agents: $(AGENTS); every API route needs a token)"
	@echo "Web app:   http://127.0.0.1:$(PORT)/app/  (sign in as a dev user; HITL_DEV_MODE=$(HITL_DEV_MODE))"
	@trap 'kill $$(jobs -p) 2>/dev/null' EXIT; $(DEV_BESIDE) \
	HITL_DEV_MODE=$(HITL_DEV_MODE) $(BIN)/python -m server.runtime.dev_reload --port $(PORT)

local-services: ## Make sure PostgreSQL and Redis answer on loopback (replicas and their tests need them)
	@pg_isready -q -h 127.0.0.1 -p 5432 || $(SUDO) pg_ctlcluster --skip-systemctl-redirect $$(ls /etc/postgresql) main start
	@redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null 2>&1 || $(SUDO) redis-server --daemonize yes --bind 127.0.0.1 --port 6379 --save "" --appendonly no
	@pg_isready -q -h 127.0.0.1 -p 5432 && redis-cli -h 127.0.0.1 -p 6379 ping >/dev/null

serve-replicas: $(STAMP) $(REPLICAS_STAMP) $(WEB_BUILD) .env local-services ## Serve N (default 2) replicas on the local PostgreSQL + Redis, ports $(PORT)...
	HITL_DEV_MODE=$(HITL_DEV_MODE) $(BIN)/python -m server.runtime.replicas --replicas $(N) --port $(PORT)

# `make test` sets up only what the tests here use: the browser tests (tests/web) Chromium and the web build,
# the replica tests (tests/replicas) the replica engine's venv and the local PostgreSQL + Redis. A project
# from `hitl new project` has neither folder; add one (with its conftest.py from the template) and
# `make test` sets those up again.
TEST_NEEDS := $(STAMP) $(WEB_DEPS) $(if $(wildcard tests/web),$(WEB_BUILD) $(CHROMIUM)) \
	$(if $(wildcard tests/replicas),$(REPLICAS_STAMP) local-services)

test: $(TEST_NEEDS) ## Set up what the tests use; web unit tests (Vitest) beside pytest
	@$(MAKE) --no-print-directory -j2 test-web test-python

# `make test`'s two suites, run side by side (Vitest takes half a minute of one core, while pytest's first
# modules start their servers); Vitest's report is printed whole when it ends, between pytest's dots.
test-web:
	@report=$$(cd $(WEB) && npm test 2>&1); status=$$?; printf '\n%s\n' "$$report"; exit $$status

test-python:
	$(BIN)/pytest -n $(TEST_WORKERS) --dist loadscope --no-loadscope-reorder

lint: $(STAMP) $(WEB_DEPS) ## ruff (lint + format check), mypy and the web app's type check
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy
	cd $(WEB) && npx tsc -b

schemas: $(STAMP) $(WEB_DEPS) ## Publish the contracts as JSON Schema, and the web app's types made from them
	$(BIN)/python -m hitl.contracts.publish
	cd $(WEB) && npm run --silent gen:types

clean: ## Remove the virtualenv, data, server state and the web build
	rm -rf $(VENV) .venv-replicas .venv-deploy data .langgraph_api $(WEB)/dist
