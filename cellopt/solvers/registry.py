"""The method registry behind :func:`cellopt.solve`, and the checks every call passes.

Each method declares what it can do where it is registered (:func:`register`): its kind,
whether it serves each user by one cell on request, whether it handles free pattern
shares and several share blocks, whether it runs on a Dask cluster, and which of its
options take a warm start. Its options — their types, defaults and one-line docs — are
read from its signature and docstring. :func:`method_info` returns all of it as a
:class:`MethodInfo`; :func:`method_table` lists every method.
"""

from __future__ import annotations

import dataclasses
import inspect
import math
import re
import types
import typing
from collections.abc import Callable, Mapping
from typing import Any, Literal

import numpy as np
import pandas as pd

from cellopt.checks import (
    INT64_MAX,
    as_float,
    as_float_array,
    check_array,
    check_bool,
    close_names,
    is_integer,
    is_real,
    shown,
)
from cellopt.errors import ValidationError
from cellopt.parameters import register_choice
from cellopt.problem import Problem
from cellopt.solution import Solution

__all__ = [
    "BLOCK_METHODS", "DEFAULT_METHODS", "KINDS", "METHODS", "METHOD_INFO", "PATTERN_METHODS",
    "MethodInfo", "OptionInfo", "check_arguments", "check_inner", "check_problem", "check_warm_start",
    "default_method", "get_method",
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

#: Arguments :func:`cellopt.solve` takes itself for every method.
_COMMON = ("tol", "max_iter", "time_limit_s", "callback")
#: The keywords :func:`cellopt.solve` accepts whatever the method (beside the method's own
#: options): named in the message for an unknown option, with "did you mean" for near misses.
SOLVE_ARGUMENTS = (*_COMMON, "single_association")
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
                          options=options, summary=_summary(fn))
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
                      summary=_summary(fn))


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


# ============================================================================ checks
def check_problem(problem: Problem) -> None:
    """Refuse anything but a :class:`~cellopt.problem.Problem`."""
    if not isinstance(problem, Problem):
        raise ValidationError(f"expected a cellopt.Problem, got {type(problem).__name__}; fix: "
                              "build one with Problem.from_network(...) or Problem.from_links(...)")


def check_arguments(method: str, fn: Callable[..., Solution] | None = None, *, tol: Any,
                    max_iter: Any, time_limit_s: Any, callback: Any, single_association: Any,
                    options: dict[str, Any]) -> None:
    """Refuse bad arguments of ``solve(problem, method, ...)``, all at once.

    Parameters
    ----------
    method : str
        A registered method.
    fn : callable, optional
        Unused: the options are those of ``METHODS[method]`` (kept for callers that pass
        the function).
    tol, max_iter, time_limit_s, callback, single_association
        As given to :func:`cellopt.solve`.
    options : dict
        The method-specific options as given.

    Raises
    ------
    ValidationError
        One line per problem: a bad common argument, ``single_association=True`` for a
        method that does not declare it, options the method does not have (the message
        lists those it has), and options of the wrong type (float, int and bool options;
        integers pass as floats, numpy scalars pass).
    """
    info = method_info(method)
    problems = []
    if not (is_real(tol) and math.isfinite(as_float(tol)) and tol > 0):
        problems.append(f"tol={shown(tol)}; fix: give a rate-equivalent gap > 0, e.g. 1e-4")
    if max_iter is not None and not (is_integer(max_iter) and 0 <= max_iter <= INT64_MAX):
        problems.append(f"max_iter={shown(max_iter)}; fix: give an integer ≥ 0, or None for the "
                        "method's default")
    if time_limit_s is not None and not (is_real(time_limit_s) and _fits_float(time_limit_s)
                                         and time_limit_s >= 0):
        problems.append(f"time_limit_s={shown(time_limit_s)}; fix: give seconds ≥ 0, or None for "
                        "no limit")
    if callback is not None and not callable(callback):
        problems.append(f"callback={callback!r} is not callable; fix: give a function of one "
                        "dict, or None")
    if not isinstance(single_association, (bool, np.bool_)):
        problems.append(f"single_association={single_association!r}; fix: give True or False")
    elif single_association and not info.single_association:
        able = methods_with("single_association")
        why = " (the baselines already serve each user by one cell)" \
            if info.kind == "baseline" else ""
        problems.append(f"single_association applies to {_listed(able)}, not {method!r}; fix: "
                        f"drop single_association{why}, or use one of those methods")
    valid = sorted(info.options)
    unknown = sorted(set(options) - set(valid))
    if unknown:
        common = sorted(SOLVE_ARGUMENTS)
        near = {k: _near_names(k, [*common, *valid]) for k in unknown}
        guesses = [" or ".join(map(repr, near[k])) + ("" if len(unknown) == 1 else f" for {k!r}")
                   for k in unknown if near[k]]
        own = f"{method!r} also takes {valid}" if valid else f"{method!r} has no options of its own"
        fix = f"every method takes {common}; {own} (see method_info({method!r}))"
        if guesses:
            fix = f"did you mean {'; '.join(guesses)}? " + fix
        problems.append(f"unknown option(s) {unknown} for method {method!r}; fix: {fix}")
    for name, value in options.items():
        if name in info.options:
            problem = _type_problem(method, info.options[name], value)
            if problem:
                problems.append(problem)
    if problems:
        raise ValidationError(problems)


