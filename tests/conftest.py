"""Shared test set-up.

The tests are laid out by the part of the package they test (``core/``, ``radio/``,
``topology/``, ``solvers/``, ``power/``, ``deploy/``, ``study/``, ``cli/``), with the
hostile-input tests of a part beside its other tests (``test_*_hostile.py``); ``docs/``
runs the README, the tutorials and the documentation, and ``house/`` checks the layout of
the package itself (layers, packaging). Helpers used by several test files are the
package ``helpers/`` next to this file (``from helpers.problems import random_problem``),
not fixtures; ``helpers.ROOT`` is the repository's root.

pytest's default ("prepend") import mode puts ``tests/`` on ``sys.path`` for this file;
the lines below do the same under ``--import-mode=importlib``, so the helpers import
either way.

Ctrl+C as a terminal delivers it: a shell without job control starts a background
command (``pytest &``, a CI step run that way) with SIGINT ignored, and every process it
starts inherits that, so the interrupt tests would wait forever for a KeyboardInterrupt.
The session therefore restores Python's own SIGINT handler, which its subprocesses then
start with too.

pyproj's ``CRS.to_epsg`` searches the whole PROJ database for a CRS that has no EPSG code
(86 ms for the synthetic layouts' CRS), and pyogrio asks it for every layer a GeoPackage
gets: half of what writing a small run's outputs costs. The session remembers each answer
by the CRS's WKT (the same definition, the same code), so a run's files are written as
before, from the same answers, without searching again for a CRS already looked up.
"""

from __future__ import annotations

import signal
import sys
from pathlib import Path

import pyproj
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


@pytest.fixture(autouse=True, scope="session")
def _epsg_codes_are_looked_up_once():
    """``pyproj.CRS.to_epsg`` answers each CRS (by WKT) and confidence from memory after its
    first search (see the module docstring)."""
    search, answers = pyproj.CRS.to_epsg, {}

    def to_epsg(self: pyproj.CRS, min_confidence: int = 70) -> int | None:
        key = (self.to_wkt(), min_confidence)
        if key[0] is None:  # no WKT to know it by
            return search(self, min_confidence)
        if key not in answers:
            answers[key] = search(self, min_confidence)
        return answers[key]

    pyproj.CRS.to_epsg = to_epsg
    yield
    pyproj.CRS.to_epsg = search
