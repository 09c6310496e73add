r"""Time per call of the core functions at the PE-DQN paper's sizes.

  python -m experiments.benchmarks.benchmark_core
  python -m experiments.benchmarks.benchmark_core --actions=2,18 --output_csv=core.csv

Each core function is batched the way an agent uses it: the projections and
the cross-entropy loss act on one distribution and are vmapped over the batch
[B]; W1, w_avg and the quantile loss take leading batch dimensions directly
([B], and [B, A] where an agent needs them for every action), which lets
them sort with a sorting network. Each
program is jitted, warmed up, then timed as the median of `--repeats` calls
with `block_until_ready`. Defaults: K = 101 atoms, B = 128, A in {2, 18}
(bsuite and Atari action counts), the sizes of the paper's Table 4.

Reference rows on the same inputs: rlax's categorical projection and
quantile-loss gradient (vmapped, jitted; rlax's loss on uniform targets) and
scipy's `wasserstein_distance` in a Python loop over the batch (un-jitted
NumPy). They are timed at every action count like the rest, so the
CSV holds one row per function and action count. For members on one
support (PE-DQN's projected W1) `ensemble_disagreement_on_support` is
compared with the general, sorting `ensemble_disagreement` on the same
inputs.
"""

import csv
import functools
import os
import statistics
import time
from typing import (Any, Callable, Dict, List, NamedTuple, Optional,
                    Sequence, Tuple)

from absl import app
from absl import flags
import jax
import jax.numpy as jnp
import numpy as np
import rlax
import scipy.stats

import agents
from pe_jax import distances
from pe_jax import distributions
from pe_jax import losses
from pe_jax import networks
from pe_jax import projections

FLAGS = flags.FLAGS


def define_flags() -> None:
  """Defines the command-line flags (only when run as a script, so that
  several experiment modules can be imported into one process)."""
  flags.DEFINE_integer('repeats', 50, 'Timed calls per function (median).',
                       lower_bound=1)
  flags.DEFINE_integer('batch_size', 128, 'Batch size B.', lower_bound=1)
  flags.DEFINE_integer('num_atoms', 101, 'Atoms / quantiles K per member.',
                       lower_bound=2)
  flags.DEFINE_list('actions', ['2', '18'], 'Action counts A to time.')
  flags.DEFINE_string('output_csv', None,
                      'Optional path of a CSV with one row per function and '
                      'action count.')
  flags.register_validator(
      'actions', lambda v: bool(v) and all(s.strip().isdigit() and int(s) > 0
                                           for s in v),
      message='--actions must be a comma-separated list of positive ints.')



CSV_COLUMNS = ('name', 'num_actions', 'batch_size', 'num_atoms',
               'microseconds_per_call')
NUM_NETWORKS = 4  # PE-DQN: 2 value members + 2 bonus members, one ensemble.
# PE-DQN's default priors: the quantile value member's only (the scale sets
# no cost; which members hold a prior does).
_DEFAULTS = agents.defaults('pe_dqn')
PRIOR_SCALES = (_DEFAULTS['quantile_prior_scale'],
                _DEFAULTS['categorical_prior_scale'],
                _DEFAULTS['bonus_prior_scale'], _DEFAULTS['bonus_prior_scale'])

# Row names used for the printed ratios.
CATEGORICAL_PROJECTION = 'categorical_projection 2K -> K [B]'
RLAX_PROJECTION = 'rlax.categorical_l2_project 2K -> K [B] (reference)'
WASSERSTEIN = 'wasserstein1 quantile vs categorical [B]'
SCIPY_WASSERSTEIN = ('scipy.stats.wasserstein_distance loop over B '
                     '(reference)')
QUANTILE_LOSS_GRAD = 'quantile_regression_loss grad, uniform 2K targets [B]'
RLAX_QUANTILE_LOSS_GRAD = ('rlax.quantile_regression_loss grad, uniform 2K '
                           'targets [B] (reference)')
ON_SUPPORT = 'ensemble_disagreement_on_support M=2 [B, A]'
SORTED_ON_SUPPORT = ('ensemble_disagreement M=2, members on one support '
                     '[B, A] (reference)')


class Case(NamedTuple):
  """One timed program: `fn(*args)`, doing `evals` core-function calls."""
  name: str
  fn: Callable[..., Any]
  args: Sequence[Any]
  evals: int


