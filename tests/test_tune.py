"""experiments.tune: the paper's hyperparameter search (Optuna, Table 1/3)."""

import json
import math
import os
import socket
import subprocess
import sys
import tempfile

from absl.testing import absltest
import bsuite
import numpy as np
import optuna
import pandas as pd

import agents
from experiments import tune
from tests import agent_testing

SMALL = {'batch_size': 8, 'min_replay_size': 8}


class ScoreTest(absltest.TestCase):

  def test_calibrated_scores_are_half_of_eq_15(self):
    scores = np.array([[1.0, -300.0], [2.0, -100.0], [6.0, -200.0]])
    got = tune.calibrated_scores(scores)
    for j in range(2):
      f = scores[:, j]
      mean, top = f.mean(), f.max()
      want = 0.5 * np.exp(0.693 * (f - mean) / (top - mean))
      np.testing.assert_allclose(got[:, j], want, rtol=1e-12)
    # The text's reading: about 1 for the best, 0.5 at the mean.
    self.assertAlmostEqual(got[2, 0], 1.0, places=3)
    self.assertAlmostEqual(float(tune.calibrated_scores([[3.0], [1.0]])[0, 0]),
                           1.0, places=3)
    np.testing.assert_allclose(
        tune.calibrated_scores(np.array([[2.0], [4.0]]))[:, 0],
        [0.5 * math.exp(-0.693), 0.5 * math.exp(0.693)])
    # No spread: everyone is the best.
    np.testing.assert_allclose(tune.calibrated_scores([[5.0], [5.0]]),
                               0.5 * np.exp(0.693))

  def test_normalised_scores(self):
    # deep_sea/5 is size 20: 210 reachable cells x 2 actions.
    self.assertEqual(tune.normalised('deep_sea/5', 210.0, 500), 0.5)
    self.assertEqual(tune.normalised('mountain_car/19', -50_000.0, 100), 0.5)


class SpaceTest(absltest.TestCase):

  def test_each_preset_has_its_own_default_study(self):
    self.assertEqual(tune.default_study_name('pe_dqn', 'default'),
                     'tune_pe_dqn')
    self.assertEqual(tune.default_study_name('pe_dqn', 'paper'),
                     'tune_pe_dqn_paper')

  def test_table_1_for_pe_dqn_and_bdqn(self):
    space = tune.search_space('pe_dqn')
    self.assertEqual(math.prod(len(c) for c in space.values()), 216)
    self.assertEqual(tune.overrides_of('pe_dqn', {
        'hidden_sizes': '128,128', 'prior_scale': 5.0, 'beta_init': 50.0}),
                     {'hidden_sizes': (128, 128), 'quantile_prior_scale': 5.0,
                      'beta_init': 50.0})
    # BDQN+P has no heads K and no beta.
    self.assertEqual(sorted(tune.search_space('boot_dqn')),
                     ['hidden_sizes', 'learning_rate', 'prior_scale'])

  def test_numbers_share_a_program_switches_do_not(self):
    static, values = tune.split_static('pe_dqn', {
        'hidden_sizes': (512,), 'num_atoms': 51, 'learning_rate': 1e-4,
        'quantile_prior_scale': 20.0, 'beta_init': 0.5})
    self.assertEqual(values, {'learning_rate': 1e-4,
                              'quantile_prior_scale': 20.0, 'beta_init': 0.5})
    other, _ = tune.split_static('pe_dqn', {
        'hidden_sizes': (512,), 'num_atoms': 51, 'learning_rate': 1e-3,
        'quantile_prior_scale': 5.0, 'beta_init': 5.0})
    self.assertEqual(static, other)  # One program for both trials.
    off, off_values = tune.split_static('pe_dqn', {
        'hidden_sizes': (512,), 'num_atoms': 51, 'learning_rate': 1e-3,
        'quantile_prior_scale': 0.0, 'beta_init': 5.0})
    self.assertEqual(off['quantile_prior_scale'], 0.0)  # No prior network.
    self.assertNotIn('quantile_prior_scale', off_values)
    self.assertNotEqual(static, off)

  def test_bad_ids_and_horizons_are_named(self):
    with self.assertRaisesRegex(ValueError, "'catch/0' is not a bsuite id of"):
      tune._environment('catch/0')
    with self.assertRaisesRegex(ValueError, 'multiple of 5'):
      tune.horizon('deep_sea/5', 12)
    with self.assertRaisesRegex(ValueError, 'no Table 3 horizon'):
      tune.horizon('deep_sea/0', None)


