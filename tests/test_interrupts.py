"""Tests for experiments/lib/interrupts.py: a stop request is never lost."""

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


if __name__ == '__main__':
  absltest.main()
