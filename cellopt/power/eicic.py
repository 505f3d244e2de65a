"""eICIC baseline: almost-blank subframes (ABS) with pico range expansion.

ABS is a fixed-share special case of power patterns: two patterns, "everyone at full
power" on a share 1 − β of the airtime and "macro cells muted" on the muted share β.
Users are associated by range expansion (largest full-power RSRP + tier bias; macro
reference signals stay on in ABS, so the association does not change with β), and each
cell schedules its own users over both patterns proportionally fair — the in-cell
problem of the fixed association, solved exactly. Patterns with fixed shares are
resources whose link rates are scaled by the share: a share x of pattern k's airtime
gives ``x θ_k R_k``.
"""

from __future__ import annotations

import inspect
import time
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from cellopt.checks import check_number
from cellopt.errors import ValidationError
from cellopt.network import Network, check_same_network
from cellopt.power.gains import GainTable
from cellopt.problem import Problem
from cellopt.solution import PowerResult, Solution
from cellopt.solvers.api import solve
from cellopt.solvers.arguments import check_inner

__all__ = ["abs_grid", "abs_problem", "solve_abs"]

#: The usual eICIC grid: pico/femto bias [dB] × muted share of macro airtime.
ABS_BIAS_DB = (0.0, 3.0, 6.0, 9.0)
ABS_MUTED_SHARE = (0.0, 1 / 8, 1 / 4, 1 / 2)


def abs_problem(network: Network, gains: GainTable, muted_share: float,
                alpha: float = 1.0) -> tuple[Problem, np.ndarray]:
    """The association problem of ABS with muted share β, and its power patterns.

    Parameters
    ----------
    network : Network
    gains : GainTable
        Of `network`.
    muted_share : float
        β ∈ [0, 1): share of the airtime in which every macro cell is muted.
    alpha : float

    Returns
    -------
    problem : Problem
        One resource per pattern (one if β = 0), link rates scaled by the pattern's
        share, ``rsrp_dbm`` = full-power RSRP on every link (for the range-expansion
        association) and ``cell_tier``.
    power_dbm : ndarray, shape (n_patterns, n_cells)
        The patterns [dBm]; −inf = muted.
    """
    beta = check_number(muted_share, "muted_share", low=0.0, high=1.0, high_open=True,
                        fix="a share in [0, 1) (1 would mute the macro cells all the time)")
    if not isinstance(network, Network):
        raise ValidationError(f"network is a {type(network).__name__}; fix: give a cellopt Network")
    if not isinstance(gains, GainTable) or (gains.n_users, gains.n_cells) != (network.n_users,
                                                                               network.n_cells):
        raise ValidationError("gains are not a GainTable of this network; fix: build them with "
                              "GainTable.from_network(network)")
    check_same_network(gains.network_fingerprint, network.fingerprint, ours_name="the gain table "
                       "(gains)", theirs_name="the network",
                       fix="build them with GainTable.from_network(network), or pass gains=None")
    c = network.cell_arrays()
    macro = network.cells["tier"].to_numpy() == "macro"
    full = gains.max_power_dbm
    power_dbm = np.stack([full, np.where(macro, -np.inf, full)]) if beta > 0 else full[None]
    share = np.array([1.0 - beta, beta])[:len(power_dbm)]
    rate = gains.rates_mbps(10.0 ** (power_dbm / 10.0)) * share[:, None, None]  # (S, U, n)
    n_c = gains.n_candidates
    cand = gains.cell[:, :n_c]
    rsrp = 10.0 * np.log10(gains.gain_mw_per_mw[:, :n_c]) + full[cand]
    shape = rate.shape
    u = network.user_arrays()
    problem = Problem.from_links(
        np.broadcast_to(np.arange(gains.n_users)[None, :, None], shape).ravel(),
        np.broadcast_to(cand[None], shape).ravel(), rate.ravel(),
        n_users=gains.n_users, n_cells=gains.n_cells,
        resource=np.broadcast_to(np.arange(shape[0])[:, None, None], shape).ravel(),
        n_resources=shape[0], weight=u["weight"], alpha=alpha, demand_mbps=u["demand_mbps"],
        backhaul_mbps=c["backhaul_mbps"], price_per_mbps=c["price_per_mbps"],
        rsrp_dbm=np.broadcast_to(rsrp[None], shape).ravel(), cell_tier=c["tier"],
        third_party=c["third_party"])
    return problem, power_dbm


