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
