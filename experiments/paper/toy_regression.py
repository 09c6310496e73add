r"""Toy 1-D regression with a categorical and a quantile model (PE-DQN Fig. 1).

  python -m experiments.paper.toy_regression
  python -m experiments.paper.toy_regression --num_atoms=21 --num_steps=2000 \
      --hidden_sizes=128,128 --save_path=/tmp/toy

Training inputs x come in a few clusters inside [-1, 1]; labels are
y = f(x) + noise whose scale grows with x. Two `DistributionalMLP`s (A = 1)
predict p(y|x) with K outputs each:

  categorical: K logits on a fixed support [v_min, v_max], trained by the
    cross-entropy to the Cramér projection of the label (one atom, weight 1);
  quantile: K locations at tau_k = (2k-1)/(2K), trained by the quantile
    regression loss against the label.

Both are trained full-batch with Adam, the whole loop one jitted
`jax.lax.scan`. On a grid x in [-1.5, 1.5] the tau = 0.1, ..., 0.9 quantiles
of both predictive distributions are the generalised inverse CDF
F^{-1}(tau) = min{z : F(z) >= tau} of the discrete distribution, with no
interpolation: for the categorical model the atoms are the support with the
softmax probabilities, for the quantile model the sorted locations with
weight 1/K each (so F^{-1}(tau) is the ceil(tau K)-th smallest location, as
in `pe_jax.projections.quantile_projection`). The categorical curves are
therefore staircases on the support points, the quantile curves piecewise
linear in x.

The summary is the mean exact W1 distance between the two predictive
distributions at grid points inside the data clusters versus outside them
(between clusters and beyond the data). Both models fit the data, so they
agree where there is data; away from it the two projections generalise
differently and disagree more, which is what PE-DQN uses as an epistemic
uncertainty signal.

Writes `toy_regression.csv` (one row per model, x and tau),
`toy_regression_summary.csv` (W1 per region) and `toy_regression.png` (the
two panels of Fig. 1) to `--save_path`.
"""

import functools
import math
import os
import time
from typing import Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple

from absl import app
from absl import flags
import chex
import flax.linen as nn
import jax
import jax.numpy as jnp
import matplotlib
matplotlib.use('Agg')
import matplotlib.pyplot as plt  # pylint: disable=g-import-not-at-top
import numpy as np
import optax

from experiments.lib import compilation_cache
from experiments.lib import results
from experiments.lib import run_tables
from pe_jax import distances
from pe_jax import distributions
from pe_jax import losses
from pe_jax import networks

Array = chex.Array
Params = chex.ArrayTree

CATEGORICAL = 'categorical'
QUANTILE = 'quantile'
MODEL_KINDS = (CATEGORICAL, QUANTILE)

# Input intervals the training data are drawn from, uniformly.
CLUSTERS = ((-0.95, -0.55), (-0.15, 0.15), (0.5, 0.85))
GRID_RANGE = (-1.5, 1.5)
TAUS = tuple(round(0.1 * i, 1) for i in range(1, 10))

CSV_COLUMNS = ('model', 'x', 'tau', 'y_quantile')
SUMMARY_COLUMNS = ('region', 'num_grid_points', 'mean_w1')
REGIONS = ('inside', 'between', 'beyond', 'outside')

DEFAULT_SAVE_PATH = '/tmp/pe_jax/toy_regression'
DEFAULT_NUM_ATOMS = 51
DEFAULT_NUM_STEPS = 3000
DEFAULT_HIDDEN_SIZES = (64, 64)
DEFAULT_LEARNING_RATE = 1e-3
DEFAULT_NUM_POINTS = 240
DEFAULT_NUM_GRID_POINTS = 301
DEFAULT_V_MIN = -2.5
DEFAULT_V_MAX = 2.5


