"""Evaluation and development helpers (scoring, simulated interviews, tiny models, tables), used by tests and benchmarks; not shipped with igot."""
