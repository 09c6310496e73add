"""Rewrites every generated table of README.md, BUILD.md and docs/ from the
committed units and benchmark CSVs (`experiments.lib.generated_docs`); run
from the repository root after committing units:
  python docs/results/bsuite/refresh_docs.py
"""
import sys

from experiments.lib import generated_docs

sys.exit(generated_docs.main(sys.argv))