def _near_names(name: str, valid: list[str]) -> list[str]:
    """The valid names `name` may be a misspelling of, best first: one that starts the other
    (``tolerance`` → ``tol``, ``time_limit`` → ``time_limit_s``), then the nearest by
    :func:`difflib.get_close_matches` (``max_iters`` → ``max_iter``)."""
    if not isinstance(name, str):
        return []
    flat = name.lower().replace("_", "")
    prefixed = [v for v in valid if min(len(flat), len(v)) >= 3
                and (flat.startswith(v.replace("_", "")) or v.replace("_", "").startswith(flat))]
    return list(dict.fromkeys([*prefixed, *close_names(name, valid, n=2)]))[:3]


def check_warm_start(problem: Problem, *, x0: Any = None, prices0: Any = None, theta0: Any = None
                     ) -> tuple[np.ndarray | None, tuple[np.ndarray, np.ndarray] | None,
                                np.ndarray | None]:
    """Warm starts checked against `problem`: shapes, finite values, none negative.

    Parameters
    ----------
    problem : Problem
    x0 : array_like, shape (n_links,), optional
        Starting shares (``Solution.x`` of this problem).
    prices0 : (array_like, array_like), optional
        Starting airtime prices, shape (n_cells, n_resources) (or flat,
        (n_cells · n_resources,)), and backhaul prices, shape (n_cells,)
        (``Solution.prices["airtime"]``, ``Solution.prices["backhaul"]``).
    theta0 : array_like, optional
        Starting pattern shares: shape (n_resources,), or (n_blocks, n_resources) with
        share blocks; only for a problem with free pattern shares.

    Returns
    -------
    (x0, prices0, theta0)
        As float arrays (prices: μ flat, shape (n_cells · n_resources,)); None where
        not given.

    Raises
    ------
    ValidationError
        Naming the warm start, its expected shape and the offending entries.
    """
    p = problem
    if x0 is not None:
        x0 = check_array(x0, "x0", shape=(p.n_links,), low=0.0,
                         fix=f"give finite shares ≥ 0, one per link of this problem, shape "
                             f"({p.n_links},) (e.g. the x of an earlier solution of it)")
    if prices0 is not None:
        fix = (f"give (airtime prices, shape ({p.n_cells}, {p.n_resources}); backhaul prices, "
               f"shape ({p.n_cells},)), finite and ≥ 0, e.g. (sol.prices['airtime'], "
               "sol.prices['backhaul']) of an earlier solution of this problem")
        if isinstance(prices0, (str, bytes)) or not isinstance(prices0, (tuple, list)) \
                or len(prices0) != 2:
            raise ValidationError(f"prices0={shown(prices0)} is not a pair of arrays; fix: {fix}")
        mu = as_float_array(prices0[0], "prices0[0]", fix=fix)
        if mu.shape == (p.n_groups,):
            mu = mu.reshape(p.n_cells, p.n_resources)
        mu = check_array(mu, "prices0[0]", shape=(p.n_cells, p.n_resources), low=0.0, fix=fix)
        nu = check_array(prices0[1], "prices0[1]", shape=(p.n_cells,), low=0.0, fix=fix)
        prices0 = (mu.reshape(-1), nu)
    if theta0 is not None:
        if not p.free_shares:
            raise ValidationError("theta0 is given but the problem has no free pattern shares "
                                  "(Problem.pattern_cost); fix: drop theta0")
        shape = (p.n_resources,) if p.share_block is None else (p.n_blocks, p.n_resources)
        theta0 = check_array(theta0, "theta0", shape=shape, low=0.0,
                             fix=f"give finite pattern shares ≥ 0, shape {shape} (e.g. the "
                                 "pattern_share of an earlier solution of this problem)")
    return x0, prices0, theta0


