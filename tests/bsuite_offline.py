"""bsuite's MNIST environments without a download: tiny idx files we write."""

import contextlib
import functools
import gzip
import os
import struct
import tempfile

from bsuite.utils import datasets
import numpy as np


def write_fake_mnist(directory: str, num_images: int = 64) -> None:
  """Writes MNIST-format idx files (random 28x28 images, labels 0..9)."""
  rng = np.random.default_rng(0)
  for prefix, count in (('train', num_images), ('t10k', num_images // 4)):
    images = rng.integers(0, 256, size=(count, 28, 28), dtype=np.uint8)
    labels = (np.arange(count) % 10).astype(np.uint8)
    with gzip.open(os.path.join(directory, f'{prefix}-images-idx3-ubyte.gz'),
                   'wb') as f:
      f.write(struct.pack('>IIII', 2051, count, 28, 28) + images.tobytes())
    with gzip.open(os.path.join(directory, f'{prefix}-labels-idx1-ubyte.gz'),
                   'wb') as f:
      f.write(struct.pack('>II', 2049, count) + labels.tobytes())


@contextlib.contextmanager
def offline_mnist():
  """bsuite's real `load_mnist` reading our files instead of downloading."""
  original = datasets.load_mnist
  with tempfile.TemporaryDirectory() as directory:
    write_fake_mnist(directory)
    datasets.load_mnist = functools.partial(original, directory=directory)
    try:
      yield directory
    finally:
      datasets.load_mnist = original


_ORIGINAL_LOAD_MNIST = datasets.load_mnist


def datasets_load_mnist_from(directory: str) -> None:
  """bsuite's `load_mnist` reads `directory` (until restored)."""
  datasets.load_mnist = functools.partial(_ORIGINAL_LOAD_MNIST,
                                          directory=directory)


def restore_datasets_load_mnist() -> None:
  datasets.load_mnist = _ORIGINAL_LOAD_MNIST
