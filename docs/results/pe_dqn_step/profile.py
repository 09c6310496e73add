"""Where PE-DQN's learning step spends its time at deep sea size N. Prints a markdown table per size: the
whole `learn` step and its optimiser step (Adam and the periodic target
update), each timed inside a `lax.scan` of 20 steps over a donated state,
as the jitted runner runs them (best of 3 scans). The agent is the one
`run_bsuite --runner=jax` builds (`agents.for_jax_deep_sea`: one-hot row
lookup torso); the batch is 128 one-hot states of the grid. Run from the
repository root, pinned to one core as the queues run:
  taskset -c 1 python docs/results/pe_dqn_step/profile.py 10 38 50
"""
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from bsuite.environments import deep_sea

import agents
from agents import common
from agents import pe_dqn
from pe_jax import replay

STEPS = 20


def batch_of(size: int, batch_size: int) -> replay.Transition:
  rng = np.random.default_rng(0)
  rows = rng.integers(0, size - 1, batch_size)
  cols = rng.integers(0, size, batch_size)

  def grid(r, c):
    observation = np.zeros((batch_size, size, size), np.float32)
    observation[np.arange(batch_size), r, c] = 1.0
    return jnp.asarray(observation)

  return replay.Transition(
      grid(rows, cols), jnp.asarray(rng.integers(0, 2, batch_size), jnp.int32),
      jnp.asarray(rng.normal(size=batch_size) * 0.01, jnp.float32),
      jnp.full((batch_size,), 0.99, jnp.float32),
      grid(rows + 1, np.minimum(cols + 1, size - 1)))


def ms_per_step(step, state, batch) -> float:
  """Best of 3 scans of `STEPS` steps, the state donated as in the runner
  (the batch an argument, so that XLA cannot fold it into constants)."""
  def run(carry, batch):
    return jax.lax.scan(lambda c, _: (step(c, batch), None), carry, None,
                        length=STEPS)[0]
  scan = jax.jit(run, donate_argnums=0)
  carry = jax.block_until_ready(
      scan(jax.tree_util.tree_map(jnp.copy, state), batch))
  best = float('inf')
  for _ in range(3):
    start = time.perf_counter()
    carry = jax.block_until_ready(scan(carry, batch))
    best = min(best, (time.perf_counter() - start) / STEPS)
  return best * 1e3


def optimizer_step_of(optimizer, grads, target_update_period):
  """`step(state, batch)`: the optimiser alone (Adam and the periodic target
  update) on fixed gradients, the same dense update as the agent's `learn`."""
  def optimizer_step(state, unused_batch):
    params, target_params, opt_state, steps = common.apply_sgd_step(
        optimizer, state.params, state.target_params, state.opt_state,
        state.steps, grads, target_update_period)
    return state._replace(params=params, target_params=target_params,
                          opt_state=opt_state, steps=steps)
  return optimizer_step


def profile(size: int) -> str:
  env = deep_sea.DeepSea(size=size)
  kwargs = agents.for_jax_deep_sea('pe_dqn', {}, 'deep_sea', size)
  agent = agents.make('pe_dqn', env.observation_spec(), env.action_spec(),
                      num_episodes=10000, **kwargs)
  config = agent.config
  learner = agent.pure.init(jax.random.PRNGKey(0)).learner
  batch = batch_of(size, config.batch_size)
  episode = jnp.asarray(100, jnp.int32)
  grads = jax.jit(lambda s, b: pe_dqn.weighted_loss_and_gradients(
      config, s, b, episode)[1])(learner, batch)
  optimizer = common.optimizer(config)

  def learn(state, batch):
    return pe_dqn.learn(config, state, batch, episode)[0]

  whole = ms_per_step(learn, learner, batch)
  update = ms_per_step(
      optimizer_step_of(optimizer, grads, config.target_update_period),
      learner, batch)
  table = learner.params['params']['MLP_0']['Dense_0']['kernel'].size
  total = sum(x.size for x in jax.tree_util.tree_leaves(learner.params))
  return (f'| {size} | {total / 1e6:.2f} ({table / total:.0%}) | '
          f'{whole:.1f} | {update:.1f} ({update / whole:.0%}) |')


if __name__ == '__main__':
  print('| size | parameters, M (one-hot tables) | learn, ms | '
        'optimiser step, ms (share) |')
  print('|---:|---|---:|---|')
  for arg in sys.argv[1:] or ['10', '30', '50']:
    print(profile(int(arg)), flush=True)
