"""Pure JAX environments with bsuite's dynamics: `reset` and `step` are
functions of an explicit state, so they jit, vmap and run in `lax.scan`.

`load(bsuite_id, seed)` gives the exact port of any of bsuite's 468
environments (`pe_jax.envs.suite`); `as_dm_env(env)` runs one in bsuite's
own loop. `deep_sea.DeepSea` and `mountain_car.MountainCar` are the
key-based variants the deep sea and step-based training runners use.
"""


def load(bsuite_id: str, seed: int = 0, mnist_dir=None):
  """`pe_jax.envs.suite.load` (imported on first use: it reads bsuite's
  sweep)."""
  from pe_jax.envs.suite import registry  # pylint: disable=g-import-not-at-top
  return registry.load(bsuite_id, seed, mnist_dir)


def as_dm_env(env):
  """`pe_jax.envs.suite.as_dm_env`."""
  from pe_jax.envs.suite import dm_env_adapter  # pylint: disable=g-import-not-at-top
  return dm_env_adapter.as_dm_env(env)
