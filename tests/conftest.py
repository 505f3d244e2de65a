"""Shared test set-up.

Helpers used by several test files are plain modules next to this file, imported by
name (``from problems import random_problem``), not fixtures:

- ``problems.py`` — seeded instances: :func:`random_problem(seed, kind, ...)` (one
  generator, four documented families) and :func:`one_cell`;
- ``checks.py`` — :func:`assert_feasible` (recomputed with numpy), :func:`raises` (an
  exact piece of the message) and :func:`assert_same_cells`;
- ``gap_oracle.py`` — an independent rate-equivalent gap;
- ``small_scenario.py`` — the smallest scenario the CLI and runner tests use.

pytest's default ("prepend") import mode puts ``tests/`` on ``sys.path``; the lines
below do the same under ``--import-mode=importlib``, so the helpers import either way.
"""

from __future__ import annotations

import sys
from pathlib import Path

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)