def check_inner(inner_method: Any, inner_options: Any, *, tol: Any = 1e-4,
                time_limit_s: Any = None) -> dict[str, Any]:
    """Check a baseline's inner solver and its options, as :func:`cellopt.solve` would.

    Parameters
    ----------
    inner_method : str
        A registered method that solves the convex problem (``method_info(name).convex``).
    inner_options : mapping or None
        Its options; :func:`cellopt.solve`'s ``max_iter``, ``callback`` and
        ``single_association`` may be among them (`tol` and `time_limit_s` are the
        baseline's own).
    tol, time_limit_s
        The baseline's, handed to the inner solver.

    Returns
    -------
    dict
        The options as a dict (empty for None).

    Raises
    ------
    ValidationError
        An unknown or non-convex method, options that are not a mapping, unknown or
        badly typed options, and `tol` or `time_limit_s` among them.
    """
    info = _method_info_for(inner_method, "inner_method")
    if not info.convex:
        raise ValidationError(f"inner_method={inner_method!r} is a baseline; fix: use a solver of "
                              f"the convex problem: one of {methods_with('convex')}")
    if inner_options is None:
        return {}
    if not isinstance(inner_options, Mapping):
        raise ValidationError(f"inner_options={shown(inner_options)} is a "
                              f"{type(inner_options).__name__}, not a mapping; fix: give a dict of "
                              f"options of {inner_method!r}, e.g. {{'max_iter': 50}}, or None")
    options = dict(inner_options)
    taken = sorted(k for k in ("tol", "time_limit_s") if k in options)
    if taken:
        raise ValidationError(f"inner_options has {taken}, which the baseline gives its inner "
                              f"solver itself; fix: pass {taken} to the baseline instead")
    own = {k: options.pop(k) for k in ("max_iter", "callback", "single_association")
           if k in options}
    check_arguments(inner_method, tol=tol, max_iter=own.get("max_iter"),
                    time_limit_s=time_limit_s, callback=own.get("callback"),
                    single_association=own.get("single_association", False), options=options)
    return dict(inner_options)


def _method_info_for(name: Any, argument: str) -> MethodInfo:
    """:func:`method_info` of `name`, the message of an unknown name naming `argument`."""
    get_method(name, argument)
    return method_info(name)


