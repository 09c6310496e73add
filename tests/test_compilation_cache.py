"""The experiment scripts' persistent compilation cache."""

import os
import tempfile

from absl.testing import absltest

from tests import agent_testing


def _scaling(output_dir: str, cache_dir: str, env):
  return agent_testing.run_script(
      'experiments.paper.deep_sea_scaling', '--agents=dqn', '--sizes=4',
      '--seeds=2', '--num_episodes=4', '--runner=jax',
      '--episodes_per_call=2', '--nocheckpoints', '--progress_every=0',
      f'--save_path={output_dir}', f'--compilation_cache_dir={cache_dir}',
      env=env)


class CompilationCacheTest(absltest.TestCase):

  def test_second_run_loads_the_programs_and_gives_the_same_table(self):
    env = dict(os.environ)
    # Cache every program, however fast it compiled; log cache hits.
    env['JAX_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS'] = '0'
    env['JAX_LOG_COMPILES'] = '1'
    with tempfile.TemporaryDirectory() as tmp:
      cache = os.path.join(tmp, 'cache')
      first = _scaling(os.path.join(tmp, 'a'), cache, env)
      self.assertEqual(first.returncode, 0, first.stderr[-3000:])
      entries = os.listdir(cache)
      self.assertTrue(any(e.startswith('jit_run') for e in entries), entries)
      self.assertNotIn('Persistent compilation cache hit', first.stderr)
      # The folder it made is said once, where the user sees it.
      self.assertIn(f'Compiled programs are cached in {cache}', first.stdout)
      second = _scaling(os.path.join(tmp, 'b'), cache, env)
      self.assertEqual(second.returncode, 0, second.stderr[-3000:])
      self.assertIn("Persistent compilation cache hit for 'jit_run'",
                    second.stderr)
      self.assertNotIn('Compiled programs are cached', second.stdout)
      # jax reads entries under a file lock when filelock is installed
      # (setup.py declares it; jax does not).
      for run in (first, second):
        self.assertNotIn('install the filelock package', run.stderr)
      read = lambda run: open(os.path.join(
          tmp, run, 'deep_sea_scaling_runs.csv')).read().splitlines()
      # Same regret and first finds (the seconds column differs).
      strip = lambda lines: [line.rsplit(',', 1)[0] for line in lines]
      self.assertEqual(strip(read('a')), strip(read('b')))

  def test_empty_folder_turns_it_off(self):
    # Even where JAX's own variable, inherited from a parent script that
    # turned the cache on, says otherwise; and for the processes it starts.
    code = ('import os; import jax; '
            'print(jax.config.jax_compilation_cache_dir); '
            'from experiments.lib import compilation_cache; '
            "compilation_cache.enable(''); "
            'print(jax.config.jax_compilation_cache_dir); '
            "print(os.environ.get('JAX_COMPILATION_CACHE_DIR'))")
    with tempfile.TemporaryDirectory() as tmp:
      env = dict(os.environ, JAX_COMPILATION_CACHE_DIR=tmp)
      done = agent_testing.run_code(code, env=env, timeout=120)
    self.assertEqual(done.returncode, 0, done.stderr[-2000:])
    self.assertEqual(done.stdout.split(), [tmp, 'None', 'None'])


if __name__ == '__main__':
  absltest.main()
