"""`as_dm_env(env)`: a port as a `dm_env.Environment` (with bsuite's
`bsuite_info()` and `bsuite_num_episodes`), so it runs in bsuite's own loop
and logging wrappers; `reset` and `step` are the jitted pure functions."""

from typing import Any, Callable, Dict, Tuple

import dm_env
from dm_env import specs
import jax
import numpy as np

from pe_jax.envs.suite import base


# One jitted reset and step per compiled program: ports with one
# `program_key` differ only in what their states hold (as the jitted runner
# stacks them), so the adapters of a sweep's ids and seeds compile each
# program once. A handful of keys per experiment: never evicted.
_COMPILED: Dict[Any, Tuple[Callable, Callable]] = {}


def _compiled(env: base.Environment) -> Tuple[Callable, Callable]:
  key = env.program_key
  if key not in _COMPILED:
    _COMPILED[key] = (jax.jit(env.reset), jax.jit(env.step))
  return _COMPILED[key]


class PortedEnvironment(dm_env.Environment):
  """A port stepped through jitted `reset`/`step`; timesteps as bsuite's:
  reward and discount None at FIRST, Python floats otherwise, observations
  float32 NumPy arrays."""

  def __init__(self, env: base.Environment):
    self.env = env
    self.state = env.init()
    self._reset, self._step = _compiled(env)
    self.bsuite_num_episodes = env.num_episodes

  def _convert(self, step: dm_env.TimeStep) -> dm_env.TimeStep:
    step_type = dm_env.StepType(int(step.step_type))
    first = step_type == dm_env.StepType.FIRST
    return dm_env.TimeStep(
        step_type=step_type,
        reward=None if first else float(step.reward),
        discount=None if first else float(step.discount),
        observation=np.asarray(step.observation))

  def reset(self) -> dm_env.TimeStep:
    self.state, step = self._reset(self.state)
    return self._convert(step)

  def step(self, action) -> dm_env.TimeStep:
    self.state, step = self._step(self.state, int(action))
    return self._convert(step)

  def observation_spec(self):
    return specs.Array(shape=self.env.observation_shape, dtype=np.float32,
                       name='observation')

  def action_spec(self):
    return specs.DiscreteArray(self.env.num_actions, name='action')

  def bsuite_info(self) -> Dict[str, Any]:
    return {name: np.asarray(value).item()
            for name, value in self.env.info(self.state).items()}


def as_dm_env(env: base.Environment) -> PortedEnvironment:
  return PortedEnvironment(env)
