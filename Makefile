# `make demo` and `make test` do all set-up first (scripts/setup.sh: a virtual environment in
# .venv, or the one already active), then run in it. PYTHON=python3.12 picks the Python for .venv.
VENV ?= .venv
OUT ?= igot-output
ifdef VIRTUAL_ENV
RUN := $(VIRTUAL_ENV)/bin/python
else
RUN := $(VENV)/bin/python
endif

.PHONY: setup demo test benchmark colab-twin

setup:
	PYTHON="$(PYTHON)" VENV="$(VENV)" ./scripts/setup.sh

demo: setup
	$(RUN) -m igot demo --out $(OUT)

# Two workers (pytest-xdist), a test file each at a time: on 2 cores much of a test's time is a
# browser, a kernel or a subprocess waiting, so two at once take ~2/3 of one after the other. Each
# worker loads the session's models itself.
test: setup
	$(RUN) -m pytest -q -n 2 --dist loadfile

benchmark: setup
	$(RUN) -m benchmarks.pipeline_speed
	$(RUN) -m benchmarks.speakers_accuracy

# A Python 3.13 twin of Colab's GPU runtime (its exact versions): the notebook's installs change
# none of them, and the notebook runs there with speaker detection nemo and auto.
colab-twin:
	python3 scripts/colab_twin.py
