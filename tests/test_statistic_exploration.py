"""Statistic-greedy exploration on a reward-free deep sea (paper's Fig. 3)."""

import csv
import os
import shutil
import tempfile
import warnings

from absl.testing import absltest
from absl.testing import parameterized
from bsuite.environments import deep_sea
import jax
import jax.numpy as jnp
import numpy as np

from agents import distributional
from experiments.paper import statistic_exploration as se
from tests import agent_testing
TINY = dict(hidden_sizes=(8,), num_atoms=11, batch_size=4, min_replay_size=4)
SIZE, EPISODES, SEEDS = 4, 3, 2


def numpy_moments(atoms, probs):
  """Mean, variance, skewness, excess kurtosis of each row, by hand."""
  atoms, probs = np.asarray(atoms, np.float64), np.asarray(probs, np.float64)
  mean = np.sum(atoms * probs, -1)
  centred = atoms - mean[:, None]
  variance = np.sum(probs * centred**2, -1)
  skewness = np.sum(probs * centred**3, -1) / variance**1.5
  kurtosis = np.sum(probs * centred**4, -1) / variance**2 - 3.0
  return dict(mean=mean, variance=variance, skewness=skewness,
              kurtosis=kurtosis)


def read_csv(path):
  with open(path, newline='') as f:
    return list(csv.DictReader(f))


class FixedAgent:
  """Always the same action; learns nothing."""

  def __init__(self, action):
    self._action = action

  def select_action(self, timestep):
    del timestep
    return self._action

  def update(self, timestep, action, new_timestep):
    del timestep, action, new_timestep


class StatisticRuleTest(parameterized.TestCase):

  def test_hand_made_distributions(self):
    atoms = jnp.array([[-1.0, 0.0, 1.0, 2.0], [-1.0, 0.0, 1.0, 2.0]])
    cases = {
        # Mean 0.4 vs 0.5.
        'mean': ([[0.2, 0.4, 0.2, 0.2], [0.1, 0.4, 0.4, 0.1]], 1),
        # Mass at the ends (variance 2.25) beats the middle (0.25).
        'variance': ([[0.5, 0.0, 0.0, 0.5], [0.0, 0.5, 0.5, 0.0]], 0),
        # A long right tail (skewness > 0) beats a long left tail.
        'skewness': ([[0.1, 0.0, 0.3, 0.6], [0.6, 0.3, 0.0, 0.1]], 1),
        # Rare extremes (heavy tails) beat a two-point distribution (-2).
        'kurtosis': ([[0.5, 0.0, 0.0, 0.5], [0.05, 0.45, 0.45, 0.05]], 1),
    }
    for statistic, (probs, expected) in cases.items():
      by_hand = numpy_moments(atoms, probs)[statistic]
      self.assertEqual(int(np.argmax(by_hand)), expected, statistic)
      got = distributional.statistic_values(atoms, jnp.array(probs),
                                            statistic)
      np.testing.assert_allclose(got, by_hand, rtol=1e-5, atol=1e-6)
      self.assertEqual(int(jnp.argmax(got)), expected, statistic)
    # Bigger variance wins for 'variance' in either order.
    probs = jnp.array([[0.0, 0.5, 0.5, 0.0], [0.5, 0.0, 0.0, 0.5]])
    self.assertEqual(int(jnp.argmax(distributional.statistic_values(
        atoms, probs, 'variance'))), 1)

  @parameterized.product(kind=('quantile', 'categorical'),
                         statistic=se.STATISTICS)
  def test_act_is_argmax_of_moment(self, kind, statistic):
    # epsilon = 1 would act at random under the other rules: 'statistic'
    # must stay greedy.
    config = distributional.DistributionalConfig(
        num_actions=3, kind=kind, hidden_sizes=(8,), num_atoms=7,
        prior_scale=3.0, action_rule='statistic', statistic=statistic,
        epsilon=1.0)
    observation = jax.random.normal(jax.random.PRNGKey(1), (5,))
    init = jax.jit(distributional.init, static_argnums=0)
    act = jax.jit(distributional.act, static_argnums=0)
    state = init(config, jax.random.PRNGKey(0), observation)
    outputs = distributional.network_outputs(config, state.params,
                                      state.prior_params, observation)
    atoms, probs = distributional.action_distributions(config, outputs)
    expected = int(np.argmax(numpy_moments(atoms, probs)[statistic]))
    for _ in range(5):
      action, rng = act(config, state, observation, 0)
      self.assertEqual(int(action), expected)
      state = state._replace(rng=rng)

  def test_bad_statistic(self):
    with self.assertRaisesRegex(ValueError, 'statistic'):
      distributional.DistributionalConfig(num_actions=2,
                                          action_rule='statistic',
                                          statistic='median')


