"""UCB exploration (Chen et al., Algorithm 2): argmax_a mean + lambda * std
over the BDQN+P ensemble. lambda = 1.0: Chen et al.'s 0.1 was tuned for
Atari's reward scale; bsuite's returns are O(1), where 0.1 barely changes
the greedy action.
"""

from agents import q_ensemble

Config = q_ensemble.QEnsembleConfig
DEFAULTS = dict(action_rule='ucb', ucb_lambda=1.0)


def default_agent(obs_spec, action_spec, seed: int = 0, num_episodes=None,
                  **overrides) -> q_ensemble.QEnsembleAgent:
  """The agent with its defaults; any `QEnsembleConfig` field overrides."""
  return q_ensemble.make_default_agent(DEFAULTS, obs_spec, action_spec,
                                       seed=seed, num_episodes=num_episodes,
                                       **overrides)
