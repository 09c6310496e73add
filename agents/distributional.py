"""One distributional Q-model (categorical or quantile) and its action rules.

The learning core of C51 (Bellemare et al., 2017), QR-DQN (Dabney et al.,
2018b) and DLTV-QR (Mavrin et al., 2019): a single network with K outputs per
action, optional randomized prior (PE-DQN paper, Appendix B.2), a target
network, the bootstrap target r + gamma Z(s', a*) with a* greedy under the
target network, and the categorical (Eq. 12) or quantile (Eq. 11) loss.

Action rules:
  epsilon_greedy  greedy on the mean, random with probability epsilon
  dltv            argmax_a mean + c_t * sigma_+ (or 4 c_t sigma_+^2, the
                  PE-DQN authors' code), sigma_+^2 the left-truncated
                  variance, c_t = beta0 * sqrt(log(alpha t) / (alpha t))
                  (Mavrin et al., 2019); PE-DQN Table 4 counts t in
                  episodes with alpha = 10^3 / N_episodes
  statistic       argmax_a S[Z(s, a)], S the `statistic` moment (mean,
                  variance, skewness or excess kurtosis); always greedy, so
                  `epsilon` is unused (PE-DQN paper, Sec. 6.1)
"""

import dataclasses
from typing import ClassVar, Dict, Tuple

import chex
import jax
import jax.numpy as jnp

from agents import common
from agents import per_agent
from agents import pure
from pe_jax import distributions
from pe_jax import losses
from pe_jax import networks

KINDS = ('categorical', 'quantile')
ACTION_RULES = ('epsilon_greedy', 'dltv', 'statistic')
DLTV_CLOCKS = ('episodes', 'steps')
DLTV_BONUSES = ('std', 'variance')
# Table 4's DLTV decay 10^3 / N_episodes, at bsuite's 10,000 episodes (the
# horizon assumed when `default_agent` is given none).
DLTV_DECAY_NUMERATOR = 1e3
BSUITE_EPISODES = 10_000
STATISTICS = distributions.Moments._fields  # mean, variance, skewness, kurtosis


@dataclasses.dataclass(frozen=True)
class DistributionalConfig(common.NetworkFields, common.ReplayFields):
  """Hyperparameters of C51, QR-DQN and DLTV-QR (`AGENTS`)."""
  num_actions: int
  kind: str = 'categorical'
  hidden_sizes: Tuple[int, ...] = (64, 64)
  num_atoms: int = common.SINGLE_MODEL_NUM_ATOMS
  v_min: float = -1.0
  v_max: float = 1.0
  huber_param: float = 1.0  # Quantile models only.
  prior_scale: float = 0.0
  action_rule: str = 'epsilon_greedy'
  epsilon: float = 0.05
  dltv_beta0: float = 5.0
  # alpha of c_t = beta0 sqrt(log(alpha t) / (alpha t)) (PE-DQN Appendix
  # B.2): Table 4's 10^3 / N_episodes (`default_agent` sets it from its
  # `num_episodes`; 0.1 is bsuite's 10,000), Table 5's 10^3 / N_frames in
  # VizDoom; 1 is Mavrin et al.'s.
  dltv_time_scale: float = DLTV_DECAY_NUMERATOR / BSUITE_EPISODES
  # What t counts on bsuite: 'episodes' (Table 4's "Bonus decay (in eps)")
  # or 'steps' (environment steps, Mavrin et al.'s per-step schedule). Pixel
  # runs count frames either way.
  dltv_clock: str = 'episodes'
  # The bonus: 'std', c_t sigma_+ (Mavrin et al.), or 'variance',
  # 4 c_t sigma_+^2 (the PE-DQN authors' released code).
  dltv_bonus: str = 'std'

  statistic: str = 'mean'  # action_rule='statistic' only.
  # Bootstrap at the online model's greedy action (Table 5) instead of the
  # target's.
  double_dqn: bool = False

  # Fields that may be arrays per agent (`per_agent.configured`), and those
  # whose "off" value compiles a feature out.
  ARRAY_FIELDS: ClassVar[Tuple[str, ...]] = (
      'learning_rate', 'discount', 'prior_scale', 'epsilon', 'dltv_beta0')
  SWITCH_FIELDS: ClassVar[Dict[str, float]] = {'prior_scale': 0.0,
                                               'epsilon': 0.0}

  def __post_init__(self):
    common.check_common(self)
    common.require_one_of(self, 'kind', KINDS)
    common.require_one_of(self, 'action_rule', ACTION_RULES)
    common.require(0.0 <= self.epsilon <= 1.0, 'epsilon', 'in [0, 1]',
                   self.epsilon)
    common.require_nonnegative(self, 'prior_scale', 'dltv_beta0')
    common.require(self.action_rule != 'dltv' or self.kind == 'quantile',
                   'action_rule', "'dltv' only with kind='quantile'",
                   self.action_rule)
    common.require_one_of(self, 'statistic', STATISTICS)
    common.require(self.dltv_time_scale > 0, 'dltv_time_scale', '> 0',
                   self.dltv_time_scale)
    common.require_one_of(self, 'dltv_clock', DLTV_CLOCKS)
    common.require_one_of(self, 'dltv_bonus', DLTV_BONUSES)


