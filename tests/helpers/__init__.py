"""Helpers shared by the test files (imported as ``from helpers.problems import ...``).

- :mod:`helpers.problems` — seeded instances: ``random_problem(seed, kind, ...)`` (one
  generator, four documented families) and ``one_cell``;
- :mod:`helpers.checks` — ``assert_feasible`` (recomputed with numpy), ``raises`` (an
  exact piece of the message) and ``assert_same_cells``;
- :mod:`helpers.gap_oracle` — an independent rate-equivalent gap;
- :mod:`helpers.small_scenario` — the smallest scenario the command-line and runner
  tests use.

:data:`ROOT` is the repository's root (docs, topologies, benchmarks, experiments).
"""

from pathlib import Path

#: The repository's root folder.
ROOT = Path(__file__).resolve().parents[2]
