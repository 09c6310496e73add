"""bsuite's MNIST bandit (`bsuite.environments.mnist.MNISTBandit`).

Each episode is one image, `randint(num_data)` of the training set at each
reset; the action guesses its label (+1 right, -1 wrong) and ends the
episode. Images are bsuite's: parsed as int8 (bytes above 127 wrap
negative) and divided by 255 in float32.

bsuite downloads MNIST when the environment is built; this port never
does: it reads the four files of `directory` (bsuite's /tmp/mnist by
default) and names what is missing.
"""

import dataclasses
import functools
import os
from typing import NamedTuple, Optional

import jax.numpy as jnp
import numpy as np

from pe_jax.envs import numpy_random
from pe_jax.envs.suite import base

DEFAULT_DIRECTORY = '/tmp/mnist'  # bsuite's
IMAGE_SHAPE = (28, 28)  # every MNIST image; known without reading the files
FILES = ('train-images-idx3-ubyte.gz', 'train-labels-idx1-ubyte.gz',
         't10k-images-idx3-ubyte.gz', 't10k-labels-idx1-ubyte.gz')


class MissingMNISTError(FileNotFoundError):
  """MNIST's files are not where the environment reads them."""


@functools.lru_cache(maxsize=2)
def training_set(directory: str):
  """(images [N, 28, 28] int8, labels [N] uint8) of MNIST's training set,
  read by bsuite's own parser, once per directory."""
  missing = [name for name in FILES
             if not os.path.isfile(os.path.join(directory, name))]
  if missing:
    raise MissingMNISTError(
        f'MNIST files missing in {directory}: {", ".join(missing)}. Put the '
        f'four files ({", ".join(FILES)}) there, or pass their folder '
        '(--mnist_dir); nothing is downloaded (docs/experiments.md: where '
        'to get them offline).')
  from bsuite.utils import datasets  # pylint: disable=g-import-not-at-top
  (images, labels), _ = datasets.load_mnist(directory=directory)
  if images.shape[1:] != IMAGE_SHAPE:
    raise ValueError(f'MNIST images in {directory} are {images.shape[1:]}, '
                     f'not {IMAGE_SHAPE}: these are not MNIST\'s files.')
  return images, labels


# bsuite's int8 pixel / 255 in float32, for each of the 256 values: XLA
# would multiply by a rounded 1 / 255 instead of dividing.
_PIXEL_VALUES = (np.arange(-128, 128).astype(np.float32) / np.float32(255))


class MNISTState(NamedTuple):
  stream: numpy_random.RandomStream
  correct_label: jnp.ndarray   # [] int32
  total_regret: jnp.ndarray    # [] float64
  reset_next: jnp.ndarray      # [] bool


@dataclasses.dataclass(frozen=True)
class MNISTBandit(base.Environment):
  """Args: fraction (of the training set kept), seed, directory (MNIST's
  four files)."""
  fraction: float = 1.
  seed: Optional[int] = None
  directory: str = DEFAULT_DIRECTORY

  STATIC = ('fraction', 'directory')
  num_actions = 10
  num_episodes = 10_000
  info_names = ('total_regret',)

  # A constant, so that agents are built (and committed units checked)
  # where the files are absent.
  observation_shape = IMAGE_SHAPE

  @property
  def num_data(self) -> int:
    return int(self.fraction * len(training_set(self.directory)[1]))

  def _data(self):
    images, labels = training_set(self.directory)
    return (jnp.asarray(images[:self.num_data]),
            jnp.asarray(labels[:self.num_data], jnp.int32))

  def _init(self):
    self._data()  # the files checked at construction, as bsuite loads them
    return MNISTState(numpy_random.from_seed(self.seed),
                      jnp.zeros((), jnp.int32), base.as_f64(0.),
                      jnp.ones((), bool))

  def _reset(self, state):
    images, labels = self._data()
    stream, index = numpy_random.randint(state.stream, self.num_data)
    image = jnp.asarray(_PIXEL_VALUES)[images[index].astype(jnp.int32) + 128]
    state = state._replace(stream=stream, correct_label=labels[index])
    return state, base.restart(image)

  def _step(self, state, action):
    reward = jnp.where(action == state.correct_label, 1., -1.)
    state = state._replace(total_regret=state.total_regret + (1. - reward))
    return state, base.transition(reward, jnp.zeros(self.observation_shape),
                                  True)

  def info(self, state):
    return {'total_regret': state.total_regret}
