"""What each hyperparameter means, once for every agent that has it.

The values live in the config dataclasses and the agents' settings beside
each learner (`AGENTS`); this module only says what a name means, for `run_bsuite --help`
and `describe`. A config field without an entry here fails
tests/test_agent_matrix.py.
"""

from typing import Dict, Tuple

import agents

MEANINGS: Dict[str, str] = {
    # Networks (common.NetworkFields).
    'torso': "'mlp' (hidden_sizes), 'one_hot_mlp' (the same MLP as a row "
             "lookup, for one-hot observations such as deep sea's) or "
             "'impala' (pixels).",
    'impala_channels': 'Channels of the IMPALA torso stages (torso=impala).',
    'impala_hidden': 'Width of the IMPALA torso output layer.',
    'spectral_norm': 'Spectral norm on the IMPALA residual convolutions.',
    'max_grad_norm': 'Clip gradients to this global norm (unset: no clip).',
    'hidden_sizes': 'MLP hidden layer widths, e.g. 64,64.',
    'initializer': "MLP initialisation: 'he' (He truncated normal, zero "
                   "bias; PE-DQN Table 4), 'haiku' (hk.Linear's default; "
                   "bsuite's baselines) or 'pytorch' (torch.nn.Linear's "
                   "default; the PE-DQN authors' code).",
    # Optimiser, replay, targets (common.ReplayFields).
    'learning_rate': 'Adam learning rate.',
    'adam_eps': "Adam's epsilon (unset: 0.001 / batch_size, Table 4).",
    'batch_size': 'Transitions per learning step.',
    'replay_capacity': 'Transitions the replay keeps (FIFO).',
    'min_replay_size': 'Transitions stored before learning starts.',
    'target_update_period': 'Learning steps between target network copies.',
    'discount': 'Discount gamma of the return.',
    'huber_param': 'Huber kappa of the TD / quantile loss (0: squared / '
                   'plain quantile loss).',
    'double_dqn': "Bootstrap at the online network's greedy action.",
    'update_period': 'Environment steps per learning step (Chen et al.: '
                     '4).',
    'adam_b2': "Adam's second-moment decay beta_2.",
    'target_prior': "The target networks' prior: 'shared' (the online "
                    "members') or 'distinct' (drawn apart; TDU).",
    # Ensembles and priors.
    'num_ensemble': 'Members of the Q ensemble.',
    'prior_scale': 'Scale of the randomized prior network(s) (0: none).',
    'mask_probability': 'Bootstrap mask probability per member and '
                        'transition (1: no masks).',
    'action_rule': "How actions are chosen: Q ensembles 'epsilon_greedy', "
                   "'sample_member', 'vote', 'ucb'; distributional models "
                   "'epsilon_greedy', 'dltv', 'statistic'.",
    'epsilon': 'Probability of a uniformly random action.',
    'epsilon_schedule': 'Epsilon values at the episodes of '
                        'epsilon_schedule_episodes, linear between them '
                        '(empty: the constant epsilon).',
    'epsilon_schedule_episodes': 'Episodes at which epsilon_schedule\'s '
                                 'values hold, increasing.',
    'ucb_lambda': 'lambda of argmax_a mean + lambda std (UCB).',
    'infogain_scale': 'rho: weight of the InfoGain bonus (0: off).',
    'infogain_temperature': 'T of the members\' Boltzmann policies '
                            '(InfoGain).',
    'num_exploiters': 'TDU: members that learn from the extrinsic reward '
                      '(the rest explore; 0: TDU off).',
    'tdu_beta': 'TDU: weight beta of the TD-error std in the explorers\' '
                'reward.',
    # Distributional models.
    'kind': "'categorical' (C51) or 'quantile' (QR-DQN).",
    'num_atoms': 'Atoms (categorical) or quantiles per action, K.',
    'v_min': 'Lower end of the categorical support (unset: from the '
             "experiment's return range).",
    'v_max': 'Upper end of the categorical support (unset: from the '
             "experiment's return range).",
    'dltv_beta0': 'DLTV: beta0 of c_t = beta0 sqrt(log(a t) / (a t)).',
    'dltv_time_scale': 'DLTV: a of c_t (unset: 10^3 / num_episodes, Table '
                       "4; 1: Mavrin et al.'s).",
    'dltv_clock': "DLTV: what t counts, 'episodes' (Table 4) or 'steps' "
                  '(environment steps).',
    'dltv_bonus': "DLTV: 'std', c_t sigma_+ (Mavrin et al.), or "
                  "'variance', 4 c_t sigma_+^2 (the PE-DQN authors' code).",
    'statistic': "action_rule='statistic': the moment acted on (mean, "
                 'variance, skewness, kurtosis).',
    # PE-DQN.
    'member_kinds': 'PE-DQN: the projection of each ensemble member, e.g. '
                    'quantile,categorical.',
    'quantile_prior_scale': 'PE-DQN: randomized prior scale of quantile '
                            'members (on deep sea above size 10 the '
                            'runners scale the default by N / 10).',
    'categorical_prior_scale': 'PE-DQN: randomized prior scale of '
                               'categorical members.',
    'bonus_prior_scale': 'PE-DQN: randomized prior scale of the bonus '
                         'model.',
    'bonus_v_max': 'PE-DQN: the bonus support is [bonus_v_min, '
                   'bonus_v_max] (unset: 2 (v_max - v_min)).',
    'bonus_v_min': 'PE-DQN: bottom of the bonus support.',
    'beta_init': 'Exploration weight at the start (PE-DQN: bonus weight '
                 'beta; IDS: lambda).',
    'beta_final': 'Exploration weight after beta_decay_episodes.',
    'beta_decay_episodes': 'Episodes of the linear beta decay (unset: a '
                           'third of --num_episodes).',
    'propagate_bonus': 'PE-DQN: learn a bonus model that propagates the '
                       'intrinsic reward (False: PE-DQN[Ind.]).',
    'independent_targets': 'PE-DQN: each member bootstraps from itself, '
                           'not the ensemble mixture.',
    'intrinsic_reward_prior': 'PE-DQN: the bonus is the raw output plus '
                              'w_avg(s, a).',
    'disagreement': "PE-DQN: W1 between members, 'projected' or 'exact'.",
    'normalize_intrinsic': 'PE-DQN: divide the intrinsic signal by its '
                           'running std.',
    'warmup_policy': "Acting before learning starts: 'uniform' (random) or "
                     "'greedy' (the action rule on untrained networks).",
    # IDS-C51.
    'c51_hidden_sizes': "IDS: the C51 model's MLP widths.",
    'c51_learning_rate': "IDS: the C51 model's learning rate.",
    'c51_prior_scale': "IDS: the C51 model's prior scale.",
    'eps1': 'IDS: smoothing of the return variance rho^2.',
    'eps2': 'IDS: floor of the information gain.',
    'rho_clip': "IDS: unset, [noclip] (rho^2 smoothed by eps1); c, [clip], "
                'rho^2 = max(Var Z / mean Var Z, c) (Eq. 18: 0.25).',
}


