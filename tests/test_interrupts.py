"""Tests for experiments/lib/interrupts.py: a stop request is never lost."""

import os
import signal

from absl.testing import absltest

from experiments.lib import interrupts


class InterruptsTest(absltest.TestCase):

  def setUp(self):
    super().setUp()
    handlers = {s: signal.getsignal(s) for s in (signal.SIGINT,
                                                 signal.SIGTERM)}
    self.addCleanup(lambda: [signal.signal(s, h)
                             for s, h in handlers.items()])
    self.addCleanup(interrupts.clear)
    interrupts.clear()

  def test_a_swallowed_interrupt_is_raised_again(self):
    interrupts.install()
    try:
      os.kill(os.getpid(), signal.SIGINT)
      for _ in range(1000):  # the handler runs between bytecodes
        pass
    except KeyboardInterrupt:
      pass  # what a library that catches everything would do
    self.assertTrue(interrupts.requested())
    with self.assertRaises(KeyboardInterrupt):
      interrupts.raise_if_requested()

  def test_sigterm_stops_as_ctrl_c_does(self):
    interrupts.install()
    with self.assertRaises(KeyboardInterrupt):
      os.kill(os.getpid(), signal.SIGTERM)
      for _ in range(1000):  # the handler runs between bytecodes
        pass
    self.assertTrue(interrupts.requested())

  def test_a_request_during_imports_is_raised_by_install(self):
    interrupts.record_during_imports()
    os.kill(os.getpid(), signal.SIGINT)  # recorded, nothing raised
    for _ in range(1000):
      pass
    self.assertTrue(interrupts.requested())
    with self.assertRaises(KeyboardInterrupt):
      interrupts.install()

  def test_nothing_requested_raises_nothing(self):
    interrupts.install()
    interrupts.raise_if_requested()
    self.assertFalse(interrupts.requested())


if __name__ == '__main__':
  absltest.main()
