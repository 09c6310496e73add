"""experiments.diagnostics.frontier_diagnostics reads a PE-DQN state as the runs see it:
checked against the visits the training program records itself."""

import os
import tempfile
from unittest import mock

from absl.testing import absltest
from dm_env import specs
import jax
import jax.numpy as jnp
import numpy as np

import agents
from agents import pe_dqn
from agents import training
from experiments.diagnostics import frontier_diagnostics
from experiments.lib import bsuite_jax
from pe_jax.envs import deep_sea


class FrontierTest(absltest.TestCase):

  def test_counts_match_the_recorded_visits(self):
    size, episodes = 6, 20
    agent = agents.make_pure(
        'pe_dqn', specs.Array((size, size), np.uint8, 'observation'),
        specs.DiscreteArray(2, name='action'), hidden_sizes=(8,),
        num_atoms=5, batch_size=8, min_replay_size=8, torso='one_hot_mlp')
    train = training.make_train(agent, deep_sea.DeepSea(size),
                                episodes_per_call=episodes,
                                record_visits=True)
    mapping = deep_sea.bsuite_action_mapping(size, 1)
    carry = jax.jit(train.init)(jax.random.PRNGKey(0), jnp.asarray(mapping))
    carry, stats = jax.jit(train.run)(carry)
    row = frontier_diagnostics.frontier(
        agent.config, carry.agent.learner, carry.agent.replay, mapping, 5.0)
    self.assertEqual(row['transitions'], size * episodes)
    # The deepest diagonal cell from the program's own record of visits,
    # index (row * N + column) * A + action.
    cells = np.asarray(stats.state_actions).reshape(-1) // 2
    rows, columns = np.divmod(cells, size)
    self.assertEqual(row['deepest_diagonal_row'],
                     int(rows[rows == columns].max()))
    self.assertGreater(row['w_visited'], 0.0)
    self.assertBetween(row['rows_preferring_right'], 0,
                       row['deepest_diagonal_row'] + 1)


  def test_a_normalized_signal_is_read_as_the_agent_uses_it(self):
    # With normalize_intrinsic, w is w_avg / running std with the learner's
    # running moments; computed here from the raw W1 of an agent without
    # normalisation and the same parameters.
    size, episodes = 6, 20
    kw = dict(hidden_sizes=(8,), num_atoms=5, batch_size=8,
              min_replay_size=8, torso='one_hot_mlp')
    spec = (specs.Array((size, size), np.uint8, 'observation'),
            specs.DiscreteArray(2, name='action'))
    agent = agents.make_pure('pe_dqn', *spec, normalize_intrinsic=True,
                             bonus_v_max=1.0, **kw)
    plain = agents.make_pure('pe_dqn', *spec, **kw)
    train = training.make_train(agent, deep_sea.DeepSea(size),
                                episodes_per_call=episodes)
    mapping = deep_sea.bsuite_action_mapping(size, 1)
    carry = jax.jit(train.init)(jax.random.PRNGKey(0), jnp.asarray(mapping))
    carry, _ = jax.jit(train.run)(carry)
    learner = carry.agent.learner
    row = frontier_diagnostics.frontier(agent.config, learner,
                                        carry.agent.replay, mapping, 5.0)
    grid = np.eye(size * size, dtype=np.float32).reshape(-1, size, size)
    raw = np.stack([np.asarray(pe_dqn.evaluate(
        plain.config, learner.params, learner.prior_params, cell).disagreement)
                    for cell in grid]).reshape(size, size, 2)
    count, mean, m2 = np.asarray(learner.intrinsic_moments, np.float64)
    self.assertGreater(count, 0)
    used = raw / np.sqrt(m2 / (count - 1) + 1e-8)
    self.assertEqual(row['w_by_visits']['0'], row['w_never_tried'])
    never = np.tril(np.ones((size, size), bool))[..., None].repeat(2, -1)
    observations = np.asarray(carry.agent.replay.observation).reshape(
        carry.agent.replay.action.shape[0], -1)
    stored = observations.sum(1) > 0
    cells = observations[stored].argmax(1)
    rows, columns = np.divmod(cells, size)
    never[rows, columns, np.asarray(carry.agent.replay.action)[stored]] = (
        False)
    self.assertTrue(never.any())
    self.assertAlmostEqual(row['w_never_tried'], used[never].mean(),
                           delta=1e-4 * max(1.0, abs(used[never].mean())))
    self.assertGreater(np.abs(used - raw).max(), 1e-3)


