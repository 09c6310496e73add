r"""Time per call of the core functions at the PE-DQN paper's sizes.

  python -m experiments.benchmark_core
  python -m experiments.benchmark_core --actions=2,18 --output_csv=core.csv

Each function is vmapped over a batch (and over actions where agents use it
per action), jitted, warmed up, then timed as the median of `--repeats`
calls with `block_until_ready`. Reference rows: rlax's categorical
projection (vmapped, jitted) and scipy's wasserstein_distance in a Python
loop over the batch.
"""

import csv
import statistics
import time
from typing import Callable, Dict, List, Sequence

from absl import app
from absl import flags
import jax
import jax.numpy as jnp
import numpy as np
import rlax
import scipy.stats

from pe_jax import distances
from pe_jax import distributions
from pe_jax import losses
from pe_jax import networks
from pe_jax import projections

flags.DEFINE_integer('repeats', 50, 'Timed calls per function.')
flags.DEFINE_integer('batch_size', 128, 'Batch size B.')
flags.DEFINE_integer('num_atoms', 101, 'Atoms / quantiles K.')
flags.DEFINE_list('actions', ['2', '18'], 'Action counts A to time.')
flags.DEFINE_string('output_csv', None, 'Optional CSV of the timings.')
FLAGS = flags.FLAGS


def time_call(fn: Callable, args, repeats: int) -> float:
  """Median seconds per call after one warm-up call."""
  jax.block_until_ready(fn(*args))
  samples = []
  for _ in range(repeats):
    start = time.perf_counter()
    jax.block_until_ready(fn(*args))
    samples.append(time.perf_counter() - start)
  return statistics.median(samples)


def cases(batch: int, k: int, num_actions: int, rng: np.random.Generator):
  """name -> (function, args) for one action count."""
  f32 = lambda x: jnp.asarray(x, jnp.float32)
  support = f32(np.linspace(-1, 1, k))
  mix_atoms = f32(rng.normal(size=(batch, 2 * k)))
  mix_probs = f32(np.full((batch, 2 * k), 1 / (2 * k)))
  locations = f32(np.sort(rng.normal(size=(batch, k)), -1))
  logits = f32(rng.normal(size=(batch, k)))
  uniform = f32(np.full((batch, k), 1 / k))
  cat_probs = jax.nn.softmax(logits)
  per_action = lambda x: jnp.broadcast_to(x[:, None], (batch, num_actions) +
                                          x.shape[1:])
  ensemble = lambda m, x: jnp.broadcast_to(
      x[:, None, None], (batch, num_actions, m) + x.shape[1:])

  cat_proj = jax.jit(jax.vmap(projections.categorical_projection,
                              in_axes=(0, 0, None)))
  rlax_proj = jax.jit(jax.vmap(rlax.categorical_l2_project,
                               in_axes=(0, 0, None)))
  q_proj = jax.jit(jax.vmap(projections.quantile_projection,
                            in_axes=(0, 0, None)), static_argnums=2)
  w1 = jax.jit(jax.vmap(distances.wasserstein1))
  w1_actions = jax.jit(jax.vmap(jax.vmap(distances.wasserstein1)))
  disagreement = jax.jit(jax.vmap(jax.vmap(distances.ensemble_disagreement)))
  qr = lambda l, t, p: jnp.mean(jax.vmap(losses.quantile_regression_loss)(
      l, t, p))
  ce = lambda g, t, p: jnp.mean(jax.vmap(
      losses.categorical_cross_entropy_loss, in_axes=(0, None, 0, 0))(
          g, support, t, p))
  target = jax.jit(jax.vmap(
      lambda a, p, r: distributions.bellman_pushforward(
          distributions.mixture(a, p)[0], r, jnp.float32(0.99))))
  net = networks.DistributionalMLP((512,), num_actions, k)
  obs = f32(rng.random((batch, 10, 10)))
  params = networks.init_ensemble(net, jax.random.PRNGKey(0), 4, obs[0])
  forward = jax.jit(jax.vmap(
      lambda o: networks.apply_ensemble(net, params, params,
                                        jnp.ones(4), o)))
  two_members_atoms = jnp.stack([locations, jnp.broadcast_to(support,
                                                             locations.shape)],
                                1)
  two_members_probs = jnp.stack([uniform, cat_probs], 1)
  return {
      'categorical_projection [B]': (cat_proj, (mix_atoms, mix_probs, support)),
      'rlax.categorical_l2_project [B] (reference)':
          (rlax_proj, (mix_atoms, mix_probs, support)),
      'quantile_projection [B]': (q_proj, (mix_atoms, mix_probs, k)),
      'wasserstein1 quantile vs categorical [B]':
          (w1, (locations, uniform, jnp.broadcast_to(support, logits.shape),
                cat_probs)),
      'wasserstein1 quantile vs categorical [B, A]':
          (w1_actions, (per_action(locations), per_action(uniform),
                        per_action(jnp.broadcast_to(support, logits.shape)),
                        per_action(cat_probs))),
      'ensemble_disagreement M=2 [B, A]':
          (disagreement, (ensemble(1, two_members_atoms)[:, :, 0],
                          ensemble(1, two_members_probs)[:, :, 0])),
      'ensemble_disagreement M=4 [B, A]':
          (disagreement,
           (ensemble(1, jnp.concatenate([two_members_atoms] * 2, 1))[:, :, 0],
            ensemble(1, jnp.concatenate([two_members_probs] * 2, 1))[:, :, 0])),
      'quantile_regression_loss [B]': (jax.jit(qr),
                                       (locations, mix_atoms, mix_probs)),
      'quantile_regression_loss grad [B]':
          (jax.jit(jax.grad(qr)), (locations, mix_atoms, mix_probs)),
      'categorical_cross_entropy_loss [B]': (jax.jit(ce),
                                             (logits, mix_atoms, mix_probs)),
      'categorical_cross_entropy_loss grad [B]':
          (jax.jit(jax.grad(ce)), (logits, mix_atoms, mix_probs)),
      'mixture + bellman_pushforward [B]':
          (target, (two_members_atoms, two_members_probs,
                    f32(np.zeros(batch)))),
      'DistributionalMLP [512] M=4 forward [B]': (forward, (obs,)),
  }


