"""UCB + InfoGain (Chen et al., Algorithm 3).

UCB acting over the BDQN+P ensemble, and every member's reward gains
rho * mean_k KL(Boltzmann_k || mean_j Boltzmann_j) at s, the disagreement of
the members' Boltzmann policies at temperature T. rho = 1.0 and T = 1.0:
Chen et al. tune both per Atari game; these suit bsuite's O(1) returns.
"""

from agents import q_ensemble

Config = q_ensemble.QEnsembleConfig
DEFAULTS = dict(action_rule='ucb', ucb_lambda=1.0, infogain_scale=1.0,
                infogain_temperature=1.0)


def default_agent(obs_spec, action_spec, seed: int = 0, num_episodes=None,
                  **overrides) -> q_ensemble.QEnsembleAgent:
  """The agent with its defaults; any `QEnsembleConfig` field overrides."""
  return q_ensemble.make_default_agent(DEFAULTS, obs_spec, action_spec,
                                       seed=seed, num_episodes=num_episodes,
                                       **overrides)
