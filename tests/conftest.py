"""Shared test settings: float32 like the agents, CPU, quiet JAX."""
import os
import shutil
import tempfile

import pytest

os.environ.setdefault('JAX_PLATFORMS', 'cpu')
_LEGACY_FUSION_FLAG = '--xla_cpu_use_fusion_emitters=false'


def _legacy_fusion_flag() -> str:
  """The flag if this jaxlib knows it, else ''.

  XLA aborts the process on a flag it does not know (older jaxlibs lack
  this one), so a child process tries it once; the pytest controller
  asks and its xdist workers inherit the answer.
  """
  known = os.environ.get('PE_JAX_TEST_LEGACY_FUSION')
  if known is None:
    import subprocess  # pylint: disable=g-import-not-at-top
    import sys  # pylint: disable=g-import-not-at-top
    probe = subprocess.run(
        [sys.executable, '-c', 'import jax; jax.devices()'],
        env=dict(os.environ, XLA_FLAGS=_LEGACY_FUSION_FLAG),
        capture_output=True, check=False)
    known = '1' if probe.returncode == 0 else '0'
    os.environ['PE_JAX_TEST_LEGACY_FUSION'] = known
  return _LEGACY_FUSION_FLAG if known == '1' else ''


# The suite is dominated by compiling small programs, not running them: LLVM
# optimisation level 0 compiles them about 1.6x faster (measured on the agent
# seed tests, 80 s -> 49 s on 2 cores) and even a 1600-step learning test ran
# faster overall. Experiments and benchmarks keep XLA's defaults.
# XLA's newer fusion emitters (MLIR) take about twice as long to compile
# these small programs as the legacy LLVM IR emitters: a sample of the
# agent matrix ran in 80 s against 167 s, four of the jitted-training
# tests in 18 s against 34 s. The legacy emitters may round differently
# (a script's CSV under the flag differs from one without it), so only the
# test process takes the flag, never the scripts it starts.
_SCRIPTS_XLA_FLAGS = os.environ.get('XLA_FLAGS')
os.environ['XLA_FLAGS'] = ' '.join(filter(None, (
    _SCRIPTS_XLA_FLAGS, '--xla_cpu_multi_thread_eigen=true',
    '--xla_backend_optimization_level=0', _legacy_fusion_flag())))
# XLA reads the flags once, when the backend starts: start it here, then
# give the scripts that tests run (experiments, fresh processes) the
# caller's flags back. They compile few programs and run them for long,
# where XLA's defaults are faster (a 120-episode deep_sea_scaling run,
# boot_dqn: 46 s -> 36 s of CPU).
import jax  # pylint: disable=g-import-not-at-top

jax.devices()
if _SCRIPTS_XLA_FLAGS is None:
  del os.environ['XLA_FLAGS']
else:
  os.environ['XLA_FLAGS'] = _SCRIPTS_XLA_FLAGS

# The experiment scripts that tests start compile the same programs again
# and again (a kill-and-resume test runs its script three times): they
# share one persistent compilation cache (experiments.lib.compilation_cache
# reads PE_JAX_COMPILATION_CACHE) for the whole run, in a fresh temporary
# folder (never the user's ~/.cache/pe_jax/xla) made by the first process
# that reads this (the xdist controller; workers inherit its environment).
# The test processes (pytest and its workers) share a second folder: a
# test that builds the same program twice (a run, then its resume) or a
# program another worker already built loads it. Their own, because JAX's
# cache key reads XLA_FLAGS when it is computed and the optimisation level
# above is gone from it by then: a shared folder would mix levels. Only
# programs that took a second to compile are stored: a bounded cache scans
# every entry on each write, and at 0 s the suite made thousands of entries
# (61% of the suite in 27 minutes, where the whole suite had taken 28); at
# 1 s a few hundred. Bounded all the same: the bound turns on JAX's file
# lock, without which one worker could read an entry the other is still
# writing.
# PE_JAX_TEST_CACHE=0 turns both off.
_OWN_CACHE = None
if os.environ.get('PE_JAX_TEST_CACHE', '1') == '0':
  os.environ['PE_JAX_COMPILATION_CACHE'] = ''
else:
  if not os.environ.get('PE_JAX_TEST_CACHE_DIR'):
    _OWN_CACHE = tempfile.mkdtemp(prefix='pe_jax_test_xla_')
    os.environ['PE_JAX_TEST_CACHE_DIR'] = _OWN_CACHE
  os.environ['PE_JAX_COMPILATION_CACHE'] = os.path.join(
      os.environ['PE_JAX_TEST_CACHE_DIR'], 'scripts')
  # Made here, so no script's output depends on being the first to run
  # (a script says so when it makes the cache folder).
  os.makedirs(os.environ['PE_JAX_COMPILATION_CACHE'], exist_ok=True)
  jax.config.update('jax_compilation_cache_dir', os.path.join(
      os.environ['PE_JAX_TEST_CACHE_DIR'], 'test_processes'))
  jax.config.update('jax_compilation_cache_max_size', 2048 * 2**20)
  jax.config.update('jax_persistent_cache_min_compile_time_secs', 1.0)


def pytest_unconfigure(config):
  # The process that made the folder removes it (the controller under xdist).
  del config
  if _OWN_CACHE is not None:
    shutil.rmtree(_OWN_CACHE, ignore_errors=True)
  # No garbage collection once the tests are done: xdist ends a worker with
  # a KeyboardInterrupt, and one that lands in a gc callback (JAX's, or a
  # timing one) prints an "Exception ignored ... KeyboardInterrupt"
  # traceback at the end of a passing run.
  import gc  # pylint: disable=g-import-not-at-top
  gc.disable()
  gc.callbacks.clear()