def define_flags(flag_values: flags.FlagValues = flags.FLAGS) -> None:
  """Defines and validates the command-line flags.

  Called only when the module runs as a script: other experiment modules
  define flags of the same names (`num_atoms`, `seed`, ...), and importing
  them together, as one test process does, must not clash.

  Args:
    flag_values: where to define them.
  """
  fv = flag_values
  flags.DEFINE_string('save_path', DEFAULT_SAVE_PATH,
                      'Directory of the CSVs and the PNG.', flag_values=fv)
  flags.DEFINE_integer('num_atoms', DEFAULT_NUM_ATOMS,
                       'Atoms / quantiles K of each model.', lower_bound=2,
                       flag_values=fv)
  flags.DEFINE_integer('num_steps', DEFAULT_NUM_STEPS,
                       'Full-batch Adam steps per model.', lower_bound=1,
                       flag_values=fv)
  flags.DEFINE_list('hidden_sizes', [str(h) for h in DEFAULT_HIDDEN_SIZES],
                    'Hidden layer sizes of the MLPs, comma-separated.',
                    flag_values=fv)
  flags.DEFINE_float('learning_rate', DEFAULT_LEARNING_RATE,
                     'Adam learning rate.', flag_values=fv)
  flags.DEFINE_integer('seed', 0, 'Seed of the data and the initialisation.',
                       lower_bound=0, flag_values=fv)
  flags.DEFINE_integer('num_points', DEFAULT_NUM_POINTS,
                       'Training points, split evenly over the '
                       f'{len(CLUSTERS)} input clusters.',
                       lower_bound=len(CLUSTERS), flag_values=fv)
  flags.DEFINE_integer('num_grid_points', DEFAULT_NUM_GRID_POINTS,
                       f'Evaluation points on x in {list(GRID_RANGE)}.',
                       lower_bound=2, flag_values=fv)
  flags.DEFINE_float('v_min', DEFAULT_V_MIN,
                     'Lowest support point of the categorical model.',
                     flag_values=fv)
  flags.DEFINE_float('v_max', DEFAULT_V_MAX,
                     'Highest support point of the categorical model.',
                     flag_values=fv)
  flags.register_validator(
      'save_path', lambda v: bool(v and v.strip()),
      message='--save_path must be a non-empty path.', flag_values=fv)
  flags.register_validator(
      'hidden_sizes', lambda v: bool(v) and all(
          s.strip().isdigit() and int(s) > 0 for s in v),
      message='--hidden_sizes must be a comma-separated list of positive '
      'ints.', flag_values=fv)
  flags.register_validator(
      'learning_rate', lambda v: math.isfinite(v) and v > 0,
      message='--learning_rate must be a finite number > 0.', flag_values=fv)
  flags.register_multi_flags_validator(
      ['v_min', 'v_max'],
      lambda d: (math.isfinite(d['v_min']) and math.isfinite(d['v_max'])
                 and d['v_min'] < d['v_max']),
      message='--v_min and --v_max must be finite with --v_min < --v_max.',
      flag_values=fv)


class Data(NamedTuple):
  xs: np.ndarray  # [N] inputs.
  ys: np.ndarray  # [N] labels.


def target_function(x: np.ndarray) -> np.ndarray:
  """The noise-free regression function f(x): [N] -> [N]."""
  return 0.8 * np.sin(3.0 * x) + 0.3 * x


def noise_scale(x: np.ndarray) -> np.ndarray:
  """Standard deviation of the label noise at x, from 0.05 to 0.3: [N]."""
  return 0.05 + 0.125 * (x + 1.0)


def make_data(num_points: int, seed: int) -> Data:
  """Clustered inputs with heteroscedastic labels, from a NumPy seed.

  Args:
    num_points: N, split as evenly as possible over `CLUSTERS`.
    seed: NumPy seed.

  Returns:
    `Data` sorted by x, float32.
  """
  rng = np.random.default_rng(seed)
  counts = [len(c) for c in np.array_split(np.arange(num_points),
                                           len(CLUSTERS))]
  xs = np.concatenate([rng.uniform(lo, hi, n)
                       for (lo, hi), n in zip(CLUSTERS, counts)])
  xs = np.sort(xs)
  ys = target_function(xs) + noise_scale(xs) * rng.standard_normal(num_points)
  return Data(xs.astype(np.float32), ys.astype(np.float32))


def make_support(num_atoms: int, v_min: float, v_max: float) -> Array:
  """Evenly spaced categorical support [K] on [v_min, v_max]."""
  return jnp.linspace(v_min, v_max, num_atoms, dtype=jnp.float32)


