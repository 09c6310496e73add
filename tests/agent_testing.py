"""Helpers shared by the agent tests."""

from bsuite.environments import catch
from bsuite.environments import deep_sea

import agents
from agents import common


def actions_of(name: str, seed: int, episodes: int = 4, env_seed: int = 3,
               make_env=None, **overrides):
  """Every action agent `name` takes in `episodes` on a seeded environment."""
  env = make_env() if make_env else catch.Catch(seed=env_seed)
  agent = agents.make(name, env.observation_spec(), env.action_spec(),
                      seed=seed, **overrides)
  actions = []
  for _ in range(episodes):
    timestep = env.reset()
    while not timestep.last():
      action = agent.select_action(timestep)
      actions.append(action)
      new_timestep = env.step(action)
      agent.update(timestep, action, new_timestep)
      timestep = new_timestep
  return actions


def first_treasure(name: str, size: int, seed: int, budget: int, **overrides):
  """First episode (0-based) in which agent `name` reaches deep sea's treasure.

  Deterministic deep sea of `size`, action mapping and agent both seeded by
  `seed`; None if the treasure is not reached within `budget` episodes.
  """
  env = deep_sea.DeepSea(size=size, seed=seed, mapping_seed=seed)
  agent = agents.make(name, env.observation_spec(), env.action_spec(),
                      seed=seed, **overrides)
  for episode in range(budget):
    _, _, last = common.run_episode(agent, env)
    if last.reward > 0.5:
      return episode
  return None


def run_script(module: str, *flags: str, timeout: int = 600):
  """Runs `python -m module flags...` from the repository root."""
  import os  # pylint: disable=g-import-not-at-top
  import subprocess  # pylint: disable=g-import-not-at-top
  import sys  # pylint: disable=g-import-not-at-top
  root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
  return subprocess.run([sys.executable, '-m', module, *flags], cwd=root,
                        capture_output=True, text=True, timeout=timeout)
