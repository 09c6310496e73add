"""Fast unit tests of what otherwise only the slow learning tests catch: the
bootstrap masks in BDQN's loss, the acting RNG kept by the pure agent,
PE-DQN's beta schedule inside `act`, and deep sea's per-cell action map."""

from absl.testing import absltest
import bsuite
import dm_env
import jax
import jax.numpy as jnp
import numpy as np
import optax

import agents
from agents import pe_dqn
from agents import q_ensemble
from pe_jax import replay
from pe_jax.envs import deep_sea
from tests import agent_testing


def _member_changed(old, new) -> np.ndarray:
  """[M] whether any parameter of member m (leading axis) changed."""
  changed = [np.any(np.asarray(a) != np.asarray(b),
                    axis=tuple(range(1, np.ndim(a))))
             for a, b in zip(jax.tree_util.tree_leaves(old),
                             jax.tree_util.tree_leaves(new))]
  return np.any(np.stack(changed), axis=0)


class BootstrapMaskTest(absltest.TestCase):

  def test_masked_members_neither_learn_nor_count_in_the_loss(self):
    for huber_param in (0.0, 1.0):
      with self.subTest(huber_param=huber_param):
        self._check_masks(huber_param)

  def _check_masks(self, huber_param):
    env = bsuite.load_from_id('bandit/0')
    agent = agents.make('boot_dqn', env.observation_spec(), env.action_spec(),
                        **dict(agent_testing.small('boot_dqn'),
                               num_ensemble=8, batch_size=1,
                               mask_probability=0.5, huber_param=huber_param))
    config, state = agent.config, agent.state
    obs = np.zeros((1,) + env.observation_spec().shape, np.float32)
    batch = replay.Transition(obs, np.array([2], np.int32),
                              np.array([0.5], np.float32),
                              np.array([0.99], np.float32), obs)
    q = np.asarray(agent.q_values(obs))[0]  # [M, A]; online == target
    td = 0.5 + 0.99 * q.max(-1) - q[:, 2]
    if config.huber_param > 0:
      member_loss = np.asarray(optax.huber_loss(td, delta=config.huber_param))
    else:
      member_loss = 0.5 * td ** 2
    new_state, metrics, _ = q_ensemble.learn(config, state, batch, 0)
    changed = _member_changed(state.params, new_state.params)
    # With p = 0.5 over 8 members (this seed), some are masked, some not.
    self.assertTrue(0 < changed.sum() < 8, changed)
    # Adam moves a member only where its gradient is nonzero: the masked
    # members stay, and the loss is the unmasked members' loss alone.
    np.testing.assert_allclose(metrics['loss'], member_loss[changed].sum(),
                               rtol=1e-5)


class PureAgentRngTest(absltest.TestCase):

  def test_act_stores_the_advanced_key(self):
    env = bsuite.load_from_id('deep_sea/0')
    agent = agents.make_pure('dqn', env.observation_spec(), env.action_spec(),
                             num_episodes=10, epsilon=1.0,
                             **agent_testing.small('dqn'))
    state = agent.init(jax.random.PRNGKey(0))
    timestep = env.reset()
    act = jax.jit(agent.act)
    keys, actions = [], []
    for _ in range(16):
      keys.append(np.asarray(state.learner.rng))
      state, action = act(state, timestep)
      actions.append(int(action))
    # Every call starts from a new key, so uniform acting takes both
    # actions; a key not stored would repeat the first action forever.
    self.assertLen({k.tobytes() for k in keys}, 16)
    self.assertEqual(set(actions), {0, 1})


class BetaScheduleInActTest(absltest.TestCase):

  def test_act_follows_beta_of_the_episode_it_is_given(self):
    obs_spec = dm_env.specs.Array((4, 4), np.float32)
    config = pe_dqn.PEDQNConfig(
        num_actions=3, hidden_sizes=(16,), num_atoms=11, beta_init=1e4,
        beta_final=0.0, beta_decay_episodes=100.0, warmup_policy='greedy')
    # A state and observation where the bonus and Q prefer other actions.
    for seed in range(50):
      state = pe_dqn.init(config, jax.random.PRNGKey(seed),
                          jnp.zeros(obs_spec.shape))
      observation = jax.random.uniform(jax.random.PRNGKey(1000 + seed),
                                       obs_spec.shape)
      out = pe_dqn.evaluate(config, state.params, state.prior_params,
                            observation)
      greedy, optimistic = (int(jnp.argmax(out.q_values)),
                            int(jnp.argmax(out.bonus)))
      if greedy != optimistic:
        break
    else:
      self.fail('no state where Q and the bonus disagree')
    act = jax.jit(pe_dqn.act, static_argnums=0)
    # beta(0) = 1e4: the bonus decides; beta(100) = beta(500) = 0: Q does.
    self.assertEqual(int(act(config, state, observation, 0)[0]), optimistic)
    self.assertEqual(int(act(config, state, observation, 100)[0]), greedy)
    self.assertEqual(int(act(config, state, observation, 500)[0]), greedy)


