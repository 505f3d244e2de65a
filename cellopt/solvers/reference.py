"""The ``reference`` method: the association problem in cvxpy, solved by a conic solver.

The oracle of the test suite. The problem is written on rescaled data (user rates
divided by estimates of them, the objective normalised) so that the solver sees numbers
of order one; everything reported is in the problem's units. The answer is
certified by the shared dual function :func:`~cellopt.solvers.certificate.dual_bound`
evaluated at the solver's dual values, never by the solver's own claim.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import TYPE_CHECKING, Any

import numpy as np
import scipy.sparse as sp

from cellopt.checks import check_bool, close_names, is_integer, is_real
from cellopt.errors import ValidationError, check_memory
from cellopt.problem import Problem
from cellopt.solution import Solution
from cellopt.solvers.arguments import check_arguments, check_problem
from cellopt.solvers.certificate import certified_gap, dual_bound
from cellopt.solvers.common import block_zero_capacity, energy_cost, feasible_shares, objective_terms, repair
from cellopt.solvers.registry import register
from cellopt.solvers.result import build_solution
from cellopt.status import FAILED, MAX_ITER, OPTIMAL, TIME_LIMIT

if TYPE_CHECKING:  # cvxpy takes most of a second to import: only where a solve needs it
    import cvxpy as cp

__all__ = ["check_solver_options", "solve_reference"]

#: Gap / feasibility tolerance asked of the interior-point solvers (never looser than
#: ``tol / 100``): the reference is the oracle, so it is solved far tighter than asked.
#: At 1e-9, Clarabel's x violates airtime by ~1e-7 on 20,000 users (its feasibility test
#: is relative to the norms of the data), repair then costs ~1e-8 of relative gap, and
#: prices are good to a few 1e-6 only; 1e-12 costs a few more iterations, certifies gaps
#: of ~1e-11 and gives prices to ~1e-7 and shares to ~1e-6. Clarabel sometimes ends
#: "almost solved" at this level; that iterate is kept and certified by our own bound.
ORACLE_TOL = 1e-12
_MAX_DENOM = 1024  # cvxpy's default for rational exponents


def _solver_defaults(solver: str, tol: float, max_iter: int | None,
                     time_limit_s: float | None) -> dict[str, Any]:
    """Solver options derived from `tol`, `max_iter` and the remaining time budget [s]."""
    tight = min(ORACLE_TOL, 1e-2 * tol)
    if solver == "CLARABEL":
        # accept_unknown: if Clarabel stalls short of these tight tolerances, keep its
        # iterate (status optimal_inaccurate) and let our own certificate judge it.
        opts: dict[str, Any] = {"tol_gap_abs": tight, "tol_gap_rel": tight, "tol_feas": tight,
                                "accept_unknown": True}
        if max_iter is not None:
            opts["max_iter"] = int(max_iter)
        if time_limit_s is not None:
            opts["time_limit"] = float(time_limit_s)
        return opts
    if solver == "SCS":  # first-order: 1e-9 is out of reach, ask for tol / 100
        opts = {"eps_abs": 1e-2 * tol, "eps_rel": 1e-2 * tol}
        if max_iter is not None:
            opts["max_iters"] = int(max_iter)
        if time_limit_s is not None:
            opts["time_limit_secs"] = float(time_limit_s)
        return opts
    if solver == "ECOS":
        opts = {"abstol": tight, "reltol": tight, "feastol": tight}
        if max_iter is not None:
            opts["max_iters"] = int(max_iter)
        return opts
    if solver == "HIGHS":
        return {} if time_limit_s is None else {"time_limit": float(time_limit_s)}
    return {}


#: Options cvxpy takes for Clarabel besides the fields of ``clarabel.DefaultSettings``:
#: keep an inaccurate iterate, and a canonicalization switch.
_CVXPY_CLARABEL_OPTIONS = ("accept_unknown", "use_quad_obj")


def check_solver_options(solver: str, solver_options: Any) -> dict[str, Any]:
    """`solver_options` checked against what `solver` takes, as a new dict.

    For Clarabel every key must be a field of ``clarabel.DefaultSettings`` (or one of
    cvxpy's :data:`_CVXPY_CLARABEL_OPTIONS`), and every value one Clarabel accepts for
    it: the type of the field's default (a bool is not an int, an int not a bool),
    numbers not NaN and ≥ 0, and finite but for ``time_limit``. For the other solvers
    only the form is checked here (a mapping with text keys); the solver's own refusal
    of a setting is turned into a :class:`ValidationError` when it solves.

    Parameters
    ----------
    solver : str
        A cvxpy solver name (case-insensitive).
    solver_options : mapping or None

    Returns
    -------
    dict

    Raises
    ------
    ValidationError
        Naming the offending key, with the valid keys nearest it and the full list.
    """
    if solver_options is None:
        return {}
    if not isinstance(solver_options, Mapping):
        raise ValidationError(f"solver_options={solver_options!r} is a "
                              f"{type(solver_options).__name__}, not a mapping; fix: give a dict "
                              "of solver settings, e.g. {'max_step_fraction': 0.9}, or None")
    options = dict(solver_options)
    keys = [k for k in options if not isinstance(k, str)]
    if keys:
        raise ValidationError(f"solver_options has keys {keys} that are not names; fix: use the "
                              "solver's setting names as strings")
    if str(solver).upper() == "CLARABEL":
        _check_clarabel_options(options)
    return options


def _check_clarabel_options(options: dict[str, Any]) -> None:
    import clarabel

    defaults = clarabel.DefaultSettings()
    fields = sorted(a for a in dir(defaults)
                    if not a.startswith("_") and not callable(getattr(defaults, a)))
    valid = fields + list(_CVXPY_CLARABEL_OPTIONS)
    unknown = sorted(set(options) - set(valid))
    if unknown:
        near = sorted({n for k in unknown for n in close_names(k, valid)})
        hint = f"did you mean {near}? " if near else ""
        raise ValidationError(f"solver_options has unknown Clarabel setting(s) {unknown}; fix: "
                              f"{hint}use settings of clarabel.DefaultSettings: {valid}")
    for key, value in options.items():
        default = False if key in _CVXPY_CLARABEL_OPTIONS else getattr(defaults, key)
        what = f"solver_options[{key!r}]={value!r}"
        kind = {"bool": "True or False", "int": "an int", "float": "a float", "str": "a string",
                "list": "a list"}.get(type(default).__name__, f"a {type(default).__name__}")
        if isinstance(default, bool) != isinstance(value, (bool, np.bool_)):
            raise ValidationError(f"{what} is a {type(value).__name__}; fix: give a {kind} "
                                  f"(Clarabel's default: {default!r})")
        if key not in _CVXPY_CLARABEL_OPTIONS:
            try:
                setattr(clarabel.DefaultSettings(), key, value)
            except (TypeError, ValueError, OverflowError) as err:
                raise ValidationError(f"{what} is refused by Clarabel ({err}); fix: give a {kind} "
                                      f"(Clarabel's default: {default!r})") from None
        if isinstance(default, (int, float)) and not isinstance(default, bool) and is_real(value):
            v = float(value)
            if math.isnan(v) or v < 0 or (math.isinf(v) and key != "time_limit"):
                raise ValidationError(f"{what}; fix: give a finite number ≥ 0 (Clarabel's "
                                      f"default: {default!r})")


def _refused(name: str, solver_options: Mapping[str, Any], err: Exception) -> ValidationError:
    """The error for settings a solver refused when it was called."""
    named = [k for k in solver_options if str(k) in str(err)]
    which = f"solver_options {named}" if named else f"solver_options {sorted(solver_options)}"
    return ValidationError(f"solver {name!r} refused {which}: {err}; fix: use the setting names "
                           f"and types of {name}'s documentation, or drop solver_options")


def _supports_power_cone(solver: str) -> bool:
    import cvxpy as cp
    from cvxpy.reductions.solvers.defines import SOLVER_MAP_CONIC

    cls = SOLVER_MAP_CONIC.get(solver)
    return cls is not None and cp.constraints.PowCone3D in cls.SUPPORTED_CONSTRAINTS


def _raw_status(raw: Any) -> str:
    """The solver's own status string from its raw result (Clarabel object, SCS dict, ...)."""
    status = getattr(raw, "status", None)
    if status is None and isinstance(raw, dict):
        info = raw.get("info")
        status = info.get("status") if isinstance(info, dict) else None
        status = raw.get("status") if status is None else status
    return "" if status is None else str(status)


def _solver_gap(raw: Any) -> float | None:
    """The solver's own relative duality gap, where its raw result has both objectives.

    Clarabel: ``|p − d| / max(1, min(|p|, |d|))`` of the scaled problem it solved.
    """
    p, d = getattr(raw, "obj_val", None), getattr(raw, "obj_val_dual", None)
    try:
        p, d = float(p), float(d)
    except (TypeError, ValueError):
        return None
    if not (np.isfinite(p) and np.isfinite(d)):
        return None
    return abs(p - d) / max(1.0, min(abs(p), abs(d)))


#: Peak memory of a reference solve per link [bytes]: 3.9 GB measured at 1e6 links.
_BYTES_PER_LINK = 5e3


def _near_log(alpha: float) -> bool:
    """α within 1e-6 of 1: solved as log, whose optimal rates differ from α's by O(|1−α|)."""
    return abs(alpha - 1.0) <= 1e-6


def _utility_expr(rate: cp.Expression, weight: np.ndarray, alpha: float, power_cone: bool
                  ) -> cp.Expression:
    """Σ w_i U_α(r_i) as a concave cvxpy expression.

    ``r^p`` (p = 1 − α) goes to second-order cones (cvxpy's exact form for a rational p
    with denominator ≤ 1024) whenever that is exact in floating point, and to power cones
    only for other exponents and when the solver has them: with Clarabel, SOCs were
    measured far more robust (certified gaps ≤ 1e-8 on 100+ test instances with
    α ∈ [0.2, 5], where power cones stalled at gaps up to 1e-1 on some) and need about
    half the iterations.
    """
    import cvxpy as cp

    if _near_log(alpha):  # r^(1−α)/(1−α) ≈ 1/(1−α) + log r: the constant would swamp log r
        return weight @ cp.log(rate)
    if alpha == 0:
        return weight @ rate
    p = 1.0 - alpha
    rational = Fraction(p).limit_denominator(_MAX_DENOM)
    use_soc = not power_cone or abs(float(rational) - p) <= 1e-15 * max(1.0, abs(p))
    powered = cp.power(rate, p, max_denom=_MAX_DENOM, approx=use_soc)
    return weight @ powered / p  # p > 0: concave power; p < 0: convex power times a negative


def _rate_estimate(problem: Problem, users: np.ndarray, user_row: np.ndarray,
                   group_row: np.ndarray) -> np.ndarray:
    """Rough rates of the users with links [Mbit/s], to scale each user's cone (α ≥ 1).

    Each resource is split among its links as a single cell would split it at the
    optimum for α-fair utility, ``x_e ∝ w_i^(1/α) R_e^(1/α − 1)`` (equal shares for log
    and equal weights); a user's estimate sums its links' rates and is capped at its
    demand. For α > 1 this gives weak users the larger shares they get at the optimum.

    Parameters
    ----------
    problem : Problem
        With α ≥ 1 (every user has a link).
    users : ndarray of int64, shape (n,)
        The users with links, sorted; ``user_row`` (shape (L,)) maps links to them.
    group_row : ndarray of int64, shape (L,)
        Each link's airtime constraint, numbered 0..G−1 over the groups with links.

    Returns
    -------
    ndarray, shape (n,)
        s_i > 0 [Mbit/s].
    """
    alpha = problem.alpha
    score = (np.log(problem.weight[problem.user]) / alpha
             + (1.0 / alpha - 1.0) * np.log(problem.rate_mbps))
    top = np.full(group_row.max() + 1, -np.inf)
    np.maximum.at(top, group_row, score)
    score = np.exp(score - top[group_row])
    share = score / np.bincount(group_row, score)[group_row]
    return np.minimum(np.bincount(user_row, problem.rate_mbps * share, minlength=len(users)),
                      problem.demand_mbps[users])


def _build(problem: Problem, power_cone: bool) -> tuple[cp.Problem, dict[str, Any]]:
    """The rescaled cvxpy problem and what is needed to map its duals back.

    The solver sees ``ρ_i = r_i / s_i``: for α ≥ 1 (utilities singular at 0, dominated by
    the weakest users) ``s_i`` is a per-user rate estimate (:func:`_rate_estimate`), so
    every cone sits near ρ = 1; for α < 1 it is one scale ``s0``, the median link rate
    (measured: per-user scales only slow Clarabel down there). Then
    ``w_i U(r_i) = w_i s_i^(1−α) U(ρ_i)`` (``w_i (log s_i + log ρ_i)`` for α = 1). Backhaul
    rows are in units of ``s0`` and the objective is divided by ``K``, the mean of the
    per-user coefficients (``w_i s_i^(1−α)``, or ``w_i`` for α = 1). The scaled problem's
    duals relate to ours by ``μ = K μ'`` and ``ν = K ν' / s0``.
    """
    import cvxpy as cp

    n_links, alpha = problem.n_links, problem.alpha
    links = np.arange(n_links)
    s0 = float(np.median(problem.rate_mbps))

    users, user_row = np.unique(problem.user, return_inverse=True)  # users with links
    groups, group_row = np.unique(problem.group, return_inverse=True)
    if alpha >= 1:
        user_scale = _rate_estimate(problem, users, user_row, group_row)
    else:
        user_scale = np.full(len(users), s0)
    coef = problem.weight[users] * (1.0 if _near_log(alpha) else user_scale ** (1.0 - alpha))
    k = float(coef.mean())
    a_user = sp.csr_array((problem.rate_mbps / user_scale[user_row], (user_row, links)),
                          shape=(len(users), n_links))
    a_group = sp.csr_array((np.ones(n_links), (group_row, links)), shape=(len(groups), n_links))
    capped_link = np.flatnonzero(np.isfinite(problem.backhaul_mbps[problem.cell]))
    capped, capped_row = np.unique(problem.cell[capped_link], return_inverse=True)
    a_cap = sp.csr_array((problem.rate_mbps[capped_link] / s0, (capped_row, capped_link)),
                         shape=(len(capped), n_links))
    demand = problem.demand_mbps[users] / user_scale  # ≥ 1 for α ≥ 1
    limited = np.flatnonzero(np.isfinite(demand))
    cost = problem.price_per_mbps[problem.cell] * problem.rate_mbps / k

    x = cp.Variable(n_links, nonneg=True, name="x")
    rho = a_user @ x
    objective = _utility_expr(rho, coef / k, alpha, power_cone)
    if cost.any():
        objective = objective - cost @ x
    theta = None
    if problem.free_shares:  # pattern shares are variables on the simplex of each block
        # One variable per (block, pattern) the block has; airtime of group (j, k) ≤ θ_{b(j)k}.
        cost = problem.block_cost
        avail = np.flatnonzero(np.isfinite(cost).ravel())
        theta = cp.Variable(len(avail), nonneg=True, name="theta")
        column = np.full(cost.size, -1)
        column[avail] = np.arange(len(avail))
        n_k = problem.n_resources
        share_of_group = column[problem.cell_block[groups // n_k] * n_k + groups % n_k]
        if (share_of_group < 0).any():  # links on a pattern their block does not have
            airtime_rhs = cp.hstack([theta, np.zeros(1)])[np.where(share_of_group < 0, len(avail),
                                                                    share_of_group)]
        else:
            airtime_rhs = theta[share_of_group]
        objective = objective - (cost.ravel()[avail] / k) @ theta
        airtime = a_group @ x <= airtime_rhs
        block_of = avail // n_k
        a_block = sp.csr_array((np.ones(len(avail)), (block_of, np.arange(len(avail)))),
                               shape=(cost.shape[0], len(avail)))
        constraints = [airtime, a_block @ theta == 1.0]
    else:
        airtime = a_group @ x <= 1.0
        constraints = [airtime]
    backhaul = None
    if len(capped):
        backhaul = a_cap @ x <= problem.backhaul_mbps[capped] / s0
        constraints.append(backhaul)
    if len(limited):
        constraints.append(rho[limited] <= demand[limited])
    prob = cp.Problem(cp.Maximize(objective), constraints)
    meta = dict(x=x, theta=theta, theta_index=None if theta is None else avail, airtime=airtime,
                backhaul=backhaul, groups=groups, capped=capped, mu_factor=k, nu_factor=k / s0)
    return prob, meta


@register("reference", kind="reference", single_association=True, patterns=True,
          share_blocks=True)
def solve_reference(
    problem: Problem,
    *,
    tol: float,
    max_iter: int | None,
    time_limit_s: float | None,
    callback: Callable[[dict[str, Any]], bool | None] | None,
    solver: str = "CLARABEL",
    verbose: bool = False,
    max_links: int = 250_000,
    solver_options: Mapping[str, Any] | None = None,
) -> Solution:
    """Solve the association problem exactly with cvxpy and a conic solver.

    Variables ``x ≥ 0`` of shape (L,); user rates ``r = A_u x`` [Mbit/s] with ``A_u``
    sparse (n_users × L, entries R_e); maximize ``Σ w_i U_α(r_i) − Σ_j c_j T_j`` subject
    to airtime ``A_g x ≤ 1`` (one row per (cell, resource) that has links), backhaul
    ``T_j ≤ C_j`` (cells with a finite cap) and demand ``r_i ≤ d_i`` (finite demands).
    Utility: ``log`` (α = 1, exponential cones; also within 1e-6 of α = 1, whose optimal
    rates differ from log's by O(|1−α|)), linear (α = 0), ``r^(1−α)/(1−α)`` otherwise
    (the constant of :func:`~cellopt.problem.utility` left out; second-order cones,
    exact for a rational 1 − α with denominator ≤ 1024; power cones for other α when the
    solver has them; see :func:`_utility_expr`).
    Users without links (allowed for α < 1) contribute the constant w U(0) = −w/(1−α),
    added to the objective afterwards.
    Free power-pattern shares (``Problem.pattern_cost``) are variables θ ≥ 0 with
    ``Σ θ = 1`` (in every share block), airtime rows ``A_g x ≤ θ_k`` and the energy cost
    ``E · θ`` subtracted.
    Data are rescaled for the solver (each user's rate by an estimate of it for α ≥ 1, all
    rates by the median link rate for α < 1, the objective to a mean coefficient of 1;
    see :func:`_build`); the result is in the problem's units.

    The solver's ``x`` is passed through :func:`~cellopt.solvers.common.repair` (it may
    violate constraints slightly) and the upper bound is the dual function g(μ, ν) at
    the solver's dual values (clipped at 0), so the reported gap is certified
    independently of the solver.

    Parameters
    ----------
    problem : Problem
    tol : float
        Rate-equivalent gap (:func:`~cellopt.solvers.certificate.certified_gap`) required for
        status ``"optimal"``. The solver is asked for ``min(1e-12, tol / 100)``
        (Clarabel, ECOS: gap and feasibility; SCS: ``tol / 100``).
    max_iter : int or None
        Solver iteration cap (Clarabel ``max_iter``, SCS / ECOS ``max_iters``); None: the
        solver's default.
    time_limit_s : float or None
        Wall-clock budget [s]; what compilation leaves of it is passed to the solver
        (Clarabel ``time_limit``, SCS ``time_limit_secs``, HiGHS ``time_limit``).
    callback : callable or None
        Called once, after the solve, with the single history row. The method is
        finished by then, so a True return changes nothing.
    solver : str
        Any installed cvxpy solver (:func:`cvxpy.installed_solvers`, case-insensitive)
        that handles the problem's cones: exponential for α = 1, power (or SOC) for other
        α > 0; α = 0 is a linear program. Default ``"CLARABEL"``.
    verbose : bool
        Solver and cvxpy output.
    max_links : int
        Larger problems are refused (default 250,000): cvxpy's compilation grows faster
        than the links (1e5 links: 4 s; 1e6 links: 2 min, 3.9 GB).
    solver_options : mapping, optional
        Passed to the solver as its settings (e.g. ``{"max_step_fraction": 0.9}`` for
        Clarabel); they override the options derived above.

    Returns
    -------
    Solution
        ``status``: ``"optimal"`` when the certified gap is ≤ tol (even if the solver
        only reported an inaccurate solution or stopped at a limit, since the
        certificate does not depend on its claim); otherwise ``"time_limit"`` /
        ``"max_iter"`` when the solver stopped at a limit, and ``"failed"`` — with the
        solver's status and both gaps in ``message`` — when the solver failed or claimed
        optimality that our bound does not confirm. ``prices["airtime"]`` μ, shape
        (n_cells, n_resources) [utility per unit airtime], 0 for groups without links;
        ``prices["backhaul"]`` ν, shape (n_cells,) [utility per Mbit/s], 0 where
        uncapped. ``history``: one row with ``iteration`` (solver iterations),
        ``objective``, ``upper_bound``, ``gap``, ``solve_time_s``, ``compile_time_s``.
        ``n_iter``: solver iterations (0 if the solver does not report them); ``wall_s``:
        total time including compilation.

    Raises
    ------
    ValidationError
        For a solver that is not installed (the message lists the installed ones) or that
        cannot handle the problem's cones, and for `solver_options` the solver does not
        take (:func:`check_solver_options`; for other solvers than Clarabel, when the
        solver refuses them).
    """
    check_problem(problem)
    check_arguments("reference", tol=tol, max_iter=max_iter, time_limit_s=time_limit_s,
                    callback=callback, single_association=False,
                    options=dict(solver=solver, verbose=verbose, max_links=max_links,
                                 solver_options=solver_options))
    if not (is_integer(max_links) and max_links >= 0):
        raise ValidationError(f"max_links={max_links!r}; fix: give a whole number of links ≥ 0")
    verbose = check_bool(verbose, "verbose")
    if not isinstance(solver, str):
        raise ValidationError(f"solver={solver!r} is a {type(solver).__name__}; fix: give the "
                              "name of an installed cvxpy solver, e.g. 'CLARABEL'")
    solver_options = check_solver_options(solver, solver_options)
    if problem.n_links > max_links:  # cvxpy's compilation alone would take minutes
        raise ValidationError(
            f"the reference solver is an oracle for small problems; this one has "
            f"{problem.n_links:,} links, more than max_links={max_links:,} (measured: 1e5 links "
            "take 4 s, 1e6 links 2 min and 3.9 GB); fix: use 'dual', 'alm' or 'ipm', or "
            "raise max_links")
    check_memory(_BYTES_PER_LINK * problem.n_links, f"the reference solver on "
                 f"{problem.n_links:,} links", "use 'dual', 'alm' or 'ipm' on large problems")
    import cvxpy as cp  # here, so that its first import does not count against time_limit_s

    start = time.perf_counter()
    installed = cp.installed_solvers()
    name = str(solver).upper()
    if name not in installed:
        raise ValidationError(f"solver={solver!r} is unknown or not installed; fix: use one of the "
                              f"installed cvxpy solvers {installed} (case-insensitive)")
    mu = np.zeros(problem.n_groups)
    nu = np.zeros(problem.n_cells)

    prob, meta = _build(problem, _supports_power_cone(name))
    # The options also go to compilation: cvxpy keeps them for interpreting the result
    # (Clarabel's accept_unknown).
    options = {**_solver_defaults(name, tol, max_iter, None), **solver_options}
    try:
        with warnings.catch_warnings():  # SOC form of r^p: "approximated with rational ..."
            warnings.filterwarnings("ignore", message="Power atom with exponent")
            data, chain, inverse = prob.get_problem_data(name, verbose=verbose,
                                                         solver_opts=options)
    except cp.SolverError as err:
        raise ValidationError(
            f"solver {name!r} cannot solve this problem (alpha={problem.alpha:g}): {err}; fix: "
            "use a conic solver with exponential and power cones, e.g. solver='CLARABEL'") from err
    except (TypeError, ValueError) as err:
        if not solver_options:
            raise
        raise _refused(name, solver_options, err) from err
    compile_s = time.perf_counter() - start

    remaining = None if time_limit_s is None else max(time_limit_s - compile_s, 1e-3)
    if remaining is not None:
        options = {**_solver_defaults(name, tol, max_iter, remaining), **solver_options}
    t0 = time.perf_counter()
    raw_status, status_cvx, solver_gap = "", cp.SOLVER_ERROR, None
    try:
        raw = chain.solve_via_data(prob, data, warm_start=False, verbose=verbose,
                                   solver_opts=options)
        raw_status = _raw_status(raw)
        solver_gap = _solver_gap(raw)
        # cvxpy evaluates the objective at the iterate (log 0 at an early stop): silence
        # that and its "inaccurate" warning, our status and message say it all.
        with warnings.catch_warnings(), np.errstate(divide="ignore", invalid="ignore"):
            warnings.filterwarnings("ignore", message="Solution may be inaccurate")
            prob.unpack_results(raw, chain, inverse)
        status_cvx = prob.status
    except cp.SolverError as err:
        raw_status = raw_status or str(err)
    except (TypeError, ValueError) as err:  # settings the solver itself refused
        if not solver_options:
            raise
        raise _refused(name, solver_options, err) from err
    solve_s = time.perf_counter() - t0

    stats = prob.solver_stats if status_cvx != cp.SOLVER_ERROR else None
    n_iter = int(stats.num_iters) if stats is not None and stats.num_iters is not None else 0
    if stats is not None and stats.solve_time is not None:
        solve_s = float(stats.solve_time)

    x = np.zeros(problem.n_links)
    theta = None
    if status_cvx in cp.settings.SOLUTION_PRESENT and meta["x"].value is not None:
        x = np.asarray(meta["x"].value, float)
        if meta["theta"] is not None and meta["theta"].value is not None:
            full = np.zeros(problem.block_cost.size)
            full[meta["theta_index"]] = meta["theta"].value
            theta = feasible_shares(problem, full)
        if meta["airtime"].dual_value is not None:
            mu[meta["groups"]] = np.asarray(meta["airtime"].dual_value, float) * meta["mu_factor"]
        if meta["backhaul"] is not None and meta["backhaul"].dual_value is not None:
            nu[meta["capped"]] = np.asarray(meta["backhaul"].dual_value, float) * meta["nu_factor"]
    mu = np.nan_to_num(np.maximum(mu, 0.0), nan=0.0, posinf=0.0)
    nu = np.nan_to_num(np.maximum(nu, 0.0), nan=0.0, posinf=0.0)
    theta = feasible_shares(problem, theta)
    return _finish(problem, repair(problem, x, theta), mu, nu, tol=tol, start=start,
                   compile_s=compile_s, solve_s=solve_s, n_iter=n_iter, status_cvx=status_cvx,
                   raw_status=raw_status, name=name, callback=callback,
                   time_limit_s=remaining, solver_gap=solver_gap, theta=theta)


def _finish(problem: Problem, x: np.ndarray, mu: np.ndarray, nu: np.ndarray, *, tol: float,
            start: float, compile_s: float, solve_s: float, n_iter: int, status_cvx: str,
            raw_status: str, name: str, callback: Callable[[dict[str, Any]], bool | None] | None,
            time_limit_s: float | None = None, solver_gap: float | None = None,
            theta: np.ndarray | None = None) -> Solution:
    """Certify (bound and gap from our own dual function), pick the status, fill the Solution."""
    import cvxpy as cp

    util, cost = objective_terms(problem, x)
    objective = util - cost - energy_cost(problem, theta)
    nu = block_zero_capacity(problem, mu, nu)
    upper = dual_bound(problem, mu, nu)
    gap = certified_gap(problem, upper, objective, util)
    certified = gap is not None and gap <= tol
    said = f"{name} status {status_cvx!r}" + (f" ({raw_status})" if raw_status else "") \
        + f" after {n_iter} iterations" \
        + ("" if solver_gap is None else f" (its own relative gap {solver_gap:.3e})")
    gap_text = "undefined (objective not finite)" if gap is None else f"{gap:.3e}"
    if certified:
        status = OPTIMAL
        message = f"{said}; certified gap {gap_text} ≤ tol {tol:g}"
    elif status_cvx == cp.USER_LIMIT or (time_limit_s is not None
                                         and solve_s >= 0.9 * time_limit_s):
        # (Clarabel may report a time-limited stop as "AlmostSolved": the clock decides)
        low = raw_status.lower()
        hit_time = "time" in low or ("iter" not in low and time_limit_s is not None
                                     and solve_s >= 0.9 * time_limit_s)
        status = TIME_LIMIT if hit_time else MAX_ITER
        message = f"{said}; stopped at the solver's limit with certified gap {gap_text} > tol {tol:g}"
    elif status_cvx in (cp.OPTIMAL, cp.OPTIMAL_INACCURATE):
        status = FAILED
        message = (f"{said}, but the gap certified by the dual function at its prices is "
                   f"{gap_text} > tol {tol:g}; tighten the solver tolerances or try another solver")
    else:
        status = FAILED
        message = f"{said}: no usable solution (x = 0 returned); try another solver"
    row = {"iteration": n_iter, "objective": objective, "upper_bound": upper,
           "gap": np.nan if gap is None else gap, "solve_time_s": solve_s,
           "compile_time_s": compile_s}
    if callback is not None:
        callback(dict(row))  # finished: a True return ("stop") has nothing left to stop
    solution = build_solution(problem, x, method="reference", status=status, message=message,
                              mu=mu, nu=nu, n_iter=n_iter, wall_s=0.0, history=[row],
                              upper_bound=upper, theta=theta)
    solution.wall_s = time.perf_counter() - start
    return solution
