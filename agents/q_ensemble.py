"""A vmapped ensemble of Q-networks and the exploration rules built on it.

One learning core serves DQN (one member), BDQN+P (Osband et al., 2018),
Chen et al.'s Ensemble Voting, UCB and UCB+InfoGain (Algorithms 1-3 of "UCB
exploration via Q-ensembles") and TDU (Flennerhag et al., 2020): the members'
parameters are stacked and one jitted program acts or learns for all of them.
Each member bootstraps from its own target network. The agents differ in
their action rule and in the reward each member learns from:

  epsilon_greedy  greedy on the ensemble mean, random with prob. epsilon
  sample_member   one member, drawn per episode, acts greedily
  vote            majority vote of the members' greedy actions
  ucb             argmax_a mean_k Q_k + lambda * std_k Q_k

InfoGain adds rho * mean_k KL(softmax(Q_k / T) || mean_j softmax(Q_j / T)) at
s to every member's reward. TDU splits the members into exploiters (reward r)
and explorers (reward r + beta * sigma, sigma the std over exploiters of
their TD errors on the transition). The rules themselves are the pure
functions of `pe_jax.exploration`; this module wires them into one learner.
"""

import dataclasses
from typing import ClassVar, Dict, Tuple

import chex
import jax
import jax.numpy as jnp
import optax

from agents import common
from agents import per_agent
from agents import pure
from pe_jax import exploration

ACTION_RULES = ('epsilon_greedy', 'sample_member', 'vote', 'ucb')
TARGET_PRIORS = ('shared', 'distinct')


@dataclasses.dataclass(frozen=True)
class QEnsembleConfig(common.NetworkFields, common.ReplayFields):
  """Hyperparameters of every Q-ensemble agent (defaults: BDQN+P, Table 4)."""
  num_actions: int
  num_ensemble: int = 20
  hidden_sizes: Tuple[int, ...] = (64, 64)
  prior_scale: float = 5.0
  mask_probability: float = 1.0  # Bootstrap masks; 1.0 means none.
  action_rule: str = 'sample_member'
  epsilon: float = 0.0
  # A piecewise-linear epsilon over episodes: `epsilon_schedule[i]` at
  # episode `epsilon_schedule_episodes[i]`, the last value after (Chen et
  # al.'s 1 -> 0.1 -> 0.01). Empty: the constant `epsilon`.
  epsilon_schedule: Tuple[float, ...] = ()
  epsilon_schedule_episodes: Tuple[float, ...] = ()
  # Acting before the first learning step: 'greedy' (the action rule on
  # the untrained members) or 'uniform' (uniformly random, Chen et al.'s
  # "replay start size" of random actions).
  warmup_policy: str = 'greedy'
  ucb_lambda: float = 1.0
  infogain_scale: float = 0.0        # rho; 0 disables the InfoGain bonus.
  infogain_temperature: float = 1.0  # T.
  num_exploiters: int = 0            # TDU: members [0, K) exploit; 0: off.
  tdu_beta: float = 1.0
  # TD loss: 0 gives 0.5 td^2; kappa > 0 the Huber loss (Table 5, VizDoom).
  huber_param: float = 0.0
  # Bootstrap at the online network's greedy action (van Hasselt et al.,
  # 2016; Table 5) instead of the target's max.
  double_dqn: bool = False
  # Environment steps per learning step (Chen et al.'s "update frequency").
  update_period: int = 1
  # Adam's second-moment decay (Chen et al.: 0.99; optax's default 0.999).
  adam_b2: float = 0.999
  # The prior the target networks add: the online members' ('shared') or
  # one drawn apart for them ('distinct': TDU, "the target network uses a
  # distinct prior function").
  target_prior: str = 'shared'

  # Fields that may be arrays per agent (`per_agent.configured`), and those
  # whose "off" value compiles a feature out.
  ARRAY_FIELDS: ClassVar[Tuple[str, ...]] = (
      'learning_rate', 'discount', 'prior_scale', 'mask_probability',
      'epsilon', 'ucb_lambda', 'infogain_scale', 'infogain_temperature',
      'tdu_beta')
  SWITCH_FIELDS: ClassVar[Dict[str, float]] = {
      'prior_scale': 0.0, 'epsilon': 0.0, 'infogain_scale': 0.0,
      'mask_probability': 1.0}

  def __post_init__(self):
    common.check_common(self)
    common.require_one_of(self, 'action_rule', ACTION_RULES)
    common.require(0.0 <= self.epsilon <= 1.0, 'epsilon', 'in [0, 1]',
                   self.epsilon)
    common.require(all(0.0 <= e <= 1.0 for e in self.epsilon_schedule),
                   'epsilon_schedule', 'values in [0, 1]',
                   self.epsilon_schedule)
    common.require(
        len(self.epsilon_schedule_episodes) == len(self.epsilon_schedule),
        'epsilon_schedule_episodes',
        f'one episode per epsilon_schedule value '
        f'({len(self.epsilon_schedule)})', self.epsilon_schedule_episodes)
    common.require(
        all(0 <= a < b for a, b in zip(self.epsilon_schedule_episodes,
                                       self.epsilon_schedule_episodes[1:]))
        and all(e >= 0 for e in self.epsilon_schedule_episodes),
        'epsilon_schedule_episodes', 'increasing episodes >= 0',
        self.epsilon_schedule_episodes)
    common.require_one_of(self, 'warmup_policy', common.WARMUP_POLICIES)
    common.require_one_of(self, 'target_prior', TARGET_PRIORS)
    common.require(isinstance(self.update_period, int) and
                   not isinstance(self.update_period, bool) and
                   self.update_period >= 1, 'update_period', 'an int >= 1',
                   self.update_period)
    common.require(0.0 < self.adam_b2 < 1.0, 'adam_b2', 'in (0, 1)',
                   self.adam_b2)
    common.require(0.0 < self.mask_probability <= 1.0, 'mask_probability',
                   'in (0, 1]', self.mask_probability)
    common.require_nonnegative(self, 'prior_scale', 'ucb_lambda',
                               'infogain_scale', 'tdu_beta')
    common.require(self.infogain_temperature > 0, 'infogain_temperature',
                   '> 0', self.infogain_temperature)
    common.require(
        0 <= self.num_exploiters < self.num_ensemble or
        self.num_exploiters == 0, 'num_exploiters',
        f'in [0, num_ensemble={self.num_ensemble})', self.num_exploiters)
    common.require(self.num_exploiters != 1, 'num_exploiters',
                   '0 (off) or >= 2 (a standard deviation needs two)',
                   self.num_exploiters)