def time_call(fn: Callable[..., Any], args: Sequence[Any],
              repeats: int) -> float:
  """Median seconds per call of `fn(*args)`, after warm-up.

  Args:
    fn: the (usually jitted) function.
    args: its arguments, already on the device.
    repeats: number of timed calls.

  Returns:
    Median wall-clock seconds per call, each call waited on with
    `block_until_ready` (JAX dispatch is asynchronous).
  """
  # The first call compiles; the second catches any one-off lazy setup.
  for _ in range(2):
    jax.block_until_ready(fn(*args))
  samples = []
  for _ in range(repeats):
    start = time.perf_counter()
    jax.block_until_ready(fn(*args))
    samples.append(time.perf_counter() - start)
  return statistics.median(samples)


class Inputs(NamedTuple):
  """Random member outputs of the shapes PE-DQN's learner sees."""
  support: jax.Array        # [K] categorical support on [v_min, v_max].
  locations: jax.Array      # [..., K] sorted quantile locations.
  logits: jax.Array         # [..., K] categorical logits.
  uniform: jax.Array        # [..., K] quantile member probabilities 1/K.
  categorical: jax.Array    # [..., K] softmax(logits).
  supports: jax.Array       # [..., K] `support` broadcast like `logits`.


def make_inputs(shape: Sequence[int], k: int,
                rng: np.random.Generator) -> Inputs:
  """Independent quantile and categorical members of batch shape `shape`."""
  shape = tuple(shape) + (k,)
  support = np.linspace(-1.0, 1.0, k, dtype=np.float32)
  # Sorted, as a trained quantile member's outputs are; spread a little past
  # [-1, 1] so that the projections exercise their clipping.
  locations = np.sort(0.6 * rng.standard_normal(shape), axis=-1)
  logits = rng.standard_normal(shape)
  f32 = lambda x: jnp.asarray(x, jnp.float32)
  return Inputs(
      support=f32(support),
      locations=f32(locations),
      logits=f32(logits),
      uniform=f32(np.full(shape, 1.0 / k)),
      categorical=jax.nn.softmax(f32(logits), axis=-1),
      supports=f32(np.broadcast_to(support, shape)))


def members(shape: Sequence[int], k: int, num_members: int,
            rng: np.random.Generator):
  """Independent members, atoms and probs [*shape, M, K].

  As in PE-DQN, quantile members come first, then categorical ones.

  Args:
    shape: batch shape, e.g. [B] or [B, A].
    k: atoms per member K.
    num_members: M.
    rng: source of the random outputs.

  Returns:
    atoms and probs, [*shape, M, K] each.
  """
  xs = [make_inputs(shape, k, rng) for _ in range(num_members)]
  num_quantile = num_members // 2
  atoms = ([x.locations for x in xs[:num_quantile]] +
           [x.supports for x in xs[num_quantile:]])
  probs = ([x.uniform for x in xs[:num_quantile]] +
           [x.categorical for x in xs[num_quantile:]])
  return jnp.stack(atoms, axis=-2), jnp.stack(probs, axis=-2)


def mixture_target(atoms, probs, reward, discount):
  """PE-DQN's bootstrap target: pushed-forward mixture of [M, K] members."""
  mix_atoms, mix_probs = distributions.mixture(atoms, probs)
  return distributions.bellman_pushforward(mix_atoms, reward,
                                           discount), mix_probs


