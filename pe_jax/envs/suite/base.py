"""The interface of the bsuite ports: pure `reset` and `step` over an
explicit state, as gymnax's, with bsuite's semantics.

  env = pe_jax.envs.load('catch/3', seed=0)
  state = env.init()                      # as bsuite builds the environment
  state, timestep = env.reset(state)      # FIRST
  state, timestep = env.step(state, 2)    # MID or LAST; after LAST: FIRST
  env.info(state)                         # bsuite_info()'s counters

`step` after a LAST timestep starts the next episode and ignores the action,
as bsuite's `base.Environment` does, so a training loop only ever calls
`step`. Every random number comes from numpy's streams ported to JAX
(`pe_jax.envs.numpy_random`) in the state, seeded as bsuite's environment
is, and the physics is float64 (`pe_jax.envs.exact`): for the same actions
the timesteps and counters equal bsuite's, bit for bit.

A state holds the id's own settings (thresholds, noise scale, action
mapping, ...) as arrays, so the states of ids with the same `program_key`
stack (`stack`) and one `jax.vmap(env.step)` steps them all. A timestep's
reward is float64 (bsuite's), its observation float32 and its discount
float32 (0 or 1); a FIRST timestep has reward 0 and discount 1 where
dm_env has None.
"""

import dataclasses
from typing import Any, Dict, Sequence, Tuple

import dm_env
import jax
import jax.numpy as jnp
import numpy as np

from pe_jax.envs.exact import x64

FIRST = int(dm_env.StepType.FIRST)
MID = int(dm_env.StepType.MID)
LAST = int(dm_env.StepType.LAST)


def timestep(step_type, reward, observation) -> dm_env.TimeStep:
  """A timestep of arrays: step_type [] int32, reward [] float64, discount
  [] float32 (0 at LAST), observation float32."""
  step_type = jnp.asarray(step_type, jnp.int32)
  return dm_env.TimeStep(
      step_type=step_type,
      reward=jnp.asarray(reward, jnp.float64),
      discount=jnp.where(step_type == LAST, 0.0, 1.0).astype(jnp.float32),
      observation=jnp.asarray(observation, jnp.float32))


def restart(observation) -> dm_env.TimeStep:
  return timestep(FIRST, 0.0, observation)


def transition(reward, observation, last) -> dm_env.TimeStep:
  """MID, or LAST where `last`."""
  return timestep(jnp.where(last, LAST, MID), reward, observation)


@dataclasses.dataclass(frozen=True)
class Environment:
  """A bsuite environment's port. Subclasses are frozen dataclasses whose
  fields are the bsuite constructor's arguments; those named in `STATIC`
  fix shapes and control flow (the compiled program), the others travel in
  the state. They define `_init(self) -> state` (host-side, as bsuite's
  constructor), `_reset(state)` and `_step(state, action)` (after which the
  base sets `reset_next`), `info(state)` and the specs below. Every state
  has a `reset_next` [] bool leaf, and its floating leaves are float64."""

  STATIC = ()
  num_actions = 0
  num_episodes = 0       # bsuite_num_episodes
  info_names = ()        # bsuite_info()'s keys

  @property
  def observation_shape(self) -> Tuple[int, ...]:
    raise NotImplementedError

  @property
  def program_key(self) -> Tuple[Any, ...]:
    """Equal for environments whose states one compiled `step` serves."""
    return (type(self).__name__,) + tuple(
        (name, getattr(self, name)) for name in self.STATIC)

  @x64
  def init(self):
    """The state bsuite's constructor leaves (before the first reset)."""
    return self._init()

  @x64
  def reset(self, state) -> Tuple[Any, dm_env.TimeStep]:
    """(state, FIRST timestep) of a new episode."""
    self._check(state)
    state, step = self._reset(state)
    return state._replace(reset_next=jnp.zeros((), bool)), step

  @x64
  def step(self, state, action) -> Tuple[Any, dm_env.TimeStep]:
    """(state, timestep) after `action`; the next episode's FIRST timestep
    (the action ignored) when the last step ended an episode."""
    self._check(state)
    action = jnp.asarray(action, jnp.int32)

    def move(state):
      state, step = self._step(state, action)
      return state._replace(reset_next=step.step_type == LAST), step

    return jax.lax.cond(state.reset_next, self.reset, move, state)

  def info(self, state) -> Dict[str, jnp.ndarray]:
    raise NotImplementedError

  def _check(self, state):
    """A state's floating-point leaves are float64: one that arrives as
    float32 was cast on its way (a NumPy state passed to a jitted function
    without x64) and no longer holds bsuite's numbers. Refused while
    tracing."""
    cast = [str(jnp.result_type(leaf)) for leaf in
            jax.tree_util.tree_leaves(state)
            if jnp.issubdtype(jnp.result_type(leaf), jnp.floating) and
            jnp.result_type(leaf) != jnp.float64]
    if cast:
      raise TypeError(
          f'{type(self).__name__}: state leaves of dtype {cast}, where '
          '`init` gives float64; keep the state as the JAX arrays `init`, '
          '`reset` and `step` return (NumPy float64 arrays passed to a '
          'jitted function are cast to float32).')


def stack(states: Sequence[Any]):
  """States of environments with one `program_key`, stacked on a new
  leading axis (for `jax.vmap(env.step)`)."""
  with jax.enable_x64(True):
    return jax.tree_util.tree_map(lambda *leaves: jnp.stack(leaves), *states)


def unstack(states, index: int):
  """The `index`-th state of stacked `states`."""
  return jax.tree_util.tree_map(lambda leaf: leaf[index], states)


def as_f64(value) -> jnp.ndarray:
  return jnp.asarray(np.float64(value), jnp.float64)