from hypothesis import settings  # pylint: disable=g-import-not-at-top

settings.register_profile('ci', max_examples=40, deadline=None)
settings.load_profile('ci')


# Our dependencies' deprecation notices (bsuite's pandas-1 analysis code,
# tfp's use of jax internals, plotnine's styling) are not our test results:
# kept out of the test output. Our own code's warnings still show.
_THIRD_PARTY_WARNINGS = (
    'ignore::DeprecationWarning:tensorflow_probability.*',
    'ignore::DeprecationWarning:bsuite.*',
    'ignore::FutureWarning:bsuite.*',
    'ignore:The inplace keyword:Warning:bsuite.*',
    'ignore:Using alpha for a discrete variable:Warning:plotnine.*',
    # agent_testing forks script runs from a test process where JAX has
    # threads; the child imports nothing that uses them before it runs the
    # script as a fresh interpreter would (agent_testing's note).
    'ignore:os.fork\\(\\) was called:RuntimeWarning',
)


# The tests that took about 30 s or more each on 2 cores (pytest
# --durations), longest first: whole training runs, kill-and-resume of
# scripts, Ray clusters. Marked `slow` here, in one list
# (`tests/test_test_settings.py` checks that each still names a test);
# `-m "not slow"` leaves them out.
SLOW_TESTS = (
    'test_readme.py::ReadmeCodeTest::test_the_jax_native_snippets_train_and_print',
    'test_distributional.py::DeepSeaLearningTest::test_ids_c51_solves_deep_sea_10',
    'test_suite_runner.py::SameLogsTest::test_every_other_experiment_logs_as_the_bsuite_loop',
    'test_suite_runner.py::SameLogsTest::test_units_of_one_shape_share_a_program_and_log_as_alone',
    'test_pe_dqn.py::LearningTest::test_finds_deep_sea_12_where_a_random_policy_does_not',
    'test_parallel_ray.py::test_dying_worker_is_retried_and_scaling_and_tune_match_local',
    'test_run_vizdoom.py::test_resumed_run_equals_the_uninterrupted_one',
    'test_bsuite_jax.py::RunIdTest::test_short_run_stops_where_bsuite_says_solved',
    'test_pixel_agents.py::test_pixel_agent_acts_stores_and_learns',
    'test_benchmark_throughput.py::BenchmarkThroughputTest::test_reports_steps_per_second_and_sgd_gflops',
    'test_deep_sea_scaling.py::CheckpointTest::test_killed_run_resumes_with_the_uninterrupted_results',
    'test_parallel_ray.py::test_ray_sweep_writes_the_local_backend_logs',
    'test_benchmark_throughput.py::BenchmarkJaxTrainingTest::test_cold_and_warm_ratios_from_whole_processes',
    'test_deep_sea_sweep.py::SweepTest::test_killed_sweep_resumes_with_the_uninterrupted_results',
    'test_run_bsuite.py::CommandLineTest::test_checkpointed_run_killed_resumes_to_the_uninterrupted_log',
    'test_q_ensemble.py::DeepSeaLearningTest::test_finds_deep_sea_12_where_a_random_policy_does_not',
    'test_pe_dqn.py::LearningTest::test_w_avg_tracks_visits',
    'test_bsuite_jax.py::RunIdTest::test_killed_run_resumes_to_the_same_log',
    'test_flags.py::OutputFolderTest::test_an_output_path_under_a_file_is_refused_by_name',
    'test_run_vizdoom.py::test_command_line_smoke_run',
    'test_deep_sea_scaling.py::JaxBackendTest::test_stopping_once_every_seed_found_keeps_the_first_finds',
    'test_deep_sea_scaling.py::JaxBackendTest::test_groups_in_worker_processes_give_the_same_rows',
    'test_pe_dqn.py::PixelPEDQNTest::test_gradient_clipping_bounds_the_first_adam_step',
)


def slow_test_name(nodeid: str) -> str:
  """A test's id as `SLOW_TESTS` names it: file within tests/, class and
  function, parameters left out (pytest's `[...]`; absl's parameterized
  tests end in their case's index instead)."""
  name = nodeid.split('/')[-1].split('[')[0]
  if name not in SLOW_TESTS and name.rstrip('0123456789') in SLOW_TESTS:
    return name.rstrip('0123456789')
  return name


def pytest_collection_modifyitems(config, items):
  """Marks the slow tests. (Measured on 2 cores with `-n 2`: starting them
  first, 22.5 min against 20, and keeping a class with a shared setUpClass
  on one worker, xdist's loadgroup, 21.8 against 20.6: their scripts and
  Ray clusters then contend. xdist's default order stays.)"""
  del config
  for item in items:
    if slow_test_name(item.nodeid) in SLOW_TESTS:
      item.add_marker(pytest.mark.slow)


def pytest_configure(config):
  # Speed is measured by experiments/benchmarks, never by a test: where the
  # pytest-benchmark plugin is installed, its fixtures stay off, so it has
  # no 'disabled because xdist is active' warning to print.
  if hasattr(config.option, 'benchmark_disable'):
    config.option.benchmark_disable = True
  for line in _THIRD_PARTY_WARNINGS:
    config.addinivalue_line('filterwarnings', line)
  config.addinivalue_line(
      'markers', 'slow: trains agents or runs scripts for about 30 s or more '
      'on 2 cores; `-m "not slow"` leaves these out')
