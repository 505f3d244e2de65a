"""One drop of a scenario, solved by each of its methods, with every output a planner reads.

:func:`run_scenario` is what ``cellopt run`` does. It writes into its folder

    method_summary.csv   one row per method (utility, bound, gap, status, rates, shares...)
    radio_summary.csv    per tier: cells, users, SINR and rate of the max-RSRP link
    user_rates.csv       one row per (method, user): position, study flag, serving cell,
                         tier, airtime, SINR, rate
    cell_stats.csv       one row per (method, cell): load, users, traffic, backhaul use,
                         power, payment
    results.gpkg         the same two tables as GeoPackage layers ``users`` and ``cells``
    network_map.png      cells and users coloured by serving tier (the last method)
    rate_cdf.png         user rates of every method
    convergence.png      objective and bound against iteration
    report.html          all of it in one self-contained page, with an interactive map

Every file is written whole (atomically), so an interrupted run leaves no torn file.
"""

from __future__ import annotations

import dataclasses
import errno
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import geopandas as gpd
import pandas as pd

from cellopt.errors import ValidationError
from cellopt.solution import Solution
from cellopt.study.scenario import Drop, MethodSpec, Scenario
from cellopt.study.store import atomic_write, save_figure
from cellopt.study.summary import link_summary, method_summary

__all__ = ["RunResult", "run_scenario"]


@dataclasses.dataclass(eq=False)
class RunResult:
    """What :func:`run_scenario` computed and wrote.

    Attributes
    ----------
    scenario : Scenario
    drop : Drop
    solutions : dict of str to Solution
        By method label, in the scenario's order.
    method_summary, radio_summary : pandas.DataFrame
        See :func:`~cellopt.study.summary.method_summary` and
        :func:`~cellopt.study.summary.link_summary`.
    users, cells : geopandas.GeoDataFrame
        One row per (method, user) and (method, cell): :meth:`Drop.frames` of every
        solution, with a ``method`` column first.
    build_s : float
        Time to build the drop [s].
    files : list of Path
        The files written, in order.
    """

    scenario: Scenario
    drop: Drop
    solutions: dict[str, Solution]
    method_summary: pd.DataFrame
    radio_summary: pd.DataFrame
    users: gpd.GeoDataFrame
    cells: gpd.GeoDataFrame
    build_s: float
    files: list[Path]


def run_scenario(scenario: Scenario, out: str | Path, *, seed: int | None = None,
                 methods: Sequence[MethodSpec] | None = None, report: bool = True) -> RunResult:
    """Build one drop of `scenario`, solve it with every method, write the outputs to `out`.

    Parameters
    ----------
    scenario : Scenario
    out : path
        Output folder (created; files in it are replaced).
    seed : int, optional
        Build seed (default: the scenario's first drop).
    methods : sequence of MethodSpec, optional
        Instead of the scenario's methods.
    report : bool
        Also write ``report.html``.

    Returns
    -------
    RunResult

    Raises
    ------
    ValidationError
        For `out` an existing file, or a bad seed.
    """
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise ValidationError(f"--out {out} is an existing file; fix: give a folder (it is created "
                              "if missing)")
    out.mkdir(parents=True, exist_ok=True)  # before solving: a bad folder fails at once
    if not os.access(out, os.W_OK | os.X_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(out))
    seed = scenario.seeds[0] if seed is None else seed
    methods = scenario.methods if methods is None else tuple(methods)
    t0 = time.perf_counter()
    drop = scenario.build(seed)
    build_s = time.perf_counter() - t0
    solutions = {m.label: drop.solve(m.name, **m.options) for m in methods}
    frames = {label: drop.frames(sol) for label, sol in solutions.items()}
    users = _stack({label: u for label, (u, _) in frames.items()})
    cells = _stack({label: c for label, (_, c) in frames.items()})
    result = RunResult(scenario=scenario, drop=drop, solutions=solutions,
                       method_summary=method_summary(drop, solutions),
                       radio_summary=link_summary(drop.network, drop.links),
                       users=users, cells=cells, build_s=build_s, files=[])

    def write(name: str, fn: Any, mode: str = "w") -> None:
        atomic_write(out / name, fn, mode)
        result.files.append(out / name)

    write("method_summary.csv", lambda f: result.method_summary.to_csv(f, index_label="method"))
    write("radio_summary.csv", lambda f: result.radio_summary.to_csv(f, index_label="tier"))
    write("user_rates.csv", lambda f: _plain(users).to_csv(f, index=False))
    write("cell_stats.csv", lambda f: _plain(cells).to_csv(f, index=False))
    _write_geopackage(out / "results.gpkg", {"users": users, "cells": cells})
    result.files.append(out / "results.gpkg")
    figures = _figures(result, seed)
    try:
        for name, fig in figures.items():
            save_figure(fig, out / name)
            result.files.append(out / name)
        if report:
            from cellopt.study.report import write_report

            last = list(solutions)[-1]
            u, c = frames[last]
            result.files.append(write_report(
                out / "report.html", title=f"cellopt: {scenario.name}, seed {seed}", users=u, cells=c,
                tables={"Methods": result.method_summary,
                        "Radio: max-RSRP link per tier": result.radio_summary},
                figures={"User rates": figures["rate_cdf.png"],
                         "Convergence": figures["convergence.png"]},
                notes=_notes(result, seed, last)))
    finally:
        import matplotlib.pyplot as plt

        for fig in figures.values():
            plt.close(fig)
    return result


