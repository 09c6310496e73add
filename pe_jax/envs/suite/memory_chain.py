"""bsuite's memory chain (`bsuite.environments.memory_chain.MemoryChain`),
behind memory_len and memory_size.

At each reset (and at construction) `binomial(1, .5, num_bits)` draws the
context and `randint(num_bits)` the query bit; the context shows at the
first step only, the query at step memory_length - 1, and the last of the
memory_length + 1 steps pays +1 if the action repeats the queried bit, -1
otherwise. The observation is computed before the step counter moves, so
the first step repeats the first observation.
"""

import dataclasses
from typing import NamedTuple, Optional

import jax.numpy as jnp

from pe_jax.envs import numpy_random
from pe_jax.envs.exact import div
from pe_jax.envs.suite import base


class MemoryChainState(NamedTuple):
  stream: numpy_random.RandomStream
  memory_length: jnp.ndarray   # [] int32
  timestep: jnp.ndarray        # [] int32
  context: jnp.ndarray         # [num_bits] int32 in {0, 1}
  query: jnp.ndarray           # [] int32
  total_perfect: jnp.ndarray   # [] int32
  total_regret: jnp.ndarray    # [] float64 (bsuite's int 0 until a 2. is added)
  reset_next: jnp.ndarray      # [] bool


@dataclasses.dataclass(frozen=True)
class MemoryChain(base.Environment):
  """Args: memory_length, num_bits, seed."""
  memory_length: int = 1
  num_bits: int = 1
  seed: Optional[int] = None

  STATIC = ('num_bits',)
  num_actions = 2
  num_episodes = 10_000
  info_names = ('total_perfect', 'total_regret')

  @property
  def observation_shape(self):
    return (1, self.num_bits + 2)

  def _draw(self, stream):
    stream, context = numpy_random.binomial_one_half_array(stream,
                                                           self.num_bits)
    stream, query = numpy_random.randint(stream, self.num_bits)
    return stream, context, query

  def _init(self):
    stream, context, query = self._draw(numpy_random.from_seed(self.seed))
    zero = jnp.zeros((), jnp.int32)
    return MemoryChainState(stream, jnp.asarray(self.memory_length,
                                                jnp.int32),
                            zero, context, query, zero, base.as_f64(0.),
                            jnp.ones((), bool))

  def _observation(self, state):
    length = state.memory_length
    time = 1 - div(state.timestep.astype(jnp.float64),
                   length.astype(jnp.float64))
    query = jnp.where(state.timestep == length - 1, state.query, 0)
    context = jnp.where(state.timestep == 0, 2 * state.context - 1, 0)
    return jnp.concatenate([jnp.stack([time, query.astype(jnp.float64)]),
                            context.astype(jnp.float64)])[None, :]

  def _reset(self, state):
    stream, context, query = self._draw(state.stream)
    state = state._replace(stream=stream, context=context, query=query,
                           timestep=jnp.zeros((), jnp.int32))
    return state, base.restart(self._observation(state))

  def _step(self, state, action):
    observation = self._observation(state)
    timestep = state.timestep + 1
    last = timestep - 1 >= state.memory_length
    right = action == state.context[state.query]
    reward = jnp.where(last, jnp.where(right, 1., -1.), 0.)
    state = state._replace(
        timestep=timestep,
        total_perfect=state.total_perfect + (last & right),
        total_regret=state.total_regret + jnp.where(last & ~right, 2., 0.))
    return state, base.transition(reward, observation, last)

  def info(self, state):
    return {'total_perfect': state.total_perfect,
            'total_regret': state.total_regret}
