"""A unit: one agent trained on one bsuite id with one seed, whichever
runner trains it (bsuite's loop, lockstep seeds, the jitted runner).

  units = make_units('dqn', ['catch/0', 'catch/1'], seeds=[0, 1])
  units[0].directory('results')  # 'results/dqn/seed_0'

Every runner keeps a unit in one place: its log (bsuite's CSV), its
record beside it (`unit_files.write_record`), its lock and its checkpoints
under `<save_path>/<agent>/seed_K/`, so a unit is found, skipped, resumed
and scored the same way whoever wrote it. The resolved config is the
runner's (it depends on the environment's specs) and goes into the record.
"""

import dataclasses
import os
from typing import Any, Dict, List, Sequence, Tuple

from bsuite import sweep

from experiments.lib import unit_files
from pe_jax.envs.suite import registry


def seed_folder(save_path: str, agent_name: str, seed: int) -> str:
  """`<save_path>/<agent>/seed_K/`: the folder of every unit of that agent
  and seed (bsuite's analysis reads it as one run)."""
  return os.path.join(save_path, agent_name, f'seed_{int(seed)}')


def checkpoint_folder(bsuite_id: str, directory: str) -> str:
  """Where the unit of `bsuite_id` whose log goes into `directory` keeps
  its checkpoints (beside its lock; removed when its record is written)."""
  return os.path.join(directory, unit_files.CHECKPOINTS,
                      bsuite_id.replace(sweep.SEPARATOR, '-'))


def environment_identity(bsuite_id: str, seed: int) -> Dict[str, int]:
  """`{'environment_seed': s}` where `bsuite_id`'s environment seed
  (`registry.environment_seed`) is not the agent's `seed`, else `{}`: part
  of what makes two runs of a unit the same run. Left out where the two
  agree, so such a unit's identity is the agent's seed alone."""
  env_seed = registry.environment_seed(bsuite_id, seed)
  if env_seed is None or env_seed == int(seed):
    return {}
  return {'environment_seed': env_seed}


@dataclasses.dataclass(frozen=True)
class Unit:
  """One training: `agent` on `bsuite_id` with agent seed `seed`, under the
  user's hyperparameter `overrides` (sorted (name, value) pairs)."""
  agent: str
  bsuite_id: str
  seed: int
  overrides: Tuple[Tuple[str, Any], ...] = ()

  @property
  def label(self) -> str:
    """How progress lines and errors name the unit."""
    return f'{self.bsuite_id} [{self.agent}] seed {self.seed}'

  @property
  def experiment(self) -> str:
    return self.bsuite_id.split(sweep.SEPARATOR)[0]

  def overrides_dict(self) -> Dict[str, Any]:
    return dict(self.overrides)

  def directory(self, save_path: str) -> str:
    return seed_folder(save_path, self.agent, self.seed)

  def log_path(self, save_path: str) -> str:
    return unit_files.bsuite_csv_path(self.bsuite_id, self.directory(save_path))

  def checkpoint_folder(self, save_path: str) -> str:
    return checkpoint_folder(self.bsuite_id, self.directory(save_path))


def make_units(agent_name: str, bsuite_ids: Sequence[str],
               seeds: Sequence[int],
               overrides: Dict[str, Any] = None) -> List[Unit]:
  """The units of every (id, seed), ids outermost: the one place a
  command's ids, seeds and overrides become units."""
  if not bsuite_ids or len(set(bsuite_ids)) != len(bsuite_ids):
    raise ValueError(f'bsuite_ids must be distinct, got {list(bsuite_ids)}.')
  if not seeds or len(set(seeds)) != len(seeds):
    raise ValueError(f'seeds must be distinct, got {list(seeds)}.')
  pairs = tuple(sorted((overrides or {}).items()))
  return [Unit(agent_name, bsuite_id, int(seed), pairs)
          for bsuite_id in bsuite_ids for seed in seeds]
