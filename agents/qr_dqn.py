"""QR-DQN (Dabney et al., 2018b): K = 51 quantiles, quantile Huber loss
(kappa = 1), epsilon-greedy (0.05) at bsuite's DQN settings.
"""

from agents import distributional

Config = distributional.DistributionalConfig
DEFAULTS = dict(kind='quantile', num_atoms=51, huber_param=1.0)


def default_agent(obs_spec, action_spec, seed: int = 0, num_episodes=None,
                  **overrides) -> distributional.DistributionalAgent:
  """The agent with its defaults; any `DistributionalConfig` field
  overrides (`v_min` / `v_max`: see agents/return_ranges.py)."""
  return distributional.make_default_agent(DEFAULTS, obs_spec, action_spec,
                                           seed=seed,
                                           num_episodes=num_episodes,
                                           **overrides)
