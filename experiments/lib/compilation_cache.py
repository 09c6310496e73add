"""JAX's persistent compilation cache for the experiment scripts.

XLA compiles each training program in 2-10 s on a CPU (more for PE-DQN and
the pixel agents), and a script compiles the same programs again on every
run: a rerun with more seeds, a resume after a kill, the next grid point of
a sweep with the same shapes. `run(main)` replaces `absl.app.run(main)`:
it adds

  --compilation_cache_dir  (default ~/.cache/pe_jax/xla, or the environment
                            variable PE_JAX_COMPILATION_CACHE; '' turns it
                            off)

and stores every program that took at least a second to compile there, so
the next process with the same program, JAX version and flags loads it
instead of compiling (`deep_sea_scaling`, `dqn`, 8 seeds on deep sea 10:
the training program's 1.4 s of compilation became a 0.07 s load). The cache is bounded
(`--compilation_cache_max_mb`, least recently used entries go first).
Processes started by the script (Ray workers, subprocesses) inherit the
setting through JAX's own environment variables.
"""

import errno
import logging as std_logging
import os
import sys
from typing import Callable, Optional
import warnings

from absl import app
from absl import flags
from absl import logging

from experiments.lib import interrupts
from experiments.lib import parallel

FLAGS = flags.FLAGS
DEFAULT_DIR = os.environ.get(
    'PE_JAX_COMPILATION_CACHE',
    os.path.join(os.path.expanduser('~'), '.cache', 'pe_jax', 'xla'))
DEFAULT_MAX_MB = 2048


def define_flags() -> None:
  """Defines the cache flags once (several scripts may share a process)."""
  if 'compilation_cache_dir' in FLAGS:
    return
  flags.DEFINE_string(
      'compilation_cache_dir', DEFAULT_DIR,
      "Folder of JAX's persistent compilation cache; '' turns it off.")
  flags.DEFINE_integer(
      'compilation_cache_max_mb', DEFAULT_MAX_MB,
      'Size bound of the compilation cache in MB (least recently used '
      'entries are evicted).', lower_bound=1)


def enable(path: Optional[str], max_mb: int = DEFAULT_MAX_MB) -> None:
  """Turns the persistent cache on at `path`; None or '' turns it off, also
  where JAX's own environment variable (inherited from a parent script, say)
  would turn it on, in this process and in those it starts."""
  import jax  # pylint: disable=g-import-not-at-top
  if not path:
    jax.config.update('jax_compilation_cache_dir', None)
    os.environ.pop('JAX_COMPILATION_CACHE_DIR', None)
    os.environ.pop('JAX_COMPILATION_CACHE_MAX_SIZE', None)
    return
  path = os.path.abspath(os.path.expanduser(path))
  if not os.path.isdir(path):
    # Said once, when the folder is made: it outlives the run.
    print(f'Compiled programs are cached in {path} (at most {max_mb} MB; '
          "--compilation_cache_dir='' turns the cache off).", flush=True)
  os.makedirs(path, exist_ok=True)
  jax.config.update('jax_compilation_cache_dir', path)
  jax.config.update('jax_compilation_cache_max_size', max_mb * 2**20)
  # Child processes read these when they import JAX.
  os.environ['JAX_COMPILATION_CACHE_DIR'] = path
  os.environ['JAX_COMPILATION_CACHE_MAX_SIZE'] = str(max_mb * 2**20)


def quiet_libraries() -> None:
  """Libraries' INFO lines (orbax: several per checkpoint; absl's default
  for scripts is INFO) would bury progress and results: warnings only,
  unless the user asks with --verbosity."""
  if not FLAGS['verbosity'].present:
    logging.set_verbosity(logging.WARNING)
  # bsuite's plots ask for serif fonts a bare machine lacks: matplotlib
  # falls back to its own after one warning per text element (hundreds).
  std_logging.getLogger('matplotlib.font_manager').setLevel(std_logging.ERROR)
  # bsuite's plots map a discrete variable to alpha; plotnine warns per plot.
  warnings.filterwarnings('ignore', message='Using alpha for a discrete')


def run(main: Callable) -> None:
  """`absl.app.run(main)`, with the cache flags defined and applied first."""
  define_flags()

  def main_with_cache(argv):
    program = os.path.basename(argv[0]) if argv else 'experiment'
    try:
      interrupts.install()
      quiet_libraries()
      enable(FLAGS.compilation_cache_dir, FLAGS.compilation_cache_max_mb)
      return main(argv)
    except FloatingPointError as error:  # training diverged (check_finite)
      sys.exit(f'Error: {error}')  # one line, exit status 1
    except app.UsageError as error:
      # The one line, not absl's usage text (hundreds of flag lines).
      sys.exit(f'{program}: {error}\nSee --help for the flags.')
    except KeyboardInterrupt:
      print(f'\n{program}: stopped. Finished results are kept; the same '
            'command continues the rest (from the last checkpoint where '
            'the run keeps them).', file=sys.stderr)
      # Out at once, as a kill would (every runner keeps its results
      # through one): interpreter finalization after a Ctrl-C early in
      # start-up, with JAX's backend just up, could end in a segfault.
      sys.stdout.flush()
      sys.stderr.flush()
      os._exit(130)  # pylint: disable=protected-access
    except (parallel.MissingDependencyError, parallel.WorkerDiedError) as error:
      sys.exit(f'{program}: {error}')
    except OSError as error:
      if error.errno in _NO_ROOM:
        sys.exit(f'{program}: cannot write {error.filename or "results"}: '
                 f'{error.strerror}. Finished results are kept; free space '
                 'or choose another folder and run the same command again.')
      raise
    except ValueError as error:
      # orbax's writers report a full disk as a ValueError (tensorstore's
      # RESOURCE_EXHAUSTED); their threads would print more at exit.
      if 'RESOURCE_EXHAUSTED' not in str(error):
        raise
      print(f'{program}: cannot write a checkpoint: no space left on the '
            'device. Finished results are kept; free space or choose '
            'another folder and run the same command again.',
            file=sys.stderr, flush=True)
      sys.stdout.flush()
      os._exit(1)  # pylint: disable=protected-access

  try:
    app.run(main_with_cache)
  except SystemExit as stop:
    # absl prints the usage asked for by --help and exits 1; asking for
    # help is no failure.
    asked = {'--help', '-h', '-?', '--helpshort', '--helpfull', '--helpxml'}
    if stop.code == 1 and asked & set(sys.argv[1:]):
      sys.exit(0)
    raise


# Errors of a full disk or a folder that cannot be written.
_NO_ROOM = (errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EROFS)
