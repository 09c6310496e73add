"""experiments/lib/checkpoints.py: a damaged checkpoint is one line."""

import asyncio
import glob
import io
import os
import sys
import tempfile
import time
import types

from absl.testing import absltest
import numpy as np

from experiments.lib import checkpoints

# Forty arrays, as an agent's carry has: a restore reads them concurrently.
TREE = {f'layer_{k}': np.arange(50 * k + 1, dtype=np.float32)
        for k in range(40)}


def _closed_loop_error():
  """(error, traceback, traceback): a callback into a closed event loop,
  with its traceback as from native code (a tensorstore read's completion)
  and as from Python code."""
  loop = asyncio.new_event_loop()
  loop.close()
  try:
    loop.call_soon_threadsafe(lambda: None)
  except RuntimeError as error:
    return error, error.__traceback__.tb_next, error.__traceback__
  raise AssertionError('a closed loop took a callback')


class DamagedDataTest(absltest.TestCase):

  def setUp(self):
    super().setUp()
    self.seen = []
    previous = sys.unraisablehook
    self.addCleanup(setattr, sys, 'unraisablehook', previous)
    sys.unraisablehook = self.seen.append

  def test_a_damaged_array_file_falls_back_in_one_line(self):
    # The first read to fail closes orbax's event loop and every read still
    # in flight then raised "Event loop is closed" (tens of tracebacks; in
    # about two restores of three here). Four restores, so that one
    # without the fix all but surely shows it.
    for _ in range(4):
      with tempfile.TemporaryDirectory() as tmp:
        saver = checkpoints.ChunkCheckpoints(tmp, {'run': 1})
        saver.save(1, TREE)
        saver.save(2, TREE)
        for path in glob.glob(os.path.join(tmp, '2', '*', 'd', '*')):
          with open(path, 'r+b') as f:
            first = f.read(1)
            f.seek(0)
            f.write(bytes([first[0] ^ 0xFF]))
        printed = io.StringIO()
        step, restored = saver.restore_latest(lambda _: TREE,
                                              report=printed.write)
        self.assertEqual(step, 1)
        np.testing.assert_array_equal(restored['layer_39'], TREE['layer_39'])
        self.assertEqual(printed.getvalue().count('unreadable'), 1)
        time.sleep(0.5)  # the abandoned reads complete meanwhile
    self.assertEqual([repr(u.exc_value) for u in self.seen], [])

  def test_only_a_closed_loop_s_callbacks_are_dropped(self):
    checkpoints._quiet_abandoned_reads()  # pylint: disable=protected-access
    checkpoints._quiet_abandoned_reads()  # pylint: disable=protected-access
    closed, native, from_python = _closed_loop_error()
    other = RuntimeError('Event loop is closed')  # raised elsewhere
    cases = ((closed, native, None, 'dropped'),
             (closed, from_python, None, 'from Python'),
             (other, None, None, 'no traceback'),
             (ValueError('x'), None, None, 'another error'),
             (closed, native, 'an object', 'an object'))
    for error, trace, object_, label in cases:
      sys.unraisablehook(types.SimpleNamespace(
          exc_type=type(error), exc_value=error, exc_traceback=trace,
          err_msg=label, object=object_))
    self.assertEqual([u.err_msg for u in self.seen],
                     ['from Python', 'no traceback', 'another error',
                      'an object'])


if __name__ == '__main__':
  absltest.main()