Config = QEnsembleConfig


def _network(config: QEnsembleConfig):
  """The members' module (`common.network`), one output per action."""
  return common.network(config, config.num_ensemble, 1)


def member_q_values(config, params, prior_params, observation) -> jnp.ndarray:
  """[M, A] Q-values of all members on one observation."""
  scales = jnp.full(config.num_ensemble, config.prior_scale)
  return common.apply_networks(config, _network(config), params, prior_params,
                               scales, observation)[..., 0]


def init(config: QEnsembleConfig, key: chex.PRNGKey,
         observation: jnp.ndarray) -> common.TrainState:
  params_key, prior_key, episode_key, rng = jax.random.split(key, 4)
  network = _network(config)
  make = lambda key: common.init_networks(config, network, key,
                                          config.num_ensemble, observation)
  params = make(params_key)
  prior_params = target_prior_params = None
  if per_agent.static_value(config, 'prior_scale') > 0:
    prior_params = make(prior_key)
    if config.target_prior == 'distinct':
      target_prior_params = make(jax.random.fold_in(prior_key, 1))
  return common.init_train_state(config, params, prior_params, rng,
                                 episode_key=episode_key,
                                 target_prior_params=target_prior_params)


def episode_member(config: QEnsembleConfig, episode_key, episode):
  """The member that acts in `episode` (uniform, reproducible from seed)."""
  return jax.random.randint(jax.random.fold_in(episode_key, episode), (), 0,
                            config.num_ensemble)


def act(config: QEnsembleConfig, state: common.TrainState, observation,
        episode):
  member = episode_member(config, state.episode_key, episode)
  return act_with_member(config, state, observation, member, episode)


