"""Agents, looked up by their command-line names: as bsuite `base.Agent`s
(`make`) or as values, three pure functions over one state (`make_pure`).

  from agents import make, make_pure
  agent = make('pe_dqn', env.observation_spec(), env.action_spec(), seed=0)
  pure_agent = make_pure('pe_dqn', env.observation_spec(), env.action_spec())
  state = pure_agent.init(jax.random.PRNGKey(0))

An agent is its learner's config under the agent's settings
(`agent_settings`); a preset is one of two sets of those values for every
agent: 'default' (ours) or 'paper' (`preset='paper'`: its paper's stated
settings, `agents.paper_presets`; docs/paper_settings.md lists each
departure).
"""

import dataclasses
import functools
import importlib
from typing import Any, Callable, Dict, Optional, Tuple

from agents import paper_presets

# Agent name -> its learner module. Each learner holds `AGENTS` (each agent's
# settings over the learner's config: bsuite, PE-DQN paper Table 4) and may
# hold `VIZDOOM_AGENTS` (Table 5): an agent is a learner at its settings.
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
  settings."""
  return functools.partial(_learner(name).default_agent, agent_name=name)


def config_class(name: str):
  """The config dataclass of agent `name` (its fields are the hyperparameters)."""
  return _learner(name).Config


def agent_settings(name: str) -> Dict[str, Any]:
  """The settings that make agent `name` out of its learner's config
  defaults (bsuite, Table 4)."""
  return dict(_learner(name).AGENTS[name])


def vizdoom_settings(name: str) -> Dict[str, Any]:
  """Agent `name`'s VizDoom MyWayHome settings (Table 5)."""
  table = getattr(_learner(name), 'VIZDOOM_AGENTS', {})
  if name not in table:
    raise ValueError(f'No VizDoom settings for {name!r}; agents with them: '
                     f'{", ".join(vizdoom_agent_names())}.')
  return dict(table[name])


def vizdoom_agent_names() -> Tuple[str, ...]:
  """Agents with VizDoom settings (`vizdoom_settings`)."""
  return tuple(n for n in AGENT_NAMES if n in getattr(
      importlib.import_module(_REGISTRY[n]), 'VIZDOOM_AGENTS', {}))


def defaults(name: str, preset_name: str = 'default',
             num_episodes: Optional[int] = None) -> Dict[str, Any]:
  """Agent `name`'s hyperparameter values before overrides: its config's
  defaults under its settings (`agent_settings`), and the preset
  `preset_name`'s ('paper': its paper's, at horizon `num_episodes`); fields
  without a default are left out."""
  values = {f.name: f.default for f in dataclasses.fields(config_class(name))
            if f.default is not dataclasses.MISSING}
  values.update(agent_settings(name))
  values.update(paper_presets.settings(name, preset_name, num_episodes))
  return values


def hyperparameter_names(name: str) -> Tuple[str, ...]:
  """Names that `make(name, ..., **overrides)` accepts as overrides."""
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
      obs_spec, action_spec, num_episodes=num_episodes, agent_name=name,
      **values)


# bsuite's settings of an agent for an experiment (return range, deep sea's
# size-scaled prior, the one-hot torso), from their one home.
# pylint: disable=g-import-not-at-top,wrong-import-position
from agents.bsuite_settings import (  # noqa: E402,F401
    for_experiment, for_jax_deep_sea, size_scaled_prior)
