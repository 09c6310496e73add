"""Exact JAX ports of bsuite's environments: `load(bsuite_id, seed)`,
`as_dm_env(env)`, and the protocol in `base`."""

from pe_jax.envs.suite.base import Environment
from pe_jax.envs.suite.base import stack
from pe_jax.envs.suite.base import unstack
from pe_jax.envs.suite.dm_env_adapter import as_dm_env
from pe_jax.envs.suite.registry import load
