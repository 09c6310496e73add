"""pe_jax: exploration agents built on diverse projection ensembles."""

from pe_jax import checks
from pe_jax import distances
from pe_jax import distributions
from pe_jax import intrinsic
from pe_jax import losses
from pe_jax import networks
from pe_jax import projections
from pe_jax import replay

__version__ = '0.1.0'
