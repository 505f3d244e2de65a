"""What a run shows: its figures and its report page.

:func:`run_figures` draws the network map, the rate CDF and the convergence plot of a
run (``network_map.png``, ``rate_cdf.png``, ``convergence.png``); :func:`report_page`
makes ``report.html`` (:func:`~cellopt.study.report.render_report`): every method's
association on one map, the coverage maps, the study area and region, the tables and
notes. Runs of more than :data:`PLOT_USERS` users draw a random sample of that many on
their map and rate CDF; the report's map draws :data:`REPORT_USERS` users at most.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any

import numpy as np

from cellopt.coverage import CoverageMap
from cellopt.study.report import CoverageLayer, render_report
from cellopt.study.summary import best_bound, run_bounds
from cellopt.study.tables import stack

if TYPE_CHECKING:
    from cellopt.study.run import RunResult

__all__ = ["PLOT_USERS", "REPORT_USERS", "coverage_text", "plot_bounds",
           "report_page", "run_figures"]

#: Users drawn on the map, the rate CDF and the report of a run with more users (a random
#: sample; the report's map shows the cells serving them).
PLOT_USERS = 20_000
#: Users drawn on the report's map, each with every method's association (a random sample
#: above: about 0.7 MB of page per 1,000 users with 7 methods).
REPORT_USERS = 5_000


def coverage_text(coverage: CoverageMap) -> str:
    """The size and resolution of the coverage maps in words, saying when they were coarsened."""
    rows, cols = coverage.shape
    text = f"{cols} × {rows} pixels of {coverage.resolution_m:g} m"
    if coverage.coarsened:
        text += (f" (coarsened from the {coverage.requested_resolution_m:g} m asked, to keep "
                 "within [coverage] max_pixels)")
    if coverage.rate_mbps is None:
        return text + "; no new-user rate (no method with finite airtime prices)"
    return text + f"; new-user rate under {coverage.method!r}"


def report_page(result: RunResult, seed: int, columns: dict[str, Any], figures: dict[str, Any]) -> str:
    """The report: every method's association on one map (a random sample of
    :data:`REPORT_USERS` users above that many), the coverage maps, the areas, the tables.

    `columns` are :meth:`Drop.user_columns <cellopt.Drop.user_columns>` of each method by
    label, `figures` those of :func:`run_figures`, by file name."""
    drop, network = result.drop, result.drop.network
    labels = list(result.solutions)
    n_users = network.n_users
    sample = None
    if n_users > REPORT_USERS:
        sample = np.sort(np.random.default_rng(seed).choice(n_users, REPORT_USERS, replace=False))
    rows = np.arange(n_users) if sample is None else sample
    frames = {}
    for label in labels:
        frames[label] = frame = drop.user_frame(columns[label], rows)
        if network.wrap_shifts_m is not None:  # lines to the serving cell's nearest copy
            serving = columns[label]["serving_cell"][rows]
            served = serving >= 0
            end = np.full((len(rows), 2), np.nan)
            end[served] = network.nearest_image_m(rows[served], serving[served])
            frames[label] = frame.assign(serving_x_m=end[:, 0], serving_y_m=end[:, 1])
    users = stack(frames)
    cells = result.cells
    if sample is not None:  # the cells serving the sampled users
        cells = cells[cells["cell_id"].isin(users["serving_cell_id"].dropna())]
    if not np.isfinite(drop.problem.demand_mbps).any():  # 1 and null by construction
        cells = cells.drop(columns=["load", "overload"])
    tables = {f"How the columns of {r.file} were read": r.to_frame() for r in result.readings}
    tables |= {"Methods": result.method_summary, "Radio: max-RSRP link per tier": result.radio_summary}
    if result.deployment is not None:
        tables |= {"Deployable settings: what each rule keeps on training and held-out drops":
                   result.deployment.summary,
                   "Cell configuration (cell_config.csv)": result.deployment.cell_config(drop)}
    areas = {name: area for name, area in (("study area", network.study_area),
                                          ("region", network.region)) if area is not None}
    return render_report(
        title=f"cellopt: {result.scenario.name}, seed {seed}", users=users,
        cells=cells.reset_index(drop=True), tables=tables,
        figures={"User rates": figures["rate_cdf.png"], "Convergence": figures["convergence.png"]},
        notes=_notes(result, seed, _shown(result), sample), selected_method=_shown(result), areas=areas,
        coverage=_coverage_layers(result.coverage))


def _coverage_layers(coverage: CoverageMap | None) -> list[CoverageLayer]:
    """The report's layers of the coverage maps."""
    if coverage is None:
        return []
    layers = [CoverageLayer("best server", coverage.best_server, coverage.bounds_m, "",
                            categorical=True,
                            labels={k: str(v) for k, v in enumerate(coverage.cell_ids)}),
              CoverageLayer("RSRP", coverage.rsrp_dbm, coverage.bounds_m, "dBm"),
              CoverageLayer("SINR", coverage.sinr_db, coverage.bounds_m, "dB")]
    if coverage.rate_mbps is not None:
        layers.append(CoverageLayer(f"new-user rate ({coverage.method})", coverage.rate_mbps,
                                    coverage.bounds_m, "Mbit/s"))
    return layers


