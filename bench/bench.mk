# `make bench` (included by the Makefile where bench/ is; a project without bench/ has no such target)
bench: $(STAMP) ## Benchmarks beside a stock Deep Agent -> bench/RESULTS.md (17-31 min on 2 cores; BENCH_*= to resize)
	$(BIN)/python -m bench
