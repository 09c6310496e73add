"""Seeds in lockstep on bsuite's own environments (`agents.lockstep`) and
`run_bsuite --seeds`, against single agents in bsuite's loop."""

import os
import tempfile

from absl.testing import absltest
from absl.testing import parameterized
import bsuite
from bsuite.environments import cartpole
from bsuite.logging import csv_load
import pandas as pd

import agents
from agents import lockstep
from experiments import run_bsuite
from tests import agent_testing

SMALL = dict(batch_size=8, min_replay_size=16, hidden_sizes=(16,))
SEEDS = (0, 1, 2)


def run_bsuite_script(*flags):
  return agent_testing.run_script('experiments.run_bsuite', *flags)


class LockstepTest(parameterized.TestCase):

  @parameterized.parameters(('dqn', {}), ('boot_dqn', {'num_ensemble': 3}))
  def test_each_seed_takes_the_actions_of_its_single_agent(self, name, extra):
    # cartpole's episodes end at different steps for different seeds, so the
    # seeds reset and finish at different locksteps. Seed k's agent runs the
    # same float32 updates as the single agent with seed k, but vmapped
    # programs are fused differently, so values can differ in the last bits;
    # that could flip an argmax between two Q-values within rounding of each
    # other. No such tie occurs in these ~300 steps per seed.
    overrides = {**SMALL, **extra}
    episodes = 12
    # bsuite's ids leave cartpole unseeded; a seeded one repeats itself.
    make_env = lambda: cartpole.Cartpole(seed=5)
    env = make_env()
    agent = agents.make_pure(name, env.observation_spec(), env.action_spec(),
                             num_episodes=episodes, **overrides)
    runner = lockstep.Lockstep(agent, SEEDS)
    results = lockstep.run_episodes(
        runner, [make_env() for _ in SEEDS], episodes, record_actions=True)
    lengths = set()
    for seed, result in zip(SEEDS, results):
      expected = agent_testing.actions_of(
          name, seed=seed, episodes=episodes, make_env=make_env,
          num_episodes=episodes, **overrides)
      self.assertGreater(len(expected), 100)  # Learning ran (from step 16).
      self.assertEqual(result.actions, expected, f'seed {seed}')
      self.assertLen(result.episode_returns, episodes)
      self.assertEqual(result.steps, len(expected))
      lengths.add(result.steps)
    self.assertGreater(len(lengths), 1)  # The seeds really were out of step.

  def test_one_environment_per_seed(self):
    env = bsuite.load_from_id('catch/0')
    agent = agents.make_pure('dqn', env.observation_spec(), env.action_spec())
    runner = lockstep.Lockstep(agent, [0, 1])
    with self.assertRaisesRegex(ValueError, '1 environments for 2 seeds'):
      lockstep.run_episodes(runner, [env], 3)
    with self.assertRaisesRegex(ValueError, 'num_episodes'):
      lockstep.run_episodes(runner, [env, env], 0)
    with self.assertRaisesRegex(ValueError, 'seeds'):
      lockstep.Lockstep(agent, [])


class SeedsCommandLineTest(absltest.TestCase):

  def test_seed_folders_match_single_seed_runs_and_resume(self):
    # deep_sea/0 is deterministic (bsuite seeds its mapping), so the runs
    # see the same environment.
    flags = ('--agent=dqn', '--bsuite_id=deep_sea/0', '--num_episodes=30',
             '--min_replay_size=20', '--batch_size=8', '--hidden_sizes=16',
             '--progress_every=0')
    with tempfile.TemporaryDirectory() as tmp:
      lock = run_bsuite_script(*flags, '--seeds=0,3',
                                f'--save_path={tmp}/lock')
      self.assertEqual(lock.returncode, 0, lock.stderr[-3000:])
      self.assertIn('seeds 0,3 in lockstep', lock.stdout)
      single = run_bsuite_script(*flags, '--seed=3',
                                 f'--save_path={tmp}/single')
      self.assertEqual(single.returncode, 0, single.stderr[-3000:])
      for seed in (0, 3):
        df, _ = csv_load.load_bsuite(
            {f's{seed}': os.path.join(tmp, 'lock', 'dqn', f'seed_{seed}')})
        self.assertEqual(df.episode.max(), 30)
      name = run_bsuite.csv_path('deep_sea/0', '')
      lock_log = pd.read_csv(os.path.join(tmp, 'lock', 'dqn', 'seed_3', name))
      single_log = pd.read_csv(os.path.join(tmp, 'single', 'dqn', 'seed_3',
                                            name))
      pd.testing.assert_frame_equal(lock_log, single_log)
      again = run_bsuite_script(*flags, '--seeds=0,3',
                                f'--save_path={tmp}/lock')
      self.assertEqual(again.returncode, 0, again.stderr[-3000:])
      self.assertEqual(again.stdout.count('skipped'), 2)
      self.assertIn('0 of 1 ids to run', again.stdout)

  def test_bad_seeds_are_named(self):
    result = run_bsuite_script('--agent=dqn', '--seeds=0,0')
    self.assertNotEqual(result.returncode, 0)
    self.assertIn('--seeds must be distinct', result.stderr)


if __name__ == '__main__':
  absltest.main()