def scores(config: QEnsembleConfig, state: common.TrainState, observation,
           clock, member) -> jnp.ndarray:
  """[A] scores whose argmax is the action rule's greedy action.

  sample_member: the acting `member`'s Q; vote: each action's votes (ties
  go to the lowest index, as argmax's); ucb: mean + lambda std; otherwise
  the ensemble mean. `clock` is unused (no schedule).
  """
  del clock
  q_values = member_q_values(config, state.params, state.prior_params,
                             observation)
  if config.action_rule == 'sample_member':
    return jax.nn.one_hot(member, config.num_ensemble) @ q_values
  if config.action_rule == 'vote':
    return exploration.vote_counts(q_values)
  if config.action_rule == 'ucb':
    return exploration.ucb_scores(q_values, config.ucb_lambda)
  return jnp.mean(q_values, axis=0)


def epsilon_at(config: QEnsembleConfig, episode) -> jnp.ndarray:
  """The exploration probability in `episode`: `epsilon`, or the
  piecewise-linear `epsilon_schedule` (held at its ends)."""
  if not config.epsilon_schedule:
    return jnp.asarray(config.epsilon, jnp.float32)
  return jnp.interp(jnp.asarray(episode, jnp.float32),
                    jnp.asarray(config.epsilon_schedule_episodes, jnp.float32),
                    jnp.asarray(config.epsilon_schedule, jnp.float32))


def act_with_member(config: QEnsembleConfig, state: common.TrainState,
                    observation, member, episode=0):
  """`act`, with the acting member (for 'sample_member') given explicitly.

  Random with probability `epsilon_at(episode)`; with warmup_policy
  'uniform', uniformly random until the first learning step.
  """
  action = jnp.argmax(scores(config, state, observation, None, member))
  epsilon = (epsilon_at(config, episode) if config.epsilon_schedule or
             per_agent.static_value(config, 'epsilon') > 0 else 0.0)
  return common.explore(state, action, config.num_actions, epsilon,
                        uniform_warmup=config.warmup_policy == 'uniform')


def _sample_losses(config, params, target_params, prior_params,
                   target_prior_params, mask, observation, action, reward,
                   discount, next_observation):
  """[M] squared TD losses of one transition, and diagnostics."""
  q = member_q_values(config, params, prior_params, observation)  # [M, A]
  q_taken = q @ jax.nn.one_hot(action, config.num_actions)  # [M]
  q_next = member_q_values(
      config, target_params,
      prior_params if target_prior_params is None else target_prior_params,
      next_observation)
  if config.double_dqn:
    online_next = member_q_values(config, params, prior_params, next_observation)
    choice = jax.nn.one_hot(jnp.argmax(online_next, axis=-1),
                            config.num_actions)
    bootstrap = jax.lax.stop_gradient(jnp.sum(q_next * choice, axis=-1))
  else:
    bootstrap = jax.lax.stop_gradient(jnp.max(q_next, axis=-1))  # [M]
  rewards = jnp.full(config.num_ensemble, reward)
  bonus = jnp.zeros(())
  if per_agent.static_value(config, 'infogain_scale') > 0:
    bonus = config.infogain_scale * exploration.infogain_bonus(
        jax.lax.stop_gradient(q), config.infogain_temperature)
    rewards = rewards + bonus
  if config.num_exploiters:
    rewards, bonus = exploration.tdu_rewards(
        rewards, rewards + discount * bootstrap - q_taken,
        config.num_exploiters, config.tdu_beta)
  td_errors = rewards + discount * bootstrap - q_taken
  if per_agent.static_value(config, 'huber_param') > 0:
    return mask * optax.huber_loss(td_errors, delta=config.huber_param), bonus
  return mask * 0.5 * jnp.square(td_errors), bonus


