# `make chaos` (included by the Makefile beside the replica tests; a project without them has no such target)
# How long approvals flow while replicas are killed and Redis and PostgreSQL restart
CHAOS_SECONDS ?= 300
.PHONY: chaos
chaos: $(STAMP) $(REPLICAS_STAMP) ## Fault test for CHAOS_SECONDS (300): 3 replicas killed, Redis + PostgreSQL restarted; prints the ledger
	FAULT_SECONDS=$(CHAOS_SECONDS) FAULT_REPLICAS=3 $(BIN)/pytest -s -n 0 --timeout $$(( $(CHAOS_SECONDS) + 900 )) tests/replicas/test_faults.py