class EnvironmentTest(absltest.TestCase):

  def test_reward_free_zeroes_treasure_and_move_cost(self):
    size = 5
    # Unrandomized actions (1 is always right) on purpose: bsuite warns.
    with warnings.catch_warnings():
      warnings.filterwarnings('ignore', 'Environment is in debug mode')
      raw = deep_sea.DeepSea(size=size, randomize_actions=False)
      wrapped = se.RewardFree(deep_sea.DeepSea(size=size,
                                               randomize_actions=False))
    raw_rewards, free_rewards = [], []
    for action in (1, 0, 1):  # Always right (treasure), left, right again.
      first_raw, first_free = raw.reset(), wrapped.reset()
      self.assertIsNone(first_free.reward)
      np.testing.assert_array_equal(first_raw.observation,
                                    first_free.observation)
      for _ in range(size):
        step_raw, step_free = raw.step(action), wrapped.step(action)
        raw_rewards.append(step_raw.reward)
        free_rewards.append(step_free.reward)
        np.testing.assert_array_equal(step_raw.observation,
                                      step_free.observation)
        self.assertEqual(step_raw.discount, step_free.discount)
        self.assertEqual(step_raw.step_type, step_free.step_type)
    self.assertGreater(max(raw_rewards), 0.9)  # The treasure.
    self.assertLess(min(raw_rewards), 0.0)  # Move costs.
    self.assertTrue(all(r == 0.0 for r in free_rewards))

  def test_seeded_env_rewards_are_zero(self):
    env = se.make_env(6, seed=3)
    rng = np.random.default_rng(0)
    for _ in range(20):
      timestep = env.reset()
      while not timestep.last():
        timestep = env.step(int(rng.integers(2)))
        self.assertEqual(timestep.reward, 0.0)

  def test_grid_position(self):
    grid = np.zeros((4, 4), np.float32)
    grid[2, 1] = 1.0
    self.assertEqual(se.grid_position(grid), (2, 1))
    with self.assertRaisesRegex(ValueError, 'one nonzero'):
      se.grid_position(np.zeros((4, 4)))

  def test_fixed_action_visits_one_path(self):
    env = se.make_env(SIZE, seed=0)
    result = se.explore(env, FixedAgent(0), num_episodes=3)
    self.assertEqual(result, se.Exploration(SIZE, 3 * SIZE))

  def test_reachable(self):
    self.assertEqual(se.reachable_state_actions(SIZE), SIZE * (SIZE + 1))


