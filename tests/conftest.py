"""Shared test settings: float32 like the agents, CPU, quiet JAX."""
import os

os.environ.setdefault('JAX_PLATFORMS', 'cpu')
# The suite is dominated by compiling small programs, not running them: LLVM
# optimisation level 0 compiles them about 1.6x faster (measured on the agent
# seed tests, 80 s -> 49 s on 2 cores) and even a 1600-step learning test ran
# faster overall. Experiments and benchmarks keep XLA's defaults.
_SCRIPTS_XLA_FLAGS = os.environ.get('XLA_FLAGS')
os.environ['XLA_FLAGS'] = ' '.join(filter(None, (
    _SCRIPTS_XLA_FLAGS, '--xla_cpu_multi_thread_eigen=true',
    '--xla_backend_optimization_level=0')))
# XLA reads the flags once, when the backend starts: start it here, then
# give the scripts that tests run (experiments, fresh processes) the
# caller's flags back. They compile few programs and run them for long,
# where XLA's defaults are faster (a 120-episode deep_sea_scaling run,
# boot_dqn: 46 s -> 36 s of CPU).
import jax  # pylint: disable=g-import-not-at-top

jax.devices()
if _SCRIPTS_XLA_FLAGS is None:
  del os.environ['XLA_FLAGS']
else:
  os.environ['XLA_FLAGS'] = _SCRIPTS_XLA_FLAGS

# Experiment scripts run by tests compile afresh: no persistent compilation
# cache (experiments.compilation_cache) in the user's home from a test run.
os.environ['PE_JAX_COMPILATION_CACHE'] = ''

from hypothesis import settings  # pylint: disable=g-import-not-at-top

settings.register_profile('ci', max_examples=40, deadline=None)
settings.load_profile('ci')
