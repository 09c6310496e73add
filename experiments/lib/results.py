"""What the scripts share about bsuite and output folders: seeded
environments, an atomic CSV logger, output-folder checks, and a pandas
patch for bsuite's analysis.

bsuite logs are rewritten whole to a temporary file and renamed into place,
so a killed process cannot leave a torn log.
"""

import os
import tempfile
from typing import Any, Mapping

from bsuite import bsuite as bsuite_loader
from bsuite.logging import csv_logging
import numpy as np
import pandas as pd


def load_seeded(bsuite_id: str, seed: int):
  """bsuite's environment of `bsuite_id`, its randomness seeded by `seed`.

  Many of bsuite's settings leave the environment's seed None (catch,
  cartpole, mountain car, mnist and their noise/scale variants, umbrella
  length, cartpole swingup, the noise of deep sea stochastic), so
  `bsuite.load_from_id` gives another run each time. Here such an
  environment gets `registry.environment_seed(bsuite_id, seed)` (distinct
  for an experiment's replicas, the agent's seed at id 0), so the same
  command gives the same log; settings that fix a seed keep bsuite's. Same
  dynamics and law as `load_from_id` otherwise; the exact ports are seeded
  by the same rule (`pe_jax.envs.suite.registry.seeded_settings`).
  """
  from pe_jax.envs.suite import registry  # pylint: disable=g-import-not-at-top
  experiment_name, kwargs = registry.seeded_settings(bsuite_id, seed)
  loader = bsuite_loader.EXPERIMENT_NAME_TO_ENVIRONMENT[experiment_name]
  if experiment_name == 'deep_sea_stochastic':
    # Its loader passes no seed to bsuite's DeepSea, whose noise and failed
    # moves draw from `_rng` (mapping_seed fixes only the action mapping).
    stream_seed = kwargs.pop('seed')
    env = loader(**kwargs)
    env._rng = np.random.RandomState(stream_seed)  # pylint: disable=protected-access
    return env
  return loader(**kwargs)


def check_output_folder(path: str, flag: str) -> None:
  """Raises ValueError (naming `flag`) unless `path` is a folder or can be
  made one: checked before any work, not when the first result is saved.
  An empty path is refused (it would write into the current folder)."""
  if not path or not path.strip():
    raise ValueError(f'{flag} must name a folder, got {path!r}.')
  probe = os.path.abspath(path)
  while not os.path.exists(probe):
    probe = os.path.dirname(probe)
  if not os.path.isdir(probe):
    raise ValueError(f'{flag}: {probe} is a file, not a folder.')
  # Try it (permissions alone miss read-only and virtual file systems,
  # and root passes every access check).
  try:
    os.rmdir(tempfile.mkdtemp(prefix='.write_check_', dir=probe))
  except OSError as error:
    raise ValueError(f'{flag}: cannot write under {probe} '
                     f'({error.strerror}).') from None


def check_output_flag(path: str, flag: str) -> None:
  """`check_output_folder` for a script's flag: a one-line usage error."""
  from absl import app  # pylint: disable=g-import-not-at-top
  try:
    check_output_folder(path, flag)
  except ValueError as error:
    raise app.UsageError(str(error)) from None


def quiet_checkpoint_logs() -> None:
  """orbax logs every checkpoint step at INFO; progress lines say enough."""
  from absl import logging as absl_logging  # pylint: disable=g-import-not-at-top
  absl_logging.set_verbosity(absl_logging.WARNING)


class AtomicCSVLogger(csv_logging.Logger):
  """bsuite's CSV logger, but each rewrite is atomic (temporary + rename).

  bsuite's logger rewrites the whole file on every write; a process killed
  mid-write would leave a truncated log that looks like fewer (or corrupt)
  episodes. Renaming a complete file into place cannot be torn.
  """

  def write(self, data: Mapping[str, Any]) -> None:
    self._data.append(data)
    self.write_all()

  def write_all(self) -> None:
    """Rewrites the file with the rows held (e.g. after a restore)."""
    temporary = self._save_path + '.tmp'
    pd.DataFrame(self._data).to_csv(temporary, index=False)
    os.replace(temporary, self._save_path)


def restore_series_append() -> None:
  """Lets bsuite's deep_sea scoring run on pandas >= 2.

  bsuite 0.3.x's `deep_sea/analysis.py` joins two Series with
  `Series.append`, which pandas 2.0 removed; restore it as `pd.concat`, the
  documented replacement, if (and only if) it is missing.
  """
  if not hasattr(pd.Series, 'append'):
    pd.Series.append = lambda self, other: pd.concat([self, other])
