"""The cell formats shared by the study scripts (experiments.lib.doc_blocks)."""

import numpy as np
from absl.testing import absltest

from experiments.lib import doc_blocks


class CellTest(absltest.TestCase):

  def test_median_range_matches_numpy(self):
    values = np.random.default_rng(0).normal(size=7)
    for digits in (2, 3):
      self.assertEqual(
          doc_blocks.median_range(list(values), digits),
          f'{np.median(values):.{digits}f} [{np.min(values):.{digits}f}-'
          f'{np.max(values):.{digits}f}]')
    self.assertEqual(doc_blocks.median_range([0.1, 0.3, 0.2, 1.0]),
                     '0.250 [0.100-1.000]')

  def test_id_span(self):
    self.assertEqual(doc_blocks.id_span([12, 13, 14, 15]), '12-15')
    self.assertEqual(doc_blocks.id_span([3]), '3')
    self.assertEqual(doc_blocks.id_span([0, 2, 3]), '0, 2, 3')
    self.assertEqual(doc_blocks.id_span(np.array([4, 5])), '4-5')
    with self.assertRaisesRegex(ValueError, '`numbers`'):
      doc_blocks.id_span([])


if __name__ == '__main__':
  absltest.main()
