"""Shared test settings: float32 like the agents, CPU, quiet JAX."""
import os

os.environ.setdefault('JAX_PLATFORMS', 'cpu')
os.environ.setdefault('XLA_FLAGS', '--xla_cpu_multi_thread_eigen=true')

from hypothesis import settings  # pylint: disable=g-import-not-at-top

settings.register_profile('ci', max_examples=40, deadline=None)
settings.load_profile('ci')
