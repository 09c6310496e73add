"""Benchmarks: each prints ratios measured in the same run."""
