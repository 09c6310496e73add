"""Q-ensemble agents: rules by hand, bsuite smoke runs, learning on deep sea."""

from absl.testing import absltest
from absl.testing import parameterized
import bsuite
import jax
import jax.numpy as jnp
import numpy as np

import agents
from agents import pure
from agents import q_ensemble
from agents import tdu
from tests import agent_testing

class RulesTest(absltest.TestCase):
  """The rules inside the learner (the pure rules: tests/test_exploration.py)."""

  def test_tdu_sigma_in_learning_step(self):
    """sigma reported by learn equals the hand-computed TD-error std."""
    env = bsuite.load_from_id('bandit/0')
    agent = agents.make('tdu', env.observation_spec(), env.action_spec(),
                        **dict(agent_testing.small('tdu'), num_exploiters=3,
                               batch_size=1))
    config, state = agent.config, agent.state
    obs = np.zeros((1,) + env.observation_spec().shape, np.float32)
    from pe_jax import replay  # pylint: disable=g-import-not-at-top
    batch = replay.Transition(obs, np.array([2], np.int32),
                              np.array([0.5], np.float32),
                              np.array([0.99], np.float32), obs)
    q = np.asarray(agent.q_values(obs))[0]  # [M, A]
    td = 0.5 + 0.99 * q.max(-1) - q[:, 2]  # Online == target at start.
    _, metrics, _ = q_ensemble.learn(config, state, batch, 0)
    np.testing.assert_allclose(metrics['bonus'], np.std(td[:3], ddof=1),
                               rtol=1e-4)


  def test_distinct_target_prior_is_the_bootstrap_s_prior(self):
    env = bsuite.load_from_id('bandit/0')
    kwargs = dict(agent_testing.small('tdu'), num_exploiters=3, batch_size=1,
                  prior_scale=3.0)
    shared = agents.make('tdu', env.observation_spec(), env.action_spec(),
                         **kwargs)
    distinct = agents.make('tdu', env.observation_spec(), env.action_spec(),
                           target_prior='distinct', **kwargs)
    self.assertIsNone(shared.state.target_prior_params)
    s, d = shared.state, distinct.state
    # The online networks and prior are those of the shared agent (one
    # seed); only the target's prior is new.
    for a, b in ((s.params, d.params), (s.prior_params, d.prior_params)):
      for x, y in zip(jax.tree_util.tree_leaves(a),
                      jax.tree_util.tree_leaves(b)):
        np.testing.assert_array_equal(x, y)
    self.assertFalse(all(np.array_equal(x, y) for x, y in zip(
        jax.tree_util.tree_leaves(d.prior_params),
        jax.tree_util.tree_leaves(d.target_prior_params))))
    obs = np.zeros((1,) + env.observation_spec().shape, np.float32)
    from pe_jax import replay  # pylint: disable=g-import-not-at-top
    batch = replay.Transition(obs, np.array([2], np.int32),
                              np.array([0.5], np.float32),
                              np.array([0.99], np.float32), obs)
    config = distinct.config
    q = np.asarray(q_ensemble.member_q_values(config, d.params,
                                              d.prior_params, obs[0]))
    q_next = np.asarray(q_ensemble.member_q_values(
        config, d.target_params, d.target_prior_params, obs[0]))
    td = 0.5 + 0.99 * q_next.max(-1) - q[:, 2]
    _, metrics, _ = q_ensemble.learn(config, d, batch, 0)
    np.testing.assert_allclose(metrics['bonus'], np.std(td[:3], ddof=1),
                               rtol=1e-4)
    with self.assertRaisesRegex(ValueError, 'target_prior'):
      agents.make('tdu', env.observation_spec(), env.action_spec(),
                  target_prior='other')

  def test_update_period_learns_every_kth_step(self):
    env = bsuite.load_from_id('catch/0')
    spec = (env.observation_spec(), env.action_spec())
    counts = {}
    for period in (1, 4):
      agent = agents.make_pure(
          'ensemble_voting', *spec,
          **dict(agent_testing.small('ensemble_voting'), update_period=period,
                 min_replay_size=10, batch_size=4))
      state = agent.init(jax.random.PRNGKey(0))
      step = jax.jit(lambda st, ts, a, nts: agent.update(st, ts, a, nts))
      timestep = env.reset()
      for _ in range(41):
        new = env.step(0)
        state = step(state, pure.as_arrays(timestep), 0, pure.as_arrays(new))
        timestep = env.reset() if new.last() else new
      counts[period] = int(state.learner.steps)
    # Sampleable from the 10th stored transition: steps 10..41 learn at
    # period 1 (32), and at period 4 only steps 12, 16, ..., 40 (8).
    self.assertEqual(counts, {1: 32, 4: 8})
    with self.assertRaisesRegex(ValueError, 'update_period'):
      agents.make('ensemble_voting', *spec, update_period=0)

  def test_adam_b2_is_optax_adam_s(self):
    from agents import common  # pylint: disable=g-import-not-at-top
    import optax  # pylint: disable=g-import-not-at-top
    config = q_ensemble.QEnsembleConfig(num_actions=2, adam_b2=0.99,
                                        adam_eps=1e-4, learning_rate=0.1)
    params = {'w': jnp.array([1.0, -2.0])}
    optimizers = (common.adam(config), optax.adam(0.1, b2=0.99, eps=1e-4),
                  optax.adam(0.1, eps=1e-4))  # the last: optax's b2 0.999
    states = [o.init(params) for o in optimizers]
    # Large gradients, then small: b2 = 0.99 forgets the large ones sooner.
    for grad in [[3.0, -3.0]] * 10 + [[0.1, 0.2]] * 20:
      grads = {'w': jnp.array(grad)}
      steps = []
      for index, optimizer in enumerate(optimizers):
        update, states[index] = optimizer.update(grads, states[index])
        steps.append(np.asarray(update['w']))
      np.testing.assert_allclose(steps[0], steps[1], rtol=1e-6)
    self.assertGreater(np.max(np.abs(steps[0] / steps[2] - 1)), 0.02)
    with self.assertRaisesRegex(ValueError, 'adam_b2'):
      q_ensemble.QEnsembleConfig(num_actions=2, adam_b2=1.0)