class DeepSeaScoreTest(absltest.TestCase):

  def test_visited_state_actions_match_bsuite_loop(self):
    """f counts the distinct (cell, action) of the agent bsuite's loop runs."""
    reports = []
    tune.run_deep_sea('dqn', 'deep_sea/0', 10, SMALL, {}, 1, 3, 'vmap',
                      lambda c, s: reports.append((c, float(s[0]))))
    self.assertEqual([c for c, _ in reports], [1, 2, 3, 4, 5])
    env = bsuite.load_from_id('deep_sea/0')
    agent = agents.make('dqn', env.observation_spec(), env.action_spec(),
                        seed=3, num_episodes=10, **SMALL)
    visited, want = set(), []
    for episode in range(10):
      timestep = env.reset()
      while not timestep.last():
        action = agent.select_action(timestep)
        visited.add((env._row, env._column, action))  # pylint: disable=protected-access
        new_timestep = env.step(action)
        agent.update(timestep, action, new_timestep)
        timestep = new_timestep
      if episode % 2 == 1:
        want.append(len(visited))
    self.assertEqual([f for _, f in reports], want)
    self.assertGreater(want[-1], want[0])


def new_search(storage, fixed=None):
  """A random search of dqn on deep_sea/0 (10 episodes) in `storage`."""
  return tune.Search('dqn', ['deep_sea/0'], 10, storage, 's', 'random', 0,
                     SMALL if fixed is None else fixed)


