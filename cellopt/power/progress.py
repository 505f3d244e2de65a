"""What :func:`~cellopt.power.solve_power` shows of each phase while it runs: a tqdm bar,
or events given to a function."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cellopt.progress import progress_bar, shows

__all__ = ["Progress"]


class Progress:
    """What :func:`~cellopt.power.solve_power` shows of every phase while it runs.

    Phases, in order: ``"column generation"`` (one step per iteration, against
    `max_iter`), ``"finishing the answer"`` (the best master solved to `tol`), and with a
    relaxed bound ``"relaxed bound"`` (one step per round of each cluster relaxation) and
    ``"decomposition bound"`` (one step per optimizer iteration, against their budget).
    `show` True draws a tqdm bar per phase on stderr; a callable receives every event as
    a dict: ``phase``, ``step`` (0 when the phase starts), ``total`` (None: unknown) and
    the phase's numbers; False shows nothing; None draws the bars when stderr is a
    terminal (:mod:`cellopt.progress`). Display only: nothing of the run depends on
    it (tqdm's own refresh timing included).
    """

    def __init__(self, show: bool | Callable[[dict[str, Any]], Any] | None):
        self.sink = show if callable(show) else None
        self.draw = self.sink is None and shows(show)
        self.bar: Any = None
        self.name: str | None = None
        self.total: int | None = None

    def phase(self, name: str, total: int | None, unit: str = "step") -> None:
        """Start phase `name` of `total` steps (None: unknown)."""
        self._close_bar()
        self.name, self.total = name, total
        if self.draw:
            self.bar = progress_bar(total, progress=True, desc=f"solve_power: {name}", unit=unit,
                                    leave=False, bar_format="{desc} {n}/{total_fmt} " + unit
                                    + " |{bar:20}| {elapsed} {postfix}")
        self._emit(0, {})

    def step(self, done: int, **info: Any) -> None:
        """`done` steps of the current phase are finished; `info`: numbers to show."""
        if self.bar is not None:
            self.bar.n = done
            self.bar.set_postfix(**info, refresh=True)
        self._emit(done, info)

    def _emit(self, done: int, info: dict[str, Any]) -> None:
        if self.sink is not None:
            self.sink(dict(phase=self.name, step=done, total=self.total, **info))

    def _close_bar(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def close(self) -> None:
        self._close_bar()
