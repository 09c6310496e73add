r"""Hyperparameter search as the PE-DQN paper ran it (Appendix B.1).

  python -m experiments.tune --agent=pe_dqn --num_trials=40 \
      --save_path=/tmp/pe_jax_tune
  python -m experiments.tune --agent=boot_dqn --bsuite_ids=deep_sea/0 \
      --num_episodes=50 --num_trials=8 --save_path=/tmp/tune_small

Optuna over Table 1's space (network, learning rate, prior scale, heads K,
beta_init: 216 points for PE-DQN; dimensions an agent lacks are left out) on
Table 3's environments and horizons:

  deep_sea/20 (bsuite id deep_sea/5)           500 episodes, f = distinct
  deep_sea_stochastic/20 (deep_sea_stochastic/5) 1500 episodes,  visited (s, a)
  mountain_car/19                               100 episodes, f = -env steps

Each trial reports f every T/5 episodes and Optuna's median pruner stops the
weak ones. A study lives in sqlite (`--storage`), so a killed search resumes
where it stopped: trials it left running are marked failed and retried
with their own settings, and the sampler goes on from the study's trial
count (seed + trials so far) instead of drawing the first run's settings
again.

One program, many trials: `--trials_per_program` trials are asked at once;
those that differ only in numbers (learning rate, nonzero prior scale, beta)
train side by side in one compiled program on the jitted JAX environments
(`agents.training`: deep sea, and mountain car with its episodes of any
length).

Scores: Optuna maximises the sum over environments of f scaled to [0, 1]
(visited / reachable state-actions; 1 - steps / (T * 1000) for mountain car).
The paper's calibrated score is computed after the fact over the completed
trials, per environment

  f_c = 0.5 * exp(0.693 * (f - mean f) / (max f - mean f)),

and summed over environments. Eq. 15 as printed (without the 0.5) gives 2 to
the best configuration and 1 to the mean; the paper's text says 1 and 0.5,
which is what the factor 0.5 implements.

Beyond one machine: `--backend=ray` runs each program (a group of trials)
as a Ray task, at most `--num_workers` in flight, on a local Ray cluster or
one joined with `--ray_address` (`auto` or HOST:PORT, as `ray start --head`
prints). The driver asks the sampler for the next trials when a task ends,
and workers report to the study and prune in the same storage, so it must be
one every worker reaches: the default sqlite file serves one machine; across
machines give a database server URL (`postgresql://...`, `mysql://...`) or
`journal:PATH` (Optuna's journal file on a file system all machines share).
A task whose worker dies is retried; it skips the trials that already
finished.

Outputs in `--save_path`: `study.db` (default storage),
`calibrated_scores.csv` (one row per completed configuration, raw and
calibrated scores per environment and their sum `score`, best first) and
`best_config.json` (the best configuration as agent overrides).
"""

# Before the other imports: a Ctrl-C while they load (seconds) is kept,
# not lost in a library's start-up (experiments/lib/interrupts.py).
from experiments.lib import interrupts  # pylint: disable=g-bad-import-order
if __name__ == '__main__':
  interrupts.record_during_imports()

import itertools
import json
import math
import os
import socket
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

from absl import app
from absl import flags
import bsuite
from bsuite import sweep
from dm_env import specs
import jax
import jax.numpy as jnp
import numpy as np

import agents
from agents import bsuite_settings
from agents import paper_presets
from agents import per_agent
from agents import pure
from agents import training
from experiments.lib import compilation_cache
from experiments.lib import parallel
from experiments.lib import results
from experiments.lib import run_tables
from experiments.lib import hyperparameter_flags
from pe_jax.envs import deep_sea as jax_deep_sea
from pe_jax.envs import mountain_car as jax_mountain_car

FLAGS = flags.FLAGS

# Table 3: environment and horizon T in episodes.
TABLE3 = {'deep_sea/5': 500, 'deep_sea_stochastic/5': 1500,
          'mountain_car/19': 100}
