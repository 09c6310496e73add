"""IDS-C51: information-directed sampling (Nikolov et al., 2019).

As in the PE-DQN paper (Table 4, Appendix B.2): a BDQN+P ensemble (20
members, MLP [64, 64], Adam 1e-3, prior 20) gives the epistemic mean mu and
standard deviation sigma of Q; a C51 model (MLP [512], K = 101, Adam 5e-4,
prior 5) gives the return variance Var Z. With rho^2 the epsilon-smoothed,
action-normalised return variance
  rho^2(s, a) = (Var Z(s, a) + eps1) / (eps1 + mean_a' Var Z(s, a')),
the information gain is I = log(1 + sigma^2 / rho^2) + eps2 and the regret
estimate Delta(a) = max_a' (mu + lambda sigma)(a') - (mu - lambda sigma)(a).
The agent acts by argmin_a Delta^2 / I; lambda starts at beta_init = 5 and
decays linearly to 0 over a third of the horizon when `num_episodes` is
given. Both models learn in one jitted step.
"""

import dataclasses
from typing import Any, ClassVar, NamedTuple, Optional, Tuple

import jax
import jax.numpy as jnp

from agents import common
from agents import pure
from agents import distributional
from agents import q_ensemble


@dataclasses.dataclass(frozen=True)
class IDSConfig(common.NetworkFields, common.ReplayFields):
  num_actions: int
  num_ensemble: int = 20
  hidden_sizes: Tuple[int, ...] = (64, 64)
  prior_scale: float = 20.0
  c51_hidden_sizes: Tuple[int, ...] = (512,)
  c51_learning_rate: float = 5e-4
  c51_prior_scale: float = 5.0
  num_atoms: int = common.PAPER_NUM_ATOMS
  v_min: float = -1.0
  v_max: float = 1.0
  beta_init: float = 5.0
  beta_final: float = 0.0  # lambda after `beta_decay_episodes`.
  beta_decay_episodes: Optional[float] = None
  eps1: float = 1e-4
  eps2: float = 1e-5
  # None: IDS-C51 [noclip], rho^2 smoothed by eps1 (App. B.2); a number c:
  # [clip], Eq. 18's rho^2 = max(Var Z / mean_a Var Z, c) (Nikolov et al.:
  # 0.25), the comparison of Fig. 7(b).
  rho_clip: Optional[float] = None
  # Pixels (VizDoom, Table 5): torso='impala' gives the ensemble one shared
  # IMPALA torso and the C51 model its own; the ensemble's TD loss is Huber
  # with `huber_param` > 0; double DQN targets in both models.
  huber_param: float = 0.0
  double_dqn: bool = False

  # Fields that may be arrays per agent (`per_agent.configured`).
  ARRAY_FIELDS: ClassVar[Tuple[str, ...]] = ('beta_init', 'beta_final',
                                             'eps1', 'eps2')

  def __post_init__(self):
    common.check_common(self)
    common.require(self.num_ensemble >= 2, 'num_ensemble', '>= 2',
                   self.num_ensemble)
    common.require_nonnegative(self, 'beta_init', 'beta_final',
                               'c51_prior_scale')
    common.require(self.eps1 > 0, 'eps1', '> 0', self.eps1)
    common.require(self.eps2 > 0, 'eps2', '> 0', self.eps2)
    common.require_positive_or_none(self, 'rho_clip')
    common.require(self.c51_learning_rate > 0, 'c51_learning_rate', '> 0',
                   self.c51_learning_rate)

  @property
  def ensemble(self) -> q_ensemble.QEnsembleConfig:
    return q_ensemble.QEnsembleConfig(
        num_actions=self.num_actions, num_ensemble=self.num_ensemble,
        hidden_sizes=self.hidden_sizes, prior_scale=self.prior_scale,
        huber_param=self.huber_param, double_dqn=self.double_dqn,
        max_grad_norm=self.max_grad_norm, **common.replay_fields(self),
        **self._torso)

  @property
  def _torso(self):
    return dict(torso=self.torso, initializer=self.initializer,
                impala_channels=self.impala_channels,
                impala_hidden=self.impala_hidden,
                spectral_norm=self.spectral_norm)

  @property
  def model(self) -> distributional.DistributionalConfig:
    # The C51 model shares the replay and optimiser settings, at its own
    # learning rate.
    shared = dict(common.replay_fields(self),
                  learning_rate=self.c51_learning_rate)
    return distributional.DistributionalConfig(
        num_actions=self.num_actions, kind='categorical',
        hidden_sizes=self.c51_hidden_sizes, num_atoms=self.num_atoms,
        v_min=self.v_min, v_max=self.v_max,
        prior_scale=self.c51_prior_scale, epsilon=0.0,
        double_dqn=self.double_dqn, max_grad_norm=self.max_grad_norm,
        **shared, **self._torso)


Config = IDSConfig


class IDSState(NamedTuple):
  """IDS-C51's learner state: two learners' `common.TrainState`s side by
  side (the Q ensemble's and the C51 model's) and the acting RNG."""
  ensemble: Any
  model: Any
  rng: Any


def information_ratio(mean, std, return_variance, lam, eps1, eps2,
                      rho_clip=None):
  """[A] Delta(a)^2 / I(a) (Nikolov et al., 2019; PE-DQN App. B.2).

  Args:
    mean: [A] ensemble mean of Q.
    std: [A] ensemble standard deviation of Q.
    return_variance: [A] Var Z(s, a) of the return-distribution model.
    lam: scale of the confidence bounds in the regret estimate.
    eps1, eps2: smoothing constants of rho^2 and I.
    rho_clip: None for [noclip] (eps1-smoothed rho^2), or the floor c of
      Eq. 18's clipped rho^2 ([clip]).
  """
  regret, _, info_gain = ratio_parts(mean, std, return_variance, lam, eps1,
                                     eps2, rho_clip)
  return jnp.square(regret) / info_gain


