"""Benchmarks of the product: run from the repository root as `python -m benchmarks.NAME`."""
