# The two commands of the README: `make run` and `make test`.
.PHONY: run run-slurm test test-slow setup lint bench

run:
	bash scripts/run.sh

# `make run` with the demo machine as a real local Slurm cluster (root; Debian's Slurm).
run-slurm:
	bash scripts/run-slurm.sh

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
