# `make demo` and `make test` do all set-up first (scripts/setup.sh), then run.
PYTHON ?= python3
OUT ?= igot-output

.PHONY: setup demo test benchmark

setup:
	PYTHON=$(PYTHON) ./scripts/setup.sh

demo: setup
	$(PYTHON) -m igot demo --out $(OUT)

test: setup
	$(PYTHON) -m pytest -q

benchmark: setup
	$(PYTHON) benchmarks/pipeline_speed.py
	$(PYTHON) benchmarks/speakers_accuracy.py
