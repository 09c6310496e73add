"""Diagnostics that read a run's checkpoints (the frontier of deep sea)."""
