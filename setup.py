"""pe_jax: exploration agents built on diverse projection ensembles."""

import setuptools

setuptools.setup(
    name='pe_jax',
    version='0.1.0',
    description=('JAX/Flax exploration agents built on diverse projection '
                 'ensembles for distributional RL, as bsuite drop-ins.'),
    long_description=open('README.md', encoding='utf-8').read(),
    long_description_content_type='text/markdown',
    license='Apache-2.0',
    python_requires='>=3.10',
    packages=setuptools.find_packages(include=['pe_jax', 'pe_jax.*', 'agents',
                                               'agents.*', 'experiments',
                                               'experiments.*']),
    install_requires=[
        'absl-py>=1.0',
        'bsuite>=0.3.5',
        'chex>=0.1.86',
        'dm-haiku>=0.0.12',
        # jax's persistent compilation cache needs it (not a jax dependency).
        'filelock>=3.0',
        'flax>=0.8',
        'jax>=0.4.30',
        'jaxlib>=0.4.30',
        'matplotlib>=3.7',
        'numpy>=1.24',
        'optax>=0.2',
        'optuna>=3.4',
        'orbax-checkpoint>=0.5',
        'pandas>=2.0',
        'rlax>=0.1.6',
        # The seed statistics' tests (experiments.lib.seed_statistics).
        'scipy>=1.10',
    ],
    extras_require={
        'vizdoom': ['vizdoom>=1.2'],
        'ray': ['ray>=2.9'],
        'dev': ['pytest>=7', 'pytest-xdist>=3', 'scipy>=1.10',
                'hypothesis>=6'],
        'cuda': ['jax[cuda12]'],
        'tpu': ['jax[tpu]'],
    },
    classifiers=[
        'License :: OSI Approved :: Apache Software License',
        'Programming Language :: Python :: 3',
        'Topic :: Scientific/Engineering :: Artificial Intelligence',
    ],
)