def _type_problem(method: str, option: OptionInfo, value: Any) -> str | None:
    """Why `value` does not fit `option`, else None.

    Float, int and bool options are checked for their type (a float also for being
    finite); ``ndarray`` options for holding numbers, ``tuple[ndarray, ndarray]`` options
    (warm-start prices) for being a pair of arrays of numbers, ``Mapping`` options for
    being a mapping. Shapes and ranges are the method's to check: they depend on the
    problem.
    """
    atoms = _split_union(option.annotation)
    none_ok = "None" in atoms
    scalar = [a for a in atoms if a != "None"]
    if len(scalar) != 1 or (none_ok and value is None):
        return None
    expected = scalar[0]
    if expected == "ndarray":
        return _array_problem(method, option.name, value)
    if expected == "tuple[ndarray, ndarray]":
        if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list)) \
                or len(value) != 2:
            return (f"{option.name}={shown(value)} for method {method!r} is not a pair; fix: give "
                    "(airtime prices, shape (n_cells, n_resources); backhaul prices, shape "
                    "(n_cells,)), e.g. (sol.prices['airtime'], sol.prices['backhaul'])")
        return _array_problem(method, f"{option.name}[0]", value[0]) \
            or _array_problem(method, f"{option.name}[1]", value[1])
    if expected.startswith("Mapping"):
        if isinstance(value, Mapping):
            return None
        return (f"{option.name}={shown(value)} for method {method!r} is a "
                f"{type(value).__name__}, not a mapping; fix: give a dict, e.g. "
                f"{option.name}={{}}" + (", or None" if none_ok else ""))
    if expected not in ("float", "int", "bool"):
        return None
    ok = {"float": lambda v: is_real(v) and _fits_float(v),
          "int": lambda v: is_integer(v) and abs(int(v)) <= INT64_MAX,
          "bool": lambda v: isinstance(v, (bool, np.bool_))}[expected](value)
    if ok:
        return None
    what = {"float": "a real number", "int": "a whole number", "bool": "True or False"}[expected]
    example = _converted(value, expected)
    fix = f"give {what}" + (f", e.g. {option.name}={example!r}" if example is not None else "") \
        + (", or None" if none_ok else "")
    return (f"{option.name}={value!r} for method {method!r}: expected {option.annotation}, got "
            f"{type(value).__name__}; fix: {fix}")


def _array_problem(method: str, name: str, value: Any) -> str | None:
    """Why `value` is not an array of numbers (booleans and text are not), else None."""
    try:
        as_float_array(value, name, fix="")
    except ValidationError as err:
        why = str(err).split("; fix:", 1)[0]
        return (f"{why} (method {method!r}); fix: give an array of numbers, e.g. from a previous "
                "solution of the same problem")
    return None


def _fits_float(value: Any) -> bool:
    """A real number that float64 can hold (not an integer like 10**400)."""
    try:
        float(value)
    except OverflowError:
        return False
    return True


def _converted(value: Any, expected: str) -> Any:
    """`value` as the `expected` type where the conversion is exact (a number in a string,
    a whole float for an int), else None."""
    try:
        if expected == "float" and isinstance(value, str):
            return float(value)
        if expected == "int":
            number = float(value) if isinstance(value, str) else value
            if is_real(number) and np.isfinite(number) and float(number).is_integer():
                return int(number)
        if expected == "bool" and isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
    except (TypeError, ValueError, OverflowError):
        return None
    return None


# ============================================================================ introspection
def _options_of(fn: Callable[..., Solution]) -> dict[str, OptionInfo]:
    """The method-specific options of `fn`: keyword-only parameters beyond the common ones."""
    try:
        hints = typing.get_type_hints(fn)
    except Exception:  # an annotation that does not evaluate: fall back to its text
        hints = {}
    docs = _parameter_docs(fn)
    options = {}
    for p in inspect.signature(fn).parameters.values():
        if p.kind is not inspect.Parameter.KEYWORD_ONLY or p.name in _COMMON:
            continue
        if p.name in hints:
            annotation = _type_name(hints[p.name])
        elif p.annotation is inspect.Parameter.empty:
            annotation = ""
        else:
            annotation = p.annotation if isinstance(p.annotation, str) else _type_name(p.annotation)
        options[p.name] = OptionInfo(name=p.name, annotation=annotation, default=p.default,
                                     doc=docs.get(p.name, ""))
    return options


