# The two commands of the README: `make run` and `make test`.
.PHONY: run test test-slow setup lint bench

run:
	bash scripts/run.sh

test:
	bash scripts/test.sh

test-slow:
	HX_TEST_MARKS="slow" bash scripts/test.sh

setup:
	bash scripts/setup.sh

lint:
	.venv/bin/ruff check . && .venv/bin/lint-imports --no-cache

bench:
	for f in benchmarks/bench_*.py; do .venv/bin/python $$f || exit 1; done