class DeepSeaMappingTest(absltest.TestCase):

  def test_a_key_drawn_mapping_is_drawn_per_cell(self):
    env = deep_sea.DeepSea(20)  # no mapping_seed: drawn from the key
    mappings = [np.asarray(env.action_mapping(jax.random.PRNGKey(k)))
                for k in range(3)]
    for mapping in mappings:
      self.assertEqual(mapping.shape, (20, 20))
      self.assertTrue(np.any(mapping != mapping[:, :1]))  # not per row
      self.assertTrue(np.any(mapping != mapping[:1, :]))  # not per column
      self.assertBetween(mapping.mean(), 0.35, 0.65)
    self.assertTrue(np.any(mappings[0] != mappings[1]))
    # Following the map cell by cell along the diagonal finds the treasure.
    state, timestep = env.reset(jax.random.PRNGKey(0))
    mapping = np.asarray(state.action_mapping)
    total = 0.0
    for _ in range(20):
      action = int(mapping[int(state.row), int(state.column)])
      state, timestep = env.step(state, action)
      total += float(timestep.reward)
    self.assertGreater(total, 0.9)


# Hand-built member Q-values [M=4, A=3] on which the rules disagree:
#   mean over members      [0.3, 0.5, 0.0]   -> 1
#   members' greedy votes  2, 1, 0, 0        -> 0
#   mean + 1 * std         [0.6, 0.5, 1.41]  -> 2
#   member 0 alone                           -> 2
HAND_Q = jnp.array([[0.0, 0.5, 2.0], [0.0, 0.5, -2.0], [0.6, 0.5, 0.0],
                    [0.6, 0.5, 0.0]])


class QEnsembleActTest(absltest.TestCase):

  def _act(self, member=1, key=0, **fields):
    config = q_ensemble.QEnsembleConfig(num_actions=3, num_ensemble=4,
                                        hidden_sizes=(4,), **fields)
    state = q_ensemble.init(config, jax.random.PRNGKey(0), jnp.zeros((2,)))
    state = state._replace(rng=jax.random.PRNGKey(key))
    original = q_ensemble.member_q_values
    q_ensemble.member_q_values = lambda *args: HAND_Q
    try:
      action, _ = q_ensemble.act_with_member(config, state, jnp.zeros((2,)),
                                             member)
    finally:
      q_ensemble.member_q_values = original
    return int(action)

  def test_each_rule_inside_act(self):
    self.assertEqual(self._act(action_rule='epsilon_greedy'), 1)
    self.assertEqual(self._act(action_rule='vote'), 0)
    self.assertEqual(self._act(action_rule='ucb', ucb_lambda=1.0), 2)
    self.assertEqual(self._act(action_rule='ucb', ucb_lambda=0.0), 1)
    self.assertEqual(self._act(action_rule='sample_member', member=0), 2)
    self.assertEqual(self._act(action_rule='sample_member', member=2), 0)

  def test_epsilon_inside_act(self):
    greedy = {self._act(action_rule='vote', key=k) for k in range(20)}
    uniform = {self._act(action_rule='vote', epsilon=1.0, key=k)
               for k in range(20)}
    self.assertEqual(greedy, {0})
    self.assertEqual(uniform, {0, 1, 2})


