"""DLTV-QR (Mavrin et al., 2019) as in the PE-DQN paper's Table 4: QR-DQN
with MLP [512], K = 101, Adam 1e-3, randomized prior scale 20, acting by
argmax_a mean + c_t sqrt(left-truncated variance), c_t = 5 sqrt(log t / t).
"""

from agents import distributional

Config = distributional.DistributionalConfig
DEFAULTS = dict(kind='quantile', action_rule='dltv', epsilon=0.0, hidden_sizes=(512,), num_atoms=101, learning_rate=1e-3, prior_scale=20.0, dltv_beta0=5.0, batch_size=128, min_replay_size=128)


def default_agent(obs_spec, action_spec, seed: int = 0, num_episodes=None,
                  **overrides) -> distributional.DistributionalAgent:
  """The agent with its defaults; any `DistributionalConfig` field
  overrides (`v_min` / `v_max`: see agents/return_ranges.py)."""
  return distributional.make_default_agent(DEFAULTS, obs_spec, action_spec,
                                           seed=seed,
                                           num_episodes=num_episodes,
                                           **overrides)
