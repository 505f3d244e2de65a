"""The checks every solver call passes: the problem, the common arguments, a method's
options (names and types, from its :class:`~cellopt.solvers.registry.MethodInfo`), warm
starts, and a baseline's inner solver.

:func:`cellopt.solve` runs :func:`check_problem` and :func:`check_arguments` before it
dispatches; each method runs them again for direct calls, and :func:`check_warm_start`
and :func:`check_inner` where it takes a warm start or an inner solver. Every problem is
a :class:`~cellopt.errors.ValidationError` with the fix; :func:`check_arguments` lists
all of a call's problems at once.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

import numpy as np

from cellopt.checks import (
    INT64_MAX,
    as_float,
    as_float_array,
    check_array,
    close_names,
    is_integer,
    is_real,
    shown,
)
from cellopt.errors import ValidationError
from cellopt.problem import Problem
from cellopt.solution import Solution
from cellopt.solvers.introspection import split_union
from cellopt.solvers.registry import (
    COMMON_ARGUMENTS,
    MethodInfo,
    OptionInfo,
    get_method,
    method_info,
    methods_with,
)

__all__ = ["check_arguments", "check_inner", "check_problem", "check_warm_start"]

#: The keywords :func:`cellopt.solve` accepts whatever the method (beside the method's own
#: options): named in the message for an unknown option, with "did you mean" for near misses.
SOLVE_ARGUMENTS = (*COMMON_ARGUMENTS, "single_association")


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
    atoms = split_union(option.annotation)
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


def _listed(names: list[str]) -> str:
    """``'a', 'b' and 'c'``."""
    quoted = [repr(n) for n in names]
    return " and ".join([", ".join(quoted[:-1]), quoted[-1]]) if len(quoted) > 1 \
        else (quoted[0] if quoted else "no method")
