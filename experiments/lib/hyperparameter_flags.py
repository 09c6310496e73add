"""One command-line flag per hyperparameter of any agent (each agent's
config fields), and the values a user set, checked against the agent: shared
by every script that trains agents (`run_bsuite`, `run_vizdoom`, `tune`,
`deep_sea_sweep`, `deep_sea_scaling`, `uncertainty_maps`): `--name=value`,
'none' for an optional field's None."""

import dataclasses
import sys
import typing
from typing import Any, Dict

from absl import app
from absl import flags
from dm_env import specs
import numpy as np

import agents
from agents import hyperparameters
from agents import paper_presets

FLAGS = flags.FLAGS


def _flag_kind(annotation) -> str:
  text = str(annotation)
  if 'Tuple[int' in text or 'tuple[int' in text:
    return 'int_list'
  if 'Tuple[float' in text or 'tuple[float' in text:
    return 'float_list'
  if 'Tuple[str' in text or 'tuple[str' in text:
    return 'str_list'
  if annotation is bool or text == 'bool':
    return 'bool'
  if annotation is int or text == 'int' or 'Optional[int]' in text:
    return 'int'
  if annotation is float or text == 'float' or 'float' in text:
    return 'float'
  return 'str'


def _hyperparameter_kinds() -> Dict[str, str]:
  """Every hyperparameter of every registered agent -> its flag kind."""
  kinds = {}
  for name in agents.AGENT_NAMES:
    cls = agents.config_class(name)
    hints = typing.get_type_hints(cls)
    for field in dataclasses.fields(cls):
      if field.name != 'num_actions':
        kinds.setdefault(field.name, _flag_kind(hints[field.name]))
  return kinds


HYPERPARAMETERS = _hyperparameter_kinds()


def _optional_names():
  """Hyperparameters whose value may be None (`Optional[...]` fields)."""
  names = set()
  for name in agents.AGENT_NAMES:
    for field, hint in typing.get_type_hints(
        agents.config_class(name)).items():
      if type(None) in typing.get_args(hint):
        names.add(field)
  return frozenset(names)


# Given as 'none' on the command line (e.g. --beta_decay_episodes=none: a
# constant beta, where leaving the flag out decays over a third of the
# episodes), so every value a config takes has a flag spelling.
OPTIONAL = _optional_names()


class _OptionalFloatParser(flags.FloatParser):
  """A number, or 'none' for None."""

  def parse(self, argument):
    if isinstance(argument, str) and argument.strip().lower() == 'none':
      return None
    return super().parse(argument)

  def flag_type(self):
    return 'float or none'


def define_hyperparameter_flags() -> None:
  """One flag per hyperparameter of any agent, unset by default.

  They are the running script's own flags (absl's main module), so its
  `--help` lists them, not only `--helpfull`.
  """
  main = sys.argv[0] if sys.argv and sys.argv[0] else None
  for name, kind in sorted(HYPERPARAMETERS.items()):
    text = hyperparameters.describe(name)
    if kind == 'bool':
      flags.DEFINE_boolean(name, None, text, module_name=main)
    elif kind == 'int':
      flags.DEFINE_integer(name, None, text, module_name=main)
    elif kind == 'float' and name in OPTIONAL:
      flags.DEFINE(_OptionalFloatParser(), name, None,
                   f"{text} 'none' sets None.", module_name=main)
    elif kind == 'float':
      flags.DEFINE_float(name, None, text, module_name=main)
    elif kind.endswith('list'):
      flags.DEFINE_list(name, None, text, module_name=main)
    else:
      flags.DEFINE_string(name, None, text, module_name=main)


def user_overrides(agent_name: str) -> Dict[str, Any]:
  """Hyperparameters set on the command line, checked against the agent."""
  accepted = set(agents.hyperparameter_names(agent_name))
  overrides = {}
  for name, kind in HYPERPARAMETERS.items():
    if FLAGS[name].present:
      if name not in accepted:
        raise app.UsageError(
            f'--{name} is not a hyperparameter of {agent_name}; its '
            f'hyperparameters: {sorted(accepted)}.')
      value = FLAGS[name].value
      try:
        if kind == 'int_list':
          value = tuple(int(v) for v in value)
        elif kind == 'float_list':
          value = tuple(float(v) for v in value)
        elif kind == 'str_list':
          value = tuple(value)
      except ValueError:
        raise app.UsageError(
            f'--{name} must be comma-separated '
            f'{"ints" if kind == "int_list" else "numbers"}, got '
            f'{",".join(value)!r}.') from None
      overrides[name] = value
  # Scripts that share these flags without presets (run_vizdoom: Table 5's
  # settings) define no --preset.
  if 'preset' in FLAGS:
    # A pseudo-hyperparameter: recorded in each run's identity with the rest.
    overrides.update(paper_presets.preset_overrides(FLAGS.preset))
  check_overrides(agent_name, overrides)
  return overrides


def check_overrides(agent_name: str, overrides: Dict[str, Any]) -> None:
  """Builds the agent's config once, before any environment or folder, so a
  bad value is a one-line usage error naming it."""
  try:
    agents.make_pure(agent_name, specs.Array((1,), np.float32),
                     specs.DiscreteArray(2), num_episodes=1, **overrides)
  except (ValueError, TypeError) as error:
    raise app.UsageError(str(error)) from None