def _last_method(result: RunResult) -> str:
    """The label of the run's last method (not a deployable rule fitted after them)."""
    rules = set() if result.deployment is None else set(result.deployment.solutions)
    return [label for label in result.solutions if label not in rules][-1]


def _shown(result: RunResult) -> str:
    """The method the report's map opens on: the per-cell offsets when the run has them
    (the settings to apply), else the last method."""
    if result.deployment is not None:
        return next(iter(result.deployment.solutions))
    return _last_method(result)


def run_figures(result: RunResult, seed: int) -> dict[str, Any]:
    """The map, the rate CDF and the convergence plot (matplotlib figures, by file name).

    Above :data:`PLOT_USERS` users, the map and the CDF show a random sample of that many
    (drawn with `seed`).
    """
    from cellopt.plotting import plot_network, plot_rate_cdf

    drop, name = result.drop, result.scenario.name
    n_users = drop.network.n_users
    sample = None
    if n_users > PLOT_USERS:
        sample = np.sort(np.random.default_rng(seed).choice(n_users, PLOT_USERS, replace=False))
    rows = slice(None) if sample is None else sample
    shown = "" if sample is None else f", a sample of {len(sample):,} shown"
    last = _last_method(result)
    serving = drop.per_user(result.solutions[last].serving_cell, fill=-1)[rows]
    network = drop.network if sample is None else drop.network.replace(
        users=drop.network.users.iloc[sample].reset_index(drop=True))
    ax_map = plot_network(network, serving_cell=serving)
    ax_map.set_title(f"{name}: {drop.network.n_cells:,} cells, {drop.network.n_users:,} users "
                     f"({last}{shown})")
    study = drop.in_study_area[rows]
    ax_cdf = plot_rate_cdf({label: drop.per_user(sol.user_rate_mbps)[rows][study]
                            for label, sol in result.solutions.items()})
    ax_cdf.set_title(f"{name}: user rates (seed {seed}{shown})")
    ax_conv = plot_bounds(result)
    ax_conv.set_title(f"{name}: objective and upper bound")
    return {"network_map.png": ax_map.figure, "rate_cdf.png": ax_cdf.figure,
            "convergence.png": ax_conv.figure}


def plot_bounds(result: RunResult) -> Any:
    """The convergence figure, with the bounds the tables use: the run's best bound
    (:func:`~cellopt.study.summary.best_bound`) as one line, and no own bound of a method
    that measures its gap against it from a single point (a baseline's one loose bound,
    far above every objective); an iterative method's bounds are drawn as it found them."""
    from cellopt.plotting import plot_convergence

    best = best_bound(result.solutions)
    if best is None:
        return plot_convergence(result.solutions)
    bounds = run_bounds(result.drop.problem, result.solutions)
    shown = {}
    for label, sol in result.solutions.items():
        history = sol.history
        if (bounds[label].bound_from == best[0] and history is not None and len(history) <= 1
                and "upper_bound" in history):
            sol = dataclasses.replace(sol, history=history.drop(columns="upper_bound"))
        shown[label] = sol
    return plot_convergence(shown, bound=best[1],
                            bound_label=f"best upper bound of the run ({best[0]})")


def _notes(result: RunResult, seed: int, shown: str, sample: np.ndarray | None) -> list[str]:
    """The report's header lines."""
    drop, sc = result.drop, result.scenario
    notes = [f"scenario {sc.name!r} ({sc.path}), seed {seed}",
             f"where: {result.place}",
             f"traffic: {result.traffic}",
             f"{drop.network.n_cells} cells, {drop.network.n_users} users, {len(drop.links)} candidate "
             f"links; {int((~drop.solvable).sum())} user(s) without a usable link (rate 0)",
             f"map: each method's association (choose it beside the map); {shown!r} first"]
    if sample is not None:
        notes.append(f"map: a random sample of {len(sample):,} users and the cells serving them; "
                     "every user and cell is in user_rates.csv, cell_stats.csv and results.gpkg")
    if drop.network.n_users > PLOT_USERS:
        notes.append(f"rate CDF and network_map.png: a random sample of {PLOT_USERS:,} users")
    if result.coverage is not None:
        notes.append(f"coverage maps: {coverage_text(result.coverage)} (median maps; "
                     "docs/coverage.md)")
    if drop.network.study_area is not None:
        notes.append(f"statistics over the {int(drop.in_study_area.sum())} users of the study area; "
                     "guard-band users are solved for but not counted")
    if result.deployment is not None:
        notes.append(f"deployable settings: {result.deployment.summary_line()} (docs/deploy.md)")
    return notes
