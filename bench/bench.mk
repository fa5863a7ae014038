# `make bench` (included by the Makefile where bench/ is; a project without bench/ has no such target)
bench: $(STAMP) ## Benchmarks beside a stock Deep Agent -> bench/RESULTS.md (sections 1-6: 17-31 min on 2 cores, 7: hours; BENCH_*= to resize, BENCH_ONLY='["org_scale"]' for one)
	$(BIN)/python -m bench
