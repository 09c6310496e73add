"""experiments.paper.uncertainty_maps at a tiny size: counts, w_avg, bonus, plot."""

import os
import tempfile

from absl.testing import absltest
import numpy as np
import pandas as pd
from scipy import stats

from experiments.paper import uncertainty_maps
from tests import agent_testing

PNG_MAGIC = b'\x89PNG\r\n\x1a\n'
SIZE = 4
SNAPSHOT_STEPS = (20, 60)
TINY = dict(hidden_sizes=(16,), num_atoms=11, batch_size=16,
            min_replay_size=16)


class UncertaintyMapsTest(absltest.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.tmp = tempfile.TemporaryDirectory()
    uncertainty_maps.run(cls.tmp.name, SIZE, SNAPSHOT_STEPS, progress_every=0,
                         **TINY)
    cls.rows = pd.read_csv(os.path.join(cls.tmp.name,
                                        uncertainty_maps.CSV_FILE))

  @classmethod
  def tearDownClass(cls):
    cls.tmp.cleanup()
    super().tearDownClass()

  def test_one_row_per_snapshot_step_and_reachable_cell(self):
    self.assertEqual(list(self.rows.columns), list(uncertainty_maps.COLUMNS))
    reachable = SIZE * (SIZE + 1) // 2
    self.assertLen(self.rows, len(SNAPSHOT_STEPS) * reachable)
    self.assertTrue((self.rows.column <= self.rows.row).all())

  def test_visits_add_up_to_the_steps_taken(self):
    for step in SNAPSHOT_STEPS:
      at = self.rows[self.rows.step == step]
      self.assertEqual(at.visits_action_0.sum() + at.visits_action_1.sum(),
                       step)
      # Every episode passes row r exactly once: step / SIZE visits per row
      # for whole episodes.
      per_row = (at.visits_action_0 + at.visits_action_1).groupby(
          at.row).sum()
      self.assertEqual(per_row[0], -(-step // SIZE))

  def test_disagreement_by_visits_from_the_cell_rows(self):
    table = pd.read_csv(os.path.join(self.tmp.name,
                                     uncertainty_maps.VISITS_FILE))
    self.assertEqual(list(table.step), list(SNAPSHOT_STEPS))
    for _, summary in table.iterrows():
      at = self.rows[self.rows.step == summary.step]
      w = np.concatenate([at.w_avg_action_0, at.w_avg_action_1])
      n = np.concatenate([at.visits_action_0, at.visits_action_1])
      self.assertEqual(summary.never_visited, int(np.sum(n == 0)))
      self.assertAlmostEqual(summary.mean_w_visited, w[n > 0].mean(),
                             places=5)
      if (n == 0).any():
        self.assertAlmostEqual(summary.mean_w_never_visited, w[n == 0].mean(),
                               places=5)
    # The map is the max over the two actions.
    np.testing.assert_allclose(
        self.rows.w_avg,
        np.maximum(self.rows.w_avg_action_0, self.rows.w_avg_action_1),
        rtol=1e-6)

  def test_inverse_counts(self):
    fewest = np.minimum(self.rows.visits_action_0, self.rows.visits_action_1)
    np.testing.assert_allclose(self.rows.inverse_count, 1.0 / (fewest + 0.1),
                               rtol=1e-6)

  def test_bonus_is_the_agents_bonus_with_the_disagreement_prior(self):
    self.assertTrue((self.rows.w_avg >= 0).all())
    from bsuite.environments import deep_sea  # pylint: disable=g-import-not-at-top
    import agents  # pylint: disable=g-import-not-at-top
    env = deep_sea.DeepSea(size=SIZE, seed=0, mapping_seed=0)
    agent = agents.make('pe_dqn', env.observation_spec(), env.action_spec(),
                        **TINY)
    snapshot = uncertainty_maps.maps(agent, np.zeros((SIZE, SIZE, 2)))
    out = agent.evaluate(uncertainty_maps.grid_observations(SIZE))
    # PE-DQN's intrinsic-reward prior, recomputed in NumPy: bonus = mean of
    # the equal mixture of the bonus members + w_avg, per action.
    mixture_mean = np.mean(np.sum(np.asarray(out.bonus_atoms) *
                                  np.asarray(out.bonus_probs), -1), 1)
    expected = (mixture_mean + np.asarray(out.disagreement)).max(-1)
    expected = expected.reshape(SIZE, SIZE)
    reachable = np.tril(np.ones((SIZE, SIZE), bool))
    np.testing.assert_allclose(snapshot['bonus'][reachable],
                               expected[reachable], rtol=1e-5, atol=1e-5)
    self.assertTrue(np.isnan(snapshot['bonus'][~reachable]).all())

  def test_w_avg_is_w1_between_members(self):
    # An independent check with scipy (and rlax's Cramér projection for the
    # default, projected estimate) on a freshly built agent's grid.
    from bsuite.environments import deep_sea  # pylint: disable=g-import-not-at-top
    import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
    import rlax  # pylint: disable=g-import-not-at-top
    import agents  # pylint: disable=g-import-not-at-top
    env = deep_sea.DeepSea(size=SIZE, seed=0, mapping_seed=0)
    w_avg = {}
    for disagreement in ('projected', 'exact'):
      agent = agents.make('pe_dqn', env.observation_spec(),
                          env.action_spec(), disagreement=disagreement,
                          **TINY)
      snapshot = uncertainty_maps.maps(agent, np.zeros((SIZE, SIZE, 2)))
      w_avg[disagreement] = snapshot['w_avg']
      out = agent.evaluate(uncertainty_maps.grid_observations(SIZE))
      atoms = np.asarray(out.value_atoms)  # [cells, M, A, K]; M: QR, C51.
      probs = np.asarray(out.value_probs)
      for row, column in ((0, 0), (3, 1)):
        index = row * SIZE + column
        distances = []
        for a in range(2):
          quantile_atoms, quantile_probs = atoms[index, 0, a], probs[index, 0, a]
          support = atoms[index, 1, a]
          if disagreement == 'projected':
            quantile_probs = np.asarray(rlax.categorical_l2_project(
                jnp.asarray(quantile_atoms), jnp.asarray(quantile_probs),
                jnp.asarray(support)))
            quantile_atoms = support
          distances.append(stats.wasserstein_distance(
              quantile_atoms, support, quantile_probs, probs[index, 1, a]))
        self.assertAlmostEqual(snapshot['w_avg'][row, column],
                               max(distances), places=4, msg=disagreement)
      self.assertTrue(np.isnan(snapshot['w_avg'][0, 3]))  # Unreachable.
    # The two estimates differ, so the check above tells them apart.
    self.assertGreater(np.nanmax(np.abs(w_avg['projected'] - w_avg['exact'])),
                       1e-3)

  def test_plot(self):
    path = os.path.join(self.tmp.name, uncertainty_maps.PLOT_FILE)
    with open(path, 'rb') as f:
      self.assertEqual(f.read(8), PNG_MAGIC)
    self.assertGreater(os.path.getsize(path), 5000)

  def test_bad_arguments(self):
    with self.assertRaisesRegex(ValueError, 'snapshot_steps'):
      uncertainty_maps.run(self.tmp.name, SIZE, [30, 10])
    with self.assertRaisesRegex(ValueError, 'agent'):
      uncertainty_maps.run(self.tmp.name, SIZE, [10], agent_name='dqn')

  def test_command_line_rejects_bad_snapshot_steps(self):
    result = agent_testing.run_script('experiments.paper.uncertainty_maps',
                                      '--snapshot_steps=10,x', timeout=300)
    self.assertNotEqual(result.returncode, 0)
    self.assertIn('--snapshot_steps', result.stderr)

  def test_an_empty_group_is_said_to_be_empty(self):
    visits = np.ones((2, 2, 2), np.int32)  # every reachable (s, a) visited
    w = np.full((2, 2, 2), 0.5)
    line = uncertainty_maps.describe_visits(
        uncertainty_maps.disagreement_by_visits(w, visits))
    self.assertEqual(line, 'mean w_avg visited 0.5000; every reachable (s, a) '
                     'visited')
    self.assertNotIn('nan', uncertainty_maps.describe_visits(
        uncertainty_maps.disagreement_by_visits(w, np.zeros_like(visits))))


if __name__ == '__main__':
  absltest.main()
