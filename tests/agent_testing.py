"""Helpers shared by the agent tests."""

from bsuite.environments import catch

import agents


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
