"""The test process's own XLA settings (tests/conftest.py)."""
import os

from tests import conftest


def test_a_flag_this_xla_does_not_know_is_left_out(monkeypatch):
  # XLA aborts a process on an unknown flag: the probe must see that in its
  # child and give the flag up, not pass it on.
  monkeypatch.delenv('PE_JAX_TEST_LEGACY_FUSION', raising=False)
  monkeypatch.setattr(conftest, '_LEGACY_FUSION_FLAG',
                      '--xla_cpu_no_such_flag_for_pe_jax=true')
  assert conftest._legacy_fusion_flag() == ''
  assert os.environ['PE_JAX_TEST_LEGACY_FUSION'] == '0'


def test_a_known_flag_is_kept_and_the_answer_reused(monkeypatch):
  monkeypatch.delenv('PE_JAX_TEST_LEGACY_FUSION', raising=False)
  monkeypatch.setattr(conftest, '_LEGACY_FUSION_FLAG',
                      '--xla_cpu_multi_thread_eigen=true')
  assert conftest._legacy_fusion_flag() == '--xla_cpu_multi_thread_eigen=true'
  # The workers inherit the answer: no second probe, even for a flag that
  # would now fail.
  monkeypatch.setattr(conftest, '_LEGACY_FUSION_FLAG',
                      '--xla_cpu_no_such_flag_for_pe_jax=true')
  assert conftest._legacy_fusion_flag() == (
      '--xla_cpu_no_such_flag_for_pe_jax=true')


def test_each_slow_test_named_is_a_test():
  # A renamed test would silently lose its marker: each name must resolve
  # to a test function in its file.
  import ast  # pylint: disable=g-import-not-at-top
  here = os.path.dirname(os.path.abspath(__file__))
  for name in conftest.SLOW_TESTS:
    filename, *scope = name.split('::')
    with open(os.path.join(here, filename)) as f:
      tree = ast.parse(f.read())
    nodes = tree.body
    for part in scope:
      found = [n for n in nodes if getattr(n, 'name', None) == part]
      assert found, name
      nodes = getattr(found[0], 'body', [])
  assert conftest.slow_test_name(
      'tests/test_pixel_agents.py::test_pixel_agent_acts_stores_and_learns'
      '[pe_dqn]') == ('test_pixel_agents.py::'
                      'test_pixel_agent_acts_stores_and_learns')
  # absl's parameterized cases end in their index; a name that ends in
  # digits of its own keeps them.
  assert conftest.slow_test_name(
      'tests/test_q_ensemble.py::DeepSeaLearningTest::'
      'test_finds_deep_sea_12_where_a_random_policy_does_not2') == (
          'test_q_ensemble.py::DeepSeaLearningTest::'
          'test_finds_deep_sea_12_where_a_random_policy_does_not')
  assert conftest.slow_test_name(
      'tests/test_distributional.py::DeepSeaLearningTest::'
      'test_ids_c51_solves_deep_sea_10') == (
          'test_distributional.py::DeepSeaLearningTest::'
          'test_ids_c51_solves_deep_sea_10')


def test_a_script_forked_from_the_server_ends_as_in_a_new_interpreter():
  # `run_script` forks a script from a server holding the imports (no env
  # given) or starts a new interpreter (an env given): the same output and
  # status either way, whether it exits, exits with a message or raises.
  import sys  # pylint: disable=g-import-not-at-top
  from tests import agent_testing  # pylint: disable=g-import-not-at-top
  root = agent_testing.ROOT
  for args, status, stdout_end, stderr_end in (
      (['0'], 0, 'thread joined\nexit function ran\n', 'to stderr\n'),
      (['3'], 3, 'exit function ran\n', 'to stderr\n'),
      (['stopped'], 1, 'exit function ran\n', 'to stderr\nstopped\n'),
      (['0', 'raise'], 1, 'exit function ran\n',
       'ValueError: raised as asked\n')):
    forked = agent_testing.run_script('tests.script_probe', *args)
    fresh = agent_testing.run_script('tests.script_probe', *args,
                                     env=dict(os.environ))
    for done in (forked, fresh):
      assert done.returncode == status, (args, done)
      assert done.stdout.startswith(
          f"name __main__ argv {args} cwd {root}\n"), done.stdout
      assert done.stdout.endswith(stdout_end), (args, done.stdout)
      assert done.stderr.startswith('to stderr\n'), done.stderr
      assert done.stderr.endswith(stderr_end), (args, done.stderr)
    if args[1:] != ['raise']:  # (a traceback's frames differ)
      assert (forked.stdout, forked.stderr) == (fresh.stdout, fresh.stderr)
    assert forked.args == fresh.args == [sys.executable, '-m',
                                          'tests.script_probe', *args]
  # A real script refusing a flag, and a function run in a new process.
  forked, fresh = (agent_testing.run_script(
      'experiments.run_bsuite', '--agent=nope', env=env)
                   for env in (None, dict(os.environ)))
  assert forked.returncode == fresh.returncode == 1
  assert 'flag --agent=nope: value should be one of' in forked.stderr
  assert (forked.stdout, forked.stderr) == (fresh.stdout, fresh.stderr)
  code = 'import sys; print(__name__, sys.argv); sys.exit(4)'
  forked, fresh = (agent_testing.run_code(code, 'x', env=env)
                   for env in (None, dict(os.environ)))
  assert forked.returncode == fresh.returncode == 4
  assert forked.stdout == fresh.stdout == "__main__ ['-c', 'x']\n"
  assert agent_testing.in_fresh_process(
      'random_first_treasure', 4, 1, 40) == (
          agent_testing.random_first_treasure(4, 1, 40))


def test_the_script_server_imports_start_no_backend_and_no_thread():
  # Forking is safe while no XLA client or Python thread exists; the
  # preloaded modules must not make one at import.
  from tests import agent_testing  # pylint: disable=g-import-not-at-top
  code = ('import sys, threading\n'
          'for name in sys.argv[1:]: __import__(name)\n'
          'from jax._src import xla_bridge\n'
          'print(xla_bridge.backends_are_initialized(), '
          'threading.active_count())')
  preload = agent_testing._SCRIPT_PRELOAD  # pylint: disable=protected-access
  # (An environment given: a new interpreter, not a fork of the server.)
  done = agent_testing.run_code(code, *preload, env=dict(os.environ))
  assert done.returncode == 0, done.stderr[-2000:]
  assert done.stdout.split() == ['False', '1']