class InterfaceTest(absltest.TestCase):

  def test_tdu_bandit_tries_every_arm_then_prefers_rewarding_ones(self):
    env = bsuite.load_from_id('bandit/0')
    agent = tdu.default_agent(env.observation_spec(), env.action_spec(),
                              use_bandit=True, bandit_eta=0.0,
                              **agent_testing.small('tdu'))
    self.assertEqual(agent.select_arm(), 0)
    agent.arm_steps[:] = 1
    agent.arm_rewards[:] = [0.0, 1.0, 0.2, 0.1]
    self.assertEqual(agent.select_arm(), 1)


class DeepSeaLearningTest(parameterized.TestCase):
  """Deep exploration finds deep sea 12's treasure where random acting fails.

  A uniformly random policy finds it within 250 episodes with probability
  1 - (1 - 2**-12)**250 = 0.06; the control below checks that it does not
  for the seeds used. Agents train on the jitted runner (the same agent and
  deep sea as bsuite's loop, tests/test_lockstep.py), both seeds in one
  program, stopping once both have found the treasure (25-episode chunks).
  Measured first finds (seeds 0, 1): boot_dqn 87, 110; tdu 69, 88;
  ucb 118, 156 (ensemble_voting: none in 300 episodes; ucb_infogain 153,
  203).
  """

  SIZE, SEEDS, BUDGET = 12, (0, 1), 250

  def test_a_random_policy_finds_nothing_on_these_seeds(self):
    for seed in self.SEEDS:
      self.assertIsNone(agent_testing.random_first_treasure(
          self.SIZE, seed, self.BUDGET))

  # One test per agent, so that the test workers share them out.
  @parameterized.parameters('boot_dqn', 'tdu', 'ucb')
  def test_finds_deep_sea_12_where_a_random_policy_does_not(self, name):
    firsts = agent_testing.jax_first_treasures(name, self.SIZE, self.SEEDS,
                                               self.BUDGET)
    self.assertNotIn(None, firsts, f'{name}: no treasure in {self.BUDGET} '
                     f'episodes for some of seeds {self.SEEDS}: {firsts}')


if __name__ == '__main__':
  absltest.main()