def make_network(hidden_sizes: Sequence[int], num_atoms: int) -> nn.Module:
  """The MLP of both models: one scalar input -> [1, K] (A = 1)."""
  return networks.DistributionalMLP(tuple(hidden_sizes), num_actions=1,
                                    num_atoms=num_atoms)


def predict(network: nn.Module, params: Params, xs: Array) -> Array:
  """Raw outputs (logits or locations) at inputs xs: [N] -> [N, K]."""
  apply = lambda x: network.apply(params, x[None])[0]
  return jax.vmap(apply)(xs)


def model_loss(model_kind: str, outputs: Array, ys: Array,
               support: Array) -> Array:
  """Mean loss of one model over a batch.

  Each label is the single-atom target distribution delta_y.

  Args:
    model_kind: `CATEGORICAL` or `QUANTILE`.
    outputs: [N, K] logits or quantile locations.
    ys: [N] labels.
    support: [K] categorical support (unused by the quantile model).

  Returns:
    Scalar mean over the batch.
  """
  atoms = ys[:, None]
  probs = jnp.ones_like(atoms)
  if model_kind == CATEGORICAL:
    per_point = jax.vmap(losses.categorical_cross_entropy_loss,
                         in_axes=(0, None, 0, 0))(outputs, support, atoms,
                                                  probs)
  elif model_kind == QUANTILE:
    per_point = losses.quantile_regression_loss(outputs, atoms, probs)
  else:
    raise ValueError(f'`model_kind` must be one of {MODEL_KINDS}, got '
                     f'{model_kind!r}.')
  return jnp.mean(per_point)


def print_progress(model_kind: str, num_steps: int) -> Callable[..., None]:
  """Host callback printing the loss at a training step."""
  def callback(step, loss):
    print(f'[{model_kind}] step {int(step) + 1:>6d}/{num_steps}  loss '
          f'{float(loss):.5f}', flush=True)
  return callback


def train(model_kind: str, network: nn.Module, data: Data, support: Array,
          num_steps: int, learning_rate: float, key: chex.PRNGKey,
          log_every: Optional[int] = None) -> Tuple[Params, np.ndarray]:
  """Full-batch Adam on one model, the whole loop one jitted `lax.scan`.

  Args:
    model_kind: `CATEGORICAL` or `QUANTILE`.
    network: the model's MLP.
    data: training data.
    support: [K] categorical support.
    num_steps: Adam steps.
    learning_rate: Adam learning rate.
    key: initialisation key.
    log_every: print the loss every this many steps (and at the last step)
      from inside the scan; None or 0 for silence.

  Returns:
    The trained parameters and the [num_steps] losses, entry i evaluated
    before update i (entry 0 is the loss at initialisation).
  """
  if model_kind not in MODEL_KINDS:
    raise ValueError(f'`model_kind` must be one of {MODEL_KINDS}, got '
                     f'{model_kind!r}.')
  xs = jnp.asarray(data.xs)
  ys = jnp.asarray(data.ys)
  optimizer = optax.adam(learning_rate)
  callback = print_progress(model_kind, num_steps)

  def loss_fn(params):
    return model_loss(model_kind, predict(network, params, xs), ys, support)

  def step(carry, index):
    params, opt_state = carry
    loss, grads = jax.value_and_grad(loss_fn)(params)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    if log_every:
      report = (index % log_every == 0) | (index == num_steps - 1)
      jax.lax.cond(report,
                   lambda: jax.debug.callback(callback, index, loss,
                                              ordered=True),
                   lambda: None)
    return (params, opt_state), loss

  @jax.jit
  def fit(key):
    params = network.init(key, xs[:1])
    (params, _), history = jax.lax.scan(
        step, (params, optimizer.init(params)), jnp.arange(num_steps))
    return params, history

  params, history = fit(key)
  return params, np.asarray(history)


def predictive_distribution(model_kind: str, outputs: Array,
                            support: Array) -> Tuple[Array, Array]:
  """One model output [K] -> its predictive distribution (atoms, probs)."""
  if model_kind == CATEGORICAL:
    return distributions.categorical_distribution(outputs, support)
  if model_kind == QUANTILE:
    return distributions.quantile_distribution(outputs)
  raise ValueError(f'`model_kind` must be one of {MODEL_KINDS}, got '
                   f'{model_kind!r}.')


