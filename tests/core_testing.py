"""Random and hypothesis-drawn distributions for the core tests."""

from hypothesis import strategies as st
import numpy as np

def random_distribution(rng, n, ties=False, zeros=False):
  atoms = rng.normal(size=n).astype(np.float32) * 3
  if ties:
    atoms[: n // 2] = atoms[0]
  probs = rng.random(n).astype(np.float32)
  if zeros:
    probs[::3] = 0.0
  return atoms, probs / probs.sum()


finite = st.floats(-50, 50, allow_nan=False, width=32)


def distribution_strategy(min_size=1, max_size=12):
  return st.lists(st.tuples(finite, st.floats(0.0, 1.0, width=32)),
                  min_size=min_size, max_size=max_size).filter(
                      lambda xs: sum(p for _, p in xs) > 1e-3).map(
                          lambda xs: (np.array([x for x, _ in xs], np.float32),
                                      np.array([p for _, p in xs], np.float64)))


def normalised(probs):
  return (probs / probs.sum()).astype(np.float32)
