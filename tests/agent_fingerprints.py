"""Fingerprints of what every agent computes, to show a refactoring changed
no agent's output bit for bit (on one machine and build).

  python -m tests.agent_fingerprints > before.json   # on the old code
  python -m tests.agent_fingerprints --compare before.json

Per agent: the SHA-256 of its whole training carry (parameters, optimiser,
replay, RNG, counters) and of the episodes' returns after 40 episodes of
stochastic deep sea 6 (learning from step 32 on, batch 8, with each
agent's own acting rule), from init with key 0 and with key 1, and from key 0
with every array hyperparameter given as an array (`init(key, values)`, each
at 0.8 times the agent's number, so the per-agent path is covered too).
"""

import hashlib
import json
import sys

from dm_env import specs
import jax
import numpy as np

import agents
from agents import training
from pe_jax.envs import deep_sea

SIZE, EPISODES = 6, 40
OVERRIDES = dict(min_replay_size=32, batch_size=8)


def _digest(tree) -> str:
  """SHA-256 of the leaves by their paths (field names, not the order of
  fields or the type that holds them)."""
  hasher = hashlib.sha256()
  leaves = sorted((jax.tree_util.keystr(path), leaf) for path, leaf in
                  jax.tree_util.tree_flatten_with_path(tree)[0])
  for path, leaf in leaves:
    leaf = np.asarray(leaf)
    hasher.update(path.encode())
    hasher.update(str(leaf.dtype).encode() + str(leaf.shape).encode())
    hasher.update(leaf.tobytes())
  return hasher.hexdigest()


def array_values(agent) -> dict:
  """Each of the agent's array hyperparameters at 0.8 times its number, in
  range for every field; a switch built off (`SWITCH_FIELDS`) stays off."""
  config = agent.config
  switches = getattr(type(config), 'SWITCH_FIELDS', {})
  values = {}
  for field in agent.array_fields:
    number = getattr(config, field)
    off = switches.get(field)
    values[field] = np.float32(
        number if off is not None and number == off else 0.8 * number)
  return values


def fingerprint(name: str, seed: int, with_arrays: bool = False) -> dict:
  kwargs = agents.for_jax_deep_sea(name, dict(OVERRIDES),
                                   'deep_sea_stochastic', SIZE)
  agent = agents.make_pure(
      name, specs.Array((SIZE, SIZE), np.uint8, 'observation'),
      specs.DiscreteArray(2, name='action'), num_episodes=1000, **kwargs)
  env = deep_sea.DeepSea(SIZE, deterministic=False)
  train = training.make_train(agent, env, episodes_per_call=EPISODES)
  values = array_values(agent) if with_arrays else None
  carry = jax.jit(train.init)(
      jax.random.PRNGKey(seed),
      deep_sea.bsuite_action_mapping(SIZE, seed), values)
  carry, stats = jax.jit(train.run)(carry)
  return dict(carry=_digest(carry),
              returns=_digest(stats.episode_return))


def main(argv) -> int:
  found = {name: [fingerprint(name, 0), fingerprint(name, 1),
                  fingerprint(name, 0, with_arrays=True)]
           for name in agents.AGENT_NAMES}
  if '--compare' not in argv:
    print(json.dumps(found, indent=1))
    return 0
  with open(argv[argv.index('--compare') + 1]) as f:
    expected = json.load(f)
  changed = [name for name in found if found[name] != expected.get(name)]
  for name in found:
    print(f'{name}: {"CHANGED" if name in changed else "same"}')
  return 1 if changed else 0


if __name__ == '__main__':
  sys.exit(main(sys.argv))
