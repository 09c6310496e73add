"""A program for the tests of `agent_testing.run_script`: it reports what a
program sees of its start and ends as its arguments ask.

  python -m tests.script_probe STATUS [raise]

prints its name, arguments and folder, a non-daemon thread's line and an
exit function's line, then exits with STATUS (an int, or a message: status
1), or raises ValueError with `raise`.
"""

import atexit
import os
import sys
import threading
import time


def main(argv):
  print(f'name {__name__} argv {argv[1:]} cwd {os.getcwd()}')
  print('to stderr', file=sys.stderr)
  atexit.register(lambda: print('exit function ran'))
  # Joined at exit, before the exit functions: its line comes first.
  threading.Thread(target=lambda: (time.sleep(0.2),
                                   print('thread joined'))).start()
  if argv[2:] == ['raise']:
    raise ValueError('raised as asked')
  status = argv[1]
  sys.exit(int(status) if status.lstrip('-').isdigit() else status)


if __name__ == '__main__':
  main(sys.argv)
