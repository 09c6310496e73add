"""How a VizDoom MyWayHome run builds its agent: each agent's Table 5
settings (`agents.vizdoom_settings`) with the user's overrides, and the schedules the runner counts in
frames (`agents.pixel.PixelSettings`, the one place of the run's settings),
turned into the config's units. Shared by `run_vizdoom` and the VizDoom
benchmark."""

from typing import Any, Dict

import agents
from agents import common
from agents import distributional
from agents import ids_c51
from agents import pe_dqn
from experiments.lib import my_way_home


# Config fields the runner sets from its frame-counted flags.
RUNNER_FIELDS = {
    'beta_decay_episodes': '--beta_decay_fraction',
    'target_update_period': '--target_update_frames',
    'replay_capacity': '--replay_frames',
    'min_replay_size': '--learning_starts',
}


# Agents with VizDoom settings (Table 5, `VIZDOOM_AGENTS` beside each
# learner).
AGENTS = agents.vizdoom_agent_names()


def make_config(overrides: Dict[str, Any], frames: int, num_envs: int,
                target_update_frames: int, beta_decay_fraction: float,
                agent: str = 'pe_dqn'):
  """The agent's Table 5 config with the user's overrides and the frame
  schedules."""
  if agent not in AGENTS:
    raise ValueError(f'`agent` must be one of {sorted(AGENTS)}, got '
                     f'{agent!r}')
  config_class = agents.config_class(agent)
  owned = sorted(set(overrides) & set(RUNNER_FIELDS))
  if owned:
    raise ValueError(f'{["--" + n for n in owned]} are set by the runner; '
                     f'use {[RUNNER_FIELDS[n] for n in owned]}.')
  values = agents.vizdoom_settings(agent)
  values.update(overrides)
  if 'adam_eps' not in overrides:
    values['adam_eps'] = common.adam_eps_for_batch(
        values['batch_size'], common.VIZDOOM_ADAM_EPS_NUMERATOR)
  common.require(0 < beta_decay_fraction <= 1, 'beta_decay_fraction',
                 'in (0, 1]', beta_decay_fraction)
  if config_class in (pe_dqn.PEDQNConfig, ids_c51.IDSConfig):
    values['beta_decay_episodes'] = max(1.0, beta_decay_fraction * frames)
  if config_class is distributional.DistributionalConfig:
    values.setdefault('dltv_time_scale', 1e3 / frames)
  values['target_update_period'] = max(1, target_update_frames // num_envs)
  return common.make_config(config_class, values,
                            num_actions=len(my_way_home.BUTTONS))