CHECKPOINTS = 5  # reports per environment, every T/5 episodes
MOUNTAIN_CAR_MAX_STEPS = 1000  # bsuite's cap on an episode

# Table 1. Networks are strings because Optuna's choices must be scalars.
TABLE1 = {
    'hidden_sizes': ('64,64', '128,128', '512'),
    'learning_rate': (5e-5, 1e-4, 5e-4, 1e-3),
    'prior_scale': (0.0, 5.0, 20.0),
    'num_atoms': (51, 101),
    'beta_init': (0.5, 5.0, 50.0),
}
# Table 1 dimension -> config field, where an agent names it differently.
# PE-DQN's prior goes on its quantile value member (Table 4 "20 / 0").
FIELD_OF = {'pe_dqn': {'prior_scale': 'quantile_prior_scale'},
            'pe_dqn_qr_qr': {'prior_scale': 'quantile_prior_scale'},
            'pe_dqn_c51_c51': {'prior_scale': 'categorical_prior_scale'},
            'pe_dqn_ind': {'prior_scale': 'quantile_prior_scale'}}

SCORES_FILE = 'calibrated_scores.csv'
BEST_FILE = 'best_config.json'


def define_flags() -> None:
  flags.DEFINE_enum('agent', 'pe_dqn', list(agents.AGENT_NAMES), 'Agent.')
  flags.DEFINE_list('bsuite_ids', list(TABLE3),
                    'Environments (bsuite ids of deep_sea, '
                    'deep_sea_stochastic, mountain_car); default Table 3.')
  flags.DEFINE_integer('num_episodes', None,
                       'Horizon of every environment, overriding Table 3 '
                       '(small runs).', lower_bound=CHECKPOINTS)
  flags.DEFINE_integer('num_trials', 20, 'Trials the study should hold '
                       '(completed or pruned), counting earlier runs.',
                       lower_bound=1)
  flags.DEFINE_integer('trials_per_program', 8,
                       'Trials asked at once; those differing only in '
                       'numbers share one compiled program.', lower_bound=1)
  flags.DEFINE_enum('sampler', 'tpe', ['tpe', 'random', 'grid'],
                    'tpe: Optuna default; grid: every Table 1 point.')
  flags.DEFINE_integer('seed', 0, 'Seed of the sampler and of every agent.',
                       lower_bound=0)
  flags.DEFINE_string('storage', None, 'Optuna storage: a database URL or '
                      'journal:PATH; default sqlite in --save_path. Ray '
                      'workers on other machines must reach it.')
  flags.DEFINE_string('study_name', None, 'Default: tune_<agent>, and '
                      'tune_<agent>_paper with --preset=paper.')
  flags.DEFINE_enum('preset', 'default', list(paper_presets.PRESETS),
                    paper_presets.PRESET_HELP + ' The search varies the '
                    "space's fields over the preset's other values.")
  flags.DEFINE_enum('batching', 'auto', list(training.BATCHING_CHOICES),
                    'How trials share a program (map: faster on CPU for '
                    'large networks, vmap: GPU; auto: map on CPU, vmap on '
                    'a GPU or TPU).')
  flags.DEFINE_string('save_path', '/tmp/pe_jax_tune', 'Where results go.')
  parallel.define_backend_flags(
      'local: programs one after another in this process; ray: each program '
      'a Ray task (pip install -e ".[ray]").', task='program')
  flags.DEFINE_integer('num_workers', 1, 'With --backend=ray: programs in '
                       'flight at once.', lower_bound=1)
  # Values shared by all trials: one flag per hyperparameter, as run_bsuite.
  hyperparameter_flags.define_hyperparameter_flags()


def search_space(agent_name: str) -> Dict[str, Tuple[Any, ...]]:
  """Table 1's dimensions that `agent_name` has, with their choices."""
  names = set(agents.hyperparameter_names(agent_name))
  return {dim: choices for dim, choices in TABLE1.items()
          if field_of(agent_name, dim) in names}


