"""BDQN+P: bootstrapped DQN with randomized priors (Osband et al., 2018; PE-DQN
paper Table 4): 20 members MLP [64, 64], prior scale 5, Adam 1e-3, shared
replay, optional bootstrap masks (mask_probability), one member acts per
episode.
"""

from agents import q_ensemble

Config = q_ensemble.QEnsembleConfig
DEFAULTS = dict(action_rule='sample_member')


def default_agent(obs_spec, action_spec, seed: int = 0, num_episodes=None,
                  **overrides) -> q_ensemble.QEnsembleAgent:
  """The agent with its defaults; any `QEnsembleConfig` field overrides."""
  return q_ensemble.make_default_agent(DEFAULTS, obs_spec, action_spec,
                                       seed=seed, num_episodes=num_episodes,
                                       **overrides)
