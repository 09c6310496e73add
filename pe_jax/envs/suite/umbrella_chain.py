"""bsuite's umbrella chain (`bsuite.environments.umbrella_chain.
UmbrellaChain`), behind umbrella_length and umbrella_distract.

Only the first action matters (take the umbrella or not); the last of
chain_length steps pays +1 if it matches the need drawn at reset, -1
otherwise; each step before pays a fair coin of +-1, and every observation
carries n_distractor coin flips. Draws, in bsuite's order: `need` at
construction; `need`, `has` and the observation's distractors at each
reset; the reward coin, then the distractors, at each step but the last;
the distractors at the last.
"""

import dataclasses
from typing import NamedTuple, Optional

import jax
import jax.numpy as jnp

from pe_jax.envs import numpy_random
from pe_jax.envs.exact import div
from pe_jax.envs.suite import base


class UmbrellaChainState(NamedTuple):
  stream: numpy_random.RandomStream
  chain_length: jnp.ndarray    # [] int32
  timestep: jnp.ndarray        # [] int32
  need_umbrella: jnp.ndarray   # [] int32 in {0, 1}
  has_umbrella: jnp.ndarray    # [] int32
  total_regret: jnp.ndarray    # [] float64 (bsuite's int 0 until a 2. is added)
  reset_next: jnp.ndarray      # [] bool


@dataclasses.dataclass(frozen=True)
class UmbrellaChain(base.Environment):
  """Args: chain_length, n_distractor, seed."""
  chain_length: int = 1
  n_distractor: int = 0
  seed: Optional[int] = None

  STATIC = ('n_distractor',)
  num_actions = 2
  num_episodes = 10_000
  info_names = ('total_regret',)

  @property
  def observation_shape(self):
    return (1, 3 + self.n_distractor)

  def _init(self):
    stream, need = numpy_random.binomial_one_half(
        numpy_random.from_seed(self.seed))
    zero = jnp.zeros((), jnp.int32)
    return UmbrellaChainState(stream, jnp.asarray(self.chain_length,
                                                  jnp.int32),
                              zero, need, zero, base.as_f64(0.),
                              jnp.ones((), bool))

  def _observation(self, state):
    """(stream, observation): the distractors are drawn here, as bsuite
    draws them in `_get_observation`."""
    stream, distractors = numpy_random.binomial_one_half_array(
        state.stream, self.n_distractor)
    head = jnp.stack([state.need_umbrella.astype(jnp.float64),
                      state.has_umbrella.astype(jnp.float64),
                      1 - div(state.timestep.astype(jnp.float64),
                              state.chain_length.astype(jnp.float64))])
    return stream, jnp.concatenate(
        [head, distractors.astype(jnp.float64)])[None, :]

  def _reset(self, state):
    stream, need = numpy_random.binomial_one_half(state.stream)
    stream, has = numpy_random.binomial_one_half(stream)
    state = state._replace(stream=stream, need_umbrella=need,
                           has_umbrella=has,
                           timestep=jnp.zeros((), jnp.int32))
    stream, observation = self._observation(state)
    return state._replace(stream=stream), base.restart(observation)

  def _step(self, state, action):
    timestep = state.timestep + 1
    has = jnp.where(timestep == 1, action, state.has_umbrella)
    last = timestep == state.chain_length

    def final(stream):
      return stream, jnp.where(has == state.need_umbrella, 1., -1.)

    def coin(stream):
      stream, heads = numpy_random.binomial_one_half(stream)
      return stream, 2. * heads - 1.

    stream, reward = jax.lax.cond(last, final, coin, state.stream)
    state = state._replace(
        stream=stream, timestep=timestep, has_umbrella=has,
        total_regret=state.total_regret + jnp.where(
            last & (has != state.need_umbrella), 2., 0.))
    stream, observation = self._observation(state)
    return (state._replace(stream=stream),
            base.transition(reward, observation, last))

  def info(self, state):
    return {'total_regret': state.total_regret}