class CheckpointTest(absltest.TestCase):

  def test_reads_the_checkpoint_of_a_run_with_overrides(self):
    # A run_bsuite unit killed before it finished (here: while writing its
    # log after 20 episodes) keeps its checkpoint of episode 10; the
    # diagnostics rebuild the agent from that checkpoint's own record,
    # overrides included (these change the parameters' shapes and the
    # learner's state, so the default agent could not read it).
    overrides = dict(hidden_sizes=(8,), num_atoms=5, batch_size=8,
                     min_replay_size=8, normalize_intrinsic=True)
    with tempfile.TemporaryDirectory() as tmp, mock.patch.object(
        bsuite_jax, 'write_unit', side_effect=KeyboardInterrupt):
      with self.assertRaises(KeyboardInterrupt):
        bsuite_jax.run_id('pe_dqn', 'deep_sea/0', [3], tmp, overrides,
                          max_episodes=20, episodes_per_call=10,
                          progress_every=0, checkpoint_seconds=0)
      # A checkpoint being written (orbax's temporary folder, here with a
      # file that vanishes) is left out of the copy.
      writing = os.path.join(tmp, 'pe_dqn', 'seed_3', bsuite_jax.CHECKPOINTS,
                             'deep_sea-0', '20.orbax-checkpoint-tmp-1')
      os.makedirs(writing)
      os.symlink(os.path.join(tmp, 'gone'), os.path.join(writing, 'd'))
      rows = frontier_diagnostics.run(tmp, 'deep_sea/0', [3, 4])
      self.assertEqual(list(rows), [3])  # seed 4 has no checkpoint
      episode, row = rows[3]
      self.assertEqual(episode, 10)
      self.assertEqual(row['transitions'], 10 * 10)  # size 10, 10 episodes
      # Never-tried state-actions are those with no visit in the replay.
      self.assertEqual(row['w_by_visits']['0'], row['w_never_tried'])
      self.assertGreater(row['w_never_tried'], 0.0)
      self.assertGreater(row['w_visited'], 0.0)
      self.assertTrue(os.path.isdir(os.path.join(
          tmp, 'pe_dqn', 'seed_3', bsuite_jax.CHECKPOINTS, 'deep_sea-0')))
      with self.assertRaisesRegex(ValueError, 'boot_dqn is not a PE-DQN agent nor ids_c51'):
        frontier_diagnostics.run(tmp, 'deep_sea/0', [3], 'boot_dqn')


class IdsPathTest(absltest.TestCase):

  def test_reads_the_rule_the_agent_acts_by(self):
    # Trained briefly on deep sea 6; the terms are checked against the
    # members' own Q values and the model's own distributions (NumPy), and
    # the row's choice against the agent's `scores`.
    from agents import distributional  # pylint: disable=g-import-not-at-top
    from agents import ids_c51  # pylint: disable=g-import-not-at-top
    from agents import q_ensemble  # pylint: disable=g-import-not-at-top
    size, episodes, clock = 6, 20, 3.0
    agent = agents.make_pure(
        'ids_c51', specs.Array((size, size), np.uint8, 'observation'),
        specs.DiscreteArray(2, name='action'), num_episodes=100,
        c51_hidden_sizes=(16,), num_atoms=11, num_ensemble=3,
        hidden_sizes=(8,), batch_size=8, min_replay_size=8)
    train = training.make_train(agent, deep_sea.DeepSea(size),
                                episodes_per_call=episodes)
    mapping = deep_sea.bsuite_action_mapping(size, 1)
    carry = jax.jit(train.init)(jax.random.PRNGKey(0), jnp.asarray(mapping))
    carry, _ = jax.jit(train.run)(carry)
    config, learner = agent.config, carry.agent.learner
    path = frontier_diagnostics.ids_path(config, learner, mapping, clock)
    lam = float(ids_c51.ratio_terms(config, learner,
                                    jnp.zeros((size, size)), clock)[3])
    self.assertAlmostEqual(path['lam'], lam, places=6)
    self.assertLess(lam, config.beta_init)  # the schedule has moved
    for row in range(size):
      cell = np.zeros((size, size), np.float32)
      cell[row, row] = 1.0
      q = np.asarray(q_ensemble.member_q_values(
          config.ensemble, learner.ensemble.params,
          learner.ensemble.prior_params, jnp.asarray(cell)), np.float64)
      atoms, probs = distributional.action_distributions(
          config.model, distributional.network_outputs(
              config.model, learner.model.params, learner.model.prior_params,
              jnp.asarray(cell)))
      atoms, probs = np.asarray(atoms, np.float64), np.asarray(probs,
                                                                np.float64)
      mean_z = (atoms * probs).sum(-1)
      var_z = (probs * (atoms - mean_z[:, None]) ** 2).sum(-1)
      right = mapping[row, row]
      order = [right, 1 - right]
      np.testing.assert_allclose(path['mean'][row], q.mean(0)[order],
                                 rtol=1e-5, atol=1e-6)
      np.testing.assert_allclose(path['std'][row], q.std(0)[order],
                                 rtol=1e-4, atol=1e-6)
      np.testing.assert_allclose(path['return_variance'][row], var_z[order],
                                 rtol=1e-4, atol=1e-7)
      # Nikolov et al.'s ratio, brute force in NumPy from those terms.
      mean, std = q.mean(0), q.std(0)
      regret = np.max(mean + lam * std) - (mean - lam * std)
      rho2 = (var_z + config.eps1) / (config.eps1 + var_z.mean())
      info_gain = np.log1p(std ** 2 / rho2) + config.eps2
      ratio = (regret ** 2 / info_gain)[order]
      np.testing.assert_allclose(path['rho2'][row], rho2[order], rtol=1e-3)
      np.testing.assert_allclose(path['ratio'][row], ratio, rtol=1e-3)
      agent_ratio = -np.asarray(ids_c51.scores(
          config, learner, jnp.asarray(cell), clock), np.float64)[order]
      np.testing.assert_allclose(path['ratio'][row], agent_ratio, rtol=1e-3)
      self.assertEqual(path['chooses_right'][row],
                       agent_ratio[0] < agent_ratio[1])


if __name__ == '__main__':
  absltest.main()
