"""The method registry behind :func:`cellopt.solve`: what each method is and can do.

Each method declares what it can do where it is registered (:func:`register`): its kind,
whether it serves each user by one cell on request, whether it handles free pattern
shares and several share blocks, whether it runs on a Dask cluster, and which of its
options take a warm start. Its options — their types, defaults and one-line docs — are
read from its signature and docstring (:mod:`cellopt.solvers.introspection`).
:func:`method_info` returns all of it as a :class:`MethodInfo`; :func:`method_table`
lists every method; :func:`default_method` picks one for a problem. The checks of a call
are in :mod:`cellopt.solvers.arguments`.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from collections.abc import Callable
from typing import Any, Literal

import numpy as np
import pandas as pd

from cellopt.checks import check_bool, close_names
from cellopt.errors import ValidationError
from cellopt.parameters import register_choice
from cellopt.problem import Problem
from cellopt.solution import Solution
from cellopt.solvers.introspection import docstring_summary, parameter_docs, type_name

__all__ = [
    "BLOCK_METHODS", "DEFAULT_METHODS", "KINDS", "METHODS", "METHOD_INFO", "PATTERN_METHODS",
    "MethodInfo", "OptionInfo", "default_method", "get_method",
    "method_info", "method_options", "method_table", "methods_with", "register",
]

Kind = Literal["optimizer", "baseline", "reference"]
#: The kinds of method: optimizers and the reference solve the convex (fractional)
#: problem to a certified gap; baselines associate each user by a rule.
KINDS: tuple[str, ...] = ("optimizer", "reference", "baseline")

#: name -> function(problem, *, tol, max_iter, time_limit_s, callback, **options) -> Solution.
#: What :func:`cellopt.solve` dispatches on. Fill it with :func:`register`, which also
#: records the method's :class:`MethodInfo`; a function set here directly is run as an
#: optimizer that declares no capability.
METHODS: dict[str, Callable[..., Solution]] = {}
#: name -> what the method declared when it was registered.
METHOD_INFO: dict[str, MethodInfo] = {}
#: Methods that also solve problems whose resources are power patterns with free shares
#: (derived from the registrations: ``method_info(name).patterns``).
PATTERN_METHODS: set[str] = set()
register_choice("master_method", PATTERN_METHODS)
#: Methods that also solve problems with several pattern-share blocks
#: (``Problem.share_block``; derived: ``method_info(name).share_blocks``).
BLOCK_METHODS: set[str] = set()

#: Arguments :func:`cellopt.solve` takes itself for every method (a method's options are
#: its keyword-only parameters beyond these).
COMMON_ARGUMENTS = ("tol", "max_iter", "time_limit_s", "callback")
#: Options every distributed method takes: its Dask scheduler and the users' positions.
_DISTRIBUTED_OPTIONS = ("scheduler", "user_xy_m")


# ============================================================================ declarations
@dataclasses.dataclass(frozen=True)
class OptionInfo:
    """One method-specific option, as the method's signature and docstring describe it.

    Attributes
    ----------
    name : str
        The keyword.
    annotation : str
        Its type, readable (``"float"``, ``"ndarray | None"``, ``"Mapping[str, Any] | None"``).
    default : any
        Its default (``inspect.Parameter.empty`` for a required option).
    doc : str
        The first sentence of its entry in the docstring's "Parameters" section ("" if
        it has none).
    """

    name: str
    annotation: str
    default: Any
    doc: str = ""

    @property
    def required(self) -> bool:
        """The option has no default."""
        return self.default is inspect.Parameter.empty

    def __str__(self) -> str:
        """``"name: type = default"`` (``"name: type"`` for a required option)."""
        text = f"{self.name}: {self.annotation}" if self.annotation else self.name
        return text if self.required else f"{text} = {self.default!r}"


@dataclasses.dataclass(frozen=True)
class MethodInfo:
    """What a registered method is and can do.

    Attributes
    ----------
    name : str
        ``solve(problem, method=name)``.
    function : callable
        ``function(problem, *, tol, max_iter, time_limit_s, callback, **options) -> Solution``.
    kind : {"optimizer", "reference", "baseline"}
        Optimizers and the reference solve the convex (fractional) problem to a certified
        gap (the reference with a general-purpose conic solver, for small problems);
        baselines serve each user by one cell chosen by a rule.
    single_association : bool
        Accepts ``single_association=True`` (the fractional optimum rounded to one cell
        per user and improved locally).
    patterns : bool
        Handles free power-pattern shares (``Problem.pattern_cost``).
    share_blocks : bool
        Handles several pattern-share blocks (``Problem.share_block``).
    distributed : bool
        Runs on a Dask cluster: takes a ``scheduler`` option (None: a local cluster) and
        ``user_xy_m``, the users' positions, to split them into parts by region.
    warm_start : tuple of str
        The options that take a warm start (starting shares, prices, pattern shares);
        empty if none.
    options : dict of str to OptionInfo
        The method-specific options, in signature order: the keyword-only parameters
        beyond those :func:`cellopt.solve` passes to every method (`tol`, `max_iter`,
        `time_limit_s`, `callback`).
    summary : str
        The first line of the function's docstring.
    """

    name: str
    function: Callable[..., Solution]
    kind: Kind
    single_association: bool = False
    patterns: bool = False
    share_blocks: bool = False
    distributed: bool = False
    warm_start: tuple[str, ...] = ()
    options: dict[str, OptionInfo] = dataclasses.field(default_factory=dict)
    summary: str = ""

    @property
    def convex(self) -> bool:
        """Solves the convex problem to a certified gap (an optimizer or the reference):
        usable as a baseline's ``inner_method``."""
        return self.kind in ("optimizer", "reference")