Config = DistributionalConfig


def left_truncated_variance(locations: jnp.ndarray) -> jnp.ndarray:
  """DLTV's sigma_+^2 = 1/(2K) sum_{i >= K/2} (theta_i - theta_{K/2})^2.

  Args:
    locations: [K] quantile locations (sorted here, so any order works).
  """
  k = locations.shape[-1]
  ordered = jnp.sort(locations)
  median = ordered[k // 2]
  upper = ordered[k // 2:]
  return jnp.sum(jnp.square(upper - median)) / (2 * k)


def dltv_coefficient(beta0: float, t) -> jnp.ndarray:
  """c_t = beta0 * sqrt(log t / t), the decaying DLTV schedule.

  sqrt(log t / t) rises to its peak 1 / sqrt(e) at t = e and falls after;
  earlier t (where log t / t is small or negative) is held at the peak, so
  the coefficient never grows with time.
  """
  t = jnp.maximum(jnp.asarray(t, jnp.float32), jnp.e)
  return beta0 * jnp.sqrt(jnp.log(t) / t)


def statistic_values(atoms: jnp.ndarray, probs: jnp.ndarray,
                     statistic: str) -> jnp.ndarray:
  """[A] one moment of each action's return distribution.

  Args:
    atoms: [A, K] atoms of each action's distribution.
    probs: [A, K] their probabilities.
    statistic: a field of `distributions.Moments` (see `STATISTICS`).
  """
  return getattr(jax.vmap(distributions.moments)(atoms, probs), statistic)


def _network(config):
  """The module (`common.network`; 'impala' with its one head)."""
  return common.network(config, 1, config.num_atoms)


def support(config) -> jnp.ndarray:
  return jnp.linspace(config.v_min, config.v_max, config.num_atoms)


def network_outputs(config, params, prior_params, observation) -> jnp.ndarray:
  """[A, K] outputs on one observation."""
  outputs = networks.apply_with_prior(_network(config), params, prior_params,
                                      config.prior_scale, observation)
  return outputs[0] if config.torso == 'impala' else outputs


def dltv_scores(config, outputs: jnp.ndarray, t) -> jnp.ndarray:
  """[A] DLTV's optimistic scores of [A, K] quantile outputs at time t:
  mean + c_t sigma_+ ('std') or mean + 4 c_t sigma_+^2 ('variance')."""
  variance = jax.vmap(left_truncated_variance)(outputs)
  spread = jnp.sqrt(variance) if config.dltv_bonus == 'std' else 4 * variance
  coefficient = dltv_coefficient(config.dltv_beta0,
                                 config.dltv_time_scale * t)
  return jnp.mean(outputs, axis=-1) + coefficient * spread


def action_distributions(config, outputs):
  """[A, K] outputs -> atoms, probs [A, K]."""
  if config.kind == 'quantile':
    return outputs, jnp.full_like(outputs, 1.0 / config.num_atoms)
  return (jnp.broadcast_to(support(config), outputs.shape),
          jax.nn.softmax(outputs, axis=-1))


def q_values(config, params, prior_params, observation) -> jnp.ndarray:
  atoms, probs = action_distributions(
      config, network_outputs(config, params, prior_params, observation))
  return jnp.sum(atoms * probs, axis=-1)


def init(config, key: chex.PRNGKey, observation) -> common.TrainState:
  params_key, prior_key, rng = jax.random.split(key, 3)
  network = _network(config)
  params = network.init(params_key, observation)
  prior_params = (network.init(prior_key, observation)
                  if per_agent.static_value(config, 'prior_scale') > 0 else None)
  return common.init_train_state(config, params, prior_params, rng)


def scores(config, state: common.TrainState, observation, clock,
           member=None) -> jnp.ndarray:
  """[A] scores whose argmax is the action rule's greedy action.

  dltv: mean + c_t sqrt(left-truncated variance) at t = `clock`
  (`dltv_clock` on bsuite, frames on pixels); statistic: the `statistic`
  moment; otherwise the mean. `member` is unused (one model).
  """
  del member
  outputs = network_outputs(config, state.params, state.prior_params,
                            observation)
  if config.action_rule == 'dltv':
    return dltv_scores(config, outputs, clock)
  atoms, probs = action_distributions(config, outputs)
  if config.action_rule == 'statistic':
    return statistic_values(atoms, probs, config.statistic)
  return jnp.sum(atoms * probs, axis=-1)


def dltv_time(config, state: common.TrainState, episode) -> jnp.ndarray:
  """DLTV's t on bsuite: episodes started (episode + 1) on the 'episodes'
  clock, environment steps on the 'steps' clock (one learning step per
  environment step after `min_replay_size` transitions)."""
  if config.dltv_clock == 'episodes':
    return jnp.asarray(episode, jnp.float32) + 1.0
  return jnp.asarray(state.steps + config.min_replay_size, jnp.float32)


def act(config, state: common.TrainState, observation, episode):
  t = dltv_time(config, state, episode)
  action = jnp.argmax(scores(config, state, observation, t))
  epsilon = (config.epsilon if per_agent.static_value(config, 'epsilon') > 0
             and config.action_rule != 'statistic' else 0.0)
  return common.explore(state, action, config.num_actions, epsilon)


def _sample_target(config, params, target_params, prior_params, observation,
                   action, reward, discount, next_observation):
  """Output at the taken action [K] and its bootstrap target ([N], [N])."""
  one_hot = jax.nn.one_hot(action, config.num_actions)
  taken = one_hot @ network_outputs(config, params, prior_params, observation)  # [K]
  next_outputs = network_outputs(config, target_params, prior_params,
                          next_observation)
  next_atoms, next_probs = action_distributions(config, next_outputs)
  if config.double_dqn:
    chooser = q_values(config, params, prior_params, next_observation)
  else:
    chooser = jnp.sum(next_atoms * next_probs, -1)
  best = jax.nn.one_hot(jnp.argmax(chooser), config.num_actions)
  target_atoms = distributions.bellman_pushforward(best @ next_atoms, reward,
                                                   discount)
  return taken, target_atoms, best @ next_probs


def learn(config, state: common.TrainState, batch, episode, weights=None):
  """One SGD step on a batch, and the target update.

  Returns (state, metrics, [B] each sample's unweighted loss, e.g.
  for replay priorities); `weights` [B] (prioritized replay's importance
  weights) weight the samples' losses, None weighs them equally.
  """
  del episode

  def loss_fn(params):
    taken, target_atoms, target_probs = jax.vmap(
        _sample_target, in_axes=(None, None, None, None, 0, 0, 0, 0, 0))(
            config, params,
            state.target_params, state.prior_params,
            batch.observation, batch.action, batch.reward, batch.discount,
            batch.next_observation)
    if config.kind == 'quantile':
      # One batched call: its sort vectorises over the batch.
      sample_losses = losses.quantile_regression_loss(
          taken, target_atoms, target_probs, config.huber_param)
    else:
      sample_losses = jax.vmap(
          losses.categorical_cross_entropy_loss, in_axes=(0, None, 0, 0))(
              taken, support(config), target_atoms, target_probs)
    weighted = sample_losses if weights is None else sample_losses * weights
    return jnp.mean(weighted), sample_losses

  (loss, sample_losses), grads = jax.value_and_grad(
      loss_fn, has_aux=True)(state.params)
  return common.sgd_step(config, state, grads), {'loss': loss}, sample_losses


LEARNER = pure.LearnerFns(init, act, learn)


class DistributionalAgent(common.ReplayAgent):
  """A single distributional Q-model as a bsuite `base.Agent`."""

  LEARNER = LEARNER


# The agents of this learner: each is its settings over
# `DistributionalConfig`'s defaults; any config field overrides (`v_min` /
# `v_max`: see agents/return_ranges.py).
AGENTS = {
    # C51 (Bellemare et al., 2017): K = 51 atoms on [v_min, v_max],
    # epsilon-greedy at bsuite's DQN settings (MLP [64, 64], Adam 1e-3,
    # batch 32, target period 4).
    'c51': dict(common.BSUITE_DQN_REPLAY, kind='categorical',
                num_atoms=common.SINGLE_MODEL_NUM_ATOMS),
    # QR-DQN (Dabney et al., 2018b): K = 51 quantiles, quantile Huber loss
    # (kappa = 1), epsilon-greedy at bsuite's DQN settings.
    'qr_dqn': dict(common.BSUITE_DQN_REPLAY, kind='quantile',
                   num_atoms=common.SINGLE_MODEL_NUM_ATOMS, huber_param=1.0),
    # DLTV-QR (Mavrin et al., 2019), PE-DQN paper Table 4: QR-DQN with MLP
    # [512], K = 101, randomized prior 20, acting by argmax_a mean + c_t
    # sqrt(left-truncated variance), c_t = 5 sqrt(log(alpha t) / (alpha t)),
    # t in episodes, alpha = 10^3 / N_episodes.
    'dltv_qr': dict(kind='quantile', action_rule='dltv', epsilon=0.0,
                    hidden_sizes=(512,), num_atoms=common.PAPER_NUM_ATOMS,
                    prior_scale=20.0),
}

# VizDoom MyWayHome (Table 5). DLTV-QR: one quantile model, prior 3,
# c_t = 0.5 sqrt(log(a t) / (a t)) with a = 10^3 / N_frames (the runner sets
# `dltv_time_scale` from its frame count).
VIZDOOM_AGENTS = {
    'dltv_qr': dict(common.VIZDOOM_SHARED, kind='quantile',
                    num_atoms=common.PAPER_NUM_ATOMS,
                    learning_rate=7.5e-5, prior_scale=3.0, double_dqn=True,
                    action_rule='dltv', dltv_beta0=0.5, epsilon=0.0),
}


def _horizon_settings(num_episodes, settings):
  """Table 4's DLTV decay, alpha = 10^3 / N_episodes, where DLTV acts."""
  if num_episodes is None or settings.get('action_rule') != 'dltv':
    return {}
  return dict(dltv_time_scale=DLTV_DECAY_NUMERATOR / num_episodes)


# `default_agent(obs_spec, action_spec, seed=0, num_episodes=None,
# agent_name='c51', **overrides)`.
default_agent = common.default_agent_fn(
    DistributionalAgent, DistributionalConfig, AGENTS, 'c51',
    horizon_settings=_horizon_settings)