# The values each numeric hyperparameter's check accepts (the configs'
# `__post_init__` refuse the rest, naming the range).
RANGES: Dict[str, str] = {
    'learning_rate': '> 0', 'c51_learning_rate': '> 0',
    'adam_eps': '> 0, or unset', 'adam_b2': 'in (0, 1)',
    'batch_size': 'an int in [1, replay_capacity]',
    'replay_capacity': 'an int >= 1',
    'min_replay_size': 'an int in [1, replay_capacity]',
    'target_update_period': 'an int >= 1', 'update_period': 'an int >= 1',
    'discount': 'in [0, 1]', 'impala_channels': 'one or more ints >= 1',
    'impala_hidden': 'an int >= 1', 'max_grad_norm': '> 0, or unset',
    'hidden_sizes': 'ints >= 1', 'c51_hidden_sizes': 'ints >= 1',
    'num_atoms': 'an int >= 2', 'prior_scale': '>= 0',
    'quantile_prior_scale': '>= 0', 'categorical_prior_scale': '>= 0',
    'bonus_prior_scale': '>= 0', 'c51_prior_scale': '>= 0',
    'v_min': '< v_max', 'v_max': '> v_min',
    'bonus_v_max': '> 0 and > bonus_v_min, or unset',
    'bonus_v_min': '< the top of the bonus support',
    'beta_init': '>= 0', 'beta_final': '>= 0',
    'beta_decay_episodes': '> 0, or unset', 'huber_param': '>= 0',
    'num_ensemble': 'an int >= 1 (IDS: >= 2)',
    'mask_probability': 'in (0, 1]', 'epsilon': 'in [0, 1]',
    'epsilon_schedule': 'values in [0, 1]',
    'epsilon_schedule_episodes': 'increasing values >= 0, one per '
                                 'epsilon_schedule value',
    'ucb_lambda': '>= 0', 'infogain_scale': '>= 0',
    'infogain_temperature': '> 0',
    'num_exploiters': '0, or an int in [2, num_ensemble)',
    'tdu_beta': '>= 0', 'dltv_beta0': '>= 0',
    'dltv_time_scale': '> 0, or unset', 'eps1': '> 0', 'eps2': '> 0',
    'rho_clip': '> 0, or unset',
}


def agents_with(name: str) -> Tuple[str, ...]:
  """The registered agents that accept hyperparameter `name`."""
  return tuple(a for a in agents.AGENT_NAMES
               if name in agents.hyperparameter_names(a))


def _value_text(value) -> str:
  if isinstance(value, tuple):
    return ','.join(str(v) for v in value) or '(empty)'
  return f'{value:g}' if isinstance(value, float) else str(value)


def defaults_text(name: str) -> str:
  """Each agent's default of `name`, agents with equal values together:
  '0.001 (all agents)' or '5 (boot_dqn, ucb); 3 (tdu)'."""
  users = agents_with(name)
  groups: Dict[str, list] = {}
  for agent in users:
    value = agents.defaults(agent).get(name)
    groups.setdefault('unset' if value is None else _value_text(value),
                      []).append(agent)
  if len(groups) == 1:
    [(value, _)] = groups.items()
    return value + (' (all agents)' if len(users) == len(agents.AGENT_NAMES)
                    else '')
  return '; '.join(f'{value} ({", ".join(names)})'
                   for value, names in groups.items())


def describe(name: str) -> str:
  """One help line: the meaning, the range, which agents use it, their
  defaults."""
  users = agents_with(name)
  which = ('all agents' if len(users) == len(agents.AGENT_NAMES)
           else ', '.join(users))
  allowed = f' Range: {RANGES[name]}.' if name in RANGES else ''
  return (f'{MEANINGS[name]}{allowed} Agents: {which}. Defaults: '
          f'{defaults_text(name)}.')