def batch_cases(batch: int, k: int, rng: np.random.Generator) -> List[Case]:
  """Functions used once per transition: vmapped over [B] only.

  They do not depend on the action count, so they are built (and compiled)
  once and re-timed at every action count.

  Args:
    batch: B.
    k: atoms per member K.
    rng: source of the random inputs.

  Returns:
    The cases, reference implementations included.
  """
  x = make_inputs((batch,), k, rng)
  # The 2K-atom target of a quantile + categorical value ensemble.
  two_atoms, two_probs = members((batch,), k, 2, rng)
  reward = jnp.asarray(rng.uniform(-0.1, 0.1, batch), jnp.float32)
  discount = jnp.asarray(np.where(rng.random(batch) < 0.05, 0.0, 0.99),
                         jnp.float32)
  target_atoms, target_probs = jax.jit(jax.vmap(mixture_target))(
      two_atoms, two_probs, reward, discount)

  per_batch = lambda f, *axes: jax.jit(jax.vmap(f, in_axes=axes or 0))
  cat_proj = per_batch(projections.categorical_projection, 0, 0, None)
  rlax_proj = per_batch(rlax.categorical_l2_project, 0, 0, None)
  q_proj = per_batch(functools.partial(projections.quantile_projection,
                                       num_quantiles=k))
  w1 = jax.jit(distances.wasserstein1)

  # Mean over the batch, as in a learner: a scalar to differentiate.
  def qr_loss(locations, atoms, probs):
    return jnp.mean(losses.quantile_regression_loss(locations, atoms, probs))

  # rlax regresses on equally weighted targets only: the same targets with
  # uniform weights, kappa = 0, for both.
  uniform_targets = jnp.full_like(target_probs, 1.0 / target_probs.shape[-1])
  taus = projections.quantile_midpoints(k)

  def rlax_qr_loss(locations, atoms):
    return jnp.mean(jax.vmap(rlax.quantile_regression_loss,
                             in_axes=(0, None, 0, None))(locations, taus,
                                                         atoms, 0.0))

  def ce_loss(logits, support, atoms, probs):
    return jnp.mean(jax.vmap(losses.categorical_cross_entropy_loss,
                             in_axes=(0, None, 0, 0))(logits, support, atoms,
                                                      probs))

  b = batch
  return [
      Case(CATEGORICAL_PROJECTION, cat_proj,
           (target_atoms, target_probs, x.support), b),
      Case(RLAX_PROJECTION, rlax_proj,
           (target_atoms, target_probs, x.support), b),
      Case('quantile_projection 2K -> K [B]', q_proj,
           (target_atoms, target_probs), b),
      Case(WASSERSTEIN, w1, (x.locations, x.uniform, x.supports,
                             x.categorical), b),
      Case(SCIPY_WASSERSTEIN, scipy_wasserstein_loop,
           tuple(np.asarray(a, np.float64) for a in
                 (x.locations, x.support, x.categorical)), b),
      Case('quantile_regression_loss K vs 2K [B]', jax.jit(qr_loss),
           (x.locations, target_atoms, target_probs), b),
      Case('quantile_regression_loss grad [B]', jax.jit(jax.grad(qr_loss)),
           (x.locations, target_atoms, target_probs), b),
      Case(QUANTILE_LOSS_GRAD, jax.jit(jax.grad(qr_loss)),
           (x.locations, target_atoms, uniform_targets), b),
      Case(RLAX_QUANTILE_LOSS_GRAD, jax.jit(jax.grad(rlax_qr_loss)),
           (x.locations, target_atoms), b),
      Case('categorical_cross_entropy_loss [B]', jax.jit(ce_loss),
           (x.logits, x.support, target_atoms, target_probs), b),
      Case('categorical_cross_entropy_loss grad [B]',
           jax.jit(jax.grad(ce_loss)),
           (x.logits, x.support, target_atoms, target_probs), b),
      Case('mixture + bellman_pushforward M=2 [B]',
           per_batch(mixture_target), (two_atoms, two_probs, reward,
                                       discount), b),
  ]


def action_cases(batch: int, k: int, num_actions: int,
                 rng: np.random.Generator) -> List[Case]:
  """Functions an agent applies to every action: vmapped over [B, A].

  Args:
    batch: B.
    k: atoms per member K.
    num_actions: A.
    rng: source of the random inputs.

  Returns:
    The cases, including the ensemble's network forward pass.
  """
  x = make_inputs((batch, num_actions), k, rng)
  w1 = jax.jit(distances.wasserstein1)
  disagreement = jax.jit(distances.ensemble_disagreement)

  network = networks.DistributionalMLP((512,), num_actions=num_actions,
                                       num_atoms=k)
  observations = jnp.asarray(rng.random((batch, 10, 10)), jnp.float32)
  params_key, prior_key = jax.random.split(jax.random.PRNGKey(0))
  params = networks.init_ensemble(network, params_key, NUM_NETWORKS,
                                  observations[0])
  # As in PE-DQN: only members with a nonzero scale hold a prior.
  prior_members = tuple(int(i) for i in np.flatnonzero(PRIOR_SCALES))
  prior_params = networks.init_ensemble(network, prior_key,
                                        len(prior_members), observations[0])
  prior_scales = np.asarray(PRIOR_SCALES, np.float32)[np.array(prior_members)]
  # Parameters are arguments, not closed-over constants, as in an agent:
  # XLA would otherwise fold them into the program.
  forward = jax.jit(functools.partial(networks.apply_ensemble, network,
                                      prior_members=prior_members,
                                      batch_dims=1))

  # PE-DQN's projected estimate: every member on the value support.
  support = jnp.linspace(-1.0, 1.0, k)
  on_support = jnp.asarray(rng.dirichlet(np.ones(k), (batch, num_actions, 2)),
                           jnp.float32)
  ba = batch * num_actions
  return [
      Case('wasserstein1 quantile vs categorical [B, A]', w1,
           (x.locations, x.uniform, x.supports, x.categorical), ba),
      Case('ensemble_disagreement M=2 [B, A]', disagreement,
           members((batch, num_actions), k, 2, rng), ba),
      Case('ensemble_disagreement M=4 [B, A]', disagreement,
           members((batch, num_actions), k, 4, rng), ba),
      Case(ON_SUPPORT, jax.jit(distances.ensemble_disagreement_on_support),
           (on_support, support), ba),
      Case(SORTED_ON_SUPPORT, disagreement,
           (jnp.broadcast_to(support, on_support.shape), on_support), ba),
      Case(f'DistributionalMLP (512,) M={NUM_NETWORKS} + priors forward [B]',
           forward, (params, prior_params, prior_scales, observations),
           batch),
  ]


