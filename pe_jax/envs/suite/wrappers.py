"""bsuite's reward wrappers (`bsuite.utils.wrappers.RewardNoise`,
`RewardScale`) over any port.

RewardNoise adds `noise_scale * randn()` from its own stream (seeded as
bsuite seeds it, apart from the environment's) to every reward but a FIRST
timestep's; RewardScale multiplies them. bsuite scores both from the inner
environment's noise-free counters, which `info` passes through.
"""

import dataclasses
from typing import Any, NamedTuple, Optional

import jax
import jax.numpy as jnp

from pe_jax.envs import numpy_random
from pe_jax.envs.exact import mul
from pe_jax.envs.suite import base


class RewardNoiseState(NamedTuple):
  inner: Any
  stream: numpy_random.RandomStream
  noise_scale: jnp.ndarray   # [] float64
  reset_next: jnp.ndarray    # [] bool: the inner environment's


class RewardScaleState(NamedTuple):
  inner: Any
  reward_scale: jnp.ndarray  # [] float64
  reset_next: jnp.ndarray


@dataclasses.dataclass(frozen=True)
class _Wrapper(base.Environment):
  env: base.Environment = None

  @property
  def observation_shape(self):
    return self.env.observation_shape

  @property
  def num_actions(self):
    return self.env.num_actions

  @property
  def num_episodes(self):
    return self.env.num_episodes

  @property
  def info_names(self):
    return self.env.info_names

  @property
  def program_key(self):
    return (type(self).__name__, self.env.program_key)

  def info(self, state):
    return self.env.info(state.inner)

  def reset(self, state):
    self._check(state)
    inner, step = self.env.reset(state.inner)
    return state._replace(inner=inner, reset_next=inner.reset_next), step

  def step(self, state, action):
    """The inner environment's step (it resets itself after LAST), its
    reward changed unless the timestep is FIRST."""
    self._check(state)
    with jax.enable_x64(True):
      inner, step = self.env.step(state.inner, action)
      state, reward = self._change(state, step.reward,
                                   step.step_type != base.FIRST)
      return (state._replace(inner=inner, reset_next=inner.reset_next),
              step._replace(reward=reward))


@dataclasses.dataclass(frozen=True)
class RewardNoise(_Wrapper):
  """Args: env, noise_scale, seed (the noise's stream)."""
  noise_scale: float = 0.
  seed: Optional[int] = None

  def _init(self):
    inner = self.env.init()
    return RewardNoiseState(inner, numpy_random.from_seed(self.seed),
                            base.as_f64(self.noise_scale), inner.reset_next)

  def _change(self, state, reward, changed):
    def noisy(stream):
      stream, noise = numpy_random.standard_normal(stream)
      return stream, reward + mul(state.noise_scale, noise)
    stream, reward = jax.lax.cond(changed, noisy, lambda s: (s, reward),
                                  state.stream)
    return state._replace(stream=stream), reward


@dataclasses.dataclass(frozen=True)
class RewardScale(_Wrapper):
  """Args: env, reward_scale, seed (bsuite's wrapper draws nothing)."""
  reward_scale: float = 1.
  seed: Optional[int] = None

  def _init(self):
    inner = self.env.init()
    return RewardScaleState(inner, base.as_f64(self.reward_scale),
                            inner.reset_next)

  def _change(self, state, reward, changed):
    return state, jnp.where(changed, reward * state.reward_scale, reward)
