"""Summary tables: of user rates, of the radio links, of one drop per method, of a sweep."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
import pandas as pd

from cellopt.network import TIERS
from cellopt.solvers.certificate import certified_gap
from cellopt.topology.gazetteer import describe_location

if TYPE_CHECKING:
    from cellopt.drop import Drop
    from cellopt.linktable import LinkTable
    from cellopt.network import Network
    from cellopt.problem import Problem
    from cellopt.solution import Solution

__all__ = ["RunBound", "best_bound", "link_summary", "mean_ci", "method_summary", "network_place",
           "rate_summary", "run_bounds", "sweep_table", "traffic_model"]

#: The normal quantile of a two-sided 95 % interval.
Z95 = 1.96


def network_place(network: Network) -> str:
    """Where the network's cells lie, in words: centre, nearest town, country.

    From the offline gazetteer (:func:`cellopt.topology.gazetteer.describe_location`), for
    the log and the report: a synthetic layout lies at its ``origin_lonlat``, a cell
    file where its coordinates say.
    """
    lonlat = network.cells.geometry.to_crs("EPSG:4326")
    return describe_location(lonlat.x.to_numpy(float), lonlat.y.to_numpy(float))


def traffic_model(demand_mbps: np.ndarray) -> str:
    """The traffic model of a problem in words, for the log and the report.

    Parameters
    ----------
    demand_mbps : ndarray, shape (n_users,)
        Each user's demand [Mbit/s]; inf for full buffer.

    Returns
    -------
    str
        Full buffer (every cell's load is then 1 by construction, so load is not a
        finding), finite demands (with their mean), or a mix of the two.
    """
    demand_mbps = np.asarray(demand_mbps, float)
    finite = np.isfinite(demand_mbps)
    if not finite.any():
        return ("full buffer: every user takes all the airtime it is given, so every serving "
                "cell's load is 1 by construction; the cells are compared by users served, "
                "best-RSRP share, mean SINR, traffic and airtime price")
    mean = float(demand_mbps[finite].mean())
    if finite.all():
        return (f"finite demands (mean {mean:.3g} Mbit/s per user): a cell's load is the "
                "airtime its users need, and overload what they need beyond the whole")
    return (f"mixed: {int((~finite).sum()):,} full-buffer users and {int(finite.sum()):,} with a "
            f"finite demand (mean {mean:.3g} Mbit/s); a cell with a full-buffer user has load 1 "
            "by construction and no overload")


def mean_ci(values: np.ndarray, axis: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Mean and the half-width of its normal 95 % interval over `axis` (Monte-Carlo error).

    Parameters
    ----------
    values : ndarray
        Samples (e.g. one per drop or replicate) along `axis`.
    axis : int
        Axis of the samples.

    Returns
    -------
    mean, half_width : ndarray
        Half-width ``1.96 · sd / √n`` (sample sd; 0 for a single sample).
    """
    values = np.asarray(values, float)
    n = values.shape[axis]
    sd = values.std(axis=axis, ddof=1) if n > 1 else np.zeros_like(values.mean(axis=axis))
    return values.mean(axis=axis), Z95 * sd / np.sqrt(n)


def rate_summary(rate_mbps: np.ndarray) -> dict[str, float]:
    """5th percentile, median and mean of user rates [Mbit/s] (NaN for no users).

    Parameters
    ----------
    rate_mbps : ndarray, shape (n_users,)
    """
    r = np.asarray(rate_mbps, float)
    if not len(r):
        return {"rate_p5_mbps": np.nan, "rate_p50_mbps": np.nan, "rate_mean_mbps": np.nan}
    p5, p50 = np.percentile(r, [5, 50])
    return {"rate_p5_mbps": float(p5), "rate_p50_mbps": float(p50), "rate_mean_mbps": float(r.mean())}


def _percentile(values: np.ndarray, q: float) -> float:
    return float(np.nanpercentile(values, q)) if len(values) else float("nan")


