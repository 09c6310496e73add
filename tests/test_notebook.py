"""docs/quickstart.ipynb: every code cell runs, in order, in one namespace."""

import contextlib
import io
import json
import os

from absl.testing import absltest

from tests import agent_testing

NOTEBOOK = os.path.join(agent_testing.ROOT, 'docs',
                        'quickstart.ipynb')


class NotebookTest(absltest.TestCase):

  def test_code_cells_run(self):
    with open(NOTEBOOK) as f:
      cells = json.load(f)['cells']
    code = [''.join(c['source']) for c in cells if c['cell_type'] == 'code']
    self.assertGreaterEqual(len(code), 4)
    namespace, printed = {}, io.StringIO()
    with contextlib.redirect_stdout(printed):
      for i, source in enumerate(code):
        exec(compile(source, f'{NOTEBOOK}:cell{i}', 'exec'), namespace)  # pylint: disable=exec-used
    text = printed.getvalue()
    self.assertIn('mass 1.0000, mean 0.0900 (clipped atoms: 0.0900)', text)
    self.assertIn('regret after 60 episodes', text)
    # Four agents trained, each with its own regret count.
    self.assertEqual(namespace['stats'].total_bad_episodes.shape, (4, 60))


if __name__ == '__main__':
  absltest.main()