def scipy_wasserstein_loop(locations: np.ndarray, support: np.ndarray,
                           categorical: np.ndarray) -> np.ndarray:
  """scipy's W1 per batch item in a Python loop (the NumPy reference).

  Args:
    locations: [B, K] quantile member atoms (uniform weights).
    support: [K] categorical member atoms.
    categorical: [B, K] categorical member probabilities.

  Returns:
    [B] distances.
  """
  return np.array([
      scipy.stats.wasserstein_distance(locations[i], support, None,
                                       categorical[i])
      for i in range(locations.shape[0])
  ])


def reference_differences(cases: Sequence[Case]) -> Dict[str, float]:
  """Max |difference| between pe_jax and each reference on the timed inputs.

  A speed ratio only means something if both sides compute the same thing.

  Args:
    cases: the cases of `batch_cases`.

  Returns:
    Max absolute difference per reference row name.
  """
  out = {c.name: np.asarray(c.fn(*c.args)) for c in cases
         if c.name in (CATEGORICAL_PROJECTION, RLAX_PROJECTION, WASSERSTEIN,
                       SCIPY_WASSERSTEIN, QUANTILE_LOSS_GRAD,
                       RLAX_QUANTILE_LOSS_GRAD)}
  difference = lambda a, b: float(np.max(np.abs(out[a] - out[b])))
  return {RLAX_PROJECTION: difference(CATEGORICAL_PROJECTION, RLAX_PROJECTION),
          SCIPY_WASSERSTEIN: difference(WASSERSTEIN, SCIPY_WASSERSTEIN),
          RLAX_QUANTILE_LOSS_GRAD: difference(QUANTILE_LOSS_GRAD,
                                              RLAX_QUANTILE_LOSS_GRAD)}


def run(repeats: int, batch: int, k: int, actions: Sequence[int]
        ) -> Tuple[List[Dict[str, Any]], Dict[str, float]]:
  """Times every case at every action count.

  Args:
    repeats: timed calls per case.
    batch: B.
    k: atoms per member K.
    actions: action counts A.

  Returns:
    rows: one dict per case and action count: the CSV columns plus `evals`,
      the number of core-function evaluations per call.
    differences: `reference_differences` of the [B] cases.
  """
  rng = np.random.default_rng(0)
  per_batch = batch_cases(batch, k, rng)
  differences = reference_differences(per_batch)
  rows = []
  differences[SORTED_ON_SUPPORT] = 0.0
  for num_actions in actions:
    per_action = action_cases(batch, k, num_actions, rng)
    same = {c.name: np.asarray(c.fn(*c.args)) for c in per_action
            if c.name in (ON_SUPPORT, SORTED_ON_SUPPORT)}
    differences[SORTED_ON_SUPPORT] = max(
        differences[SORTED_ON_SUPPORT],
        float(np.max(np.abs(same[ON_SUPPORT] - same[SORTED_ON_SUPPORT]))))
    for case in per_batch + per_action:
      seconds = time_call(case.fn, case.args, repeats)
      rows.append({'name': case.name, 'num_actions': num_actions,
                   'batch_size': batch, 'num_atoms': k,
                   'microseconds_per_call': seconds * 1e6,
                   'evals': case.evals})
  return rows, differences


def format_table(rows: Sequence[Dict[str, Any]]) -> str:
  """Aligned table of the timings, one block per action count."""
  width = max(len(r['name']) for r in rows)
  header = (f'{"function":<{width}s}  {"us/call":>10s}  {"us/item":>9s}  '
            f'{"evals":>6s}  {"us/eval":>8s}')
  lines = []
  for num_actions in dict.fromkeys(r['num_actions'] for r in rows):
    lines += ['', f'A = {num_actions}', header, '-' * len(header)]
    for r in rows:
      if r['num_actions'] != num_actions:
        continue
      us = r['microseconds_per_call']
      lines.append(f'{r["name"]:<{width}s}  {us:>10.1f}  '
                   f'{us / r["batch_size"]:>9.2f}  {r["evals"]:>6d}  '
                   f'{us / r["evals"]:>8.2f}')
  return '\n'.join(lines)


