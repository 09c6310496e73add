"""Every generated table in README.md, BUILD.md and docs/ is what its
generator makes of the committed data (docs/results/bsuite/refresh_docs.py)."""

import importlib.util
import os
import tempfile

from absl.testing import absltest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_SPEC = importlib.util.spec_from_file_location(
    'refresh_docs', os.path.join(ROOT, 'docs', 'results', 'bsuite',
                                 'refresh_docs.py'))
generated_docs = importlib.util.module_from_spec(_SPEC)
_SPEC.loader.exec_module(generated_docs)


class GeneratedDocsTest(absltest.TestCase):

  def test_every_block_is_current(self):
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
      missing = [f'{b.path}: {b.start}' for b in generated_docs.BLOCKS
                 if generated_docs.current_body(b) is None]
      self.assertEqual(missing, [], 'blocks without their lines')
      self.assertEqual(
          generated_docs.stale(), [],
          'rerun `python docs/results/bsuite/refresh_docs.py` and commit')
    finally:
      os.chdir(cwd)

  def test_a_changed_block_is_named_stale_and_refresh_restores_it(self):
    with tempfile.TemporaryDirectory() as tmp:
      path = os.path.join(tmp, 'doc.md')
      with open(path, 'w') as f:
        f.write('head\n<!-- a -->\nold\n<!-- b -->\ntail\n')
      block = generated_docs.Block(path, '<!-- a -->', '<!-- b -->',
                                   lambda: 'new\nlines')
      self.assertEqual(generated_docs.current_body(block), 'old')
      self.assertEqual(generated_docs.stale([block]),
                       [f'{path}: <!-- a -->'])
      self.assertEqual(generated_docs.refresh([block]),
                       [f'{path}: <!-- a -->'])
      self.assertEqual(generated_docs.stale([block]), [])
      # A current block is left as it is (its file not rewritten), and not
      # named.
      written = os.stat(path).st_mtime_ns
      os.utime(path, ns=(written - 10**9, written - 10**9))
      self.assertEqual(generated_docs.refresh([block]), [])
      self.assertEqual(os.stat(path).st_mtime_ns, written - 10**9)
      with open(path) as f:
        self.assertEqual(f.read(),
                         'head\n<!-- a -->\nnew\nlines\n<!-- b -->\ntail\n')


if __name__ == '__main__':
  absltest.main()