def field_of(agent_name: str, dim: str) -> str:
  return FIELD_OF.get(agent_name, {}).get(dim, dim)


def default_study_name(agent_name: str, preset: str) -> str:
  """The default study of an agent at a preset: trials of two presets never
  share a study."""
  return f'tune_{agent_name}' + ('' if preset == 'default' else f'_{preset}')


def overrides_of(agent_name: str, params: Dict[str, Any]) -> Dict[str, Any]:
  """Trial parameters -> config overrides (networks as int tuples)."""
  out = {}
  for dim, value in params.items():
    if dim == 'hidden_sizes':
      value = tuple(int(v) for v in str(value).split(','))
    out[field_of(agent_name, dim)] = value
  return out


def split_static(agent_name: str, overrides: Dict[str, Any]
                 ) -> Tuple[Dict[str, Any], Dict[str, float]]:
  """(config constants, per-agent array values) of one trial.

  A field is per-agent when the config lists it in ARRAY_FIELDS and its value
  does not switch a feature off (a prior scale of 0 builds no prior network).
  """
  config_class = agents.config_class(agent_name)
  arrays = getattr(config_class, 'ARRAY_FIELDS', ())
  switches = getattr(config_class, 'SWITCH_FIELDS', {})
  static, values = {}, {}
  for name, value in overrides.items():
    if name in arrays and not (name in switches and
                               float(value) == switches[name]):
      values[name] = float(value)
      if name in switches:
        # Built switched on (any value but the off one: the per-agent value
        # replaces it), so that e.g. prior scales 5 and 20 share a program.
        static[name] = switches[name] + 1.0
    else:
      static[name] = value
  return static, values


def calibrated_scores(scores: np.ndarray) -> np.ndarray:
  """0.5 x Eq. 15 per environment: [configs, envs] -> [configs, envs].

  1 for the best configuration, 0.5 for one at the mean, exponential in
  between and below; when all configurations score alike, all get 1.
  """
  scores = np.asarray(scores, np.float64)
  mean = scores.mean(axis=0)
  spread = scores.max(axis=0) - mean
  safe = np.where(spread > 0, spread, 1.0)
  exponent = np.where(spread > 0, (scores - mean) / safe, 1.0)
  return 0.5 * np.exp(0.693 * exponent)


def _environment(bsuite_id: str):
  """(kind, settings) of a supported bsuite id."""
  name = bsuite_id.split('/')[0]
  if bsuite_id not in sweep.SETTINGS or name not in (
      'deep_sea', 'deep_sea_stochastic', 'mountain_car'):
    raise ValueError(f'--bsuite_ids: {bsuite_id!r} is not a bsuite id of '
                     'deep_sea, deep_sea_stochastic or mountain_car.')
  return name, sweep.SETTINGS[bsuite_id]


def horizon(bsuite_id: str, num_episodes: Optional[int]) -> int:
  if num_episodes is not None:
    if num_episodes % CHECKPOINTS:
      raise ValueError(f'--num_episodes must be a multiple of {CHECKPOINTS} '
                       f'(a report every T/{CHECKPOINTS}), got {num_episodes}.')
    return num_episodes
  if bsuite_id not in TABLE3:
    raise ValueError(f'{bsuite_id!r} has no Table 3 horizon: give '
                     '--num_episodes.')
  return TABLE3[bsuite_id]