def link_summary(network: Network, links: LinkTable) -> pd.DataFrame:
    """Per-tier summary of the max-RSRP association: cells, users, SINR and peak rate.

    Returns
    -------
    pandas.DataFrame
        Index: tiers present and ``all``; columns ``cells``, ``users``, ``user_share``,
        ``sinr_p5_db``, ``sinr_p50_db``, ``rate_p5_mbps``, ``rate_p50_mbps``, where SINR
        and rate are those of each user's max-RSRP link on resource 0, the rate scaled to
        the whole band.
    """
    first = links.resource == 0
    best = links.best_by("rsrp_dbm")
    on_best = first & (links.cell == best[links.user])
    sinr = np.full(links.n_users, np.nan)
    rate = np.full(links.n_users, np.nan)
    sinr[links.user[on_best]] = links.sinr_db[on_best]
    rate[links.user[on_best]] = links.rate_mbps[on_best] / links.resource_mhz[0] * links.resource_mhz.sum()
    cell_tier = network.cells["tier"].to_numpy()
    user_tier = np.where(best >= 0, cell_tier[np.maximum(best, 0)], "none")
    rows = {}
    for tier in [*(t for t in TIERS if (cell_tier == t).any()), "all"]:  # a few tiers
        m = np.ones(links.n_users, bool) if tier == "all" else user_tier == tier
        rows[tier] = {
            "cells": int((cell_tier == tier).sum()) if tier != "all" else network.n_cells,
            "users": int(m.sum()),
            "user_share": float(m.mean()) if links.n_users else np.nan,
            "sinr_p5_db": _percentile(sinr[m], 5),
            "sinr_p50_db": _percentile(sinr[m], 50),
            "rate_p5_mbps": _percentile(rate[m], 5),
            "rate_p50_mbps": _percentile(rate[m], 50),
        }
    return pd.DataFrame.from_dict(rows, orient="index")


class RunBound(NamedTuple):
    """A method's upper bound and gap as a run's tables report them (:func:`run_bounds`)."""

    #: The bound [utility]: the run's best where it applies, else the method's own (NaN: none).
    upper_bound: float
    #: The rate-equivalent gap c − 1 of the method's objective to `upper_bound` (NaN: none).
    gap: float
    #: The label of the method whose bound it is.
    bound_from: str | None


def _bounds_the_problem(sol: Solution) -> bool:
    """Whether `sol`'s bound is one of the problem as given, at fixed power."""
    return sol.bound_kind == "problem" and sol.power is None


def best_bound(solutions: Mapping[str, Solution]) -> tuple[str, float] | None:
    """The lowest finite bound of the problem as given among `solutions` (fixed power,
    ``bound_kind == "problem"``), with the label of the method that found it; None if
    there is none (see :func:`run_bounds`)."""
    pooled = {label: float(sol.upper_bound) for label, sol in solutions.items()
              if _bounds_the_problem(sol) and sol.upper_bound is not None
              and np.isfinite(sol.upper_bound)}
    if not pooled:
        return None
    label = min(pooled, key=pooled.__getitem__)
    return label, pooled[label]


def run_bounds(problem: Problem, solutions: Mapping[str, Solution]) -> dict[str, RunBound]:
    """Each method's upper bound and gap against the best (lowest) bound of the run.

    Every bound of the problem as given (``bound_kind == "problem"``, fixed power) bounds
    the optimum of that one problem, so the lowest of them bounds it best; a baseline's
    own bound, at prices of its own making, is much looser. Each such method's gap is
    therefore measured against that best bound
    (:func:`~cellopt.solvers.certificate.certified_gap`: the factor − 1 by which every
    user's rate would have to grow to reach it). A method whose bound is of another
    problem (power optimization, load-coupled interference: ``bound_kind`` other than
    ``"problem"``) keeps its own bound and gap.

    Parameters
    ----------
    problem : Problem
        The problem every method of the run solved.
    solutions : mapping of str to Solution
        By method label.

    Returns
    -------
    dict of str to RunBound
        By label, in the order of `solutions`.
    """
    best = best_bound(solutions)
    out = {}
    for label, sol in solutions.items():
        if best is not None and _bounds_the_problem(sol):
            gap = certified_gap(problem, best[1], sol.objective, sol.utility)
            out[label] = RunBound(best[1], np.nan if gap is None else float(gap), best[0])
        else:
            own = sol.upper_bound is not None and not np.isnan(sol.upper_bound)
            out[label] = RunBound(float(sol.upper_bound) if own else np.nan,
                                  np.nan if sol.gap is None else float(sol.gap),
                                  label if own else None)
    return out