def scipy_w1_loop(batch: int, k: int, rng: np.random.Generator) -> float:
  """Seconds for scipy's W1 over the batch in a Python loop (reference)."""
  a = rng.normal(size=(batch, k))
  b = np.linspace(-1, 1, k)
  p = rng.random((batch, k))
  p /= p.sum(-1, keepdims=True)
  start = time.perf_counter()
  for i in range(batch):
    scipy.stats.wasserstein_distance(a[i], b, None, p[i])
  return time.perf_counter() - start


def run(repeats: int, batch: int, k: int, actions: Sequence[int]) -> List[Dict]:
  rng = np.random.default_rng(0)
  rows = []
  for num_actions in actions:
    for name, (fn, args) in cases(batch, k, num_actions, rng).items():
      seconds = time_call(fn, args, repeats)
      rows.append({'name': name, 'num_actions': num_actions,
                   'batch_size': batch, 'num_atoms': k,
                   'microseconds_per_call': seconds * 1e6})
  return rows


def main(argv: Sequence[str]) -> None:
  del argv
  actions = [int(a) for a in FLAGS.actions]
  print(f'jax {jax.__version__}, backend {jax.default_backend()}, devices '
        f'{jax.devices()}')
  print(f'B = {FLAGS.batch_size}, K = {FLAGS.num_atoms}, median of '
        f'{FLAGS.repeats} jitted calls after warm-up\n')
  rows = run(FLAGS.repeats, FLAGS.batch_size, FLAGS.num_atoms, actions)
  print(f'{"function":<48s} {"A":>3s} {"us/call":>10s} {"us/item":>9s}')
  for row in rows:
    print(f'{row["name"]:<48s} {row["num_actions"]:>3d} '
          f'{row["microseconds_per_call"]:>10.1f} '
          f'{row["microseconds_per_call"] / row["batch_size"]:>9.2f}')
  scipy_seconds = scipy_w1_loop(FLAGS.batch_size, FLAGS.num_atoms,
                                np.random.default_rng(1))
  ours = next(r for r in rows if r['name'].startswith('wasserstein1') and
              r['name'].endswith('[B]'))
  print(f'\nscipy.stats.wasserstein_distance, Python loop over B: '
        f'{scipy_seconds * 1e6:.0f} us; pe_jax is '
        f'{scipy_seconds * 1e6 / ours["microseconds_per_call"]:.0f}x faster')
  ours_proj = next(r for r in rows if r['name'] == 'categorical_projection [B]')
  theirs = next(r for r in rows if r['name'].startswith('rlax.'))
  print(f'categorical_projection vs rlax.categorical_l2_project: '
        f'{theirs["microseconds_per_call"] / ours_proj["microseconds_per_call"]:.2f}x')
  if FLAGS.output_csv:
    with open(FLAGS.output_csv, 'w', newline='') as f:
      writer = csv.DictWriter(f, fieldnames=list(rows[0]))
      writer.writeheader()
      writer.writerows(rows)
    print(f'Wrote {FLAGS.output_csv}')


if __name__ == '__main__':
  app.run(main)
