"""Return ranges for categorical supports, one table for all of bsuite.

A categorical return model needs a fixed support [v_min, v_max] that holds
the discounted returns (gamma = 0.99 unless given) of its environment. Each
entry below derives that range from the environment's reward structure in
bsuite's source, for every bsuite experiment (all 468 ids of `sweep.SWEEP`);
`return_range('deep_sea/10')` reads an id's settings, and
`return_range_for_experiment('deep_sea', size=100)` serves settings outside
bsuite's sweep.

  H(L)   = (1 - gamma^L) / (1 - gamma): discounted steps in L steps
  N(L)   = sqrt((1 - gamma^(2L)) / (1 - gamma^2)): std of discounted noise
           sums of unit per-step noise over L steps
  margin = 3 standard deviations of reward noise (Gaussian), so clipping at
           the support's ends touches about 0.1% of noisy returns per side.

| experiment            | range                                     | why |
|-----------------------|-------------------------------------------|-----|
| bandit                | [0, 1]                                    | one step, rewards linspace(0, 1) |
| bandit_noise          | [-3s, 1 + 3s]                             | plus N(0, s^2) reward noise |
| bandit_scale          | [0, c]                                    | rewards times c |
| cartpole              | [0, H(1000)]                              | +1 per balanced step, 1000 steps |
| cartpole_noise        | [-3s N(1000), H(1000) + 3s N(1000)]       | noise on every step |
| cartpole_scale        | [0, c H(1000)]                            | |
| cartpole_swingup      | [-0.1 H(1000), H(1000)]                   | +1 upright, -0.1 per move |
| catch                 | [-1, 1]                                   | +-1 when the ball lands |
| catch_noise           | [-1 - 3s N(10), 1 + 3s N(10)]             | 10 rows: <= 10 noisy steps |
| catch_scale           | [-c, c]                                   | |
| deep_sea              | [-1, 1]                                   | +1 treasure, total move cost <= 0.01 |
| deep_sea_stochastic   | [-1 - 3, 1 + 3]                           | N(0, 1) at the bottom corners |
| discounting_chain     | [0, 1.1]                                  | one reward of 1 or 1.1 |
| memory_len            | [-1, 1]                                   | +-1 at the end |
| memory_size           | [-1, 1]                                   | +-1 at the end |
| mnist                 | [-1, 1]                                   | +-1 per one-step episode |
| mnist_noise           | [-1 - 3s, 1 + 3s]                         | |
| mnist_scale           | [-c, c]                                   | |
| mountain_car          | [-H(1000), 0]                             | -1 per step, <= 1000 steps |
| mountain_car_noise    | [-H(1000) - 3s N(1000), 3s N(1000)]       | |
| mountain_car_scale    | [-c H(1000), 0]                           | |
| umbrella_length       | [-H(L), H(L)]                             | +-1 every step, chain length L |
| umbrella_distract     | [-H(20), H(20)]                           | chain length 20 |

s is the id's `noise_scale`, c its `reward_scale`, L its `chain_length`.
"""

import math
from typing import Callable, Dict, Tuple

NOISE_STDS = 3.0  # Margin for Gaussian reward noise, in standard deviations.


def discounted_steps(length: int, discount: float) -> float:
  """H(L): sum of discount^t for t < length."""
  if discount >= 1.0:
    return float(length)
  return (1.0 - discount**length) / (1.0 - discount)


def noise_std(length: int, discount: float) -> float:
  """N(L): std of a discounted sum of unit-variance per-step noise."""
  if discount >= 1.0:
    return math.sqrt(length)
  return math.sqrt((1.0 - discount**(2 * length)) / (1.0 - discount**2))


def _bounded(low: float, high: float) -> Callable[..., Tuple[float, float]]:
  return lambda discount, **kwargs: (low, high)


def _noisy(low: float, high: float, horizon: int):
  def fn(discount, noise_scale, **kwargs):
    margin = NOISE_STDS * noise_scale * noise_std(horizon, discount)
    return low - margin, high + margin
  return fn


def _scaled(low: float, high: float):
  return lambda discount, reward_scale, **kwargs: (low * reward_scale,
                                                    high * reward_scale)


def _per_step(low: float, high: float, horizon: int):
  """Per-step rewards in [low, high] for up to `horizon` steps."""
  def fn(discount, **kwargs):
    h = discounted_steps(horizon, discount)
    return min(low * h, 0.0), max(high * h, 0.0)
  return fn


