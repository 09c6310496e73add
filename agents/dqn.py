"""DQN with epsilon-greedy acting (Mnih et al., 2015), bsuite's baseline
settings: MLP [64, 64], Adam 1e-3, batch 32, epsilon 0.05.
"""

from agents import q_ensemble

Config = q_ensemble.QEnsembleConfig
DEFAULTS = dict(num_ensemble=1, prior_scale=0.0, action_rule='epsilon_greedy', epsilon=0.05, batch_size=32, min_replay_size=100, adam_eps=1e-8)


def default_agent(obs_spec, action_spec, seed: int = 0, num_episodes=None,
                  **overrides) -> q_ensemble.QEnsembleAgent:
  """The agent with its defaults; any `QEnsembleConfig` field overrides."""
  return q_ensemble.make_default_agent(DEFAULTS, obs_spec, action_spec,
                                       seed=seed, num_episodes=num_episodes,
                                       **overrides)
