"""Every agent as a value: pure functions under jit(vmap(...)) and lax.scan,
and the jitted training against the bsuite adapter in bsuite's own loop."""

from absl.testing import absltest
from absl.testing import parameterized
from bsuite.environments import deep_sea
import jax
import jax.numpy as jnp
import numpy as np

import agents
from agents import training
from pe_jax.envs import deep_sea as jax_deep_sea
from tests import agent_testing

SIZE = 4
SMALL = dict(batch_size=8, min_replay_size=8, replay_capacity=64)
# Network sizes kept small so that 14 compilations fit the test budget.
TINY = {'pe_dqn': dict(hidden_sizes=(16,), num_atoms=11),
        'ids_c51': dict(c51_hidden_sizes=(16,), num_atoms=11, num_ensemble=3,
                        hidden_sizes=(8,))}


def overrides_for(name):
  overrides = dict(SMALL)
  if name.startswith('pe_dqn'):
    overrides.update(TINY['pe_dqn'])
  elif name == 'ids_c51':
    overrides.update(TINY['ids_c51'])
  elif name in ('c51', 'qr_dqn', 'dltv_qr'):
    overrides.update(hidden_sizes=(16,), num_atoms=11)
  else:
    overrides.update(hidden_sizes=(8,), num_ensemble=min(
        4, agents.config_class(name).num_ensemble) if name != 'dqn' else 1)
    if name == 'tdu':
      overrides.update(num_exploiters=2)
  return overrides


def float_leaves(tree):
  """The floating-point leaves (parameters, optimiser moments) of a state."""
  return [x for x in jax.tree_util.tree_leaves(tree)
          if jnp.issubdtype(x.dtype, jnp.floating)]


def bsuite_specs(size=SIZE):
  env = deep_sea.DeepSea(size=size, mapping_seed=0)
  return env.observation_spec(), env.action_spec()


class PureAgentsTest(parameterized.TestCase):

  @parameterized.parameters(*agents.AGENT_NAMES)
  def test_jit_vmap_scan_trains_every_agent(self, name):
    agent = agents.make_pure(name, *bsuite_specs(), num_episodes=20,
                             **overrides_for(name))
    env = jax_deep_sea.DeepSea(SIZE)
    train = training.make_train(agent, env, episodes_per_call=5)
    keys = jax.random.split(jax.random.PRNGKey(0), 2)
    mappings = jnp.stack([jax_deep_sea.bsuite_action_mapping(SIZE, s)
                          for s in range(2)])
    carry = jax.jit(jax.vmap(train.init))(keys, mappings)
    start = float_leaves(carry.agent.learner)
    carry, stats = jax.jit(jax.vmap(train.run))(carry)
    np.testing.assert_array_equal(carry.agent.episode, [5, 5])
    np.testing.assert_array_equal(carry.agent.total_steps, [20, 20])
    self.assertEqual(stats.total_bad_episodes.shape, (2, 5))
    # 20 transitions >= min_replay_size: learning ran for both seeds ...
    end = float_leaves(carry.agent.learner)
    change = np.max(np.stack([
        jnp.max(jnp.abs(a - b), axis=tuple(range(1, a.ndim)))
        for a, b in zip(end, start)]), axis=0)
    self.assertTrue(np.all(change > 0), change)
    # ... and the seeds are different trainings.
    self.assertGreater(float(jnp.max(jnp.abs(end[0][0] - end[0][1]))), 0.0)
    for value in jax.tree_util.tree_leaves(carry.agent.metrics):
      self.assertTrue(np.all(np.isfinite(value)))

  @parameterized.parameters('boot_dqn', 'pe_dqn', 'dqn')
  def test_jitted_training_takes_the_adapters_actions(self, name):
    # bsuite's DeepSea and the bsuite adapter, stepped in Python, against the
    # JAX deep sea and the same agent inside one lax.scan. Both run the same
    # float32 programs; they are compiled apart (fused differently), which
    # could flip an argmax between two values within rounding of each other.
    # No such tie occurs in these 30 episodes.
    size, seed, episodes = 5, 3, 30
    overrides = overrides_for(name)
    env = deep_sea.DeepSea(size=size, mapping_seed=seed)
    expected = agent_testing.actions_of(
        name, seed=seed, episodes=episodes, make_env=lambda: env,
        num_episodes=episodes, **overrides)
    agent = agents.make_pure(name, env.observation_spec(), env.action_spec(),
                             num_episodes=episodes, **overrides)
    train = training.make_train(agent, jax_deep_sea.DeepSea(
        size, mapping_seed=seed), episodes_per_call=episodes,
                                record_actions=True)
    carry, stats = jax.jit(train.run)(train.init(jax.random.PRNGKey(seed)))
    np.testing.assert_array_equal(np.asarray(stats.actions).ravel(), expected)
    self.assertEqual(int(stats.total_bad_episodes[-1]),
                     env.bsuite_info()['total_bad_episodes'])
    self.assertEqual(int(carry.agent.total_steps), len(expected))

  def test_unknown_agent(self):
    with self.assertRaisesRegex(ValueError, 'nope'):
      agents.make_pure('nope', *bsuite_specs())

  def test_bad_episodes_per_call(self):
    agent = agents.make_pure('dqn', *bsuite_specs())
    with self.assertRaisesRegex(ValueError, 'episodes_per_call'):
      training.make_train(agent, jax_deep_sea.DeepSea(SIZE), 0)

  def test_tdu_bandit_is_not_pure(self):
    with self.assertRaisesRegex(ValueError, 'use_bandit'):
      agents.make_pure('tdu', *bsuite_specs(), use_bandit=True)


if __name__ == '__main__':
  absltest.main()
