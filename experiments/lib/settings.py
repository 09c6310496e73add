"""Config values given on the command line as text: `--set=name=value,...`
(shared by every agent of a run) and the preset's pseudo-override."""

from typing import Any, Dict, Sequence

from agents import paper_presets


def parse_value(text: str) -> Any:
  """'true'/'false', 'none', an int, a float, or the text itself."""
  lowered = text.strip().lower()
  if lowered in ('true', 'false'):
    return lowered == 'true'
  if lowered == 'none':
    return None
  try:
    number = float(text)
  except ValueError:
    return text.strip()
  return int(number) if number.is_integer() and '.' not in text and \
      'e' not in lowered else number


def parse_set(items: Sequence[str], preset: str = 'default'
              ) -> Dict[str, Any]:
  """--set's 'name=value' items, plus the `preset`'s pseudo-override."""
  values = paper_presets.preset_overrides(preset)
  for item in items:
    name, sep, value = item.partition('=')
    if not sep:
      raise ValueError(f"--set: {item!r} is not 'name=value'.")
    if name.strip() == 'preset':
      raise ValueError('--set: give the preset as --preset, not in --set.')
    values[name.strip()] = parse_value(value)
  return values
