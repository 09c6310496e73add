"""Where BDQN+P's learning step spends its time at deep sea size N. For
each size, the whole `learn` step
(timed as docs/results/pe_dqn_step/profile.py times PE-DQN's: a `lax.scan`
of 20 steps over a donated state, best of 3) of the agent that
`run_bsuite --runner=jax` builds, and the same step with one part taken
away: the randomized priors (`prior_scale=0`: no prior forward passes), the
bootstrap masks' random draws (`mask_probability=1`), and with 1 member or
a batch of 32 instead of 20 and 128; then the optimiser step alone (Adam
and the target update on fixed gradients). Run from the repository root,
pinned to one core as the queues run:
  taskset -c 1 python docs/results/boot_dqn_step/profile.py 10 30
"""
import os
import sys

import jax
import jax.numpy as jnp
from bsuite.environments import deep_sea

import agents
from agents import common
from agents import q_ensemble

sys.path.insert(0, os.path.join(os.path.dirname(__file__), '..', 'pe_dqn_step'))
from profile import batch_of, ms_per_step, optimizer_step_of  # pylint: disable=g-import-not-at-top,wrong-import-position

VARIANTS = (('default', {}), ('no prior passes', {'prior_scale': 0.0}),
            ('no mask draws', {'mask_probability': 1.0}),
            ('1 member', {'num_ensemble': 1}), ('batch 32', {'batch_size': 32}))


def learner_of(size, overrides):
  env = deep_sea.DeepSea(size=size)
  kwargs = agents.for_jax_deep_sea('boot_dqn', {}, 'deep_sea', size)
  kwargs.update(overrides)
  agent = agents.make('boot_dqn', env.observation_spec(), env.action_spec(),
                      num_episodes=10000, **kwargs)
  return agent.config, agent.pure.init(jax.random.PRNGKey(0)).learner


def profile(size: int) -> str:
  episode = jnp.asarray(100, jnp.int32)
  cells = []
  for _, overrides in VARIANTS:
    config, learner = learner_of(size, overrides)
    cells.append(ms_per_step(
        lambda s, b, c=config: q_ensemble.learn(c, s, b, episode)[0],
        learner, batch_of(size, config.batch_size)))
  config, learner = learner_of(size, {})
  batch = batch_of(size, config.batch_size)
  grads = jax.jit(jax.grad(lambda p: q_ensemble.learn(
      config, learner._replace(params=p), batch, episode)[1]['loss']))(
          learner.params)
  optimizer = common.optimizer(config)
  update = ms_per_step(
      optimizer_step_of(optimizer, grads, config.target_update_period),
      learner, batch)
  return (f'| {size} | ' + ' | '.join(f'{c:.2f}' for c in cells) +
          f' | {update:.2f} ({update / cells[0]:.0%}) |')


if __name__ == '__main__':
  print('| size | ' + ' | '.join(f'learn, {name}, ms' for name, _ in VARIANTS)
        + ' | optimiser step, ms (share) |')
  print('|---:|' + '---:|' * len(VARIANTS) + '---|')
  for arg in sys.argv[1:] or ['10', '30']:
    print(profile(int(arg)), flush=True)