def return_variance_ratio(return_variance, eps1, rho_clip=None):
  """[A] rho^2: (Var Z + eps1) / (eps1 + mean_a Var Z) ([noclip], App. B.2)
  or max(Var Z / mean_a Var Z, rho_clip) ([clip], Eq. 18; rho_clip where
  every Var Z is 0)."""
  average = jnp.mean(return_variance)
  if rho_clip is None:
    return (return_variance + eps1) / (eps1 + average)
  ratio = return_variance / jnp.where(average > 0, average, 1.0)
  return jnp.where(average > 0, jnp.maximum(ratio, rho_clip), rho_clip)


def ratio_parts(mean, std, return_variance, lam, eps1, eps2, rho_clip=None):
  """[A] each: Delta(a), rho^2(a) and I(a) of `information_ratio`."""
  regret = jnp.max(mean + lam * std) - (mean - lam * std)
  rho2 = return_variance_ratio(return_variance, eps1, rho_clip)
  info_gain = jnp.log1p(jnp.square(std) / rho2) + eps2
  return regret, rho2, info_gain


def ids_action(mean, std, return_variance, lam, eps1, eps2, rho_clip=None):
  """argmin_a Delta(a)^2 / I(a); arguments as `information_ratio`."""
  return jnp.argmin(information_ratio(mean, std, return_variance, lam, eps1,
                                      eps2, rho_clip))


def init(config: IDSConfig, key, observation) -> IDSState:
  ensemble_key, model_key, rng = jax.random.split(key, 3)
  return IDSState(q_ensemble.init(config.ensemble, ensemble_key, observation),
                  distributional.init(config.model, model_key, observation),
                  rng)


def ratio_terms(config: IDSConfig, state: IDSState, observation, clock):
  """What the action rule reads at one observation: ([A] ensemble mean of Q,
  [A] its standard deviation, [A] Var Z, lambda at `clock`)."""
  q = q_ensemble.member_q_values(config.ensemble, state.ensemble.params,
                           state.ensemble.prior_params, observation)
  outputs = distributional.network_outputs(config.model, state.model.params,
                                    state.model.prior_params, observation)
  atoms, probs = distributional.action_distributions(config.model, outputs)
  mean_z = jnp.sum(atoms * probs, axis=-1)
  variance = jnp.sum(probs * jnp.square(atoms - mean_z[:, None]), axis=-1)
  lam = common.linear_decay(config.beta_init, clock,
                            config.beta_decay_episodes, config.beta_final)
  return jnp.mean(q, 0), jnp.std(q, 0), variance, lam


def scores(config: IDSConfig, state: IDSState, observation, clock,
           member=None):
  """[A] -Delta^2 / I of every action (argmax acts); lambda follows the
  schedule at `clock` (episodes, or frames on pixels). `member` is unused."""
  del member
  mean, std, variance, lam = ratio_terms(config, state, observation, clock)
  return -information_ratio(mean, std, variance, lam, config.eps1,
                            config.eps2, config.rho_clip)


def act(config: IDSConfig, state: IDSState, observation, episode):
  return jnp.argmax(scores(config, state, observation, episode)), (
      state.rng)


def learn(config: IDSConfig, state: IDSState, batch, episode,
          weights=None):
  """One SGD step on a batch, and the target update.

  Returns (state, metrics, [B] each sample's unweighted loss (ensemble plus C51), e.g.
  for replay priorities); `weights` [B] (prioritized replay's importance
  weights) weight the samples' losses, None weighs them equally.
  """
  ensemble, ensemble_metrics, ensemble_losses = q_ensemble.learn(
      config.ensemble, state.ensemble, batch, episode, weights)
  model, model_metrics, model_losses = distributional.learn(
      config.model, state.model, batch, episode, weights)
  return state._replace(ensemble=ensemble, model=model), {
      'loss': ensemble_metrics['loss'] + model_metrics['loss'],
      'c51_loss': model_metrics['loss']}, ensemble_losses + model_losses


LEARNER = pure.LearnerFns(init, act, learn, metrics=('loss', 'c51_loss'))


class IDSAgent(common.ReplayAgent):
  """IDS-C51 as a bsuite `base.Agent`."""

  LEARNER = LEARNER


# IDS-C51's settings over `IDSConfig`'s defaults (Table 4).
AGENTS = {'ids_c51': {}}

# VizDoom MyWayHome (Table 5): a 10-head ensemble on one IMPALA torso
# (Huber) and a C51 model on its own; lambda 0.1 -> 0.01 over a third of the
# frames (the runner sets `beta_decay_episodes`).
VIZDOOM_AGENTS = {
    'ids_c51': dict(common.VIZDOOM_SHARED, num_ensemble=10,
                    learning_rate=2.5e-5, c51_learning_rate=2.5e-5,
                    prior_scale=1.0, c51_prior_scale=1.0,
                    num_atoms=common.PAPER_NUM_ATOMS,
                    double_dqn=True, beta_init=0.1, beta_final=0.01),
}


# `default_agent(obs_spec, action_spec, seed=0, num_episodes=None,
# agent_name='ids_c51', **overrides)`: lambda decays over the first third of
# `num_episodes`.
default_agent = common.default_agent_fn(
    IDSAgent, IDSConfig, AGENTS, 'ids_c51',
    horizon_settings=lambda num_episodes, _: dict(
        beta_decay_episodes=common.decay_horizon(num_episodes)))
