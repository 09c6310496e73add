"""Many seeds (or agents with different array hyperparameters) of one agent
trained together on the JAX deep sea in one compiled program: the group that
`deep_sea_scaling`, `deep_sea_sweep` and `project_scaling` build, resumable
from checkpoints between compiled calls."""

import hashlib
import json
import os
import shutil
import time
from typing import (Any, Callable, Dict, List, NamedTuple, Optional, Sequence,
                    Tuple)

from absl import flags
from bsuite.environments import deep_sea
from dm_env import specs
import jax
import jax.numpy as jnp
import numpy as np

import agents
from agents import common
from agents import per_agent
from agents import pure
from agents import training
from experiments.lib import bsuite_jax
from experiments.lib import checkpoints
from experiments.lib import interrupts
from pe_jax.envs import deep_sea as jax_deep_sea


def register_validators() -> None:
  """Checks of --agents and --sizes (shared with `project_scaling`)."""
  flags.register_validator(
      'agents', lambda names: bool(names) and all(
          n in agents.AGENT_NAMES for n in names),
      message=f'--agents must list names from {list(agents.AGENT_NAMES)}.')
  flags.register_validator(
      'sizes', lambda sizes: bool(sizes) and all(
          s.isdigit() and int(s) >= 2 for s in sizes),
      message='--sizes must be a comma-separated list of integers >= 2.')


def first_treasure_episode(total_bad_episodes) -> Any:
  """1-based episode of the first non-bad episode, or '' if none."""
  for episode, bad in enumerate(total_bad_episodes, start=1):
    if bad < episode:
      return episode
  return ''


class Group(NamedTuple):
  """The compiled training of one (agent, size) group of seeds."""
  carry: Any          # all seeds' training state, leading axis = seeds
  run_chunk: Callable  # carry -> (carry, EpisodeStats), jitted, donating
  hyperparameters: Optional[Dict[str, jnp.ndarray]]  # as the carry holds
  agent: Any  # the `agents.pure.PureAgent` (its `config`)


def build_group(agent_name: str, size: int, seeds: Sequence[int],
                num_episodes: int, episodes_per_call: int,
                hyperparameters: Optional[Dict[str, Sequence[float]]] = None,
                overrides: Optional[Dict[str, Any]] = None,
                batching: str = 'vmap') -> Group:
  """The started agents of `run_seeds_jax` (arguments as there) and its
  jitted chunk of `episodes_per_call` episodes, not yet compiled."""
  spec_env = deep_sea.DeepSea(size=size, mapping_seed=0)
  # Replay stores deep sea's 0/1 observations as uint8 (exact, 4x smaller
  # than bsuite's float32 spec); the networks still see float32.
  observation_spec = specs.Array((size, size), np.uint8, 'observation')
  agent = agents.make_pure(agent_name, observation_spec,
                           spec_env.action_spec(), num_episodes=num_episodes,
                           **agents.for_jax_deep_sea(
                               agent_name, overrides or {}, 'deep_sea',
                               size))
  if hyperparameters:
    agent.check(hyperparameters, num_agents=len(seeds))
    # One number is every seed's.
    hyperparameters = {name: np.broadcast_to(values, (len(seeds),))
                       for name, values in hyperparameters.items()}
  hyperparameters = per_agent.as_float32(hyperparameters)
  env = jax_deep_sea.DeepSea(size)
  train = training.make_train(agent, env, episodes_per_call=episodes_per_call)
  keys = jnp.stack([jax.random.PRNGKey(s) for s in seeds])
  mappings = jnp.stack([jax_deep_sea.bsuite_action_mapping(size, s)
                        for s in seeds])
  carry = pure.jit_init(jax.vmap(train.init))(keys, mappings,
                                              hyperparameters)
  run_chunk = jax.jit(training.over_agents(train.run, batching),
                      donate_argnums=0)
  return Group(carry, run_chunk, hyperparameters or None, agent)