def predictive_quantiles(atoms: Array, probs: Array, taus: Array) -> Array:
  """Generalised inverse CDF of a discrete distribution at levels tau.

  F^{-1}(tau) = the smallest atom z with F(z) >= tau; no interpolation
  between atoms. For K equally weighted atoms this is the ceil(tau K)-th
  smallest atom.

  Args:
    atoms: [N] atoms, any order, ties allowed.
    probs: [N] non-negative probabilities.
    taus: [T] levels in (0, 1].

  Returns:
    [T] quantiles, non-decreasing in tau.
  """
  sorted_atoms, sorted_probs = jax.lax.sort(
      (jnp.asarray(atoms, jnp.float32), jnp.asarray(probs, jnp.float32)),
      num_keys=1)
  cdf = jnp.cumsum(sorted_probs)
  cdf = cdf / cdf[-1]
  index = jnp.searchsorted(cdf, jnp.asarray(taus, cdf.dtype), side='left')
  return sorted_atoms[jnp.clip(index, 0, atoms.shape[0] - 1)]


class Evaluation(NamedTuple):
  grid: np.ndarray                   # [G] inputs.
  quantiles: Dict[str, np.ndarray]   # model kind -> [G, T] quantiles.
  w1: np.ndarray                     # [G] W1(categorical, quantile).


def evaluate(network: nn.Module, params: Dict[str, Params], support: Array,
             grid: np.ndarray, taus: Sequence[float]) -> Evaluation:
  """Quantiles of both models and their W1 distance on the grid.

  Args:
    network: the MLP shared by both models.
    params: model kind -> trained parameters.
    support: [K] categorical support.
    grid: [G] inputs.
    taus: [T] quantile levels.

  Returns:
    The `Evaluation`.
  """
  taus = jnp.asarray(taus, jnp.float32)

  @jax.jit
  def compute(params, grid):
    dists = {}
    quantiles = {}
    for kind in MODEL_KINDS:
      outputs = predict(network, params[kind], grid)
      dists[kind] = jax.vmap(functools.partial(predictive_distribution, kind),
                             in_axes=(0, None))(outputs, support)
      quantiles[kind] = jax.vmap(predictive_quantiles, in_axes=(0, 0, None))(
          *dists[kind], taus)
    w1 = jax.vmap(distances.wasserstein1)(*dists[CATEGORICAL],
                                          *dists[QUANTILE])
    return quantiles, w1

  quantiles, w1 = compute(params, jnp.asarray(grid, jnp.float32))
  return Evaluation(np.asarray(grid), {k: np.asarray(v)
                                       for k, v in quantiles.items()},
                    np.asarray(w1))


def grid_regions(grid: np.ndarray, data: Data) -> Dict[str, np.ndarray]:
  """Boolean masks [G] of the grid points in each of `REGIONS`.

  inside: in a cluster, between the smallest and largest training input of
  that cluster; between: in a gap between clusters; beyond: left of all or
  right of all training inputs; outside: between or beyond.

  Args:
    grid: [G] inputs.
    data: training data.

  Returns:
    Region name -> mask.
  """
  inside = np.zeros(grid.shape, bool)
  for lo, hi in CLUSTERS:
    in_cluster = data.xs[(data.xs >= lo) & (data.xs <= hi)]
    if in_cluster.size:
      inside |= (grid >= in_cluster.min()) & (grid <= in_cluster.max())
  beyond = (grid < data.xs.min()) | (grid > data.xs.max())
  between = ~inside & ~beyond
  return {'inside': inside, 'between': between, 'beyond': beyond,
          'outside': between | beyond}


def summarise(w1: np.ndarray, regions: Dict[str, np.ndarray]
              ) -> List[Dict[str, float]]:
  """Mean W1 per region (NaN for a region without grid points)."""
  rows = []
  for region in REGIONS:
    mask = regions[region]
    mean = float(np.mean(w1[mask])) if mask.any() else float('nan')
    rows.append({'region': region, 'num_grid_points': int(mask.sum()),
                 'mean_w1': mean})
  return rows


