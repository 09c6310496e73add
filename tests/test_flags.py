"""Every experiment script's numeric flags are bounded: a count of zero or
less, or a negative time, is refused by the flag parser with its name,
before any work."""

import importlib
import os
import tempfile

from absl import flags
from absl.testing import absltest

from experiments.lib import hyperparameter_flags
from experiments.lib import results
from tests import agent_testing

SCRIPTS = ('analyze_bsuite', 'run_bsuite', 'run_vizdoom', 'tune',
           'benchmarks.benchmark_bsuite_runners', 'benchmarks.benchmark_core',
           'benchmarks.benchmark_envs', 'benchmarks.benchmark_jax_training',
           'benchmarks.benchmark_throughput', 'benchmarks.benchmark_vizdoom',
           'diagnostics.frontier_diagnostics', 'lib.compilation_cache',
           'paper.deep_sea_scaling', 'paper.deep_sea_sweep',
           'paper.project_scaling', 'paper.statistic_exploration',
           'paper.toy_regression', 'paper.uncertainty_maps')


class FlagBoundsTest(absltest.TestCase):

  def test_every_numeric_flag_has_a_lower_bound(self):
    # Hyperparameter flags are checked by the agents' configs instead.
    hyperparameters = set(hyperparameter_flags.HYPERPARAMETERS)
    unbounded = []
    for script in SCRIPTS:
      module = importlib.import_module(f'experiments.{script}')
      before = set(flags.FLAGS)
      module.define_flags()
      new = set(flags.FLAGS) - before
      try:
        for name in sorted(new - hyperparameters):
          parser = flags.FLAGS[name].parser
          if (isinstance(parser, (flags.IntegerParser, flags.FloatParser))
              and parser.lower_bound is None):
            unbounded.append(f'{script} --{name}')
      finally:
        for name in new:
          delattr(flags.FLAGS, name)
    self.assertEmpty(unbounded)

  def test_episode_counts_below_one_are_refused_before_any_work(self):
    for value in ('-5', '0'):
      with self.subTest(num_episodes=value):
        result = agent_testing.run_script(
            'experiments.run_bsuite', '--agent=dqn', '--bsuite_id=deep_sea/0',
            f'--num_episodes={value}', '--save_path=/nonexistent/never_made',
            timeout=300)
        self.assertNotEqual(result.returncode, 0)
        self.assertIn('--num_episodes', result.stderr)
        self.assertNotIn('regret', result.stdout)
        self.assertNotIn('Traceback', result.stderr)

  def test_scaling_runner_and_backend_are_two_flags(self):
    # --runner picks the loop (bsuite, jax), --backend where its tasks run
    # (local, ray), as in run_bsuite; Ray runs bsuite-loop tasks only.
    result = agent_testing.run_script(
        'experiments.paper.deep_sea_scaling', '--runner=jax', '--backend=ray',
        '--save_path=/nonexistent/never_made', timeout=300)
    self.assertNotEqual(result.returncode, 0)
    self.assertIn('--backend=ray runs bsuite-loop runs as Ray tasks; '
                  '--runner=jax trains its groups locally', result.stderr)
    self.assertNotIn('Traceback', result.stderr)
    result = agent_testing.run_script(
        'experiments.paper.deep_sea_scaling', '--backend=jax',
        '--save_path=/nonexistent/never_made', timeout=300)
    self.assertNotEqual(result.returncode, 0)
    self.assertIn('flag --backend=jax: value should be one of <local|ray>',
                  result.stderr)


class OutputFolderTest(absltest.TestCase):

  def test_an_output_path_under_a_file_is_refused_by_name(self):
    with tempfile.NamedTemporaryFile() as file:
      for script, flag in (('analyze_bsuite', '--output_dir'),
                           ('paper.deep_sea_scaling', '--save_path'),
                           ('paper.deep_sea_sweep', '--save_path'),
                           ('paper.project_scaling', '--save_path'),
                           ('run_bsuite', '--save_path'),
                           ('run_vizdoom', '--save_path'),
                           ('paper.statistic_exploration', '--save_path'),
                           ('paper.toy_regression', '--save_path'),
                           ('tune', '--save_path'),
                           ('paper.uncertainty_maps', '--save_path')):
        result = agent_testing.run_script(f'experiments.{script}',
                                          f'{flag}={file.name}/out')
        self.assertNotEqual(result.returncode, 0, script)
        self.assertIn(f'{flag}: {file.name} is a file, not a folder',
                      result.stderr, script)
        self.assertNotIn('Traceback', result.stderr, script)

  def test_an_unwritable_output_path_is_refused_and_a_check_leaves_nothing(
      self):
    # /proc refuses new entries even to root (whom access checks pass).
    if os.path.isdir('/proc'):
      with self.assertRaisesRegex(ValueError,
                                  '--save_path: cannot write under /proc'):
        results.check_output_folder('/proc/pe_jax/out', '--save_path')
    with tempfile.TemporaryDirectory() as tmp:
      results.check_output_folder(os.path.join(tmp, 'a', 'b'), '--x')
      self.assertEqual(os.listdir(tmp), [])


if __name__ == '__main__':
  absltest.main()
