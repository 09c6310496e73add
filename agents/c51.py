"""C51 (Bellemare et al., 2017): categorical DQN with K = 51 atoms on
[v_min, v_max], epsilon-greedy (0.05) at bsuite's DQN settings (MLP [64, 64],
Adam 1e-3, batch 32, target period 4).
"""

from agents import distributional

Config = distributional.DistributionalConfig
DEFAULTS = dict(kind='categorical', num_atoms=51)


def default_agent(obs_spec, action_spec, seed: int = 0, num_episodes=None,
                  **overrides) -> distributional.DistributionalAgent:
  """The agent with its defaults; any `DistributionalConfig` field
  overrides (`v_min` / `v_max`: see agents/return_ranges.py)."""
  return distributional.make_default_agent(DEFAULTS, obs_spec, action_spec,
                                           seed=seed,
                                           num_episodes=num_episodes,
                                           **overrides)