def solve_abs(network: Network, bias_db: float = 6.0, muted_share: float = 0.25, *,
              gains: GainTable | None = None, alpha: float = 1.0, tol: float = 1e-6,
              inner_method: str = "ipm", rng: np.random.Generator | int | None = None,
              **gain_options: Any) -> Solution:
    """eICIC: range expansion by `bias_db` with macro cells muted on a share `muted_share`.

    Parameters
    ----------
    network : Network
    bias_db : float
        Range-expansion bias of pico and femto cells [dB] (macro 0).
    muted_share : float
        β ∈ [0, 1): share of the airtime in which the macro cells are muted (ABS).
    gains : GainTable, optional
        Precomputed gains; else built with `rng` and `gain_options`
        (see :meth:`GainTable.from_network`).
    alpha : float
    tol : float
        Relative gap of the in-cell scheduling solve.
    inner_method : str
        Convex method for the in-cell shares over the two patterns.

    Returns
    -------
    Solution
        ``method="abs"``; ``pattern_share`` = (1 − β, β) (one pattern, share 1, for
        β = 0); ``x`` are shares of each pattern's airtime. ``power`` is a
        :class:`~cellopt.solution.PowerResult` with the ``patterns`` [dBm], the
        ``pattern_share``, ``cell_power_dbm`` (``10 log10 Σ_s θ_s p_js`` [dBm], −inf
        when always off) and ``energy_w`` [W]; ``bound_kind`` None and an empty
        ``bound_info`` (the solution's ``upper_bound`` bounds the problem of this muted
        share, not the joint power problem), ``estimate`` NaN, an empty ``history``, and
        as ``master`` the ABS problem ``x`` is over (:func:`abs_problem`: link rates
        already scaled by their pattern's share).
    """
    t0 = time.perf_counter()
    bias_db = check_number(bias_db, "bias_db", unit="dB",
                           fix="give the pico and femto bias in dB, a finite number (6 dB)")
    muted_share = check_number(muted_share, "muted_share", low=0.0, high=1.0, high_open=True,
                               fix="a share in [0, 1) (1 would mute the macro cells all the time)")
    check_inner(inner_method, None, tol=tol)
    if gains is None:
        valid = [k for k in inspect.signature(GainTable.from_network).parameters
                 if k not in ("network", "rng")]
        unknown = sorted(set(gain_options) - set(valid))
        if unknown:
            raise ValidationError(f"unknown option(s) {unknown} for GainTable.from_network; fix: "
                                  f"use some of {valid}")
        gains = GainTable.from_network(network, rng=rng, **gain_options)
    elif gain_options:
        raise ValidationError(f"options {sorted(gain_options)} build the gains, but gains are "
                              "given; fix: drop them, or leave gains out")
    problem, power_dbm = abs_problem(network, gains, muted_share, alpha)
    sol = solve(problem, method="range_expansion", bias_db=bias_db, tol=tol,
                inner_method=inner_method)
    share = np.array([1.0 - muted_share, muted_share])[:len(power_dbm)]
    avg_mw = share @ 10.0 ** (power_dbm / 10.0)
    with np.errstate(divide="ignore"):
        cell_power_dbm = 10.0 * np.log10(avg_mw)
    sol.method = "abs"
    sol.message = f"ABS: macro cells muted on {muted_share:.3g} of the airtime; {sol.message}"
    sol.pattern_share = share
    sol.power = PowerResult(patterns=power_dbm, pattern_share=share, cell_power_dbm=cell_power_dbm,
                            energy_w=float(avg_mw.sum() * 1e-3), bound_kind=None, bound_info={},
                            estimate=float("nan"), history=pd.DataFrame(), master=problem,
                            network_fingerprint=network.fingerprint)
    sol.wall_s = time.perf_counter() - t0
    return sol


def abs_grid(network: Network, bias_db: Sequence[float] = ABS_BIAS_DB,
             muted_share: Sequence[float] = ABS_MUTED_SHARE, *, gains: GainTable | None = None,
             alpha: float = 1.0, rng: np.random.Generator | int | None = None,
             **options: Any) -> pd.DataFrame:
    """Every (bias, muted share) of the eICIC grid.

    Returns
    -------
    DataFrame
        One row per grid point: ``bias_db, muted_share, objective, upper_bound,
        rate_p5_mbps, rate_p50_mbps, energy_w, wall_s``; ``upper_bound`` bounds the
        problem of that muted share (any association), not the joint power problem.
    """
    grid = {}
    for name, values in (("bias_db", bias_db), ("muted_share", muted_share)):
        if isinstance(values, (str, bytes)) or not isinstance(values, Sequence) or not values:
            raise ValidationError(f"{name}={values!r}; fix: give a non-empty list of values, e.g. "
                                  f"{list(ABS_BIAS_DB if name == 'bias_db' else ABS_MUTED_SHARE)}")
        grid[name] = [check_number(v, f"{name}[{k}]", fix="give finite values (dB; shares in "
                                   "[0, 1))") for k, v in enumerate(values)]
    bias_db, muted_share = grid["bias_db"], grid["muted_share"]
    if gains is None:
        gains = GainTable.from_network(network, rng=rng)
    rows = []
    for beta in muted_share:  # a grid of 16 points: a loop over settings, not over data
        for bias in bias_db:
            s = solve_abs(network, bias, beta, gains=gains, alpha=alpha, **options)
            rate = s.user_rate_mbps
            rows.append(dict(bias_db=float(bias), muted_share=float(beta), objective=s.objective,
                             upper_bound=s.upper_bound, rate_p5_mbps=np.percentile(rate, 5),
                             rate_p50_mbps=np.median(rate), energy_w=s.power.energy_w, wall_s=s.wall_s))
    return pd.DataFrame(rows)
