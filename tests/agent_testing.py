"""Helpers shared by the agent tests."""

import os
from typing import Optional

from bsuite.environments import catch
from bsuite.environments import deep_sea

import agents
from agents import common

# The repository root: scripts run from there as `python -m ...`.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Replay settings under which every agent learns within a few episodes.
SMALL_REPLAY = dict(batch_size=16, min_replay_size=16, replay_capacity=1000)


def small_networks(name: str) -> dict:
  """Network and ensemble sizes of agent `name` for tests: small enough that
  all 14 agents compile quickly; the algorithms are unchanged."""
  if name.startswith('pe_dqn') or name in ('c51', 'qr_dqn', 'dltv_qr'):
    return dict(hidden_sizes=(16,), num_atoms=11)
  if name == 'ids_c51':
    return dict(c51_hidden_sizes=(16,), num_atoms=11, num_ensemble=3,
                hidden_sizes=(8,))
  overrides = dict(hidden_sizes=(8,))
  if name != 'dqn':
    overrides['num_ensemble'] = min(4, agents.config_class(name).num_ensemble)
  if name == 'tdu':
    overrides['num_exploiters'] = 2
  return overrides


def small(name: str, **replay) -> dict:
  """Test overrides of agent `name`: small networks, `replay` settings
  (default `SMALL_REPLAY`)."""
  return {**(replay or SMALL_REPLAY), **small_networks(name)}


def actions_of(name: str, seed: int, episodes: int = 4, env_seed: int = 3,
               make_env=None, **overrides):
  """Every action agent `name` takes in `episodes` on a seeded environment."""
  env = make_env() if make_env else catch.Catch(seed=env_seed)
  agent = agents.make(name, env.observation_spec(), env.action_spec(),
                      seed=seed, **overrides)
  actions = []
  step = env.step
  # bsuite's own loop (`common.run_episode`), recording each action taken.
  env.step = lambda action: (actions.append(action), step(action))[1]
  for _ in range(episodes):
    common.run_episode(agent, env)
  return actions


def first_treasure(name: str, size: int, seed: int, budget: int, **overrides):
  """First episode (0-based) in which agent `name` reaches deep sea's treasure.

  Deterministic deep sea of `size`, action mapping and agent both seeded by
  `seed`; None if the treasure is not reached within `budget` episodes.
  Runs in a fresh process at XLA's default optimisation level: the tests
  compile at level 0 (conftest.py), which makes thousands of learning steps
  about 3x slower (measured: PE-DQN at deep sea 12, 58 s -> 150 s a seed).
  """
  return in_fresh_process('first_treasure_here', name, size, seed, budget,
                          **overrides)


def jax_first_treasures(name: str, size: int, seeds, budget: int,
                        **overrides):
  """First treasure episode (None: not found) of each seed of `name`, all
  seeds trained in one program on the jitted runner
  (`deep_sea_groups.run_seeds_jax`), in a fresh process like
  `first_treasure`."""
  return in_fresh_process('jax_first_treasures_here', name, size,
                          list(seeds), budget, **overrides)


def jax_first_treasures_here(name: str, size: int, seeds, budget: int,
                             **overrides):
  from experiments.lib import deep_sea_groups  # pylint: disable=g-import-not-at-top
  # Chunks of 25 episodes, ending once every seed has found the treasure.
  rows = deep_sea_groups.run_seeds_jax(name, size, seeds, budget,
                                        min(25, budget), progress=False,
                                        overrides=overrides or None,
                                        stop_when_all_found=True)
  return [None if r['first_treasure_episode'] == '' else
          int(r['first_treasure_episode']) for r in rows]


def run_id_printed(*args, **kwargs):
  """(`bsuite_jax.run_id(*args, **kwargs)`'s records, what it printed)."""
  import contextlib  # pylint: disable=g-import-not-at-top
  import io  # pylint: disable=g-import-not-at-top
  from experiments.lib import bsuite_jax  # pylint: disable=g-import-not-at-top
  printed = io.StringIO()
  with contextlib.redirect_stdout(printed):
    records = bsuite_jax.run_id(*args, **kwargs)
  return records, printed.getvalue()


def in_fresh_process(function: str, *args, **kwargs):
  """`agent_testing.<function>(*args, **kwargs)` (literals in and out) in a
  new process at XLA's default optimisation level (`run_code`'s)."""
  import ast  # pylint: disable=g-import-not-at-top
  # (conftest keeps level 0 to the test process: children get the defaults.)
  code = ('import ast, sys; from tests import agent_testing; '
          'function, args, kwargs = ast.literal_eval(sys.argv[1]); '
          'print(repr(getattr(agent_testing, function)(*args, **kwargs)))')
  done = run_code(code, repr((function, args, kwargs)), timeout=None)
  if done.returncode:
    raise RuntimeError(f'{function}{args} failed:\n{done.stderr[-3000:]}')
  return ast.literal_eval(done.stdout.strip().splitlines()[-1])