def _stack(frames: dict[str, gpd.GeoDataFrame]) -> gpd.GeoDataFrame:
    """Per-method frames one under the other, with a ``method`` column first."""
    parts = [f.assign(method=label)[["method", *f.columns]] for label, f in frames.items()]
    first = next(iter(frames.values()))
    return gpd.GeoDataFrame(pd.concat(parts, ignore_index=True), geometry="geometry", crs=first.crs)


def _plain(frame: gpd.GeoDataFrame) -> pd.DataFrame:
    """A frame for CSV: the point geometry as ``x_m``, ``y_m`` (in the network's CRS)."""
    table = pd.DataFrame(frame.drop(columns="geometry"))
    at = table.columns.get_loc("method") + 2  # after method and the id
    table.insert(at, "x_m", frame.geometry.x.to_numpy())
    table.insert(at + 1, "y_m", frame.geometry.y.to_numpy())
    return table


def _write_geopackage(path: Path, layers: dict[str, gpd.GeoDataFrame]) -> None:
    """Write `layers` into one GeoPackage, replacing it whole (a temporary file, then a move)."""
    tmp = path.with_name(f".{path.stem}.tmp{path.suffix}")
    tmp.unlink(missing_ok=True)
    try:
        for name, frame in layers.items():
            frame.to_file(tmp, layer=name, driver="GPKG")
        tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def _figures(result: RunResult, seed: int) -> dict[str, Any]:
    """The map, the rate CDF and the convergence plot (matplotlib figures, by file name)."""
    from cellopt.plotting import plot_convergence, plot_network, plot_rate_cdf

    drop, name = result.drop, result.scenario.name
    last = list(result.solutions)[-1]
    serving = drop.per_user(result.solutions[last].serving_cell, fill=-1)
    ax_map = plot_network(drop.network, serving_cell=serving)
    ax_map.set_title(f"{name}: {drop.network.n_cells} cells, {drop.network.n_users} users ({last})")
    study = drop.in_study_area
    ax_cdf = plot_rate_cdf({label: drop.per_user(sol.user_rate_mbps)[study]
                            for label, sol in result.solutions.items()})
    ax_cdf.set_title(f"{name}: user rates (seed {seed})")
    ax_conv = plot_convergence(result.solutions)
    ax_conv.set_title(f"{name}: objective and upper bound")
    return {"network_map.png": ax_map.figure, "rate_cdf.png": ax_cdf.figure,
            "convergence.png": ax_conv.figure}


def _notes(result: RunResult, seed: int, shown: str) -> list[str]:
    """The report's header lines."""
    drop, sc = result.drop, result.scenario
    notes = [f"scenario {sc.name!r} ({sc.path}), seed {seed}",
             f"{drop.network.n_cells} cells, {drop.network.n_users} users, {len(drop.links)} candidate "
             f"links; {int((~drop.solvable).sum())} user(s) without a usable link (rate 0)",
             f"map: the association of {shown!r}"]
    if drop.network.study_area is not None:
        notes.append(f"statistics over the {int(drop.in_study_area.sum())} users of the study area; "
                     "guard-band users are solved for but not counted")
    return notes
