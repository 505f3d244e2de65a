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

Ctrl+C as a terminal delivers it: a shell without job control starts a background
command (``pytest &``, a CI step run that way) with SIGINT ignored, and every process it
starts inherits that, so the interrupt tests would wait forever for a KeyboardInterrupt.
The session therefore restores Python's own SIGINT handler, which its subprocesses then
start with too.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests draw the same examples on every run (a fixed seed, no example database):
# the suite's outcome depends on the code alone, as the solver tests' derandomize=True.
settings.register_profile("cellopt", derandomize=True, database=None)
settings.load_profile("cellopt")

_TESTS = str(Path(__file__).resolve().parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)


@pytest.fixture(autouse=True, scope="session")
def _ctrl_c_is_delivered():
    """SIGINT raises KeyboardInterrupt in this process and its children, even when the
    suite was started with SIGINT ignored (see the module docstring)."""
    previous = signal.getsignal(signal.SIGINT)
    if previous is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    if previous is signal.SIG_IGN:
        signal.signal(signal.SIGINT, previous)
