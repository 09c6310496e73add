"""TDU: temporal-difference uncertainties as a signal for exploration.

Flennerhag et al. (2020), Sec. 4 and Appendix D. K exploiters (a bootstrapped
DQN with randomized priors) learn from the extrinsic reward r; N explorers
learn from r + beta * sigma, sigma the sample std of the exploiters' TD
errors on the sampled transition (Eq. 11); all K + N value functions share
one replay and one vmapped program. One of the K + N acts per episode, drawn
uniformly, or by a UCB1 bandit over the K + N policies (`use_bandit`,
Appendix D: arm value = mean reward per step under that policy, score
V_k + eta * sqrt(log n / n_k) with n counting environment steps).

TDU's reward rule is `pe_jax.exploration.tdu_rewards`; the learner that
applies it to every sampled transition is `agents.q_ensemble`'s, shared
with bootstrapped DQN and Chen et al.'s agents (`num_exploiters` > 0 turns
it on). This module holds TDU's settings and its acting bandit.

Defaults: beta = 1 and prior scale 3 (the bsuite settings of Appendix D,
Fig. 7), eta = 8 (the best bandit setting there); K = N = 10 keeps the
20-member ensemble of bsuite's bootstrapped DQN.
"""

import numpy as np

from agents import common
from agents import q_ensemble

Config = q_ensemble.QEnsembleConfig
# TDU's settings over `QEnsembleConfig` (see the module docstring).
AGENTS = {'tdu': dict(action_rule='sample_member', num_exploiters=10,
                       tdu_beta=1.0, prior_scale=3.0)}


BANDIT_IS_NOT_PURE = (
    '`use_bandit=True` picks the acting policy in Python between episodes; '
    'the pure TDU agent has no bandit. Use use_bandit=False with '
    'agents.make_pure.')


class TDUAgent(q_ensemble.QEnsembleAgent):
  """TDU with optional UCB1 selection of the acting policy per episode."""

  def __init__(self, obs_spec, action_spec, config, seed: int = 0,
               use_bandit: bool = False, bandit_eta: float = 8.0):
    super().__init__(obs_spec, action_spec, config, seed=seed)
    common.require(bandit_eta >= 0, 'bandit_eta', '>= 0', bandit_eta)
    self._use_bandit = use_bandit
    self._eta = bandit_eta
    self.arm_steps = np.zeros(config.num_ensemble, np.int64)
    self.arm_rewards = np.zeros(config.num_ensemble)
    self._member = None

  def select_arm(self) -> int:
    """UCB1 over the K + N policies; untried arms first (lowest index)."""
    untried = np.flatnonzero(self.arm_steps == 0)
    if untried.size:
      return int(untried[0])
    total = self.arm_steps.sum()
    values = self.arm_rewards / self.arm_steps
    scores = values + self._eta * np.sqrt(np.log(total) / self.arm_steps)
    return int(np.argmax(scores))

  def select_action(self, timestep):
    if not self._use_bandit:
      return super().select_action(timestep)
    if timestep.first() or self._member is None:
      self._member = self.select_arm()
    self._pending = None  # The bandit, not the fused step, picks the member.
    action, rng = q_ensemble.act_with_member_jit(
        self._config, self.state, np.asarray(timestep.observation,
                                             np.float32),
        np.int32(self._member))
    self._set_learner_state(self.state._replace(rng=rng))
    return int(action)

  @classmethod
  def check_pure_options(cls, options):
    if options.get('use_bandit'):
      raise ValueError(BANDIT_IS_NOT_PURE)

  @property
  def pure(self):
    if self._use_bandit:
      raise ValueError(BANDIT_IS_NOT_PURE)
    return self._pure

  def update(self, timestep, action, new_timestep):
    if self._use_bandit and self._member is not None:
      self.arm_steps[self._member] += 1
      self.arm_rewards[self._member] += new_timestep.reward
    super().update(timestep, action, new_timestep)


# `default_agent(obs_spec, action_spec, seed=0, num_episodes=None,
# agent_name='tdu', use_bandit=False, bandit_eta=8.0, **overrides)`.
default_agent = common.default_agent_fn(
    TDUAgent, Config, AGENTS, 'tdu',
    agent_options=('use_bandit', 'bandit_eta'))
