"""Tests for experiments/lib/interrupts.py: a stop request is never lost."""

import contextlib
import gc
import importlib.util
import io
import signal
import sys

from absl.testing import absltest
from absl.testing import parameterized

from experiments.lib import interrupts


class InterruptsTest(absltest.TestCase):

  def setUp(self):
    super().setUp()
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT,
                                                 signal.SIGTERM)}
    self.addCleanup(lambda: [signal.signal(s, h)
                             for s, h in handlers.items()])
    self.addCleanup(interrupts.clear)
    unraisablehook = sys.unraisablehook
    self.addCleanup(setattr, sys, 'unraisablehook', unraisablehook)
    interrupts.clear()

  def test_a_swallowed_interrupt_is_raised_again(self):
    interrupts.install()
    swallowed = False
    try:
      signal.raise_signal(signal.SIGINT)  # the handler runs before it returns
    except KeyboardInterrupt:
      swallowed = True  # what a library that catches everything does
    self.assertTrue(swallowed)
    self.assertTrue(interrupts.requested())
    with self.assertRaises(KeyboardInterrupt):
      interrupts.raise_if_requested()

  def test_sigterm_stops_as_ctrl_c_does(self):
    interrupts.install()
    with self.assertRaises(KeyboardInterrupt):
      signal.raise_signal(signal.SIGTERM)
    self.assertTrue(interrupts.requested())

  def test_a_request_during_imports_is_raised_by_install(self):
    interrupts.record_during_imports()
    signal.raise_signal(signal.SIGINT)  # recorded, nothing raised
    self.assertTrue(interrupts.requested())
    with self.assertRaises(KeyboardInterrupt):
      interrupts.install()

  def test_nothing_requested_raises_nothing(self):
    interrupts.install()
    interrupts.raise_if_requested()
    self.assertFalse(interrupts.requested())

  def test_a_stop_inside_a_deferred_section_is_raised_as_it_ends(self):
    interrupts.install()
    finished = []
    with self.assertRaises(KeyboardInterrupt):
      with interrupts.deferred():
        with interrupts.deferred():  # nested: raised by the outer one
          signal.raise_signal(signal.SIGTERM)
        finished.append('inner')
        signal.raise_signal(signal.SIGINT)
        finished.append('outer')
    self.assertEqual(finished, ['inner', 'outer'])
    interrupts.clear()
    with interrupts.deferred():  # nothing asked: nothing raised
      finished.append('quiet')
    self.assertEqual(finished, ['inner', 'outer', 'quiet'])
    with self.assertRaises(KeyboardInterrupt):  # and outside, at once
      signal.raise_signal(signal.SIGINT)

  def test_a_stop_while_a_checkpoint_is_written_lands_after_it(self):
    # A stop in orbax's wait for its writer threads used to raise there:
    # orbax logged "Save Finalize thread failed" with a traceback, and the
    # step was left unfinished.
    import logging  # pylint: disable=g-import-not-at-top
    import tempfile  # pylint: disable=g-import-not-at-top
    from unittest import mock  # pylint: disable=g-import-not-at-top
    import numpy as np  # pylint: disable=g-import-not-at-top
    from experiments.lib import checkpoints  # pylint: disable=g-import-not-at-top
    interrupts.install()
    tree = {'w': np.arange(6, dtype=np.float32),
            'steps': np.array([7], np.int32)}
    with tempfile.TemporaryDirectory() as tmp:
      saver = checkpoints.ChunkCheckpoints(tmp, {'run': 1})
      manager = saver._manager  # pylint: disable=protected-access
      wait = manager.wait_until_finished

      def stopped_while_waiting():
        signal.raise_signal(signal.SIGTERM)
        wait()
      with mock.patch.object(manager, 'wait_until_finished',
                             stopped_while_waiting), \
          self.assertLogs(level='ERROR') as logged, \
          self.assertRaises(KeyboardInterrupt):
        # assertLogs needs a line: the test's own, the only one expected.
        logging.getLogger().error("the test's own line")
        saver.save(3, tree)
      self.assertEqual([r.getMessage() for r in logged.records],
                       ["the test's own line"])
      interrupts.clear()
      again = checkpoints.ChunkCheckpoints(tmp, {'run': 1})
      self.assertEqual(again.steps(), [3])
      step, restored = again.restore_latest(lambda _: tree)
      self.assertEqual(step, 3)
      np.testing.assert_array_equal(restored['w'], tree['w'])

  def test_a_stop_python_drops_is_silent_and_raised_at_the_next_point(self):
    # A stop that lands in a garbage-collector callback (jax has one) used
    # to print "Exception ignored in ... Traceback ... KeyboardInterrupt".
    reported = []  # the hook before ours (pytest's prints nothing itself)
    sys.unraisablehook = lambda unraisable: reported.append(
        unraisable.exc_type)
    interrupts.install()
    fired = []

    def callback(phase, info):
      del info
      if phase == 'start' and not fired:
        fired.append(phase)
        signal.raise_signal(signal.SIGINT)
    gc.callbacks.append(callback)
    self.addCleanup(gc.callbacks.remove, callback)
    stderr = io.StringIO()
    with contextlib.redirect_stderr(stderr):
      gc.collect()  # Python drops the KeyboardInterrupt here
    self.assertEqual(fired, ['start'])
    self.assertEqual(reported, [])
    self.assertEqual(stderr.getvalue(), '')
    self.assertTrue(interrupts.requested())
    with self.assertRaises(KeyboardInterrupt):
      interrupts.raise_if_requested()

  def test_other_dropped_errors_are_still_reported(self):
    reported = []
    recorder = lambda unraisable: reported.append(unraisable.exc_type)
    sys.unraisablehook = recorder
    interrupts.install()
    ours = sys.unraisablehook
    self.assertIsNot(ours, recorder)
    interrupts.install()  # twice: one hook over the previous, not two
    self.assertIs(sys.unraisablehook, ours)

    class Broken:
      def __del__(self):
        raise ValueError('in __del__')
    Broken()
    self.assertEqual(reported, [ValueError])

    class Interrupting:  # nothing asked: the program's own is reported
      def __del__(self):
        raise KeyboardInterrupt
    Interrupting()
    self.assertEqual(reported, [ValueError, KeyboardInterrupt])
    interrupts._record(signal.SIGINT, None)  # pylint: disable=protected-access
    Interrupting()  # asked: silent, raised at the next safe point
    self.assertEqual(reported, [ValueError, KeyboardInterrupt])

  def test_a_call_after_a_dropped_stop_raises_at_once(self):
    import threading  # pylint: disable=g-import-not-at-top
    import time  # pylint: disable=g-import-not-at-top
    interrupts.install()
    release = threading.Event()
    self.addCleanup(release.set)
    interrupts._record(signal.SIGINT, None)  # pylint: disable=protected-access
    start = time.time()
    with self.assertRaises(KeyboardInterrupt):
      interrupts.call_until_ready(release.wait, 60)  # a call of a minute
    self.assertLess(time.time() - start, 5.0)

  def test_a_call_gives_its_outputs_or_raises_its_error(self):
    import jax.numpy as jnp  # pylint: disable=g-import-not-at-top
    out = interrupts.call_until_ready(lambda x: (x + 1, x * 2),
                                      jnp.arange(3))
    self.assertEqual([list(map(int, o)) for o in out], [[1, 2, 3], [0, 2, 4]])

    def fails():
      raise FloatingPointError('diverged')
    with self.assertRaisesRegex(FloatingPointError, 'diverged'):
      interrupts.call_until_ready(fails)

  def test_a_stop_during_a_long_call_raises_at_once(self):
    import os  # pylint: disable=g-import-not-at-top
    import threading  # pylint: disable=g-import-not-at-top
    import time  # pylint: disable=g-import-not-at-top
    interrupts.install()
    release = threading.Event()
    self.addCleanup(release.set)
    threading.Timer(0.3, os.kill, (os.getpid(), signal.SIGTERM)).start()
    start = time.time()
    with self.assertRaises(KeyboardInterrupt):
      interrupts.call_until_ready(release.wait, 60)  # a call of a minute
    self.assertLess(time.time() - start, 5.0)
    self.assertTrue(interrupts.requested())