def first_treasure_here(name: str, size: int, seed: int, budget: int,
                        **overrides):
  """`first_treasure` in this process."""
  env = deep_sea.DeepSea(size=size, seed=seed, mapping_seed=seed)
  agent = agents.make(name, env.observation_spec(), env.action_spec(),
                      seed=seed, **overrides)
  for episode in range(budget):
    _, _, last = common.run_episode(agent, env)
    if last.reward > 0.5:
      return episode
  return None


def jax_solved_episode(name: str, bsuite_id: str, seed: int,
                       budget: int) -> Optional[int]:
  """The episode at which bsuite's deep sea analysis calls `bsuite_id`
  solved for agent `name`, seed `seed`, on the jitted runner within `budget`
  episodes (None: not solved), in a fresh process. A uniformly random
  policy never solves a deep sea (its episodes stay bad)."""
  return in_fresh_process('jax_solved_episode_here', name, bsuite_id, seed,
                          budget)


def jax_solved_episode_here(name: str, bsuite_id: str, seed: int,
                            budget: int) -> Optional[int]:
  """`jax_solved_episode` in this process."""
  import tempfile  # pylint: disable=g-import-not-at-top
  from experiments.lib import bsuite_jax  # pylint: disable=g-import-not-at-top
  with tempfile.TemporaryDirectory() as tmp:
    [record] = bsuite_jax.run_id(name, bsuite_id, [seed], tmp,
                                 max_episodes=budget, progress_every=0)
  return record['solved_episode']


def random_first_treasure(size: int, seed: int, budget: int):
  """`first_treasure` of a uniformly random policy (NumPy, seeded by `seed`):
  the control a learning test's agent must beat. Its chance of a find within
  `budget` episodes is 1 - (1 - 2**-size)**budget (0.07 at size 12 in 300)."""
  import numpy as np  # pylint: disable=g-import-not-at-top
  env = deep_sea.DeepSea(size=size, seed=seed, mapping_seed=seed)
  rng = np.random.RandomState(seed)
  for episode in range(budget):
    timestep = env.reset()
    while not timestep.last():
      timestep = env.step(int(rng.randint(2)))
    if timestep.reward > 0.5:
      return episode
  return None


# What the experiment scripts import before their own code: a server
# process imports these once (about 2 s of a script's start on 2 cores) and
# forks each script run from there. None of these starts JAX's backend or a
# Python thread at import (a test checks), so a fork starts as a fresh
# interpreter would after these imports.
_SCRIPT_PRELOAD = (
    'jax', 'jax.numpy', 'numpy', 'pandas', 'flax', 'optax', 'chex', 'bsuite',
    'bsuite.sweep', 'bsuite.logging.csv_logging', 'absl.app', 'absl.flags',
    'matplotlib', 'agents', 'agents.training', 'agents.pure',
    'agents.paper_presets', 'agents.return_ranges', 'agents.bsuite_settings',
    'experiments.lib.results', 'experiments.lib.unit_files',
    'experiments.lib.run_tables', 'experiments.lib.seed_statistics',
    'experiments.lib.doc_blocks',
    'experiments.lib.compilation_cache', 'experiments.lib.interrupts',
    'experiments.lib.parallel', 'experiments.lib.hyperparameter_flags',
    'experiments.lib.bsuite_jax', 'experiments.lib.checkpoints',
    'experiments.lib.deep_sea_groups', 'experiments.lib.vizdoom_runs')
_script_server = None  # (multiprocessing context, its environment)


def run_script(module: str, *flags: str, timeout: int = 600, env=None,
               prefix=()):
  """Runs `python -m module flags...` from the repository root, its
  output captured as text (`env`: the process's environment, None for this
  one's; `prefix`: a command it runs under, e.g. taskset)."""
  import sys  # pylint: disable=g-import-not-at-top
  return _run([*prefix, sys.executable, '-m', module, *flags], _run_module,
              (module, flags), timeout, env=env, forkable=not prefix)


def run_code(code: str, *args: str, timeout: int = 600, env=None):
  """Runs `python -c code args...` from the repository root, as
  `run_script` runs a module."""
  import sys  # pylint: disable=g-import-not-at-top
  return _run([sys.executable, '-c', code, *args], _exec_code,
              (code, args), timeout, env=env)


def _run(command, target, args, timeout, env=None, forkable=True):
  """`command`'s CompletedProcess (text output), `timeout` in seconds;
  started as `_start` starts it."""
  import subprocess  # pylint: disable=g-import-not-at-top
  import tempfile  # pylint: disable=g-import-not-at-top
  with tempfile.TemporaryDirectory() as folder:
    paths = [os.path.join(folder, name) for name in ('stdout', 'stderr')]
    process = _start(command, target, args, *paths, env=env,
                     forkable=forkable)
    try:
      status = process.wait(timeout)
    except subprocess.TimeoutExpired:
      process.kill()
      process.wait()
      raise
    stdout, stderr = (_read(path) for path in paths)
  return subprocess.CompletedProcess(command, status, stdout, stderr)


