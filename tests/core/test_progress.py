"""One progress rule for every long call: on at a terminal, off otherwise."""

from __future__ import annotations

import inspect
import io
import sys

import pytest

import cellopt
from cellopt import progress
from cellopt.errors import ValidationError
from cellopt.study import tasks


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


@pytest.mark.parametrize(("stream", "expected"), [(_Terminal(), True), (io.StringIO(), False)])
def test_none_shows_progress_exactly_at_a_terminal(monkeypatch, stream, expected):
    monkeypatch.setattr(sys, "stderr", stream)
    assert progress.shows(None) is expected
    assert progress.shows(True) is True and progress.shows(False) is False


def test_a_closed_stderr_shows_nothing(monkeypatch):
    stream = io.StringIO()
    stream.close()
    monkeypatch.setattr(sys, "stderr", stream)
    assert progress.shows(None) is False


def test_a_string_is_refused():
    with pytest.raises(ValidationError, match="progress"):
        progress.shows("false")


def test_the_bar_draws_at_a_terminal_and_not_in_a_pipe(monkeypatch):
    for stream, drawn in ((_Terminal(), True), (io.StringIO(), False)):
        monkeypatch.setattr(sys, "stderr", stream)
        with progress.progress_bar(3, progress=None, desc="work", unit="step") as bar:
            bar.update(3)
        assert ("work" in stream.getvalue()) is drawn


def _long_calls():
    from cellopt.coverage import coverage_map
    from cellopt.radio import link_table
    from cellopt.study import Scenario, capacity_sweep, run_scenario, run_sweep
    from cellopt.topology import read_cells

    return [link_table, coverage_map, read_cells, cellopt.solve_power, tasks.run_tasks,
            Scenario.build, run_scenario, run_sweep, capacity_sweep]


@pytest.mark.parametrize("fn", _long_calls(), ids=lambda fn: fn.__qualname__)
def test_every_long_call_defaults_to_the_rule(fn):
    assert inspect.signature(fn).parameters["progress"].default is None