def learn(config: QEnsembleConfig, state: common.TrainState, batch, episode,
          weights=None):
  """One SGD step on a batch, and the target update.

  Returns (state, metrics, [B] each sample's unweighted loss (summed over members), e.g.
  for replay priorities); `weights` [B] (prioritized replay's importance
  weights) weight the samples' losses, None weighs them equally.
  """
  del episode
  rng, mask_key = jax.random.split(state.rng)
  mask_shape = (batch.action.shape[0], config.num_ensemble)
  if per_agent.static_value(config, 'mask_probability') < 1.0:
    masks = jax.random.bernoulli(mask_key, config.mask_probability,
                                 mask_shape).astype(jnp.float32)
  else:
    masks = jnp.ones(mask_shape)  # No bootstrap: skip the random draws.

  def loss_fn(params):
    member_losses, bonus = jax.vmap(
        _sample_losses,
        in_axes=(None, None, None, None, None, 0, 0, 0, 0, 0, 0))(
            config, params, state.target_params, state.prior_params,
            state.target_prior_params, masks,
            batch.observation, batch.action, batch.reward, batch.discount,
            batch.next_observation)  # [B, M]
    weighted = member_losses
    if weights is not None:
      weighted = member_losses * weights[:, None]
    # Sum over members (independent parameters), mean over the batch.
    return jnp.sum(jnp.mean(weighted, axis=0)), (bonus, member_losses)

  (loss, (bonus, member_losses)), grads = jax.value_and_grad(
      loss_fn, has_aux=True)(state.params)
  new_state = common.sgd_step(config, state, grads, rng=rng)
  return new_state, {'loss': loss, 'bonus': jnp.mean(bonus)}, jnp.sum(
      member_losses, axis=1)


act_with_member_jit = jax.jit(act_with_member, static_argnums=0)
q_values_batch_jit = jax.jit(jax.vmap(member_q_values, in_axes=(None, None, None, 0)),
                             static_argnums=0)

LEARNER = pure.LearnerFns(init, act, learn, metrics=('loss', 'bonus'))


class QEnsembleAgent(common.ReplayAgent):
  """A Q-ensemble agent as a bsuite `base.Agent`."""

  LEARNER = LEARNER

  def q_values(self, observations) -> jnp.ndarray:
    """[B, M, A] Q-values of every member for a batch of observations."""
    return q_values_batch_jit(self._config, self.state.params,
                              self.state.prior_params,
                              jnp.asarray(observations, jnp.float32))


# The agents of this learner: each is its settings over `QEnsembleConfig`'s
# defaults (BDQN+P, PE-DQN paper Table 4); any config field overrides.
AGENTS = {
    # BDQN+P: bootstrapped DQN with randomized priors (Osband et al., 2018):
    # 20 members MLP [64, 64], prior scale 5, shared replay, optional
    # bootstrap masks (mask_probability); one member acts per episode.
    'boot_dqn': dict(action_rule='sample_member'),
    # DQN (Mnih et al., 2015) at bsuite's baseline settings: MLP [64, 64],
    # Adam 1e-3 (eps 1e-8), batch 32, epsilon-greedy 0.05.
    'dqn': dict(common.BSUITE_DQN_REPLAY, num_ensemble=1, prior_scale=0.0,
                action_rule='epsilon_greedy', epsilon=0.05, adam_eps=1e-8),
    # Ensemble Voting (Chen et al., Algorithm 1): majority vote of the
    # members' greedy actions (ties: lowest action index).
    'ensemble_voting': dict(action_rule='vote'),
    # UCB (Chen et al., Algorithm 2): argmax_a mean + lambda std. lambda = 1:
    # Chen et al.'s 0.1 was tuned for Atari's reward scale; bsuite's returns
    # are O(1), where 0.1 barely changes the greedy action.
    'ucb': dict(action_rule='ucb', ucb_lambda=1.0),
    # UCB + InfoGain (Chen et al., Algorithm 3): UCB acting, and every
    # member's reward gains rho * mean_k KL(Boltzmann_k || mean_j
    # Boltzmann_j) at s at temperature T. rho = T = 1: Chen et al. tune both
    # per Atari game; these suit bsuite's O(1) returns.
    'ucb_infogain': dict(action_rule='ucb', ucb_lambda=1.0,
                         infogain_scale=1.0, infogain_temperature=1.0),
}

# VizDoom MyWayHome (PE-DQN paper Table 5). BDQN+P: 10 heads on one IMPALA
# torso, Huber loss, double DQN.
VIZDOOM_AGENTS = {
    'boot_dqn': dict(common.VIZDOOM_SHARED, num_ensemble=10,
                     learning_rate=2.5e-5, prior_scale=1.0, double_dqn=True,
                     action_rule='sample_member'),
}


# `default_agent(obs_spec, action_spec, seed=0, num_episodes=None,
# agent_name='boot_dqn', **overrides)`; these rules follow no horizon-dependent
# schedule.
default_agent = common.default_agent_fn(QEnsembleAgent, QEnsembleConfig,
                                        AGENTS, 'boot_dqn')