def method_summary(drop: Drop, solutions: Mapping[str, Solution]) -> pd.DataFrame:
    """One row per method: objective, bound, gap, status, rate percentiles, tier shares,
    payment, offloaded share and cap violations.

    Rates and tier shares are over the users of the study area; users without any
    usable link (outage) count with rate 0 in the percentiles. ``upper_bound`` is the
    best (lowest) bound of the run on the problem, ``gap`` each method's gap to it and
    ``bound_from`` the method whose bound it is (:func:`run_bounds`; a power run keeps
    its own).

    Parameters
    ----------
    drop : Drop
        The drop the solutions answer.
    solutions : mapping of str to Solution
        By method label.
    """
    network = drop.network
    tiers = network.cells["tier"].to_numpy()
    study = drop.in_study_area
    bounds = run_bounds(drop.problem, solutions)
    rows = {}
    for label, sol in solutions.items():
        rate = drop.per_user(sol.user_rate_mbps)[study]
        serving = drop.per_user(sol.serving_cell, fill=-1)[study]
        bound = bounds[label]
        row = {"objective": sol.objective, "upper_bound": bound.upper_bound, "gap": bound.gap,
               "bound_from": bound.bound_from, "status": sol.status, **rate_summary(rate)}
        for tier in TIERS:
            if (tiers == tier).any():
                row[f"share_{tier}"] = float((tiers[serving[serving >= 0]] == tier).sum()
                                             / max(len(rate), 1))
        if sol.offload_share is not None and (network.cells["owner"] == "third_party").any():
            row["payment"] = sol.cost
            row["offload_share"] = sol.offload_share
        row["backhaul_violations"] = len(sol.exceeded_backhaul)
        if any(s.power is not None for s in solutions.values()):
            row.update(_power_columns(network, sol, bound.gap))
        row["time_s"] = sol.wall_s
        rows[label] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def _power_columns(network: Network, sol: Solution, gap: float) -> dict[str, float]:
    """The power columns of a method's summary row (a run with power optimization).

    ``energy_w``: the network's mean transmit power [W] (every cell at full power for a
    fixed-power method); ``energy_cost``: its price in the objective [utility] (0 at fixed
    power, whose objective does not pay for energy); ``n_patterns``: power patterns with a
    share of the band (1 at fixed power); ``bound_factor`` and ``estimate_factor``: the
    factors by which every rate would have to grow to reach the upper bound and the
    estimate of the optimum (1 + `gap`, the gap of the summary row; the estimate only for
    power optimization).
    """
    if sol.power is None:
        energy_w = float((10.0 ** (network.cells["tx_power_dbm"].to_numpy(float) / 10.0)).sum()
                         * 1e-3)
        return {"energy_w": energy_w, "energy_cost": 0.0, "n_patterns": 1,
                "bound_factor": 1.0 + gap,
                "estimate_factor": np.nan}
    info = sol.power.bound_info
    return {"energy_w": sol.power.energy_w, "energy_cost": sol.energy_cost,
            "n_patterns": int((sol.power.pattern_share > 0).sum()),
            "bound_factor": info.get("bound_factor", np.nan),
            "estimate_factor": info.get("estimate_factor", np.nan)}


def sweep_table(index: pd.DataFrame, grid_keys: Sequence[str]) -> pd.DataFrame:
    """Mean over drops per grid point and method, with gains over the first method.

    Parameters
    ----------
    index : pandas.DataFrame
        A sweep's index (:func:`~cellopt.study.sweep.collect`).
    grid_keys : sequence of str

    Returns
    -------
    pandas.DataFrame
        Indexed by the grid keys and ``method`` (by ``method`` alone without a grid):
        mean ``objective``, ``upper_bound``, ``gap`` and rates, and ``gain_p5`` and
        ``gain_p50``, the rate percentiles over those of the first method at the same
        grid point.
    """
    keys = [*grid_keys, "method"]
    table = index.groupby(keys, sort=False)[["objective", "upper_bound", "gap", "rate_p5_mbps",
                                              "rate_p50_mbps", "rate_mean_mbps"]].mean()
    base = index["method"].iloc[0]
    for col, name in (("rate_p5_mbps", "gain_p5"), ("rate_p50_mbps", "gain_p50")):
        if grid_keys:
            ref = table.xs(base, level="method")[col].reindex(table.index.droplevel("method"))
            table[name] = table[col].to_numpy() / ref.to_numpy()
        else:  # one row per method: a plain index
            table[name] = table[col] / table.loc[base, col]
    return table
