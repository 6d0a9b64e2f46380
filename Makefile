# `make demo` and `make test` do all set-up first (scripts/setup.sh), then run.
PYTHON ?= python3
OUT ?= igot-output

.PHONY: setup demo test benchmark colab-twin

setup:
	PYTHON=$(PYTHON) ./scripts/setup.sh

demo: setup
	$(PYTHON) -m igot demo --out $(OUT)

test: setup
	$(PYTHON) -m pytest -q

benchmark: setup
	$(PYTHON) benchmarks/pipeline_speed.py
	$(PYTHON) benchmarks/speakers_accuracy.py

# A Python 3.13 twin of Colab's GPU runtime (its exact versions): the notebook's installs change
# none of them, and the notebook runs there with speaker detection nemo and auto.
colab-twin:
	$(PYTHON) scripts/colab_twin.py