def register(name: str, *, kind: Kind, single_association: bool = False, patterns: bool = False,
             share_blocks: bool = False, distributed: bool = False,
             warm_start: tuple[str, ...] = ()
             ) -> Callable[[Callable[..., Solution]], Callable[..., Solution]]:
    """Decorator: make a solver available as ``solve(problem, method=name)``.

    Parameters
    ----------
    name : str
        The method's name in :data:`METHODS`.
    kind : {"optimizer", "reference", "baseline"}
        See :class:`MethodInfo`.
    single_association : bool
        The method accepts ``single_association=True``.
    patterns : bool
        The method handles free pattern shares (``Problem.pattern_cost``).
    share_blocks : bool
        It also handles several share blocks (``Problem.share_block``); needs `patterns`.
    distributed : bool
        The method runs on a Dask cluster (see :class:`MethodInfo`).
    warm_start : tuple of str
        Names of the options that take a warm start.

    Returns
    -------
    callable
        The decorator; it returns the function unchanged.

    Raises
    ------
    ValueError
        For an unknown kind, block support without pattern support, a warm-start name
        that is not one of the method's options, or a distributed method without the
        options ``scheduler`` and ``user_xy_m`` (mistakes in the declaration, found when
        the module is imported).
    """
    if kind not in KINDS:
        raise ValueError(f"register({name!r}): kind={kind!r}; fix: one of {list(KINDS)}")
    for flag, value in (("single_association", single_association), ("patterns", patterns),
                        ("share_blocks", share_blocks), ("distributed", distributed)):
        check_bool(value, f"register({name!r}): {flag}")
    if isinstance(warm_start, str):  # a lone name, not its letters
        raise ValueError(f"register({name!r}): warm_start={warm_start!r}; fix: a tuple of option "
                         f"names, e.g. ({warm_start!r},)")
    if share_blocks and not patterns:
        raise ValueError(f"register({name!r}): share_blocks=True needs patterns=True")

    def deco(fn: Callable[..., Solution]) -> Callable[..., Solution]:
        options = _options_of(fn)
        missing = [w for w in warm_start if w not in options]
        if missing:
            raise ValueError(f"register({name!r}): warm_start names {missing} that are not options "
                             f"of {fn.__name__}; fix: use some of {list(options)}")
        lacking = [o for o in _DISTRIBUTED_OPTIONS if distributed and o not in options]
        if lacking:
            raise ValueError(f"register({name!r}): distributed=True, but {fn.__name__} lacks the "
                             f"option(s) {lacking} every distributed method takes")
        info = MethodInfo(name=name, function=fn, kind=kind,
                          single_association=bool(single_association), patterns=bool(patterns),
                          share_blocks=bool(share_blocks), distributed=bool(distributed),
                          warm_start=tuple(warm_start),
                          options=options, summary=docstring_summary(fn))
        METHOD_INFO[name] = info
        METHODS[name] = fn
        for names, has in ((PATTERN_METHODS, info.patterns), (BLOCK_METHODS, info.share_blocks)):
            if has:
                names.add(name)
            else:
                names.discard(name)
        return fn

    return deco


def get_method(name: str, argument: str = "method") -> Callable[..., Solution]:
    """The function of a registered method.

    Parameters
    ----------
    name : str
        A key of :data:`METHODS`.
    argument : str
        How the caller's argument is named in the message (``"method"``,
        ``"inner_method"``).

    Raises
    ------
    ValidationError
        For an unknown name (the message lists the valid ones, nearest first).
    """
    try:
        return METHODS[name]
    except (KeyError, TypeError):
        near = close_names(name, sorted(METHODS))
        hint = f"did you mean {near[0]!r}? " if near else ""
        raise ValidationError(f"unknown method {name!r} ({argument}={name!r}); fix: {hint}use one "
                              f"of {sorted(METHODS)}") from None


