"""Fingerprints of what every agent computes, to show a refactoring changed
no agent's output bit for bit (on one machine and build).

  python -m tests.agent_fingerprints > before.json   # on the old code
  python -m tests.agent_fingerprints --compare before.json

Per agent: the SHA-256 of its whole training carry (parameters, optimiser,
replay, RNG, counters) and of the episodes' returns after 40 episodes of
stochastic deep sea 6 (learning from step 32 on, batch 8, with each
agent's own acting rule), from init with key 0 and with key 1.
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


def fingerprint(name: str, seed: int) -> dict:
  kwargs = agents.for_jax_deep_sea(name, dict(OVERRIDES),
                                   'deep_sea_stochastic', SIZE)
  agent = agents.make_pure(
      name, specs.Array((SIZE, SIZE), np.uint8, 'observation'),
      specs.DiscreteArray(2, name='action'), num_episodes=1000, **kwargs)
  env = deep_sea.DeepSea(SIZE, deterministic=False)
  train = training.make_train(agent, env, episodes_per_call=EPISODES)
  carry = jax.jit(train.init)(
      jax.random.PRNGKey(seed),
      deep_sea.bsuite_action_mapping(SIZE, seed))
  carry, stats = jax.jit(train.run)(carry)
  return dict(carry=_digest(carry),
              returns=_digest(stats.episode_return))


def main(argv) -> int:
  found = {name: [fingerprint(name, seed) for seed in (0, 1)]
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