def _start(command, target, args, stdout_path: str, stderr_path: str,
           env=None, forkable=True):
  """Starts `command` from the repository root, its stdout and stderr into
  the two files; returns its process (`poll`, `kill`, `wait` as Popen's).

  With `env` None, `forkable` and this process's environment unchanged
  since the first such call, `target(*args)` (what `command` runs) runs in
  a process forked from a server that holds `_SCRIPT_PRELOAD` imported, as
  the interpreter runs a program (`_run_forked`); otherwise, or with
  PE_JAX_TEST_FORK=0, `command` runs in a new interpreter.
  """
  import subprocess  # pylint: disable=g-import-not-at-top
  global _script_server
  forkable = (forkable and env is None and
              os.environ.get('PE_JAX_TEST_FORK', '1') != '0')
  if forkable and _script_server is None:
    import multiprocessing  # pylint: disable=g-import-not-at-top
    context = multiprocessing.get_context('forkserver')
    context.set_forkserver_preload(list(_SCRIPT_PRELOAD))
    _script_server = (context, _environment_for_imports())
  if not forkable or _script_server[1] != _environment_for_imports():
    with open(stdout_path, 'w') as stdout, open(stderr_path, 'w') as stderr:
      return subprocess.Popen(command, cwd=ROOT, env=env, stdout=stdout,
                              stderr=stderr)
  process = _script_server[0].Process(
      target=_run_forked,
      args=(stdout_path, stderr_path, dict(os.environ), target, *args))
  process.start()
  return _Forked(command, process)


class _Forked:
  """A forked program (a multiprocessing Process) as a Popen: `poll`,
  `kill` (SIGKILL), `wait`."""

  def __init__(self, command, process):
    self.args = command
    self._process = process

  def poll(self):
    return self._process.exitcode

  def kill(self):
    self._process.kill()

  def wait(self, timeout=None):
    self._process.join(timeout)
    if self._process.exitcode is None:
      import subprocess  # pylint: disable=g-import-not-at-top
      raise subprocess.TimeoutExpired(self.args, timeout)
    return self._process.exitcode


def _read(path: str) -> str:
  with open(path) as f:
    return f.read()


def _environment_for_imports():
  """This process's environment less what pytest changes for each test
  (PYTEST_CURRENT_TEST, which no import reads): a server started under one
  test serves another's scripts only where this is the same."""
  return {k: v for k, v in os.environ.items() if k != 'PYTEST_CURRENT_TEST'}


def _run_module(module: str, flags) -> None:
  """`python -m module flags...`: the module runs as `__main__`."""
  import runpy  # pylint: disable=g-import-not-at-top
  import sys  # pylint: disable=g-import-not-at-top
  sys.argv = [module, *flags]
  runpy.run_module(module, run_name='__main__', alter_sys=True)


def _exec_code(code: str, args) -> None:
  """`python -c code args...`: the code runs as `__main__`."""
  import sys  # pylint: disable=g-import-not-at-top
  import types  # pylint: disable=g-import-not-at-top
  sys.argv = ['-c', *args]
  main = types.ModuleType('__main__')
  sys.modules['__main__'] = main
  code = compile(code, '<string>', 'exec')
  exec(code, main.__dict__)  # pylint: disable=exec-used


def _run_forked(stdout_path: str, stderr_path: str, environment, target,
                *args) -> None:
  """`target(*args)` in this forked process as the interpreter runs a
  program, from the repository root, in `environment`, stdout and stderr
  into the two files: then the threads are joined and the exit functions
  run, and the process exits with the program's status."""
  import atexit  # pylint: disable=g-import-not-at-top
  import sys  # pylint: disable=g-import-not-at-top
  import threading  # pylint: disable=g-import-not-at-top
  import traceback  # pylint: disable=g-import-not-at-top
  os.chdir(ROOT)
  os.environ.clear()
  os.environ.update(environment)
  sys.path[0:0] = [ROOT]
  for fd, path in ((1, stdout_path), (2, stderr_path)):
    file = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    os.dup2(file, fd)
    os.close(file)
  status = 0
  try:
    target(*args)
  except SystemExit as done:
    status = done.code
  except BaseException:  # pylint: disable=broad-except
    traceback.print_exc()
    status = 1
  if status is not None and not isinstance(status, int):
    print(status, file=sys.stderr)  # as the interpreter does
    status = 1
  threading._shutdown()  # pylint: disable=protected-access
  atexit._run_exitfuncs()  # pylint: disable=protected-access
  sys.stdout.flush()
  sys.stderr.flush()
  os._exit(status or 0)  # pylint: disable=protected-access


def kill_when(module: str, *flags: str, ready, timeout: float = 300,
              grace: float = 0.0) -> None:
  """Starts `python -m module flags...` (as `run_script` does) and SIGKILLs
  it once `ready()` is true (or it exits, or `timeout` seconds pass),
  `grace` seconds later: a crash at a chosen point, for the kill-and-resume
  tests."""
  import sys  # pylint: disable=g-import-not-at-top
  import time  # pylint: disable=g-import-not-at-top
  process = _start([sys.executable, '-m', module, *flags], _run_module,
                   (module, flags), os.devnull, os.devnull)
  deadline = time.time() + timeout
  while not ready() and process.poll() is None and time.time() < deadline:
    time.sleep(0.05)
  time.sleep(grace)
  process.kill()  # SIGKILL: no handler runs, as in a crash.
  process.wait()