def method_info(name: str) -> MethodInfo:
    """What the method `name` declared when it was registered.

    Parameters
    ----------
    name : str
        A key of :data:`METHODS`.

    Returns
    -------
    MethodInfo
        A function set into :data:`METHODS` directly (not by :func:`register`) is
        described as an optimizer without any declared capability.

    Raises
    ------
    ValidationError
        For an unknown name (the message lists the valid ones).
    """
    fn = get_method(name)
    info = METHOD_INFO.get(name)
    if info is not None and info.function is fn:
        return info
    return MethodInfo(name=name, function=fn, kind="optimizer", options=_options_of(fn),
                      summary=docstring_summary(fn))


def method_options(name: str) -> list[str]:
    """The method-specific options of a registered method, sorted."""
    return sorted(method_info(name).options)


def methods_with(capability: str) -> list[str]:
    """The registered methods whose :class:`MethodInfo` has `capability` true, sorted.

    `capability` is a boolean attribute or property of :class:`MethodInfo`, e.g.
    ``"single_association"``, ``"patterns"``, ``"share_blocks"``, ``"distributed"`` or
    ``"convex"``.
    """
    return sorted(n for n in METHODS if getattr(method_info(n), capability))


def method_table() -> pd.DataFrame:
    """Every registered method and what it declares, one row each.

    Returns
    -------
    pandas.DataFrame
        Index ``method`` (optimizers first, then the reference, then the baselines, by
        name within a kind); columns ``kind``, ``single_association``, ``patterns``,
        ``share_blocks``, ``distributed`` (bool), ``warm_start`` (the warm-start options, comma-separated,
        "" if none), ``options`` (``"name: type = default"`` per option, separated by
        ``"; "``) and ``summary`` (the first line of the method's docstring).
    """
    infos = sorted((method_info(n) for n in METHODS), key=lambda i: (KINDS.index(i.kind), i.name))
    rows = [dict(method=i.name, kind=i.kind, single_association=i.single_association,
                 patterns=i.patterns, share_blocks=i.share_blocks, distributed=i.distributed,
                 warm_start=", ".join(i.warm_start),
                 options="; ".join(str(o) for o in i.options.values()), summary=i.summary)
            for i in infos]
    columns = ["method", "kind", "single_association", "patterns", "share_blocks", "distributed",
               "warm_start", "options", "summary"]
    return pd.DataFrame(rows, columns=columns).set_index("method")


# ============================================================================ the default
#: The method :func:`cellopt.solve` uses when none is given, by the problem's features
#: (the first that applies): the fastest certified method for them on the solver
#: benchmark family (``benchmarks/bench_solvers.py``; docs/model.md, "Measured
#: performance"). Each entry: (feature, method, why).
DEFAULT_METHODS: tuple[tuple[str, str, str], ...] = (
    ("several pattern-share blocks", "ipm", "as for power patterns: each block has its own"),
    ("power patterns with free shares", "ipm",
     "the fastest certified method on column-generation masters"),
    ("backhaul caps", "ipm", "certified all of 800 small random networks with caps, prices "
     "and demands, where dual stopped short on 2; faster than dual on the smallest "
     "femtocell network of the benchmark family"),
    ("finite demands", "ipm", "about 3x faster than dual on small networks with demands, and "
     "certifies those where dual stops short (1 in 100 light-traffic drops at alpha=2); "
     "dual is faster above ~15,000 links (method='dual')"),
    ("fixed resources", "dual", "the fastest certified method on the solver benchmark family"),
)


def default_method(problem: Problem) -> tuple[str, str]:
    """The method :func:`cellopt.solve` picks for `problem` when given none, and why.

    Returns
    -------
    name : str
        A key of :data:`METHODS`.
    reason : str
        The feature that decided and why that method (:data:`DEFAULT_METHODS`).
    """
    capped = np.isfinite(problem.backhaul_mbps).any()
    feature = ("several pattern-share blocks" if problem.share_block is not None else
               "power patterns with free shares" if problem.free_shares else
               "backhaul caps" if capped else
               "finite demands" if np.isfinite(problem.demand_mbps).any() else "fixed resources")
    name, why = next((m, w) for f, m, w in DEFAULT_METHODS if f == feature)
    return name, f"{feature}: {why}"


# ============================================================================ options
def _options_of(fn: Callable[..., Solution]) -> dict[str, OptionInfo]:
    """The method-specific options of `fn`: keyword-only parameters beyond the common ones."""
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # an annotation that does not evaluate: fall back to its text
        hints = {}
    docs = parameter_docs(fn)
    options = {}
    for p in inspect.signature(fn).parameters.values():
        if p.kind is not inspect.Parameter.KEYWORD_ONLY or p.name in COMMON_ARGUMENTS:
            continue
        if p.name in hints:
            annotation = type_name(hints[p.name])
        elif p.annotation is inspect.Parameter.empty:
            annotation = ""
        else:
            annotation = p.annotation if isinstance(p.annotation, str) else type_name(p.annotation)
        options[p.name] = OptionInfo(name=p.name, annotation=annotation, default=p.default,
                                     doc=docs.get(p.name, ""))
    return options