def _per_step_noisy(low: float, high: float, horizon: int):
  base = _per_step(low, high, horizon)
  def fn(discount, noise_scale, **kwargs):
    lo, hi = base(discount)
    margin = NOISE_STDS * noise_scale * noise_std(horizon, discount)
    return lo - margin, hi + margin
  return fn


def _per_step_scaled(low: float, high: float, horizon: int):
  base = _per_step(low, high, horizon)
  def fn(discount, reward_scale, **kwargs):
    lo, hi = base(discount)
    return lo * reward_scale, hi * reward_scale
  return fn


def _umbrella(discount, chain_length=20, **kwargs):
  h = discounted_steps(chain_length, discount)
  return -h, h


_CARTPOLE_STEPS = 1000   # max_time 10 s at 0.01 s per step.
_MOUNTAIN_CAR_STEPS = 1000
_CATCH_STEPS = 10        # 10 rows.

RETURN_RANGES: Dict[str, Callable[..., Tuple[float, float]]] = {
    'bandit': _bounded(0.0, 1.0),
    'bandit_noise': _noisy(0.0, 1.0, 1),
    'bandit_scale': _scaled(0.0, 1.0),
    'cartpole': _per_step(0.0, 1.0, _CARTPOLE_STEPS),
    'cartpole_noise': _per_step_noisy(0.0, 1.0, _CARTPOLE_STEPS),
    'cartpole_scale': _per_step_scaled(0.0, 1.0, _CARTPOLE_STEPS),
    'cartpole_swingup': lambda discount, **kwargs: (
        -0.1 * discounted_steps(_CARTPOLE_STEPS, discount),
        discounted_steps(_CARTPOLE_STEPS, discount)),
    'catch': _bounded(-1.0, 1.0),
    'catch_noise': _noisy(-1.0, 1.0, _CATCH_STEPS),
    'catch_scale': _scaled(-1.0, 1.0),
    'deep_sea': _bounded(-1.0, 1.0),
    'deep_sea_stochastic': _bounded(-1.0 - NOISE_STDS, 1.0 + NOISE_STDS),
    'discounting_chain': _bounded(0.0, 1.1),
    'memory_len': _bounded(-1.0, 1.0),
    'memory_size': _bounded(-1.0, 1.0),
    'mnist': _bounded(-1.0, 1.0),
    'mnist_noise': _noisy(-1.0, 1.0, 1),
    'mnist_scale': _scaled(-1.0, 1.0),
    'mountain_car': _per_step(-1.0, 0.0, _MOUNTAIN_CAR_STEPS),
    'mountain_car_noise': _per_step_noisy(-1.0, 0.0, _MOUNTAIN_CAR_STEPS),
    'mountain_car_scale': _per_step_scaled(-1.0, 0.0, _MOUNTAIN_CAR_STEPS),
    'umbrella_length': _umbrella,
    'umbrella_distract': lambda discount, **kwargs: _umbrella(discount, 20),
}


def return_range_for_experiment(experiment_name: str, discount: float = 0.99,
                                **kwargs) -> Tuple[float, float]:
  """(v_min, v_max) for an experiment and its settings (e.g. size=100)."""
  if experiment_name not in RETURN_RANGES:
    raise ValueError(
        f'No return range for experiment {experiment_name!r}; known '
        f'experiments: {sorted(RETURN_RANGES)}.')
  if not 0.0 <= discount <= 1.0:
    raise ValueError(f'`discount` must be in [0, 1], got {discount}.')
  v_min, v_max = RETURN_RANGES[experiment_name](discount, **kwargs)
  return float(v_min), float(v_max)


def experiment_of(bsuite_id: str) -> Tuple[str, Dict]:
  """(experiment name, settings) of a bsuite id such as 'deep_sea/10'."""
  from bsuite import sweep  # pylint: disable=g-import-not-at-top
  experiment_name = bsuite_id.split('/')[0]
  if experiment_name not in RETURN_RANGES:
    raise ValueError(
        f'No return range for bsuite id {bsuite_id!r}; known experiments: '
        f'{sorted(RETURN_RANGES)}.')
  return experiment_name, dict(sweep.SETTINGS.get(bsuite_id, {}))


def return_range(bsuite_id: str, discount: float = 0.99) -> Tuple[float, float]:
  """(v_min, v_max) for a bsuite id such as 'deep_sea/10'."""
  experiment_name, settings = experiment_of(bsuite_id)
  return return_range_for_experiment(experiment_name, discount, **settings)