class JittedRunStopTest(absltest.TestCase):

  def test_sigterm_stops_a_jitted_run_in_its_chunk(self):
    # One chunk of 1,000 episodes of deep sea 20 with a wide network: minutes
    # on 2 cores (172 s measured) in one compiled call. The stop comes a
    # second after JAX logs the chunk's compilation, while it runs: the
    # command exits at once, saying how to resume.
    import os  # pylint: disable=g-import-not-at-top
    import subprocess  # pylint: disable=g-import-not-at-top
    import sys  # pylint: disable=g-import-not-at-top
    import tempfile  # pylint: disable=g-import-not-at-top
    import time  # pylint: disable=g-import-not-at-top
    from tests import agent_testing  # pylint: disable=g-import-not-at-top
    with tempfile.TemporaryDirectory() as tmp:
      log = os.path.join(tmp, 'out')
      with open(log, 'w') as out:
        process = subprocess.Popen(
            [sys.executable, '-m', 'experiments.run_bsuite', '--runner=jax',
             '--agent=dqn', '--bsuite_id=deep_sea/20', '--seeds=0',
             '--episodes_per_call=1000', '--num_episodes=1000',
             '--stop_when_solved=false', '--hidden_sizes=512,512',
             f'--save_path={tmp}/r'], stdout=out, stderr=subprocess.STDOUT,
            cwd=agent_testing.ROOT, env=dict(os.environ, JAX_LOG_COMPILES='1'))
        deadline = time.time() + 180
        while (time.time() < deadline and process.poll() is None and
               'compilation of jit(run)' not in open(log).read()):
          time.sleep(0.1)
        self.assertIn('compilation of jit(run)', open(log).read())
        time.sleep(1.0)
        sent = time.time()
        process.send_signal(signal.SIGTERM)
        try:
          status = process.wait(60)
        finally:
          process.kill()
        took = time.time() - sent
      text = open(log).read()
    self.assertEqual(status, 130, text[-2000:])
    self.assertLess(took, 10.0, text[-2000:])
    self.assertIn('stopped. Finished results are kept', text)
    self.assertNotIn('Traceback', text)


