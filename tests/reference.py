"""Brute-force NumPy references, written independently of pe_jax."""
import numpy as np


def categorical_projection(atoms, probs, support):
  """Hat-function projection, one atom at a time (paper Def. 13)."""
  atoms = np.asarray(atoms, np.float64)
  support = np.asarray(support, np.float64)
  out = np.zeros(len(support))
  for x, p in zip(atoms, probs):
    x = min(max(x, support[0]), support[-1])
    k = np.searchsorted(support, x, side='right') - 1
    if k >= len(support) - 1:
      out[-1] += p
      continue
    lo, hi = support[k], support[k + 1]
    w = (x - lo) / (hi - lo)
    out[k] += p * (1 - w)
    out[k + 1] += p * w
  return out


def inverse_cdf(atoms, probs, taus):
  """Smallest atom x with F(x) >= tau, by scanning."""
  order = np.argsort(atoms, kind='stable')
  xs = np.asarray(atoms, np.float64)[order]
  cdf = np.cumsum(np.asarray(probs, np.float64)[order])
  cdf /= cdf[-1]
  index = np.searchsorted(cdf, np.asarray(taus) - 1e-12, side='left')
  return xs[np.minimum(index, len(xs) - 1)]


def quantile_loss(locations, target_atoms, target_probs, huber=0.0):
  k = len(locations)
  total = 0.0
  for i, theta in enumerate(locations):
    tau = (2 * i + 1) / (2 * k)
    for z, p in zip(target_atoms, target_probs):
      u = z - theta
      if huber > 0:
        mag = 0.5 * u * u if abs(u) <= huber else huber * (abs(u) - 0.5 * huber)
      else:
        mag = abs(u)
      total += p * abs(tau - (u < 0)) * mag
  return total


def w1_from_quantile_functions(atoms_a, probs_a, atoms_b, probs_b, grid=20000):
  """W1 = integral over u in (0,1) of |F_a^-1(u) - F_b^-1(u)|, numerically."""
  u = (np.arange(grid) + 0.5) / grid
  return np.mean(np.abs(inverse_cdf(atoms_a, probs_a, u) -
                        inverse_cdf(atoms_b, probs_b, u)))
