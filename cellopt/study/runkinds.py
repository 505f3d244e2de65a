"""Kinds of run: what a drop of a scenario is solved with, one small object per run.

A scenario's runs (:attr:`Scenario.runs <cellopt.study.scenario.Scenario.runs>`) are the
methods of its ``methods`` array, then its ``[power]`` section. Each is an object of one
kind:

- :class:`MethodRun`: a registered solver method with its options;
- :class:`PowerRun`: the ``[power]`` section, power patterns chosen jointly with the
  association (its keys are its options).

Each has a ``label`` (it names the run's rows in every output), a ``name`` (the method,
or ``"power"``: the ``solver`` column of a sweep's tables), its ``options``, what it can
do (:attr:`RunKind.distributed`, :attr:`RunKind.optimizer`, :attr:`RunKind.patterns`) and
``solve(scenario, drop) -> Solution``. ``cellopt run``, sweeps, capacity searches and the
deployable settings ask the object, never its name. :func:`run_named` reads a run from
its name, as ``cellopt run --method NAME`` and ``capacity(method=NAME)`` give it.

The deployable settings (``[deploy]``, :mod:`cellopt.study.deployment`) are not a kind of
run: they are fitted after the runs, from the optimizer's solution (and the power run's),
on training drops of their own, and give three rules and their judgement on held-out
drops, not one solution of the drop.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np

from cellopt.errors import ValidationError
from cellopt.power import solve_power
from cellopt.power.joint import explain_stop
from cellopt.solution import Solution
from cellopt.solvers import METHODS
from cellopt.solvers.arguments import check_arguments
from cellopt.solvers.registry import get_method, method_info

if TYPE_CHECKING:
    from cellopt.drop import Drop
    from cellopt.study.scenario import Scenario

__all__ = ["MethodRun", "PowerRun", "RunKind", "label_problem", "labels_problem", "run_named",
           "run_names"]


def label_problem(label: Any) -> str | None:
    """Why `label` cannot name a run, or None.

    A label names the run's rows in every output (the ``method`` column of the CSV
    tables, the GeoPackage layers, the report): it must be a string with text, since an
    empty one reads back from a CSV as a missing value.
    """
    if not isinstance(label, str):
        return f"= {label!r} is a {type(label).__name__}; fix: give the label as a string"
    if not label.strip():
        return (f"= {label!r} is blank, and the label names the run's rows in every output (an "
                "empty one reads back from a CSV as a missing value); fix: give a label with "
                "text, or leave 'label' out for the default")
    return None


def labels_problem(labels: Sequence[str]) -> str | None:
    """Why the labels of a run's methods cannot name its rows apart, or None: two equal, or
    equal once the spaces at their ends are stripped (they read as one run)."""
    groups: dict[str, list[str]] = {}
    for label in labels:
        groups.setdefault(label.strip(), []).append(label)
    clash = [sorted(set(g)) for g in groups.values() if len(g) > 1]
    if not clash:
        return None
    if len(clash[0]) == 1:
        return f"duplicate labels {clash[0]}; fix: give each a distinct 'label'"
    return (f"labels {clash[0]} differ only by spaces at their ends, so they read as one run in "
            "the outputs; fix: give each a distinct 'label'")


class RunKind:
    """What every kind of run has: a name, a label, options, capabilities and a solve.

    Attributes
    ----------
    name : str
        The solver method, or ``"power"`` for the ``[power]`` section.
    label : str
        Names the run's rows in every output.
    options : mapping
        Passed to the solve.
    patterns : bool
        Whether the run chooses power patterns (``power_patterns.csv``, and the schedule
        of the deployable settings).
    takes_options : bool
        Whether options can be given beside the name (``capacity(method=NAME, **options)``);
        a section's run takes its options from the section.
    """

    name: str
    label: str
    options: Mapping[str, Any]
    patterns: ClassVar[bool] = False
    takes_options: ClassVar[bool] = True

    def _check_label(self) -> None:
        problem = label_problem(self.label)
        if problem is not None:
            raise ValidationError(f"{type(self).__name__}({self.name!r}) label {problem}")

    @property
    def distributed(self) -> bool:
        """Whether it runs on a Dask cluster (it takes a ``scheduler`` option)."""
        return False

    @property
    def optimizer(self) -> bool:
        """Whether it solves the convex problem to a certified gap with fractional
        association: the deployable settings start from such a run (:mod:`cellopt.deploy`)."""
        return False

    def with_options(self, **options: Any) -> RunKind:
        """The same run with `options` added (replacing options of the same names)."""
        return dataclasses.replace(self, options={**self.options, **options})

    def solve(self, scenario: Scenario, drop: Drop, *, progress: bool = False,
              **extra: Any) -> Solution:
        """Solve `drop`, a drop of `scenario`, with this run.

        Parameters
        ----------
        scenario : Scenario
        drop : Drop
            A drop of `scenario` (:meth:`Scenario.build <cellopt.study.scenario.Scenario.build>`).
        progress : bool
            Show the iterations on stderr.
        **extra
            More options, e.g. ``callback`` (called with each iteration's history row).
        """
        raise NotImplementedError

    def outcome(self, solution: Solution) -> str:
        """How the solve ended, in words (the line ``cellopt run --progress`` shows)."""
        return f"{solution.status}{_gap_text(solution)}, {solution.n_iter} iterations"


def _gap_text(solution: Solution) -> str:
    return "" if solution.gap is None else f", gap {solution.gap:.2e}"


@dataclasses.dataclass(frozen=True)
class MethodRun(RunKind):
    """A registered solver method with its options: ``drop.solve(name, **options)``.

    Parameters
    ----------
    name : str
        A key of :data:`cellopt.solvers.METHODS`.
    label : str
    options : mapping, optional
    """

    name: str
    label: str
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def __post_init__(self) -> None:
        self._check_label()

    @property
    def distributed(self) -> bool:
        return method_info(self.name).distributed

    @property
    def optimizer(self) -> bool:
        return method_info(self.name).convex and not self.options.get("single_association", False)

    def check(self, *, coupled: bool = False) -> None:
        """Refuse an unknown method or options that :func:`cellopt.solve` refuses, before
        any drop is built; with `coupled` (a load-coupled scenario) also the options of
        the load-coupled rounds (``max_rounds``, ``load_tol``) are taken.

        Raises
        ------
        ValidationError
            One line per problem, naming the option and the fix.
        """
        get_method(self.name)
        opts = dict(self.options)
        if coupled:
            for key in ("max_rounds", "load_tol"):  # the load-coupled rounds' own options
                if key not in method_info(self.name).options:
                    opts.pop(key, None)
        check_arguments(self.name, tol=opts.pop("tol", 1e-4), max_iter=opts.pop("max_iter", None),
                        time_limit_s=opts.pop("time_limit_s", None),
                        callback=opts.pop("callback", None),
                        single_association=opts.pop("single_association", False), options=opts)

    def solve(self, scenario: Scenario, drop: Drop, *, progress: bool = False,
              **extra: Any) -> Solution:
        """``drop.solve(name, **options, **extra)``; with `progress`, a line on stderr
        rewritten with the iteration and the gap (unless a ``callback`` is given)."""
        options = {**self.options, **extra}
        if progress and "callback" not in options:
            options["callback"] = _iteration_line(self.label)
        return drop.solve(self.name, **options)


def _iteration_line(label: str) -> Callable[[dict[str, Any]], None]:
    """A callback showing the iteration and the gap on one line of stderr, rewritten at most
    twice a second."""
    shown = [0.0]

    def show(row: dict[str, Any]) -> None:
        if time.perf_counter() - shown[0] < 0.5:
            return
        shown[0] = time.perf_counter()
        gap = row.get("gap")
        gap_text = "" if gap is None or not np.isfinite(gap) else f", gap {gap:.2e}"
        print(f"\r  {label}: iteration {row.get('iteration', '?')}{gap_text}   ", end="",
              file=sys.stderr, flush=True)
    return show


@dataclasses.dataclass(frozen=True)
class PowerRun(RunKind):
    """The ``[power]`` section: power patterns chosen jointly with the association.

    Its keys are its options: ``levels_db``, ``energy_price_per_w`` and ``n_interferers``
    build the :class:`~cellopt.power.PowerProblem` (:attr:`problem_options`); the others
    (``master_method``, ``tol``, ``max_iter``, ``time_limit_s``) are those of
    :func:`~cellopt.power.solve_power`.

    Parameters
    ----------
    label : str
    options : mapping
        The section's keys, but ``label``.
    """

    label: str
    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    name: ClassVar[str] = "power"
    patterns: ClassVar[bool] = True
    takes_options: ClassVar[bool] = False
    #: Keys of the section that build the PowerProblem; the others run solve_power.
    PROBLEM_KEYS: ClassVar[tuple[str, ...]] = ("levels_db", "energy_price_per_w", "n_interferers")

    def __post_init__(self) -> None:
        self._check_label()

    @classmethod
    def from_section(cls, section: Mapping[str, Any]) -> PowerRun:
        """The run of a checked ``[power]`` section; label ``power (<master method>)`` unless
        it gives one."""
        options = {k: v for k, v in section.items() if k != "label"}
        return cls(section.get("label", f"{cls.name} ({options.get('master_method', 'ipm')})"),
                   options)

    @property
    def problem_options(self) -> dict[str, Any]:
        """The options that build the power problem (:data:`PROBLEM_KEYS` that are given)."""
        return {k: self.options[k] for k in self.PROBLEM_KEYS if k in self.options}

    def solve(self, scenario: Scenario, drop: Drop, *, progress: bool = False,
              **extra: Any) -> Solution:
        """:meth:`Scenario.power_problem <cellopt.study.scenario.Scenario.power_problem>`
        of the drop, solved by :func:`~cellopt.power.solve_power` with ``master_method``,
        ``tol``, ``max_iter`` (default "auto", the work budget) and ``time_limit_s``;
        with `progress`, a bar per phase (``extra`` may hold solve_power's options too).

        Raises
        ------
        ValidationError
            Naming the file and ``[power]`` for a power problem this network refuses
            (e.g. a level list for a tier a cell file lacks).
        """
        problem = scenario.power_problem(drop, self)
        options = {k: v for k, v in {**self.options, **extra}.items() if k not in self.PROBLEM_KEYS}
        if "master_method" in options:
            options["method"] = options.pop("master_method")
        options.setdefault("progress", progress)
        return solve_power(problem, **options)

    def outcome(self, solution: Solution) -> str:
        """What stopped column generation, in words (:func:`~cellopt.power.explain_stop`)."""
        if solution.power is None:
            return super().outcome(solution)
        return f"{solution.status}{_gap_text(solution)}; {explain_stop(solution)}"


def run_names(scenario: Scenario) -> list[str]:
    """The names :func:`run_named` takes for `scenario`: the registered methods, and
    ``"power"`` when it has a ``[power]`` section."""
    return [*METHODS, *([PowerRun.name] if scenario.power is not None else [])]


def run_named(scenario: Scenario, name: str, options: Mapping[str, Any] | None = None
              ) -> RunKind | None:
    """The run `name` asks for (``cellopt run --method NAME``, ``capacity(method=NAME)``).

    Parameters
    ----------
    scenario : Scenario
    name : str
        ``"power"``: the scenario's ``[power]`` section (:attr:`Scenario.power`); any other
        name: that solver method, labelled `name`.
    options : mapping, optional
        A method's options (a section's run has its own).

    Returns
    -------
    RunKind or None
        None for ``"power"`` when the scenario has no ``[power]`` section.
    """
    if name == PowerRun.name:
        return scenario.power
    return MethodRun(name, name, dict(options or {}))