if __name__ == '__main__':
  absltest.main()


class WorkersStopTest(parameterized.TestCase):

  @parameterized.parameters('local', 'ray')
  def test_sigterm_stops_a_two_worker_run_within_seconds(self, backend):
    # The stop reaches the workers (local processes or Ray tasks): the
    # driver does not wait for their ids to finish (3,000 episodes each,
    # minutes here), and says how to resume.
    if backend == 'ray' and importlib.util.find_spec('ray') is None:
      self.skipTest('ray not installed: pip install -e ".[ray]"')
    import glob  # pylint: disable=g-import-not-at-top
    import os  # pylint: disable=g-import-not-at-top
    import subprocess  # pylint: disable=g-import-not-at-top
    import sys  # pylint: disable=g-import-not-at-top
    import tempfile  # pylint: disable=g-import-not-at-top
    import time  # pylint: disable=g-import-not-at-top
    from tests import agent_testing  # pylint: disable=g-import-not-at-top
    with tempfile.TemporaryDirectory() as tmp:
      log = os.path.join(tmp, 'out')
      with open(log, 'w') as out:
        process = subprocess.Popen(
            [sys.executable, '-m', 'experiments.run_bsuite', '--agent=dqn',
             '--bsuite_id=deep_sea/0,deep_sea/1', '--num_episodes=3000',
             '--num_workers=2', '--progress_every=1', f'--backend={backend}',
             f'--save_path={tmp}/r'], stdout=out, stderr=subprocess.STDOUT,
            cwd=agent_testing.ROOT,
            # Each progress line shown (Ray folds repeated ones).
            env=dict(os.environ, RAY_DEDUP_LOGS='0'))
        deadline = time.time() + 240
        while (time.time() < deadline and process.poll() is None and
               open(log).read().count(' episode ') < 4):
          time.sleep(0.2)
        sent = time.time()
        process.send_signal(signal.SIGTERM)
        status = process.wait(60)
        took = time.time() - sent
      text = open(log).read()
      self.assertEqual(status, 130, text[-2000:])
      self.assertLess(took, 10.0, text[-2000:])
      self.assertIn('stopped. Finished results are kept; the same command '
                    'continues the rest', text)
      self.assertNotIn('Traceback', text)
      self.assertNotIn('3000/3000', text)
      self.assertEmpty(glob.glob(os.path.join(tmp, 'r', 'dqn', 'seed_0',
                                              '*.json')))
