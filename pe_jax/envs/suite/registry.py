"""`load(bsuite_id, seed)`: the port of any of bsuite's 468 environments,
built from bsuite's own `sweep.SETTINGS`.

Seeds follow one rule, this module's `environment_seed`, which the
project's bsuite-loop runner seeds bsuite's own environments by too
(`experiments.lib.results.load_seeded`):
- a seed bsuite fixes stays (the memory and umbrella_distract loaders' 0);
- where bsuite leaves it None (catch, cartpole, mountain car, MNIST,
  umbrella length, cartpole swing-up and the noise and scale variants),
  bsuite's run loop gives each id fresh entropy, so an experiment's
  replicas (catch's 20 ids, each noise level's 4) are independent runs;
  here id k of agent seed s gets `s + REPLICA_SEED_STRIDE * k`: distinct
  replicas, reproducible, and id 0 keeps the agent's seed;
- deep sea's ids (one size each, no replicas) and the stochastic deep
  sea's stream get the agent's seed.
"""

import inspect
from typing import Optional

from pe_jax.envs.suite import bandit
from pe_jax.envs.suite import base
from pe_jax.envs.suite import cartpole
from pe_jax.envs.suite import catch
from pe_jax.envs.suite import deep_sea
from pe_jax.envs.suite import discounting_chain
from pe_jax.envs.suite import memory_chain
from pe_jax.envs.suite import mnist
from pe_jax.envs.suite import mountain_car
from pe_jax.envs.suite import umbrella_chain
from pe_jax.envs.suite import wrappers


def _noise(build):
  def make(noise_scale, seed, **kwargs):
    return wrappers.RewardNoise(env=build(seed=seed, **kwargs),
                                noise_scale=noise_scale, seed=seed)
  return make


def _scale(build):
  def make(reward_scale, seed, **kwargs):
    return wrappers.RewardScale(env=build(seed=seed, **kwargs),
                                reward_scale=reward_scale, seed=seed)
  return make


def _bandit(seed=None, mapping_seed=None, num_actions=11):
  del seed  # bsuite's bandit draws nothing after construction
  return bandit.SimpleBandit(mapping_seed=mapping_seed,
                             num_actions=num_actions)


def _mnist(seed=None, directory=None, fraction=1.):
  return mnist.MNISTBandit(fraction=fraction, seed=seed,
                           directory=directory or mnist.DEFAULT_DIRECTORY)


# experiment -> a builder of the port from (seeded) settings.
_BUILDERS = {
    'bandit': lambda mapping_seed: _bandit(mapping_seed=mapping_seed),
    'bandit_noise': _noise(_bandit),
    'bandit_scale': _scale(_bandit),
    'cartpole': cartpole.Cartpole,
    'cartpole_noise': _noise(cartpole.Cartpole),
    'cartpole_scale': _scale(cartpole.Cartpole),
    'cartpole_swingup': cartpole.CartpoleSwingup,
    'catch': catch.Catch,
    'catch_noise': _noise(catch.Catch),
    'catch_scale': _scale(catch.Catch),
    'deep_sea': deep_sea.DeepSea,
    'deep_sea_stochastic': lambda size, mapping_seed, seed: deep_sea.DeepSea(
        size=size, deterministic=False, mapping_seed=mapping_seed,
        seed=seed),
    'discounting_chain': discounting_chain.DiscountingChain,
    'memory_len': lambda memory_length, seed: memory_chain.MemoryChain(
        memory_length=memory_length, num_bits=1, seed=seed),
    'memory_size': lambda num_bits, seed: memory_chain.MemoryChain(
        memory_length=2, num_bits=num_bits, seed=seed),
    'mnist': _mnist,
    'mnist_noise': _noise(_mnist),
    'mnist_scale': _scale(_mnist),
    'mountain_car': mountain_car.MountainCar,
    'mountain_car_noise': _noise(mountain_car.MountainCar),
    'mountain_car_scale': _scale(mountain_car.MountainCar),
    'umbrella_distract': lambda n_distractor, seed: umbrella_chain.
    UmbrellaChain(chain_length=20, n_distractor=n_distractor, seed=seed),
    'umbrella_length': umbrella_chain.UmbrellaChain,
}


# Seeds of an experiment's ids stay distinct for agent seeds below this.
REPLICA_SEED_STRIDE = 100_000
_AGENT_SEEDED = ('deep_sea', 'deep_sea_stochastic')


def _settings(bsuite_id: str):
  from bsuite import bsuite as bsuite_loader  # pylint: disable=g-import-not-at-top
  from bsuite import sweep  # pylint: disable=g-import-not-at-top
  if bsuite_id not in sweep.SETTINGS:
    raise ValueError(f'Unknown bsuite id {bsuite_id!r}: give one of '
                     f'sweep.SWEEP (e.g. catch/0; {len(sweep.SWEEP)} ids).')
  experiment, index = bsuite_id.split(sweep.SEPARATOR)
  loader = bsuite_loader.EXPERIMENT_NAME_TO_ENVIRONMENT[experiment]
  return (experiment, int(index), dict(sweep.SETTINGS[bsuite_id]),
          inspect.signature(loader).parameters)


def environment_seed(bsuite_id: str, seed: int) -> Optional[int]:
  """The seed of `bsuite_id`'s environment when the agent's seed is
  `seed` (the module docstring's rule); None: it draws nothing."""
  if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
    raise ValueError(f'`seed` must be an int >= 0, got {seed!r}.')
  experiment, index, settings, parameters = _settings(bsuite_id)
  if experiment in _AGENT_SEEDED:
    return int(seed)
  if 'seed' not in parameters:
    return None
  fixed = settings.get('seed', parameters['seed'].default)
  if fixed is not None and fixed is not inspect.Parameter.empty:
    return int(fixed)
  if seed >= REPLICA_SEED_STRIDE:  # it would be another replica's seed
    raise ValueError(f'`seed` must be an int in [0, {REPLICA_SEED_STRIDE}) '
                     f'for {bsuite_id} (replica k is seeded seed + '
                     f'{REPLICA_SEED_STRIDE} * k), got {seed}.')
  return int(seed) + REPLICA_SEED_STRIDE * index


def seeded_settings(bsuite_id: str, seed: int):
  """(experiment, bsuite's settings of `bsuite_id` with its
  `environment_seed` as `seed`, where it has one)."""
  experiment, _, settings, _ = _settings(bsuite_id)
  env_seed = environment_seed(bsuite_id, seed)
  if env_seed is not None:
    settings['seed'] = env_seed  # deep_sea_stochastic: the runner's `_rng`
  return experiment, settings


def load(bsuite_id: str, seed: int = 0,
         mnist_dir: Optional[str] = None) -> base.Environment:
  """The port of bsuite's environment `bsuite_id` (e.g. 'catch/3'), seeded
  as the bsuite-loop runner seeds bsuite's for `seed`. `mnist_dir`: the
  folder of MNIST's four files (default bsuite's /tmp/mnist)."""
  experiment, settings = seeded_settings(bsuite_id, seed)
  if experiment.startswith('mnist') and mnist_dir is not None:
    settings['directory'] = mnist_dir
  return _BUILDERS[experiment](**settings)
