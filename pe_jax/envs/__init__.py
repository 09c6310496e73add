"""Pure JAX environments with bsuite's dynamics: `reset` and `step` are
functions of an explicit state, so they jit, vmap and run in `lax.scan`."""