def run_seeds_jax(agent_name: str, size: int, seeds: Sequence[int],
                  num_episodes: int, episodes_per_call: int,
                  progress: bool = True,
                  hyperparameters: Optional[Dict[str, Sequence[float]]] = None,
                  overrides: Optional[Dict[str, Any]] = None,
                  batching: str = 'vmap',
                  checkpoint_dir: Optional[str] = None,
                  stop_when_all_found: bool = False
                  ) -> List[Dict[str, Any]]:
  """Trains one agent per seed on the JAX DeepSea(size), all in one program.

  Seed k uses bsuite's action mapping of `mapping_seed=k` and the agent state
  `agents.make(..., seed=k)` starts from. Returns one table row per seed.
  `seeds` may repeat a seed when `hyperparameters` (array hyperparameters,
  one value per entry of `seeds`) give its agents different numbers;
  `overrides` are config values shared by all. `batching`: how the agents
  share the program (`agents.training.over_agents`). With
  `checkpoint_dir`, the state of all seeds is saved there between compiled
  calls (`group_checkpoint_folder`), and a run killed before its end resumes
  from its last checkpoint with the same results. With
  `stop_when_all_found`, training ends after the first chunk in which every
  seed has found the treasure (the rows then count `num_episodes` and regret
  over the episodes run; first finds are those of the full run, as chunks
  continue one training).
  """
  if not seeds:
    raise ValueError('`seeds` must name at least one seed.')
  chunk = min(episodes_per_call, num_episodes)
  start = time.time()
  carry, run_chunk, hyperparameters, agent = build_group(
      agent_name, size, seeds, num_episodes, chunk, hyperparameters,
      overrides, batching)
  bad_per_episode = []
  done = 0
  seconds_before = 0.0  # of the runs this one resumes
  saver = None
  if checkpoint_dir is not None:
    folder, identity = group_checkpoint_folder(
        checkpoint_dir, agent_name, size, seeds, num_episodes, chunk,
        batching, hyperparameters, overrides)
    # The resolved config goes into the identity (not the folder name):
    # a default changed since the checkpoint is refused by name, not resumed.
    saver = checkpoints.ChunkCheckpoints(
        folder, dict(identity, config=bsuite_jax.config_record(agent.config)),
        differences=bsuite_jax.checkpoint_differences)
    restored = saver.restore_latest(lambda step: {
        'carry': carry, 'bad': np.zeros((len(seeds), step), np.int32),
        'seconds': np.zeros((), np.float64)})
    if restored is not None:
      done, tree = restored
      carry, bad_per_episode = tree['carry'], [np.asarray(tree['bad'])]
      seconds_before = float(tree['seconds'])
      print(f'  {agent_name} size {size} seeds {list(seeds)}: resuming at '
            f'episode {done}/{num_episodes} from {folder}', flush=True)
  resumed_at = done
  while done < num_episodes:
    interrupts.raise_if_requested()
    carry, stats = interrupts.call_until_ready(run_chunk, carry)
    bad_per_episode.append(np.asarray(stats.total_bad_episodes, np.int32))
    done += chunk
    common.check_finite(carry, f'{agent_name} size {size} seeds '
                        f'{list(seeds)}, episode {done}')
    if saver is not None and done < num_episodes:
      saver.save(done, {'carry': carry,
                        'bad': np.concatenate(bad_per_episode, axis=1),
                        'seconds': np.asarray(seconds_before + time.time() -
                                              start, np.float64)})
    if progress:
      elapsed = time.time() - start
      print(f'  {agent_name} size {size} seeds {list(seeds)}: episode '
            f'{min(done, num_episodes)}/{num_episodes}, median regret '
            f'{np.median(bad_per_episode[-1][:, -1]):.0f}, '
            f'{len(seeds) * (done - resumed_at) * size / elapsed:.0f} env steps/s '
            '(all seeds, compilation included)', flush=True)
    if stop_when_all_found and all(
        first_treasure_episode(row) != ''
        for row in np.concatenate(bad_per_episode, axis=1)):
      num_episodes = min(done, num_episodes)
  # The last chunk may run past num_episodes; the table counts num_episodes.
  bad = np.concatenate(bad_per_episode, axis=1)[:, :num_episodes]
  # Whole training time, the runs before a resume included.
  seconds = round(seconds_before + time.time() - start, 2)
  return [{
      'agent': agent_name, 'size': size, 'seed': seed,
      'num_episodes': num_episodes, 'regret': int(bad[i, -1]),
      'first_treasure_episode': first_treasure_episode(bad[i]),
      'steps': num_episodes * size, 'seconds': seconds,
  } for i, seed in enumerate(seeds)]


def group_checkpoint_folder(checkpoint_dir: str, agent_name: str, size: int,
                            seeds: Sequence[int], num_episodes: int,
                            episodes_per_call: int, batching: str,
                            hyperparameters=None, overrides=None
                            ) -> Tuple[str, Dict[str, Any]]:
  """(folder, identity) of the checkpoints of one `run_seeds_jax` call: the
  folder name carries a digest of everything that shapes the run."""
  identity = {
      'agent': agent_name, 'size': int(size),
      'seeds': [int(s) for s in seeds], 'num_episodes': int(num_episodes),
      # The chunk the run uses, whatever was asked for beyond the horizon.
      'episodes_per_call': int(min(episodes_per_call, num_episodes)),
      'batching': batching,
      # As float32, the agents' dtype, so lists and arrays name one folder.
      'hyperparameters': {k: [float(np.float32(x)) for x in np.ravel(v)]
                          for k, v in sorted((hyperparameters or {}).items())},
      'overrides': {k: repr(v) for k, v in sorted((overrides or {}).items())},
  }
  digest = hashlib.sha1(json.dumps(identity, sort_keys=True).encode()
                       ).hexdigest()[:10]
  return os.path.join(checkpoint_dir,
                      f'{agent_name}_size{size}_{digest}'), identity


def remove_group_checkpoints(checkpoint_dir: str, agent_name: str, size: int,
                             seeds: Sequence[int], num_episodes: int,
                             episodes_per_call: int, batching: str,
                             hyperparameters=None, overrides=None) -> None:
  """Deletes the checkpoints of one `run_seeds_jax` call (same arguments),
  once its rows are in a table."""
  folder, _ = group_checkpoint_folder(checkpoint_dir, agent_name, size, seeds,
                                      num_episodes, episodes_per_call,
                                      batching, hyperparameters, overrides)
  shutil.rmtree(folder, ignore_errors=True)
