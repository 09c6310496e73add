"""Ensemble Voting (Chen et al., Algorithm 1): the BDQN+P ensemble acting by
majority vote of the members' greedy actions (ties: lowest action index).
"""

from agents import q_ensemble

Config = q_ensemble.QEnsembleConfig
DEFAULTS = dict(action_rule='vote')


def default_agent(obs_spec, action_spec, seed: int = 0, num_episodes=None,
                  **overrides) -> q_ensemble.QEnsembleAgent:
  """The agent with its defaults; any `QEnsembleConfig` field overrides."""
  return q_ensemble.make_default_agent(DEFAULTS, obs_spec, action_spec,
                                       seed=seed, num_episodes=num_episodes,
                                       **overrides)
