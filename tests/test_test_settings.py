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