def quantile_rows(evaluation: Evaluation,
                  taus: Sequence[float]) -> List[Dict[str, str]]:
  """One row per (model, x, tau): the `CSV_COLUMNS`."""
  return [dict(zip(CSV_COLUMNS, (kind, f'{x:.6g}', f'{tau:.1f}',
                                 f'{evaluation.quantiles[kind][i, j]:.6g}')))
          for kind in MODEL_KINDS for i, x in enumerate(evaluation.grid)
          for j, tau in enumerate(taus)]


def plot(data: Data, evaluation: Evaluation, taus: Sequence[float],
         num_atoms: int, support: np.ndarray, path: str) -> None:
  """Two panels like Fig. 1: categorical (left), quantile (right).

  Args:
    data: training data, drawn as black dots.
    evaluation: the quantile curves on the grid.
    taus: their levels, one coloured line each (the median drawn thicker).
    num_atoms: K, for the titles.
    support: [K] categorical support, its ends drawn as dotted lines.
    path: PNG path.
  """
  fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
  cmap = plt.get_cmap('viridis')
  colors = cmap(np.linspace(0.0, 0.9, len(taus)))
  titles = {CATEGORICAL: f'Categorical projection (K = {num_atoms})',
            QUANTILE: f'Quantile projection (K = {num_atoms})'}
  y_lo = min(float(data.ys.min()), float(support[0])) - 0.5
  y_hi = max(float(data.ys.max()), float(support[-1])) + 0.5
  for ax, kind in zip(axes, MODEL_KINDS):
    for j, tau in enumerate(taus):
      ax.plot(evaluation.grid, evaluation.quantiles[kind][:, j],
              color=colors[j], lw=2.0 if abs(tau - 0.5) < 1e-9 else 1.2,
              label=f'tau = {tau:.1f}')
    ax.scatter(data.xs, data.ys, s=6, c='black', zorder=3,
               label='training data')
    for i, end in enumerate((support[0], support[-1])):
      ax.axhline(end, color='grey', ls=':', lw=0.8,
                 label='support ends' if i == 0 else None)
    ax.set_title(titles[kind])
    ax.set_xlabel('x')
    ax.set_xlim(*GRID_RANGE)
    ax.set_ylim(y_lo, y_hi)
  axes[0].set_ylabel('y')
  handles, labels = axes[1].get_legend_handles_labels()
  fig.legend(handles[::-1], labels[::-1], loc='center right', fontsize=8,
             frameon=False)
  fig.tight_layout(rect=(0.0, 0.0, 0.88, 1.0))
  fig.savefig(path, dpi=120)
  plt.close(fig)


class Result(NamedTuple):
  csv_path: str
  summary_path: str
  png_path: str
  summary: List[Dict[str, float]]       # `summarise` rows.
  losses: Dict[str, np.ndarray]         # model kind -> [num_steps] losses.
  evaluation: Evaluation


def check_positive(value, minimum: int, name: str) -> None:
  if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
    raise TypeError(f'`{name}` must be an int >= {minimum}, got {value!r}.')
  if value < minimum:
    raise ValueError(f'`{name}` must be an int >= {minimum}, got {value}.')