def _type_name(tp: Any) -> str:
    """A type hint as it would be written: ``ndarray | None``, ``Mapping[str, Any]``."""
    if tp is type(None) or tp is None:
        return "None"
    if tp is Any:
        return "Any"
    if isinstance(tp, list):  # the parameters of a Callable
        return "[" + ", ".join(_type_name(a) for a in tp) + "]"
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(_type_name(a) for a in args)
    if origin is Literal:
        return f"Literal[{', '.join(repr(a) for a in args)}]"
    if origin is not None:
        name = getattr(origin, "__name__", None) or str(origin).replace("typing.", "")
        return f"{name}[{', '.join(_type_name(a) for a in args)}]" if args else name
    if isinstance(tp, type):
        return tp.__name__
    return str(tp).replace("typing.", "")


def _split_union(annotation: str) -> list[str]:
    """The members of a union written as text, split at top-level ``|``."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(annotation):
        depth += (ch == "[") - (ch == "]")
        if ch == "|" and depth == 0:
            parts.append(annotation[start:i].strip())
            start = i + 1
    parts.append(annotation[start:].strip())
    return parts


def _summary(fn: Callable[..., Any]) -> str:
    doc = inspect.getdoc(fn) or ""
    return _plain(doc.strip().split("\n\n")[0].replace("\n", " ")) if doc else ""


_ROLE = re.compile(r":[\w:]+:`~?(?:[^`<]*<)?([^`>]+)>?`")
_SEE = re.compile(r"^As for :func:`~?([\w.]+)`\.?$")
_SENTENCE = re.compile(r"^(.*?[.!?])(?=\s+[A-Z]|\s*$)", re.S)


def _parameter_docs(fn: Callable[..., Any], depth: int = 0) -> dict[str, str]:
    """Parameter name -> first sentence of its entry in `fn`'s numpydoc "Parameters".

    An entry that only says "As for :func:`other`." takes the entry of `other` (a function
    of the same module) for the same parameter.
    """
    lines = (inspect.getdoc(fn) or "").splitlines()
    start = next((i + 2 for i in range(len(lines) - 1) if lines[i].strip() == "Parameters"
                  and set(lines[i + 1].strip()) == {"-"}), None)
    if start is None:
        return {}
    entries: dict[str, list[str]] = {}
    names: list[str] = []
    for i in range(start, len(lines)):
        line = lines[i]
        if i + 1 < len(lines) and line.strip() and set(lines[i + 1].strip()) == {"-"}:
            break  # the next section
        if line and not line[0].isspace():
            names = [n.strip() for n in line.split(" : ")[0].split(",") if n.strip()]
            for n in names:
                entries[n] = []
        elif line.strip():
            for n in names:
                entries[n].append(line.strip())
    docs = {}
    for name, text_lines in entries.items():
        text = " ".join(text_lines)
        see = _SEE.match(text)
        if see and depth < 3:
            other = getattr(fn, "__globals__", {}).get(see.group(1).rsplit(".", 1)[-1])
            if callable(other) and _parameter_docs(other, depth + 1).get(name):
                docs[name] = _parameter_docs(other, depth + 1)[name]
                continue
        docs[name] = _first_sentence(text)
    return docs


def _first_sentence(text: str) -> str:
    match = _SENTENCE.match(text)
    return _plain(match.group(1) if match else text)


def _plain(text: str) -> str:
    """Docstring markup made plain: roles to their target's last name, ``code`` to code."""
    text = _ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1] if "~" in m.group(0)
                     else m.group(1), text)
    return text.replace("``", "").strip()


def _listed(names: list[str]) -> str:
    """``'a', 'b' and 'c'``."""
    quoted = [repr(n) for n in names]
    return " and ".join([", ".join(quoted[:-1]), quoted[-1]]) if len(quoted) > 1 \
        else (quoted[0] if quoted else "no method")