class DltvActTest(absltest.TestCase):

  def test_dltv_scores_inside_act_follow_c_t(self):
    from agents import distributional  # pylint: disable=g-import-not-at-top
    # Action 0: mean 1, no spread above the median; action 1: mean 0.5 and
    # a long upper tail (sigma+^2 = (0 + 9) / 8).
    outputs = jnp.array([[1.0, 1.0, 1.0, 1.0], [-0.5, -0.5, 0.0, 3.0]])
    means = outputs.mean(-1)
    sigma = np.sqrt(np.sum((np.sort(outputs[1])[2:] - np.sort(
        outputs[1])[2]) ** 2) / 8)
    # Mavrin et al.'s clock: t = environment steps, alpha = 1.
    config = distributional.DistributionalConfig(
        num_actions=2, kind='quantile', num_atoms=4, hidden_sizes=(4,),
        action_rule='dltv', dltv_beta0=5.0, min_replay_size=1,
        prior_scale=0.0, dltv_clock='steps', dltv_time_scale=1.0)
    state = distributional.init(config, jax.random.PRNGKey(0),
                                jnp.zeros((2,)))
    original = distributional.network_outputs
    distributional.network_outputs = lambda *args: outputs
    try:
      for steps in (1, 10 ** 7):
        t = max(steps + 1, np.e)
        c_t = 5.0 * np.sqrt(np.log(t) / t)
        expected = int(np.argmax([means[0], means[1] + c_t * sigma]))
        action, _ = distributional.act(
            config, state._replace(steps=jnp.asarray(steps)),
            jnp.zeros((2,)), 0)
        self.assertEqual(int(action), expected, (steps, c_t))
      # Early the tail wins (optimism); late the mean does.
      self.assertEqual(int(distributional.act(
          config, state._replace(steps=jnp.asarray(1)), jnp.zeros((2,)),
          0)[0]), 1)
      self.assertEqual(int(distributional.act(
          config, state._replace(steps=jnp.asarray(10 ** 7)),
          jnp.zeros((2,)), 0)[0]), 0)
    finally:
      distributional.network_outputs = original

  def test_dltv_counts_episodes_at_table_4s_rate(self):
    """PE-DQN Table 4: c_t = beta0 sqrt(log(alpha t) / (alpha t)) with t in
    episodes and alpha = 10^3 / N_episodes; steps do not move it."""
    from agents import distributional  # pylint: disable=g-import-not-at-top
    from bsuite.environments import deep_sea  # pylint: disable=g-import-not-at-top
    env = deep_sea.DeepSea(size=5, seed=0)
    agent = agents.make('dltv_qr', env.observation_spec(),
                        env.action_spec(), num_episodes=2000)
    config = agent.config
    self.assertEqual(config.dltv_clock, 'episodes')
    self.assertAlmostEqual(config.dltv_time_scale, 0.5)
    state = agent.state
    for episode, steps in ((0, 0), (999, 7), (999, 10 ** 6)):
      t = distributional.dltv_time(config, state._replace(
          steps=jnp.asarray(steps)), episode)
      self.assertEqual(float(t), episode + 1)
    # 1,000 episodes in: alpha t = 500, c = 5 sqrt(log 500 / 500).
    np.testing.assert_allclose(
        distributional.dltv_coefficient(5.0, config.dltv_time_scale * 1000),
        5.0 * np.sqrt(np.log(500.0) / 500.0), rtol=1e-6)
    # Without a horizon: bsuite's 10,000 episodes (alpha = 0.1).
    self.assertAlmostEqual(agents.make(
        'dltv_qr', env.observation_spec(),
        env.action_spec()).config.dltv_time_scale, 0.1)

  def test_dltv_variance_bonus_is_four_c_t_sigma_squared(self):
    from agents import distributional  # pylint: disable=g-import-not-at-top
    outputs = jnp.array([[1.0, 1.0, 1.0, 1.0], [-0.5, -0.5, 0.0, 3.0]])
    upper = np.sort(np.asarray(outputs), -1)[:, 2:]
    variance = np.sum((upper - upper[:, :1]) ** 2, -1) / 8
    config = distributional.DistributionalConfig(
        num_actions=2, kind='quantile', num_atoms=4, action_rule='dltv',
        dltv_bonus='variance', dltv_time_scale=0.1)
    c = 5.0 * np.sqrt(np.log(3.0) / 3.0)
    np.testing.assert_allclose(
        distributional.dltv_scores(config, outputs, 30.0),
        np.asarray(outputs).mean(-1) + 4 * c * variance, rtol=1e-6)