def normalised(bsuite_id: str, score: float, num_episodes: int) -> float:
  """f scaled to [0, 1] (what Optuna maximises, summed over environments)."""
  name, settings = _environment(bsuite_id)
  if name == 'mountain_car':
    return 1.0 + score / (num_episodes * MOUNTAIN_CAR_MAX_STEPS)
  size = settings['size']
  return score / (size * (size + 1) // 2 * 2)


def run_deep_sea(agent_name: str, bsuite_id: str, num_episodes: int,
                 static: Dict[str, Any], values: Dict[str, List[float]],
                 count: int, seed: int, batching: str, report) -> None:
  """Trains `count` agents on the JAX deep sea of `bsuite_id` in one program.

  Calls `report(checkpoint, scores)` every T/5 episodes with each agent's
  number of distinct visited state-actions so far; a False return stops.
  """
  name, settings = _environment(bsuite_id)
  size = settings['size']
  env = jax_deep_sea.DeepSea(size, deterministic=(name == 'deep_sea'))
  observation_spec = specs.Array((size, size), np.uint8, 'observation')
  action_spec = specs.DiscreteArray(2, name='action')
  agent = agents.make_pure(
      agent_name, observation_spec, action_spec, num_episodes=num_episodes,
      **agents.for_jax_deep_sea(agent_name, static, name, size))
  chunk = num_episodes // CHECKPOINTS
  train = training.make_train(agent, env, episodes_per_call=chunk,
                              record_visits=True)
  keys = jnp.stack([jax.random.PRNGKey(seed)] * count)
  mapping = jax_deep_sea.bsuite_action_mapping(size,
                                               settings.get('mapping_seed'))
  mappings = jnp.stack([jnp.asarray(mapping)] * count)
  hyperparameters = per_agent.as_float32(values)
  carry = pure.jit_init(jax.vmap(train.init))(keys, mappings,
                                               hyperparameters)
  run_chunk = jax.jit(training.over_agents(train.run, batching),
                      donate_argnums=0)
  visited = np.zeros((count, env.num_state_actions), bool)
  for checkpoint in range(1, CHECKPOINTS + 1):
    carry, stats = run_chunk(carry)
    state_actions = np.asarray(stats.state_actions).reshape(count, -1)
    np.put_along_axis(visited, state_actions, True, axis=1)
    if report(checkpoint, visited.sum(axis=1).astype(float)) is False:
      return


def run_mountain_car(agent_name: str, bsuite_id: str, num_episodes: int,
                     static: Dict[str, Any], values: Dict[str, List[float]],
                     count: int, seed: int, batching: str, report) -> None:
  """`count` agents on the JAX mountain car in one program; f = -env steps.

  bsuite's mountain_car ids differ only in an unseeded start, so every id is
  the JAX `MountainCar()` (episodes of at most 1000 steps). Reports every
  T/5 episodes the steps each agent took to end that many episodes.
  """
  spec_env = bsuite.load_from_id(bsuite_id)
  agent = agents.make_pure(
      agent_name, spec_env.observation_spec(), spec_env.action_spec(),
      num_episodes=num_episodes, **bsuite_settings.for_bsuite_id(
          agent_name, bsuite_id, static))
  env = jax_mountain_car.MountainCar(max_steps=MOUNTAIN_CAR_MAX_STEPS)
  train = training.make_train_steps(agent, env, num_episodes,
                                    steps_per_call=MOUNTAIN_CAR_MAX_STEPS)
  keys = jnp.stack([jax.random.PRNGKey(seed)] * count)
  hyperparameters = per_agent.as_float32(values)
  carry = pure.jit_init(jax.vmap(train.init))(keys, hyperparameters)
  run = jax.jit(training.over_agents(train.run, batching), donate_argnums=0)
  for checkpoint in range(1, CHECKPOINTS + 1):
    target = checkpoint * num_episodes // CHECKPOINTS
    while int(np.min(carry.episodes)) < target:
      interrupts.raise_if_requested()
      carry = interrupts.call_until_ready(run, carry)
    scores = -np.asarray(carry.steps_at_episode[:, target - 1], float)
    if report(checkpoint, scores) is False:
      return


def open_storage(url: str):
  """An Optuna storage for `url`; several processes may write to it.

  sqlite waits up to a minute for a lock (workers of a Ray search report to
  one file); `journal:PATH` is Optuna's append-only journal file, which
  machines sharing a file system can all write.
  """
  import optuna  # pylint: disable=g-import-not-at-top
  if url.startswith('journal:'):
    from optuna.storages import journal  # pylint: disable=g-import-not-at-top
    return optuna.storages.JournalStorage(
        journal.JournalFileBackend(url[len('journal:'):]))
  engine_kwargs = ({'connect_args': {'timeout': 60}}
                   if url.startswith('sqlite') else {})
  return optuna.storages.RDBStorage(url, engine_kwargs=engine_kwargs)


def make_pruner():
  """The median pruner: the driver and every worker must build the same."""
  import optuna  # pylint: disable=g-import-not-at-top
  return optuna.pruners.MedianPruner(n_startup_trials=5, n_warmup_steps=1)


def train_trials(study, agent_name: str, horizons: Dict[str, int],
                 fixed: Dict[str, Any], seed: int, batching: str, trials,
                 params) -> None:
  """Trains trials that share a program, environment by environment.

  Reports f to each trial every T/5 episodes, prunes as the study's pruner
  says, and tells the study each surviving trial's normalised sum.
  """
  import optuna  # pylint: disable=g-import-not-at-top
  active = list(range(len(trials)))
  normalised_sum = np.zeros(len(trials))
  for env_index, (bsuite_id, num_episodes) in enumerate(horizons.items()):
    if not active:
      return
    split = [split_static(agent_name, overrides_of(agent_name, params[i]))
             for i in active]
    static = {**fixed, **split[0][0]}
    values = {name: [s[1][name] for s in split] for name in split[0][1]}
    start = time.time()
    pruned = set()

    def report(checkpoint, scores, bsuite_id=bsuite_id, env_index=env_index,
               start=start, num_episodes=num_episodes, pruned=pruned):
      step = env_index * CHECKPOINTS + checkpoint
      for slot, i in enumerate(active):
        if i in pruned:
          continue
        trials[i].report(float(scores[slot]), step)
        if checkpoint == CHECKPOINTS:
          trials[i].set_user_attr(f'score:{bsuite_id}', float(scores[slot]))
          normalised_sum[i] += normalised(bsuite_id, float(scores[slot]),
                                          num_episodes)
        elif trials[i].should_prune():
          pruned.add(i)
          study.tell(trials[i], state=optuna.trial.TrialState.PRUNED)
      live = [float(scores[s]) for s, i in enumerate(active)
              if i not in pruned]
      print(f'  {bsuite_id}: trials {[trials[i].number for i in active]}, '
            f'episode {checkpoint * num_episodes // CHECKPOINTS}/'
            f'{num_episodes}, f median {np.median(live) if live else "-"}, '
            f'{len(pruned)} pruned, {time.time() - start:.0f} s', flush=True)
      return len(pruned) < len(active)

    if _environment(bsuite_id)[0] == 'mountain_car':
      run_mountain_car(agent_name, bsuite_id, num_episodes, static, values,
                       len(active), seed, batching, report)
    else:
      run_deep_sea(agent_name, bsuite_id, num_episodes, static, values,
                   len(active), seed, batching, report)
    active = [i for i in active if i not in pruned]
  for i in active:
    study.tell(trials[i], float(normalised_sum[i]))


def run_trial_group(agent_name: str, horizons: Dict[str, int], storage: str,
                    study_name: str, fixed: Dict[str, Any], seed: int,
                    batching: str, trial_numbers: List[int]) -> List[int]:
  """A Ray task: trains the asked trials `trial_numbers` of a stored study.

  The driver asked them (their parameters are in the storage); trials that
  are no longer running (a retried task whose first worker got that far)
  are skipped. Returns the numbers it trained.
  """
  import optuna  # pylint: disable=g-import-not-at-top
  optuna.logging.set_verbosity(optuna.logging.WARNING)
  study = optuna.load_study(study_name=study_name,
                            storage=open_storage(storage),
                            pruner=make_pruner())
  stored = {t.number: t for t in study.get_trials(deepcopy=False)}
  running = [stored[n] for n in trial_numbers
             if stored[n].state == optuna.trial.TrialState.RUNNING]
  trials = [optuna.trial.Trial(study, t._trial_id) for t in running]  # pylint: disable=protected-access
  train_trials(study, agent_name, horizons, fixed, seed, batching, trials,
               [t.params for t in running])
  return [t.number for t in running]


DRIVER_ATTR = 'driver'  # {'host', 'pid'} of the process that asked a trial
RERUN_ATTR = 'rerun_of'  # the killed trial whose settings a trial retries


def _trials_in(optuna, storage, study_name: str) -> int:
  """Trials the stored study holds (0: no such study yet)."""
  try:
    return len(optuna.load_study(study_name=study_name, storage=storage)
               .get_trials(deepcopy=False))
  except KeyError:
    return 0


def this_driver() -> Dict[str, Any]:
  return {'host': socket.gethostname(), 'pid': os.getpid()}


def driver_is_gone(driver: Optional[Dict[str, Any]]) -> bool:
  """True when `driver` (a trial's DRIVER_ATTR) can no longer report: no
  record (asked outside a driver), or a process of this host that ended."""
  if not driver:
    return True
  if driver.get('host') != socket.gethostname():
    return False
  try:
    os.kill(int(driver['pid']), 0)
  except ProcessLookupError:
    return True
  except PermissionError:
    return False
  return False


class Search:
  """One study: asks trials in batches, trains them, reports, prunes."""

  def __init__(self, agent_name: str, bsuite_ids: Sequence[str],
               num_episodes: Optional[int], storage: str, study_name: str,
               sampler: str, seed: int, fixed: Dict[str, Any],
               batching: str = 'map'):
    import optuna  # pylint: disable=g-import-not-at-top
    self.optuna = optuna
    optuna.logging.set_verbosity(optuna.logging.WARNING)  # Ours is shorter.
    self.agent_name = agent_name
    self.bsuite_ids = list(bsuite_ids)
    for bsuite_id in self.bsuite_ids:
      _environment(bsuite_id)
    self.horizons = {b: horizon(b, num_episodes) for b in self.bsuite_ids}
    self.space = search_space(agent_name)
    self.fixed = fixed
    self.seed = seed
    self.batching = batching
    self.storage = storage
    self.study_name = study_name
    clash = sorted(set(fixed) & {field_of(agent_name, d) for d in self.space})
    if clash:
      raise ValueError(f'{", ".join("--" + name for name in clash)}: the '
                       'search varies it; leave it out.')
    # Every fixed value checked against the agent's config (with each
    # searched value) before the study holds any trial.
    for dim, choices in self.space.items():
      for choice in choices:
        config_overrides = {**fixed, **overrides_of(agent_name, {dim: choice})}
        try:
          agents.make_pure(agent_name, specs.Array((1,), np.float32),
                           specs.DiscreteArray(2), num_episodes=1,
                           **config_overrides)
        except (TypeError, ValueError) as error:
          raise ValueError(str(error)) from None
    try:
      storage_obj = open_storage(storage)
      # A resumed study's sampler continues from its trial count: seeded
      # as the first run, it would draw the first run's settings again.
      asked = _trials_in(optuna, storage_obj, study_name)
    except Exception as error:  # pylint: disable=broad-except
      import sqlalchemy  # pylint: disable=g-import-not-at-top
      if not isinstance(error, sqlalchemy.exc.SQLAlchemyError):
        raise
      reason = str(error).splitlines()[0][:200]
      raise ValueError(
          f'--storage {storage}: not a readable Optuna study database '
          f'({reason}); move the file aside to start a new study, or name '
          'another --storage.') from None
    self.sampler_seed = sampler_seed = seed + asked
    if sampler == 'grid':
      sampler_obj = optuna.samplers.GridSampler(
          {d: list(c) for d, c in self.space.items()}, seed=sampler_seed)
    elif sampler == 'random':
      sampler_obj = optuna.samplers.RandomSampler(seed=sampler_seed)
    else:
      sampler_obj = optuna.samplers.TPESampler(seed=sampler_seed,
                                               constant_liar=True)
    self.study = optuna.create_study(
        study_name=study_name, storage=storage_obj,
        load_if_exists=True, direction='maximize', sampler=sampler_obj,
        pruner=make_pruner())
    self._fail_stale_trials()

  def _fail_stale_trials(self) -> None:
    """Trials a killed run left running will never report: fail them, and
    queue their settings to be tried again.

    A trial records the driver that asked it (`DRIVER_ATTR`); one whose
    driver is still alive on this machine belongs to a concurrent driver of
    the same study and is left to it. Trials of drivers on other machines
    are left too (their liveness cannot be seen from here)."""
    for trial in self.study.get_trials(deepcopy=False):
      if (trial.state == self.optuna.trial.TrialState.RUNNING and
          driver_is_gone(trial.user_attrs.get(DRIVER_ATTR))):
        self.study.tell(trial.number, state=self.optuna.trial.TrialState.FAIL)
        if trial.params:
          # Its settings are tried again, not replaced by a new draw.
          self.study.enqueue_trial(trial.params,
                                   user_attrs={RERUN_ATTR: trial.number})

  def finished(self) -> int:
    states = (self.optuna.trial.TrialState.COMPLETE,
              self.optuna.trial.TrialState.PRUNED)
    return len(self.study.get_trials(deepcopy=False, states=states))

  def _ask_groups(self, count: int):
    """Asks `count` trials: [(trials, params)] per shared program."""
    trials = [self.study.ask() for _ in range(count)]
    for trial in trials:
      trial.set_user_attr(DRIVER_ATTR, this_driver())
    params = [{d: t.suggest_categorical(d, list(c))
               for d, c in self.space.items()} for t in trials]
    groups: Dict[str, List[int]] = {}
    for i, p in enumerate(params):
      static, _ = split_static(self.agent_name,
                               overrides_of(self.agent_name, p))
      groups.setdefault(json.dumps(static, sort_keys=True), []).append(i)
    return [([trials[i] for i in members], [params[i] for i in members])
            for members in groups.values()]

  def run(self, num_trials: int, trials_per_program: int,
          backend: str = 'local', num_workers: int = 1,
          ray_address: Optional[str] = None, cpus_per_task: float = 1.0,
          gpus_per_task: float = 0.0) -> None:
    """Trains trials until the study holds `num_trials` finished ones.

    backend 'local' trains each program here, one after another; 'ray' runs
    each as a task (`parallel.run_tasks`), at most `num_workers` at once,
    asking the sampler for the next trials only when a slot frees.
    """
    if backend == 'local':
      while self.finished() < num_trials:
        batch = min(trials_per_program, num_trials - self.finished())
        for trials, params in self._ask_groups(batch):
          train_trials(self.study, self.agent_name, self.horizons,
                       self.fixed, self.seed, self.batching, trials, params)
      return

    def tasks():
      remaining = num_trials - self.finished()
      while remaining > 0:
        batch = min(trials_per_program, remaining)
        remaining -= batch
        for trials, _ in self._ask_groups(batch):
          yield (self.agent_name, self.horizons, self.storage,
                 self.study_name, self.fixed, self.seed, self.batching,
                 [t.number for t in trials])

    for task, trained in parallel.run_tasks(
        run_trial_group, tasks(), num_workers, backend=backend,
        ray_address=ray_address, cpus_per_task=cpus_per_task,
        gpus_per_task=gpus_per_task):
      # Progress: workers print per report; the driver says what has ended.
      print(f'Program of trials {task[-1]} ended (trained {trained}); '
            f'{self.finished()} of {num_trials} trials finished.', flush=True)

  def write_results(self, output_dir: str) -> List[Dict[str, Any]]:
    """calibrated_scores.csv and best_config.json from completed trials."""
    complete = [t for t in self.study.get_trials(
        deepcopy=False, states=(self.optuna.trial.TrialState.COMPLETE,))
                if all(f'score:{b}' in t.user_attrs for b in self.bsuite_ids)]
    if not complete:
      return []
    raw = np.array([[t.user_attrs[f'score:{b}'] for b in self.bsuite_ids]
                    for t in complete])
    calibrated = calibrated_scores(raw)
    rows = []
    for trial, f, fc in zip(complete, raw, calibrated):
      row = {'trial': trial.number, **trial.params}
      for b, value, value_c in zip(self.bsuite_ids, f, fc):
        row[f'f:{b}'] = value
        row[f'calibrated:{b}'] = round(float(value_c), 6)
      row['score'] = round(float(fc.sum()), 6)
      rows.append(row)
    rows.sort(key=lambda r: -r['score'])
    columns = ('trial', *self.space,
               *itertools.chain.from_iterable(
                   (f'f:{b}', f'calibrated:{b}') for b in self.bsuite_ids),
               'score')
    path = os.path.join(output_dir, SCORES_FILE)
    if os.path.exists(path):
      os.remove(path)  # Rewritten whole: calibration depends on all trials.
    for row in rows:
      run_tables.append_row(path, row, columns)
    best = rows[0]
    with open(os.path.join(output_dir, BEST_FILE), 'w') as f:
      json.dump({'agent': self.agent_name, 'trial': best['trial'],
                 'score': best['score'], 'bsuite_ids': self.bsuite_ids,
                 'num_episodes': self.horizons,
                 'overrides': {**self.fixed, **overrides_of(
                     self.agent_name, {d: best[d] for d in self.space})}},
                f, indent=2)
    return rows


def main(argv: Sequence[str]) -> None:
  del argv
  results.check_output_flag(FLAGS.save_path, '--save_path')
  os.makedirs(FLAGS.save_path, exist_ok=True)
  storage = FLAGS.storage or 'sqlite:///' + os.path.abspath(
      os.path.join(FLAGS.save_path, 'study.db'))
  try:
    name = FLAGS.study_name or default_study_name(FLAGS.agent, FLAGS.preset)
    search = Search(FLAGS.agent, FLAGS.bsuite_ids, FLAGS.num_episodes,
                    storage, name,
                    FLAGS.sampler, FLAGS.seed,
                    hyperparameter_flags.user_overrides(FLAGS.agent),
                    training.resolve_batching(FLAGS.batching))
  except ValueError as error:
    raise app.UsageError(str(error)) from None
  size = math.prod(len(c) for c in search.space.values())
  print(f'{FLAGS.agent}: {size}-point space {dict(search.space)}; '
        f'{search.finished()} of {FLAGS.num_trials} trials done; '
        f'environments {search.horizons}.', flush=True)
  search.run(FLAGS.num_trials, FLAGS.trials_per_program, FLAGS.backend,
             FLAGS.num_workers, FLAGS.ray_address, FLAGS.cpus_per_task,
             FLAGS.gpus_per_task)
  rows = search.write_results(FLAGS.save_path)
  print(f'\n{len(rows)} completed configurations, best first '
        '(score: sum of calibrated scores, 1 per environment at best):')
  for row in rows[:5]:
    print(f'  trial {row["trial"]}: score {row["score"]:.3f} ' + ', '.join(
        f'{d}={row[d]}' for d in search.space))
  print(f'Tables: {FLAGS.save_path}')


if __name__ == '__main__':
  define_flags()
  compilation_cache.run(main)
