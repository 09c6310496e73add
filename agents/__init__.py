"""Agents, looked up by their command-line names: as bsuite `base.Agent`s
(`make`) or as values, three pure functions over one state (`make_pure`).

  from agents import make, make_pure
  agent = make('pe_dqn', env.observation_spec(), env.action_spec(), seed=0)
  pure_agent = make_pure('pe_dqn', env.observation_spec(), env.action_spec())
  state = pure_agent.init(jax.random.PRNGKey(0))

`preset='paper'` builds an agent with its paper's stated settings instead of
our defaults (`agents.paper_presets`; docs/paper_settings.md lists each
departure).
"""

import dataclasses
import functools
import importlib
from typing import Any, Callable, Dict, Optional, Tuple

from agents import paper_presets

# Agent name -> its learner module. Each learner holds `PRESETS` (bsuite,
# PE-DQN paper Table 4) and may hold `VIZDOOM_PRESETS` (Table 5): an agent is
# a learner at a preset.
_REGISTRY: Dict[str, str] = {
    'pe_dqn': 'agents.pe_dqn',
    'pe_dqn_qr_qr': 'agents.pe_dqn',
    'pe_dqn_c51_c51': 'agents.pe_dqn',
    'pe_dqn_ind': 'agents.pe_dqn',
    'dqn': 'agents.q_ensemble',
    'boot_dqn': 'agents.q_ensemble',
    'ensemble_voting': 'agents.q_ensemble',
    'ucb': 'agents.q_ensemble',
    'ucb_infogain': 'agents.q_ensemble',
    'tdu': 'agents.tdu',
    'c51': 'agents.distributional',
    'qr_dqn': 'agents.distributional',
    'dltv_qr': 'agents.distributional',
    'ids_c51': 'agents.ids_c51',
}

AGENT_NAMES = tuple(_REGISTRY)


def _learner(name: str):
  if name not in _REGISTRY:
    raise ValueError(f'Unknown agent {name!r}; valid names: '
                     f'{", ".join(AGENT_NAMES)}.')
  return importlib.import_module(_REGISTRY[name])


def default_agent_fn(name: str) -> Callable:
  """`default_agent` of the agent called `name`: its learner's, at its
  preset."""
  return functools.partial(_learner(name).default_agent, preset=name)


def config_class(name: str):
  """The config dataclass of agent `name` (its fields are the hyperparameters)."""
  return _learner(name).Config


def preset(name: str) -> Dict[str, Any]:
  """The settings that make agent `name` out of its learner's config
  defaults (bsuite, Table 4)."""
  return dict(_learner(name).PRESETS[name])


def vizdoom_preset(name: str) -> Dict[str, Any]:
  """Agent `name`'s VizDoom MyWayHome settings (Table 5)."""
  presets = getattr(_learner(name), 'VIZDOOM_PRESETS', {})
  if name not in presets:
    raise ValueError(f'No VizDoom settings for {name!r}; agents with them: '
                     f'{", ".join(vizdoom_agent_names())}.')
  return dict(presets[name])


def vizdoom_agent_names() -> Tuple[str, ...]:
  """Agents with VizDoom settings (`vizdoom_preset`)."""
  return tuple(n for n in AGENT_NAMES if n in getattr(
      importlib.import_module(_REGISTRY[n]), 'VIZDOOM_PRESETS', {}))


def defaults(name: str, preset_name: str = 'default',
             num_episodes: Optional[int] = None) -> Dict[str, Any]:
  """Agent `name`'s hyperparameter values before overrides: its config's
  defaults under its preset, and `preset_name`'s settings ('paper': its
  paper's, at horizon `num_episodes`); fields without a default are left
  out."""
  values = {f.name: f.default for f in dataclasses.fields(config_class(name))
            if f.default is not dataclasses.MISSING}
  values.update(preset(name))
  values.update(paper_presets.settings(name, preset_name, num_episodes))
  return values


def hyperparameter_names(name: str) -> Tuple[str, ...]:
  """Names that `make(name, ..., **overrides)` accepts as overrides."""
  import dataclasses  # pylint: disable=g-import-not-at-top
  return tuple(f.name for f in dataclasses.fields(config_class(name))
               if f.name != 'num_actions')