def run(output_dir: str,
        num_atoms: int = DEFAULT_NUM_ATOMS,
        num_steps: int = DEFAULT_NUM_STEPS,
        hidden_sizes: Sequence[int] = DEFAULT_HIDDEN_SIZES,
        learning_rate: float = DEFAULT_LEARNING_RATE,
        seed: int = 0,
        num_points: int = DEFAULT_NUM_POINTS,
        num_grid_points: int = DEFAULT_NUM_GRID_POINTS,
        v_min: float = DEFAULT_V_MIN,
        v_max: float = DEFAULT_V_MAX,
        log_every: Optional[int] = None) -> Result:
  """Trains both models, writes the CSVs and the PNG, prints the summary.

  Args:
    output_dir: created if missing.
    num_atoms: K of both models.
    num_steps: Adam steps per model.
    hidden_sizes: MLP hidden layer sizes.
    learning_rate: Adam learning rate.
    seed: seed of the data (NumPy) and the initialisation (JAX).
    num_points: training points.
    num_grid_points: evaluation points on `GRID_RANGE`.
    v_min: lowest categorical support point.
    v_max: highest categorical support point.
    log_every: steps between progress lines (default: num_steps / 10).

  Returns:
    The `Result`.
  """
  check_positive(num_atoms, 2, 'num_atoms')
  check_positive(num_steps, 1, 'num_steps')
  check_positive(num_points, len(CLUSTERS), 'num_points')
  check_positive(num_grid_points, 2, 'num_grid_points')
  if not hidden_sizes:
    raise ValueError('`hidden_sizes` must name at least one layer.')
  for size in hidden_sizes:
    check_positive(size, 1, 'hidden_sizes')
  if not (math.isfinite(learning_rate) and learning_rate > 0):
    raise ValueError(f'`learning_rate` must be > 0, got {learning_rate}.')
  if not (math.isfinite(v_min) and math.isfinite(v_max) and v_min < v_max):
    raise ValueError(f'Need finite `v_min` < `v_max`, got {v_min}, {v_max}.')
  if log_every is None:
    log_every = max(1, num_steps // 10)

  start = time.perf_counter()
  os.makedirs(output_dir, exist_ok=True)
  data = make_data(num_points, seed)
  support = make_support(num_atoms, v_min, v_max)
  network = make_network(hidden_sizes, num_atoms)
  keys = dict(zip(MODEL_KINDS, jax.random.split(jax.random.PRNGKey(seed),
                                                len(MODEL_KINDS))))
  print(f'{num_points} training points in clusters {list(CLUSTERS)}; K = '
        f'{num_atoms}, hidden sizes {list(hidden_sizes)}, {num_steps} '
        f'full-batch Adam steps (lr {learning_rate}), support [{v_min}, '
        f'{v_max}]', flush=True)

  params = {}
  history = {}
  for kind in MODEL_KINDS:
    params[kind], history[kind] = train(kind, network, data, support,
                                        num_steps, learning_rate, keys[kind],
                                        log_every)

  grid = np.linspace(*GRID_RANGE, num_grid_points).astype(np.float32)
  evaluation = evaluate(network, params, support, grid, TAUS)
  summary = summarise(evaluation.w1, grid_regions(grid, data))

  csv_path = os.path.join(output_dir, 'toy_regression.csv')
  summary_path = os.path.join(output_dir, 'toy_regression_summary.csv')
  png_path = os.path.join(output_dir, 'toy_regression.png')
  run_tables.write_rows(csv_path, quantile_rows(evaluation, TAUS), CSV_COLUMNS)
  run_tables.write_rows(summary_path,
                     [dict(r, mean_w1=f'{r["mean_w1"]:.6g}') for r in summary],
                     SUMMARY_COLUMNS)
  plot(data, evaluation, TAUS, num_atoms, np.asarray(support), png_path)

  print('Mean W1(categorical, quantile) over the grid:')
  for row in summary:
    print(f'  {row["region"]:<8s} ({row["num_grid_points"]:>4d} points): '
          f'{row["mean_w1"]:.4f}')
  by_region = {row['region']: row['mean_w1'] for row in summary}
  if by_region['inside'] > 0:
    print(f'  outside / inside = '
          f'{by_region["outside"] / by_region["inside"]:.1f}x')
  print(f'Done in {time.perf_counter() - start:.1f} s. Wrote:')
  for path in (csv_path, summary_path, png_path):
    print(f'  {path}')
  return Result(csv_path, summary_path, png_path, summary, history,
                evaluation)


def main(argv: Sequence[str]) -> None:
  if len(argv) > 1:
    raise app.UsageError(f'Unexpected arguments: {argv[1:]}')
  flag_values = flags.FLAGS
  results.check_output_flag(flag_values.save_path, '--save_path')
  run(output_dir=flag_values.save_path,
      num_atoms=flag_values.num_atoms,
      num_steps=flag_values.num_steps,
      hidden_sizes=[int(h) for h in flag_values.hidden_sizes],
      learning_rate=flag_values.learning_rate,
      seed=flag_values.seed,
      num_points=flag_values.num_points,
      num_grid_points=flag_values.num_grid_points,
      v_min=flag_values.v_min,
      v_max=flag_values.v_max)


if __name__ == '__main__':
  define_flags()
  compilation_cache.run(main)
