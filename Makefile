# hitl-agent-server: `make dev` serves the agents, `make test` runs every test.
SHELL := /bin/bash
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
PORT ?= 2024
export LANGGRAPH_CLI_NO_ANALYTICS := 1
export LANGGRAPH_NO_VERSION_CHECK := true

.DEFAULT_GOAL := help
.PHONY: help dev test lint schemas bench clean

help: ## List the targets
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

$(STAMP): pyproject.toml constraints.txt
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -c constraints.txt -e '.[dev]'
	touch $@

dev: $(STAMP) ## Set up and serve the agents on http://127.0.0.1:$(PORT)
	@echo "Serving on http://127.0.0.1:$(PORT)  (API docs: /docs; agents: support)"
	$(BIN)/langgraph dev --host 127.0.0.1 --port $(PORT) --no-browser --n-jobs-per-worker 10

test: $(STAMP) ## Set up and run the whole test suite
	$(BIN)/pytest

lint: $(STAMP) ## ruff (lint + format check) and mypy
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

schemas: $(STAMP) ## Publish the interrupt and decision contracts as JSON Schema
	$(BIN)/python -m hitl.contracts

bench: $(STAMP) ## Benchmarks beside a stock Deep Agent -> bench/RESULTS.md (~15 min; BENCH_*= to resize)
	$(BIN)/python -m bench

clean: ## Remove the virtualenv, data and server state
	rm -rf $(VENV) data .langgraph_api