def speedup(ours: float, theirs: float) -> str:
  """'N.Nx faster' (or slower) for our time vs theirs."""
  if ours <= theirs:
    return f'{theirs / ours:.1f}x faster'
  return f'{ours / theirs:.1f}x slower'


def format_ratios(rows: Sequence[Dict[str, Any]],
                  differences: Dict[str, float]) -> str:
  """The reference comparisons: speed ratio per action count, and accuracy."""
  comparisons = (
      (CATEGORICAL_PROJECTION, RLAX_PROJECTION,
       'categorical_projection vs rlax.categorical_l2_project (vmapped, '
       'jitted)', 'rlax'),
      (WASSERSTEIN, SCIPY_WASSERSTEIN,
       'wasserstein1 vs scipy.stats.wasserstein_distance (Python loop over B, '
       'NumPy)', 'the scipy loop'),
      (QUANTILE_LOSS_GRAD, RLAX_QUANTILE_LOSS_GRAD,
       'quantile_regression_loss vs rlax.quantile_regression_loss, gradient '
       '(batched vs vmapped, jitted)', 'rlax'),
      (ON_SUPPORT, SORTED_ON_SUPPORT,
       'ensemble_disagreement_on_support vs ensemble_disagreement (sorting '
       'the 2K atoms) on members of one support (PE-DQN\'s projected W1)',
       'the sorting path'))
  action_counts = list(dict.fromkeys(r['num_actions'] for r in rows))
  width = len(f'A = {max(action_counts)}:')
  lines = ['pe_jax vs references on the same inputs:']
  for ours, theirs, title, short in comparisons:
    lines.append(f'  {title}; max |output difference| '
                 f'{differences[theirs]:.1e}')
    for num_actions in action_counts:
      us = {r['name']: r['microseconds_per_call'] for r in rows
            if r['num_actions'] == num_actions}
      lines.append(f'    {f"A = {num_actions}:":<{width}s} pe_jax is '
                   f'{speedup(us[ours], us[theirs])} than {short} '
                   f'({us[ours]:.1f} vs {us[theirs]:.1f} us/call)')
  return '\n'.join(lines)


def write_csv(rows: Sequence[Dict[str, Any]], path: str) -> None:
  """One line per row with the `CSV_COLUMNS` (times rounded to 1 ns)."""
  with open(path, 'w', newline='') as f:
    writer = csv.DictWriter(f, fieldnames=CSV_COLUMNS, extrasaction='ignore')
    writer.writeheader()
    for row in rows:
      writer.writerow(dict(row, microseconds_per_call=round(
          row['microseconds_per_call'], 3)))


def benchmark(repeats: int, batch_size: int, num_atoms: int,
              actions: Sequence[int],
              output_csv: Optional[str] = None) -> List[Dict[str, Any]]:
  """Runs the benchmark, prints the report and optionally writes the CSV.

  Args:
    repeats: timed calls per function.
    batch_size: B.
    num_atoms: K.
    actions: action counts A.
    output_csv: optional CSV path.

  Returns:
    The rows, as `run` returns them.
  """
  print(f'jax {jax.__version__}, backend {jax.default_backend()}, devices '
        f'{jax.devices()}, {os.cpu_count()} CPU cores')
  print(f'B = {batch_size}, K = {num_atoms}, A in {list(actions)}; median of '
        f'{repeats} jitted calls after warm-up, each with block_until_ready')
  print('us/item = us/call / B; evals = core-function calls per program '
        '(B or B*A); us/eval = us/call / evals')
  rows, differences = run(repeats, batch_size, num_atoms, actions)
  print(format_table(rows))
  print()
  print(format_ratios(rows, differences))
  if output_csv:
    write_csv(rows, output_csv)
    print(f'\nWrote {output_csv}')
  return rows


def main(argv: Sequence[str]) -> None:
  if len(argv) > 1:
    raise app.UsageError(f'Unexpected arguments: {argv[1:]}')
  benchmark(FLAGS.repeats, FLAGS.batch_size, FLAGS.num_atoms,
            [int(a) for a in FLAGS.actions], FLAGS.output_csv)


if __name__ == '__main__':
  define_flags()
  app.run(main)
