"""Helpers shared by the agent tests."""

import os

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


def in_fresh_process(function: str, *args, **kwargs):
  """`agent_testing.<function>(*args, **kwargs)` (literals in and out) in a
  new Python process at XLA's default optimisation level."""
  import ast  # pylint: disable=g-import-not-at-top
  import subprocess  # pylint: disable=g-import-not-at-top
  import sys  # pylint: disable=g-import-not-at-top
  # (conftest keeps level 0 to the test process: children get the defaults.)
  code = ('import ast, sys; from tests import agent_testing; '
          'function, args, kwargs = ast.literal_eval(sys.argv[1]); '
          'print(repr(getattr(agent_testing, function)(*args, **kwargs)))')
  done = subprocess.run(
      [sys.executable, '-c', code, repr((function, args, kwargs))],
      cwd=ROOT, capture_output=True, text=True, check=False)
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


def run_script(module: str, *flags: str, timeout: int = 600, env=None,
               prefix=()):
  """Runs `python -m module flags...` from the repository root, its
  output captured as text (`env`: the process's environment, None for this
  one's; `prefix`: a command it runs under, e.g. taskset)."""
  import subprocess  # pylint: disable=g-import-not-at-top
  import sys  # pylint: disable=g-import-not-at-top
  return subprocess.run([*prefix, sys.executable, '-m', module, *flags],
                        cwd=ROOT, env=env, capture_output=True, text=True,
                        timeout=timeout)


def kill_when(module: str, *flags: str, ready, timeout: float = 300,
              grace: float = 0.0) -> None:
  """Starts `python -m module flags...` and SIGKILLs it once `ready()` is
  true (or it exits, or `timeout` seconds pass), `grace` seconds later: a
  crash at a chosen point, for the kill-and-resume tests."""
  import subprocess  # pylint: disable=g-import-not-at-top
  import sys  # pylint: disable=g-import-not-at-top
  import time  # pylint: disable=g-import-not-at-top
  process = subprocess.Popen([sys.executable, '-m', module, *flags], cwd=ROOT,
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
  deadline = time.time() + timeout
  while not ready() and process.poll() is None and time.time() < deadline:
    time.sleep(0.05)
  time.sleep(grace)
  process.kill()  # SIGKILL: no handler runs, as in a crash.
  process.wait()