class IdsActTest(absltest.TestCase):

  def test_information_ratio_inside_act_with_lambda_of_the_episode(self):
    from agents import distributional  # pylint: disable=g-import-not-at-top
    from agents import ids_c51  # pylint: disable=g-import-not-at-top
    env = bsuite.load_from_id('deep_sea/0')
    agent = agents.make_pure('ids_c51', env.observation_spec(),
                             env.action_spec(), num_episodes=300,
                             **dict(agent_testing.small('ids_c51'),
                                    beta_init=10.0, beta_final=0.0,
                                    beta_decay_episodes=100.0))
    config, state = agent.config, agent.init(jax.random.PRNGKey(0)).learner
    # Two members; action 0 certain (std 0), action 1 uncertain.
    q = jnp.array([[1.0, 0.0], [1.0, 1.0]])
    logits = jnp.zeros((2, agent_testing.small('ids_c51')['num_atoms']))
    originals = (q_ensemble.member_q_values, distributional.network_outputs)
    q_ensemble.member_q_values = lambda *args: q
    distributional.network_outputs = lambda *args: logits
    try:
      for episode in (0, 100, 300):
        lam = max(10.0 * (1 - episode / 100), 0.0)
        mean, std = np.array([1.0, 0.5]), np.array([0.0, 0.5])
        regret = np.max(mean + lam * std) - (mean - lam * std)
        # Equal return variances: rho^2 = (v + eps1) / (eps1 + v) = 1.
        gain = np.log1p(std ** 2) + config.eps2
        expected = int(np.argmin(regret ** 2 / gain))
        action, _ = ids_c51.act(config, state, jnp.zeros((10, 10)), episode)
        self.assertEqual(int(action), expected, episode)
      self.assertEqual(int(ids_c51.act(config, state, jnp.zeros((10, 10)),
                                       0)[0]), 1)  # optimism: explore
      self.assertEqual(int(ids_c51.act(config, state, jnp.zeros((10, 10)),
                                       300)[0]), 0)  # lambda 0: exploit
    finally:
      q_ensemble.member_q_values, distributional.network_outputs = originals


class PEDQNTargetsTest(absltest.TestCase):
  """Eq. 10 and Eq. 17's targets on hand-built next-state outputs, for both
  ways of carrying w: as a prior of b (b = raw + w_avg) or as a reward."""

  def _targets(self, intrinsic_reward_prior):
    config = pe_dqn.PEDQNConfig(num_actions=2, num_atoms=2, hidden_sizes=(4,),
                                intrinsic_reward_prior=intrinsic_reward_prior)
    self.assertEqual(config.num_members, 2)
    half = jnp.full((2, 2, 2), 0.5)
    # Members x actions x atoms. Action 1 is greedy (q), action 0 is the
    # exploratory a'_eps: argmax(q + 10 * b) = argmax([10, 1]).
    online = pe_dqn.Outputs(
        q_values=jnp.array([0.0, 1.0]), bonus=jnp.array([1.0, 0.0]),
        disagreement=jnp.array([0.5, 0.25]), value_atoms=jnp.zeros((2, 2, 2)),
        value_probs=half, bonus_atoms=jnp.zeros((2, 2, 2)), bonus_probs=half)
    target = online._replace(
        value_atoms=jnp.array([[[9.0, 9.0], [1.0, 2.0]],
                               [[9.0, 9.0], [3.0, 5.0]]]),
        bonus_atoms=jnp.array([[[1.0, 2.0], [9.0, 9.0]],
                               [[3.0, 4.0], [9.0, 9.0]]]))
    return pe_dqn._sample_targets(  # pylint: disable=protected-access
        config, online, target, 10.0, 0.3, 0.9, 0.7)

  def test_value_target_is_the_mixture_at_the_greedy_action(self):
    targets = self._targets(True)
    for member in range(2):
      np.testing.assert_allclose(
          np.sort(targets.value_atoms[member]),
          0.3 + 0.9 * np.array([1.0, 2.0, 3.0, 5.0]), rtol=1e-6)
      np.testing.assert_allclose(targets.value_probs[member], [0.25] * 4)

  def test_bonus_target_with_w_as_the_prior_of_b(self):
    # 0 + 0.9 * (atoms at a'_eps = 0, plus w_avg(s', 0) = 0.5).
    targets = self._targets(True)
    np.testing.assert_allclose(np.sort(targets.bonus_atoms[0]),
                               0.9 * (np.array([1.0, 2.0, 3.0, 4.0]) + 0.5),
                               rtol=1e-6)

  def test_bonus_target_with_w_as_the_reward(self):
    # intrinsic 0.7 + 0.9 * atoms at a'_eps = 0.
    targets = self._targets(False)
    np.testing.assert_allclose(np.sort(targets.bonus_atoms[1]),
                               0.7 + 0.9 * np.array([1.0, 2.0, 3.0, 4.0]),
                               rtol=1e-6)


if __name__ == '__main__':
  absltest.main()