def make(name: str, obs_spec, action_spec, seed: int = 0,
         preset: str = 'default', **overrides):
  """Builds agent `name` for an environment's specs (see `AGENT_NAMES`).

  preset: 'default' (ours) or 'paper' (the paper's stated settings,
    `agents.paper_presets`, at the horizon `num_episodes` if given).
  **overrides: any config field of the agent, over the preset's values;
    `num_episodes`, the training horizon, for agents with schedules.
  """
  values = paper_presets.settings(name, preset,
                                  overrides.get('num_episodes'))
  values.update(overrides)
  return default_agent_fn(name)(obs_spec, action_spec, seed=seed, **values)


def make_pure(name: str, obs_spec, action_spec, num_episodes=None,
              preset: str = 'default', **overrides):
  """Agent `name` as a value: `agents.pure.PureAgent(init, act, update)`.

  Same hyperparameters and presets as `make`; the seed is the key given to
  `init`, and `init(jax.random.PRNGKey(seed))` is the state
  `make(..., seed=seed)` starts from.
  """
  values = paper_presets.settings(name, preset, num_episodes)
  values.update(overrides)
  return _learner(name).default_agent.pure(
      obs_spec, action_spec, num_episodes=num_episodes, preset=name, **values)


# Deep sea's observations are one-hot over its N x N cells and every
# network, the randomized prior too, is He-initialised (first-layer variance
# 2 / N^2), so each untrained output, and the ensemble disagreement a prior
# leaves on untried actions, shrinks as 1 / N (docs/study/prior_and_scaling.md,
# "Why"). A quantile prior scale set at size 10 (PE-DQN's 0.5, from the
# study) is therefore multiplied by N / 10 on deep sea sizes above 10.
PRIOR_REFERENCE_SIZE = 10
SIZE_SCALED_PRIOR_EXPERIMENTS = ('deep_sea', 'deep_sea_stochastic')


def size_scaled_prior(scale: float, size: int) -> float:
  """A prior scale set at deep sea size 10, at size `size`: scale x N / 10
  above 10, `scale` itself at 10 and below (where nothing was measured)."""
  return scale * max(1.0, size / PRIOR_REFERENCE_SIZE)


def for_experiment(name: str, overrides: Dict[str, Any],
                   experiment_name: str, **settings) -> Dict[str, Any]:
  """`overrides` plus agent `name`'s settings for a bsuite experiment (name
  and settings, e.g. 'deep_sea', size=20):

  - the return range (v_min, v_max) for agents with a categorical support,
    at the discount the agent will use (the `discount` override, else its
    default);
  - on deep sea (both variants) above size 10, the quantile prior scale of
    agents with quantile members, scaled by `size_scaled_prior`.

  The user's own v_min / v_max / quantile_prior_scale win, and so do those
  of a `preset` in `overrides` (the paper preset's prior is not scaled).
  """
  from agents import return_ranges  # pylint: disable=g-import-not-at-top
  kwargs = dict(overrides)
  preset_name = kwargs.get('preset', 'default')
  resolved = defaults(name, preset_name)
  chosen = set(kwargs) | set(paper_presets.settings(name, preset_name))
  fields = {f.name: f for f in dataclasses.fields(config_class(name))}
  if ({'v_min', 'v_max'} <= set(fields)
      and not {'v_min', 'v_max'} & chosen):
    discount = kwargs.get('discount', resolved['discount'])
    kwargs['v_min'], kwargs['v_max'] = (
        return_ranges.return_range_for_experiment(experiment_name, discount,
                                                  **settings))
  size = settings.get('size')
  if (experiment_name in SIZE_SCALED_PRIOR_EXPERIMENTS
      and size is not None and size > PRIOR_REFERENCE_SIZE
      and 'quantile_prior_scale' in fields
      and 'quantile_prior_scale' not in chosen
      and 'quantile' in kwargs.get('member_kinds',
                                   resolved.get('member_kinds', ()))):
    kwargs['quantile_prior_scale'] = size_scaled_prior(
        resolved['quantile_prior_scale'], size)
  return kwargs


def for_jax_deep_sea(name: str, overrides: Dict[str, Any],
                     experiment_name: str, size: int) -> Dict[str, Any]:
  """`for_experiment` for a JAX deep sea run, with the 'one_hot_mlp'
  torso: deep sea's observations are one-hot grids (all zeros at the end),
  so the first layer is a row lookup with the same parameters and outputs
  as the 'mlp' torso's product, at a fraction of its cost (at size 100 the
  product is 10,000 x width per sample). A `torso` in `overrides` wins."""
  kwargs = for_experiment(name, overrides, experiment_name, size=size)
  fields = {f.name for f in dataclasses.fields(config_class(name))}
  if 'torso' in fields:
    kwargs.setdefault('torso', 'one_hot_mlp')
  return kwargs