class ExperimentTest(absltest.TestCase):

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls._tmp = tempfile.TemporaryDirectory()
    cls.output_dir = os.path.join(cls._tmp.name, 'out')
    cls.result = se.run(cls.output_dir, SIZE, EPISODES, SEEDS, **TINY)

  @classmethod
  def tearDownClass(cls):
    cls._tmp.cleanup()
    super().tearDownClass()

  def test_runs_csv(self):
    rows = read_csv(self.result['runs'])
    self.assertEqual(self.result['new_runs'], 16)
    self.assertLen(rows, len(se.MODELS) * len(se.STATISTICS) * SEEDS)
    for column in ('model', 'statistic', 'seed', 'size', 'num_episodes',
                   'distinct_state_actions', 'seconds'):
      self.assertIn(column, rows[0])
    self.assertEqual({(r['model'], r['statistic'], int(r['seed']))
                      for r in rows},
                     {(m, s, seed) for m in se.MODELS
                      for s in se.STATISTICS for seed in range(SEEDS)})
    for row in rows:
      self.assertEqual(int(row['size']), SIZE)
      self.assertEqual(int(row['num_episodes']), EPISODES)
      self.assertEqual(int(row['steps']), EPISODES * SIZE)
      self.assertBetween(int(row['distinct_state_actions']), 1,
                         se.reachable_state_actions(SIZE))
      self.assertGreaterEqual(float(row['seconds']), 0.0)

  def test_summary_csv(self):
    rows = read_csv(self.result['summary'])
    self.assertEqual(list(rows[0]), list(se.SUMMARY_COLUMNS))
    self.assertLen(rows, len(se.MODELS) * len(se.STATISTICS))
    runs = read_csv(self.result['runs'])
    for row in rows:
      self.assertEqual(int(row['num_seeds']), SEEDS)
      q25, median, q75 = (float(row[c]) for c in ('q25', 'median', 'q75'))
      self.assertLessEqual(q25, median)
      self.assertLessEqual(median, q75)
      counts = [int(r['distinct_state_actions']) for r in runs
                if (r['model'], r['statistic']) ==
                (row['model'], row['statistic'])]
      self.assertAlmostEqual(median, float(np.median(counts)))

  def test_png(self):
    with open(self.result['plot'], 'rb') as f:
      data = f.read()
    self.assertGreater(len(data), 1000)
    self.assertEqual(data[:8], b'\x89PNG\r\n\x1a\n')

  def test_resume_skips_finished_runs(self):
    with tempfile.TemporaryDirectory() as tmp:
      output_dir = os.path.join(tmp, 'copy')
      shutil.copytree(self.output_dir, output_dir)
      runs_path = os.path.join(output_dir, se.RUNS_FILE)
      before = read_csv(runs_path)
      again = se.run(output_dir, SIZE, EPISODES, SEEDS, **TINY)
      self.assertEqual(again['new_runs'], 0)
      self.assertEqual(again['skipped'], len(before))
      self.assertEqual(read_csv(runs_path), before)
      self.assertEqual(again['summary_rows'], self.result['summary_rows'])
      # Other settings are other runs.
      more = se.run(output_dir, SIZE, EPISODES + 1, 1, models=['quantile'],
                    statistics=['mean'], **TINY)
      self.assertEqual(more['new_runs'], 1)
      self.assertLen(read_csv(runs_path), len(before) + 1)
      self.assertEqual(more['summary_rows'][0]['num_seeds'], 1)

  def test_overwrite_redoes_runs_with_same_counts(self):
    with tempfile.TemporaryDirectory() as tmp:
      args = (tmp, SIZE, EPISODES, SEEDS)
      kwargs = dict(TINY, models=['categorical'], statistics=['variance'])
      first = se.run(*args, **kwargs)
      second = se.run(*args, overwrite=True, **kwargs)
      self.assertEqual(second['new_runs'], SEEDS)
      rows = read_csv(second['runs'])
      self.assertLen(rows, SEEDS)
      self.assertEqual(first['summary_rows'], second['summary_rows'])
      theirs = {r['seed']: r['distinct_state_actions']
                for r in read_csv(self.result['runs'])
                if (r['model'], r['statistic']) == ('categorical',
                                                    'variance')}
      self.assertEqual({r['seed']: r['distinct_state_actions'] for r in rows},
                       theirs)

  def test_count_matches_recorded_trajectory(self):
    trajectory = []
    result = se.run_one('quantile', 'variance', 1, SIZE, EPISODES,
                        trajectory=trajectory, **TINY)
    self.assertLen(trajectory, EPISODES * SIZE)
    pairs = set()
    for observation, action in trajectory:
      self.assertEqual(observation.sum(), 1.0)
      row, column = np.unravel_index(np.argmax(observation),
                                     observation.shape)
      self.assertLessEqual(column, row)  # Deep sea's reachable triangle.
      pairs.add((int(row), int(column), action))
    self.assertEqual(result['distinct_state_actions'], len(pairs))
    runs = read_csv(self.result['runs'])
    logged = [int(r['distinct_state_actions']) for r in runs
              if (r['model'], r['statistic'], r['seed']) ==
              ('quantile', 'variance', '1')]
    self.assertEqual(logged, [len(pairs)])

  def test_bad_arguments(self):
    with self.assertRaisesRegex(ValueError, 'statistics'):
      se.run(self.output_dir, SIZE, EPISODES, SEEDS, statistics=['median'])
    with self.assertRaisesRegex(ValueError, 'size'):
      se.run(self.output_dir, 1, EPISODES, SEEDS)
    with self.assertRaisesRegex(TypeError, 'learning_rate'):
      se.run(self.output_dir, SIZE, EPISODES, SEEDS, learning_rate=1.0)


class CommandLineTest(absltest.TestCase):

  def _run(self, *flags):
    return agent_testing.run_script(
        'experiments.paper.statistic_exploration', *flags, timeout=300,
        env=dict(os.environ, JAX_PLATFORMS='cpu'))

  def test_tiny_run(self):
    with tempfile.TemporaryDirectory() as tmp:
      done = self._run(f'--save_path={tmp}', '--size=3', '--num_episodes=2',
                       '--seeds=1', '--models=quantile,categorical',
                       '--statistics=variance', '--hidden_sizes=8',
                       '--num_atoms=11', '--batch_size=4',
                       '--min_replay_size=4')
      self.assertEqual(done.returncode, 0, done.stderr[-3000:])
      for name in (se.RUNS_FILE, se.SUMMARY_FILE, se.PLOT_FILE):
        self.assertTrue(os.path.exists(os.path.join(tmp, name)), name)
        self.assertIn(os.path.join(tmp, name), done.stdout)
      self.assertLen(read_csv(os.path.join(tmp, se.RUNS_FILE)), 2)

  def test_bad_flag_values(self):
    with tempfile.TemporaryDirectory() as tmp:
      for flag, name in (('--size=1', 'size'),
                         ('--statistics=mean,median', 'statistics')):
        done = self._run(f'--save_path={tmp}', flag)
        self.assertNotEqual(done.returncode, 0, flag)
        self.assertIn(f'--{name}', done.stderr, flag)
      self.assertFalse(os.path.exists(os.path.join(tmp, se.RUNS_FILE)))


if __name__ == '__main__':
  absltest.main()