class SearchTest(absltest.TestCase):

  def test_command_line_resumes_and_writes_scores(self):
    with tempfile.TemporaryDirectory() as tmp:
      flags = ('--agent=dqn', '--bsuite_ids=deep_sea/0', '--num_episodes=10',
               '--sampler=random', '--trials_per_program=3',
               '--batch_size=8', '--min_replay_size=8', f'--save_path={tmp}')
      first = agent_testing.run_script('experiments.tune', '--num_trials=3',
                                       *flags)
      self.assertEqual(first.returncode, 0, first.stderr[-3000:])
      second = agent_testing.run_script('experiments.tune', '--num_trials=5',
                                        *flags)
      self.assertEqual(second.returncode, 0, second.stderr[-3000:])
      self.assertIn('3 of 5 trials done', second.stdout)
      study = optuna.load_study(study_name='tune_dqn',
                                storage=f'sqlite:///{tmp}/study.db')
      finished = [t for t in study.trials if t.state in (
          optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.PRUNED)]
      self.assertLen(finished, 5)
      table = pd.read_csv(os.path.join(tmp, tune.SCORES_FILE))
      complete = [t for t in finished
                  if t.state == optuna.trial.TrialState.COMPLETE]
      self.assertLen(table, len(complete))
      # One environment: score is its calibrated score, best first.
      np.testing.assert_allclose(
          table.score, tune.calibrated_scores(
              table[['f:deep_sea/0']].to_numpy())[:, 0], rtol=1e-5)
      self.assertEqual(list(table.score), sorted(table.score, reverse=True))
      for _, row in table.iterrows():
        trial = study.trials[int(row.trial)]
        self.assertEqual(row['f:deep_sea/0'],
                         trial.user_attrs['score:deep_sea/0'])
        self.assertAlmostEqual(trial.value, row['f:deep_sea/0'] / 110)
      with open(os.path.join(tmp, tune.BEST_FILE)) as f:
        best = json.load(f)
      self.assertEqual(best['trial'], int(table.trial[0]))
      self.assertEqual(best['overrides']['batch_size'], 8)
      self.assertIn('learning_rate', best['overrides'])

  def test_trials_of_a_killed_run_are_failed_and_asked_anew(self):
    with tempfile.TemporaryDirectory() as tmp:
      storage = f'sqlite:///{tmp}/study.db'
      search = new_search(storage)
      search.study.ask()  # Left running, as by a killed process.
      again = new_search(storage)
      self.assertEqual([t.state for t in again.study.trials],
                       [optuna.trial.TrialState.FAIL])
      self.assertEqual(again.finished(), 0)

  def test_a_damaged_study_database_is_one_line_naming_it(self):
    with tempfile.TemporaryDirectory() as tmp:
      path = os.path.join(tmp, 'study.db')
      new_search(f'sqlite:///{path}')._ask_groups(1)  # pylint: disable=protected-access
      with open(path, 'r+b') as f:  # overwritten in its header
        f.write(b'garbage' * 20)
      with self.assertRaisesRegex(ValueError, f'--storage sqlite:///{path}: '
                                  'not a readable Optuna study database'):
        new_search(f'sqlite:///{path}')

  def test_a_killed_trial_is_retried_with_its_own_settings(self):
    with tempfile.TemporaryDirectory() as tmp:
      storage = f'sqlite:///{tmp}/study.db'
      first = new_search(storage)
      [(trials, [params])] = first._ask_groups(1)  # pylint: disable=protected-access
      gone = subprocess.Popen([sys.executable, '-c', 'pass'])
      gone.wait()  # the driver that asked it was killed
      trials[0].set_user_attr(tune.DRIVER_ATTR,
                              {'host': socket.gethostname(), 'pid': gone.pid})
      resumed = new_search(storage)
      states = [t.state for t in resumed.study.trials]
      self.assertEqual(states, [optuna.trial.TrialState.FAIL,
                                optuna.trial.TrialState.WAITING])
      [(retried, [retried_params])] = resumed._ask_groups(1)  # pylint: disable=protected-access
      self.assertEqual(retried_params, params)
      self.assertEqual(retried[0].user_attrs[tune.RERUN_ATTR], 0)
      # The sampler goes on from the study's trial count: a new draw is
      # not the first run's first draw again.
      self.assertEqual((first.sampler_seed, resumed.sampler_seed), (0, 1))

  def test_a_concurrent_drivers_trials_are_left_to_it(self):
    with tempfile.TemporaryDirectory() as tmp:
      storage = f'sqlite:///{tmp}/study.db'
      first = new_search(storage)
      (trials, _), = first._ask_groups(1)  # pylint: disable=protected-access
      # A second driver starts while the first (this process) still runs.
      second = new_search(storage)
      self.assertEqual([t.state for t in second.study.trials],
                       [optuna.trial.TrialState.RUNNING])
      first.study.tell(trials[0], 0.5)  # no UpdateFinishedTrialError
      # A trial whose driver process has ended is failed.
      orphan = second.study.ask()
      gone = subprocess.Popen([sys.executable, '-c', 'pass'])
      gone.wait()
      orphan.set_user_attr(tune.DRIVER_ATTR,
                           {'host': socket.gethostname(), 'pid': gone.pid})
      third = new_search(storage)
      self.assertEqual([t.state for t in third.study.trials],
                       [optuna.trial.TrialState.COMPLETE,
                        optuna.trial.TrialState.FAIL])

  def test_fixed_values_are_checked_before_the_study_holds_a_trial(self):
    with tempfile.TemporaryDirectory() as tmp:
      storage = f'sqlite:///{tmp}/study.db'
      for fixed, message in (({'batch_size': -1}, '`batch_size` must be'),
                             ({'discount': float('inf')}, 'finite'),
                             ({'no_such_field': 1}, 'Unknown hyperparameter')):
        with self.subTest(fixed=fixed):
          with self.assertRaisesRegex(ValueError, message):
            new_search(storage, fixed)
      self.assertFalse(os.path.exists(f'{tmp}/study.db'))

  def test_a_retried_task_skips_trials_that_finished(self):
    """A Ray task rerun after its worker died trains only running trials."""
    with tempfile.TemporaryDirectory() as tmp:
      storage = f'sqlite:///{tmp}/study.db'
      search = new_search(storage)
      (trials, params), = search._ask_groups(1)  # pylint: disable=protected-access
      (other, _), = search._ask_groups(1)  # pylint: disable=protected-access
      search.study.tell(other[0], 0.25)  # Finished before the worker died.
      numbers = [trials[0].number, other[0].number]
      done = tune.run_trial_group('dqn', search.horizons, storage, 's', SMALL,
                                  0, 'vmap', numbers)
      self.assertEqual(done, [trials[0].number])
      stored = search.study.trials
      self.assertEqual(stored[other[0].number].value, 0.25)
      trained = stored[trials[0].number]
      self.assertEqual(trained.state, optuna.trial.TrialState.COMPLETE)
      self.assertEqual(trained.params, params[0])
      self.assertAlmostEqual(trained.value,
                             trained.user_attrs['score:deep_sea/0'] / 110)
      self.assertLen(trained.intermediate_values, 5)

  def test_journal_storage_holds_a_study(self):
    with tempfile.TemporaryDirectory() as tmp:
      path = os.path.join(tmp, 'study.log')
      search = tune.Search('dqn', ['deep_sea/0'], 10, f'journal:{path}', 's',
                           'random', 0, SMALL)
      search.study.tell(search.study.ask(), 1.0)
      again = optuna.load_study(study_name='s',
                                storage=tune.open_storage(f'journal:{path}'))
      self.assertEqual([t.value for t in again.trials], [1.0])

  def test_a_flag_cannot_fix_a_searched_field(self):
    with tempfile.TemporaryDirectory() as tmp:
      with self.assertRaisesRegex(ValueError, '--learning_rate: the search '
                                  'varies it'):
        tune.Search('dqn', ['deep_sea/0'], 10, f'sqlite:///{tmp}/s.db', 's',
                    'random', 0, {'learning_rate': 1e-3})


class MountainCarScoreTest(absltest.TestCase):

  def test_minus_environment_steps_every_fifth_of_the_horizon(self):
    reports = []
    tune.run_mountain_car('dqn', 'mountain_car/0', 5,
                          {**SMALL, 'hidden_sizes': (8,)},
                          {'learning_rate': [1e-3, 1e-2]}, 2, 0, 'vmap',
                          lambda c, s: reports.append((c, s)))
    self.assertEqual([c for c, _ in reports], [1, 2, 3, 4, 5])
    scores = np.stack([s for _, s in reports])  # [checkpoint, trial]
    self.assertEqual(scores.shape, (5, 2))
    # Each episode takes between 1 step and bsuite's cap of 1000.
    per_episode = -np.diff(np.concatenate([np.zeros((1, 2)), scores]), axis=0)
    self.assertTrue(np.all((per_episode >= 1) & (per_episode <= 1000)),
                    per_episode)


if __name__ == '__main__':
  absltest.main()
