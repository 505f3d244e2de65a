"""One drop of a scenario, solved by each of its methods, with every output a planner reads.

:func:`run_scenario` is what ``cellopt run`` does. It writes into its folder

    method_summary.csv   one row per method (objective, bound, gap, status, rates, shares...)
    radio_summary.csv    per tier: cells, users, SINR and rate of the max-RSRP link
    user_rates.csv       one row per (method, user): position, study flag, serving cell,
                         tier, airtime, SINR, rate
    cell_stats.csv       one row per (method, cell): load, users, traffic, backhaul use,
                         payment, mean power, share of the band off
    power_patterns.csv   with a [power] section: one row per (method, pattern, cell): the
                         pattern's share of the band and the cell's power in it
    cell_config.csv      with an optimizer among the methods ([deploy], docs/deploy.md): the
                         settings a live network takes, one row per cell: its offset
                         [dB] on the Q-OffsetRange value set, and with [power] its
                         subframe schedule, share off and whether to sleep
    deploy_drops.csv     with cell_config.csv: each deployable rule's objective, gap and kept
                         share on every training and held-out drop
    results.gpkg         GeoPackage, a layer per method and kind (suffix ``<m>``:
                         :func:`~cellopt.study.gis.layer_suffixes` of the label):
                         ``users_<m>``, ``cells_<m>`` (the rows of the CSVs, Points),
                         ``association_<m>`` (a line from each served user to its serving
                         cell's nearest wraparound image), ``power_patterns_<m>`` (power
                         runs); ``sectors`` (a wedge per sectorised cell), ``study_area``
                         and ``region`` (when the network has them); the table ``methods``
                         (each label and its layers); ±inf in a number written as null
    coverage_*.tif       GeoTIFF coverage maps over the study area (``best_server``,
                         ``rsrp_dbm``, ``sinr_db``, and ``rate_mbps``: a new user's rate
                         under the last method's prices), at ``[coverage] resolution_m``,
                         coarsened to ``max_pixels`` (:mod:`cellopt.coverage`)
    network_map.png      cells and users coloured by serving tier (the last method)
    rate_cdf.png         user rates of every method
    convergence.png      objective and bound against iteration
    report.html          all of it in one self-contained page, with an interactive map of
                         every method's association, the coverage maps, the study area and
                         the column reading of cell files
    run.json             which scenario (name and file), seed and methods wrote the folder,
                         with cellopt's version and the time (:func:`~cellopt.study.store.run_record`)

The files replace those of an earlier run together, once every one is written whole
(:func:`~cellopt.study.atomic.atomic_files`): a run that fails or is interrupted leaves the
earlier run's files as they were, and no torn file. Then the files of :data:`OUTPUT_FILES`
that this run did not write (``report.html`` of a run with a report, before one without;
``power_patterns.csv``) are removed, if cellopt wrote them. The run holds the folder's
lock (:class:`~cellopt.study.store.FolderLock`) from start to end: a second run into the
folder is refused meanwhile. A folder holding another scenario's results (its ``run.json``,
or a sweep's ``meta.json``, names another scenario file) is refused unless ``force``
(:func:`~cellopt.study.store.check_owner`), and so is a folder without ``run.json`` that
holds a file of a name the run writes which cellopt did not write (a folder of one's own).

Runs of more than :data:`CHUNK_USERS` users write the per-user tables a chunk of users at
a time and keep none in memory (:attr:`RunResult.users` is None). Runs of more than
:data:`PLOT_USERS` users draw a random sample of that many on their maps and rate CDFs;
the report's map draws :data:`REPORT_USERS` users at most.
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import json
import logging
import os
import sys
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pyogrio.errors
import rasterio

from cellopt.coverage import CoverageMap, check_coverage, coverage_map
from cellopt.drop import Drop
from cellopt.errors import ValidationError
from cellopt.power.joint import explain_stop
from cellopt.solution import Solution
from cellopt.study.atomic import AtomicFiles, atomic_files, leftover_temporaries, png_writer
from cellopt.study.deployment import Deployment, check_memory_of, deploy_run, rule_offsets
from cellopt.study.gis import gis_layers, write_geopackage
from cellopt.study.rasters import COVERAGE_FILES, write_geotiff_to
from cellopt.study.report import CoverageLayer, is_report, render_report
from cellopt.study.scenario import MethodSpec, Scenario
from cellopt.study.schema import POWER, labels_problem
from cellopt.study.store import RUN_RECORD, FolderLock, StoreError, check_owner, run_record
from cellopt.study.summary import (
    best_bound,
    link_summary,
    method_summary,
    network_place,
    run_bounds,
    traffic_model,
)
from cellopt.topology.cellfiles import ColumnReading, recorded_readings

__all__ = ["CHUNK_USERS", "OUTPUT_FILES", "PLOT_USERS", "REPORT_USERS", "RunResult", "coverage_text",
           "run_scenario"]

_log = logging.getLogger("cellopt.study.run")

#: Users per chunk of the per-user tables; a run with more users streams them to disk.
CHUNK_USERS = 1_000_000
#: Users drawn on the map, the rate CDF and the report of a run with more users (a random
#: sample; the report's map shows the cells serving them).
PLOT_USERS = 20_000
#: Users drawn on the report's map, each with every method's association (a random sample
#: above: about 0.7 MB of page per 1,000 users with 7 methods).
REPORT_USERS = 5_000
#: Every file :func:`run_scenario` writes, in the order written (``power_patterns.csv`` only
#: with a power run, the ``coverage_*.tif`` unless ``[coverage] enabled = false``,
#: ``report.html`` only with ``report=True``).
OUTPUT_FILES = ("method_summary.csv", "radio_summary.csv", "user_rates.csv", "cell_stats.csv",
                "power_patterns.csv", "cell_config.csv", "deploy_drops.csv", "results.gpkg",
                *COVERAGE_FILES.values(), "network_map.png", "rate_cdf.png", "convergence.png",
                "report.html", RUN_RECORD)
#: The first bytes of the tables a run writes, as cellopt writes them.
_HEADERS = {"method_summary.csv": b"method,objective,", "radio_summary.csv": b"tier,cells,users,",
            "user_rates.csv": b"method,user_id,x_m,y_m,", "cell_stats.csv": b"method,cell_id,x_m,y_m,",
            "power_patterns.csv": b"method,cell_id,x_m,y_m,pattern,pattern_share,",
            "cell_config.csv": b"cell_id,site_id,tier,offset_db",
            "deploy_drops.csv": b"rule,split,drop,seed,"}
#: The files every run writes (the others depend on the scenario and the options).
_ALWAYS = ("method_summary.csv", "radio_summary.csv", "user_rates.csv", "cell_stats.csv",
           "results.gpkg", "network_map.png", "rate_cdf.png", "convergence.png")
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
    users : geopandas.GeoDataFrame or None
        One row per (method, user): :meth:`Drop.frames` of every solution, with a
        ``method`` column first. None for a run of more than :data:`CHUNK_USERS` users,
        whose per-user tables are only on disk (``user_rates.csv``, ``results.gpkg``).
    cells : geopandas.GeoDataFrame
        One row per (method, cell), likewise.
    build_s : float
        Time to build the drop [s].
    files : list of Path
        The files written, in order.
    removed : list of Path
        Files of an earlier run in the folder that this run does not write, removed (see
        :func:`run_scenario`).
    coverage : CoverageMap or None
        The coverage maps written as GeoTIFF (:func:`~cellopt.coverage.coverage_map`,
        under the last method); None with ``[coverage] enabled = false``.
    readings : list of ColumnReading
        How the columns of each cell file the network was built from were read (none for
        a synthetic layout).
    place : str
        Where the cells lie, in words (:func:`~cellopt.study.summary.network_place`).
    traffic : str
        The traffic model, in words (:func:`~cellopt.study.summary.traffic_model`).
    deployment : Deployment or None
        The deployable settings and their judgement on held-out drops
        (:func:`~cellopt.study.deployment.deploy_run`); None without an optimizer among
        the methods or with ``[deploy] enabled = false``. Its rules are among
        `solutions`.
    """

    scenario: Scenario
    drop: Drop
    solutions: dict[str, Solution]
    method_summary: pd.DataFrame
    radio_summary: pd.DataFrame
    users: gpd.GeoDataFrame | None
    cells: gpd.GeoDataFrame
    build_s: float
    files: list[Path]
    removed: list[Path] = dataclasses.field(default_factory=list)
    coverage: CoverageMap | None = None
    readings: list[ColumnReading] = dataclasses.field(default_factory=list)
    place: str = ""
    traffic: str = ""
    deployment: Deployment | None = None


def run_scenario(scenario: Scenario, out: str | Path, *, seed: int | None = None,
                 methods: Sequence[MethodSpec] | None = None, report: bool = True,
                 progress: bool = False, force: bool = False) -> RunResult:
    """Build one drop of `scenario`, solve it with every method, write the outputs to `out`.

    Parameters
    ----------
    scenario : Scenario
    out : path
        Output folder (created). The files of :data:`OUTPUT_FILES` this run writes replace
        those in it together, once all are written whole; those it does not write are
        then removed if cellopt wrote them (else left with a warning). Other files are
        left alone. The folder is locked while the run lasts.
    seed : int, optional
        Build seed (default: the scenario's first drop).
    methods : sequence of MethodSpec, optional
        Instead of the scenario's runs (:attr:`Scenario.runs`: its methods, then its
        ``[power]`` section if it has one).
    report : bool
        Also write ``report.html``.
    progress : bool
        Show each stage's time, the link table's progress bar and each method's
        iterations on stderr.
    force : bool
        Write into `out` even if it holds another scenario's results (see
        :func:`~cellopt.study.store.check_owner`).

    Returns
    -------
    RunResult

    Raises
    ------
    ValidationError
        For `out` an existing file or a symbolic link that loops or points to nothing, a
        folder in `out` where the run writes a file, a bad seed, `methods` whose labels
        are equal once the spaces at their ends are stripped, or ``[coverage]`` settings
        that give no map (:func:`~cellopt.coverage.check_coverage`, before anything is
        solved).
    StoreError
        For `out` holding another scenario's results, or files of the names the run
        writes that cellopt did not write (and no run record), without `force` (checked
        before anything is built).

    Warns
    -----
    UserWarning
        For a drop whose user tables would be empty: no users, none in the study area,
        or none with a usable link.
    FolderInUseError
        While another running process writes to `out` (it holds its lock; the lock of a
        run that was killed is taken over with a warning).
    OSError
        For a folder that cannot be written, or a failed write (a full disk; an error of
        GDAL is a :class:`~cellopt.study.atomic.WriteError`): the earlier run's files stay.
    """
    if methods is not None:  # a label names the run's rows of every output
        problem = labels_problem([m.label for m in methods])
        if problem is not None:
            raise ValidationError(f"methods: {problem}")
    out = Path(out)
    _check_link(out)
    if out.exists() and not out.is_dir():
        raise ValidationError(f"--out {out} is an existing file; fix: give a folder (it is created "
                              "if missing)")
    out.mkdir(parents=True, exist_ok=True)  # before solving: a bad folder fails at once
    if not os.access(out, os.W_OK | os.X_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(out))
    with FolderLock(out):
        check_owner(out, scenario.name, scenario.path, force=force)
        _check_targets(out)
        if not force:
            _check_foreign(out, _written_names(scenario, methods, report))
        for tmp in leftover_temporaries(out, OUTPUT_FILES):  # of a killed run
            tmp.unlink(missing_ok=True)
        return _run(scenario, out, seed=seed, methods=methods, report=report, progress=progress)


def _check_link(out: Path) -> None:
    """Refuse an `out` that is a symbolic link to nowhere: one that loops, or whose target is
    missing (it cannot be made a folder), naming the link and its target."""
    if not out.is_symlink():
        return
    try:
        out.stat()
    except OSError as err:
        target = os.readlink(out)
        what = ("loops (it leads back to itself)" if err.errno == errno.ELOOP else
                "points to nothing" if err.errno == errno.ENOENT else f"cannot be followed ({err.strerror})")
        raise ValidationError(f"--out {out} is a symbolic link to {target}, which {what}; fix: give "
                              "a folder, or point the link at one") from None


def _check_targets(out: Path) -> None:
    """Refuse, before anything is built, a folder in `out` where a run writes one of its
    :data:`OUTPUT_FILES` (a folder cannot be replaced by a file: the run would fail after
    solving, with nothing written)."""
    folders = [out / name for name in OUTPUT_FILES
               if (out / name).is_dir() and not (out / name).is_symlink()]
    if folders:
        names = ", ".join(str(p) for p in folders)
        raise ValidationError(f"{names}: {'a folder' if len(folders) == 1 else 'folders'} where "
                              "cellopt run writes a file of that name; fix: move or rename "
                              f"{'it' if len(folders) == 1 else 'them'}, or give another --out")


def _written_names(scenario: Scenario, methods: Sequence[MethodSpec] | None, report: bool) -> list[str]:
    """The names of :data:`OUTPUT_FILES` a run of `scenario` will write, as known before it
    builds anything (``cell_config.csv`` and ``deploy_drops.csv`` with ``[deploy]`` enabled)."""
    runs = scenario.runs if methods is None else tuple(methods)
    names = [*_ALWAYS, RUN_RECORD]
    if any(m.name == POWER for m in runs):
        names.append("power_patterns.csv")
    if scenario.deploy.enabled:
        names += ["cell_config.csv", "deploy_drops.csv"]
    if scenario.coverage.enabled:
        names += COVERAGE_FILES.values()
    if report:
        names.append("report.html")
    return names


def _check_foreign(out: Path, names: Sequence[str]) -> None:
    """Refuse, before anything is built, to replace files of `names` in `out` that cellopt did
    not write (a folder of one's own, a source tree: ``--out docs``), unless the folder's
    :data:`~cellopt.study.store.RUN_RECORD` says a run wrote it (then
    :func:`~cellopt.study.store.check_owner` has checked whose)."""
    if (out / RUN_RECORD).is_file():
        return
    foreign = [name for name in names if (out / name).is_file() and not _is_output(out / name)]
    if foreign:
        raise StoreError(f"{out} holds {', '.join(foreign)}, which cellopt did not write (and no "
                         f"{RUN_RECORD} of a run), and this run would replace "
                         f"{'it' if len(foreign) == 1 else 'them'}; fix: write to another folder "
                         "(--out; a new one is created), or pass --force (force=True) to replace "
                         f"{'it' if len(foreign) == 1 else 'them'}")


def _warn_empty(scenario: Scenario, drop: Drop) -> None:
    """Warn when the drop gives tables of no user: no users, none in the study area, or none
    with a usable link (every rate 0); each names what is empty and the fix."""
    network = drop.network
    if network.n_users == 0:
        warnings.warn(f"{scenario.path}: the drop has no users, so user_rates.csv, the users_ and "
                      "association_ layers of results.gpkg and rate_cdf.png hold no user and every "
                      "method's utility is 0 (the coverage maps are still made); fix: give [users] "
                      "n or density_per_km2 above 0", stacklevel=3)
        return
    n_study = int(np.count_nonzero(drop.in_study_area))
    if n_study == 0:
        warnings.warn(f"{scenario.path}: none of the {network.n_users:,} users is in the study "
                      "area, so the statistics of method_summary.csv and rate_cdf.png count no user; "
                      "fix: check that the study area ([network]) covers the users", stacklevel=3)
    elif not np.any(drop.solvable):
        warnings.warn(f"{scenario.path}: none of the {network.n_users:,} users has a usable link (all "
                      "in outage), so every rate is 0; fix: check the cells' tx_power_dbm, the "
                      "distances (isd_m) and [radio] noise_figure_db", stacklevel=3)


def _run(scenario: Scenario, out: Path, *, seed: int | None, methods: Sequence[MethodSpec] | None,
         report: bool, progress: bool) -> RunResult:
    """:func:`run_scenario`, in its folder, with the folder's lock held."""
    seed = scenario.seeds[0] if seed is None else seed
    methods = scenario.runs if methods is None else tuple(methods)
    t0 = time.perf_counter()
    with recorded_readings() as readings:
        drop = scenario.build(seed, progress=progress)
    build_s = time.perf_counter() - t0
    _warn_empty(scenario, drop)
    check_memory_of(scenario, drop, methods)  # before solving: the training drops must fit
    if scenario.coverage.enabled:  # before solving: settings that give no map are refused
        with _coverage_section(scenario):
            check_coverage(drop, resolution_m=scenario.coverage.resolution_m,
                           max_pixels=scenario.coverage.max_pixels)
    solutions = {m.label: _solve(scenario, drop, m, progress) for m in methods}
    coverage = _coverage(scenario, drop, solutions, progress)
    deployment = deploy_run(scenario, drop, methods, solutions, seed, progress=progress)
    if deployment is not None:
        solutions |= deployment.solutions
    columns = {label: drop.user_columns(sol) for label, sol in solutions.items()}
    cells = _stack({label: _with_offsets(drop.cell_frame(sol, columns[label]), label, methods, deployment)
                    for label, sol in solutions.items()})
    n_users = drop.network.n_users
    users = _stack({label: drop.user_frame(c) for label, c in columns.items()}) \
        if n_users <= CHUNK_USERS else None
    place, traffic = network_place(drop.network), traffic_model(drop.problem.demand_mbps)
    _log.info("where: %s", place)
    _log.info("traffic: %s", traffic)
    summary = method_summary(drop, solutions)
    if deployment is not None:
        summary = summary.join(deployment.summary)
    result = RunResult(scenario=scenario, drop=drop, solutions=solutions, method_summary=summary,
                       radio_summary=link_summary(drop.network, drop.links),
                       users=users, cells=cells, build_s=build_s, files=[], coverage=coverage,
                       readings=readings, place=place, traffic=traffic, deployment=deployment)

    def user_chunks() -> Iterator[gpd.GeoDataFrame]:
        """The per-user table, method by method, a chunk of users at a time."""
        if users is not None:
            yield users
            return
        for label, cols in columns.items():
            for start in range(0, n_users, CHUNK_USERS):
                chunk = drop.user_frame(cols, slice(start, start + CHUNK_USERS))
                yield chunk.assign(method=label)[["method", *chunk.columns]]

    with atomic_files() as staged:  # moved into place together, once all are written
        _write_outputs(staged, result, out, seed, columns, user_chunks, report, progress)
    result.removed = _remove_stale(out, {p.name for p in result.files})
    return result


def _write_outputs(staged: AtomicFiles, result: RunResult, out: Path, seed: int,
                   columns: dict[str, Any], user_chunks: Callable[[], Iterator[gpd.GeoDataFrame]],
                   report: bool, progress: bool) -> None:
    """Write every output of `result` to `staged` (temporary files until it commits)."""
    drop, cells, solutions = result.drop, result.cells, result.solutions
    n_users = drop.network.n_users

    def write(name: str, fn: Any, mode: str = "w") -> None:
        t = time.perf_counter()
        staged.write(out / name, fn, mode)
        result.files.append(out / name)
        _say(progress, f"wrote {name}", t)

    write("method_summary.csv", lambda f: result.method_summary.to_csv(f, index_label="method"))
    write("radio_summary.csv", lambda f: result.radio_summary.to_csv(f, index_label="tier"))
    write("user_rates.csv", lambda f: _write_csv(f, user_chunks()))
    write("cell_stats.csv", lambda f: _plain(cells).to_csv(f, index=False))
    patterns = _power_patterns(drop, solutions)
    if patterns is not None:
        write("power_patterns.csv", lambda f: _plain(patterns).to_csv(f, index=False))
    if result.deployment is not None:
        config = result.deployment.cell_config(drop)
        write("cell_config.csv", lambda f: config.to_csv(f, index=False))
        write("deploy_drops.csv", lambda f: result.deployment.judgements.to_csv(f, index=False))
    t = time.perf_counter()
    with staged.path(out / "results.gpkg", keep_suffix=True) as tmp:  # GDAL wants .gpkg
        write_geopackage(tmp, gis_layers(drop, columns, cells, patterns, CHUNK_USERS))
    result.files.append(out / "results.gpkg")
    _say(progress, "wrote results.gpkg", t)
    if result.coverage is not None:
        for quantity, name in COVERAGE_FILES.items():
            if result.coverage.quantity(quantity) is None:
                continue
            t = time.perf_counter()
            with staged.path(out / name, keep_suffix=True) as tmp:
                write_geotiff_to(tmp, result.coverage, quantity, target=out / name)
            result.files.append(out / name)
            _say(progress, f"wrote {name}", t)
    sample = None
    if n_users > PLOT_USERS:
        sample = np.sort(np.random.default_rng(seed).choice(n_users, PLOT_USERS, replace=False))
    figures = _figures(result, seed, sample)
    try:
        for name, fig in figures.items():
            write(name, png_writer(fig), "wb")
        if report:
            page = _report_page(result, seed, columns, figures)
            write("report.html", lambda f: f.write(page))
        record = run_record(result.scenario.name, result.scenario.path, seed=seed,
                            methods=list(solutions))
        write(RUN_RECORD, lambda f: json.dump(record, f, indent=2))
    finally:
        import matplotlib.pyplot as plt

        for fig in figures.values():
            plt.close(fig)


def _coverage(scenario: Scenario, drop: Drop, solutions: dict[str, Solution], progress: bool
              ) -> CoverageMap | None:
    """The coverage maps of the drop (None with ``[coverage] enabled = false``), the new
    user's rate under the prices of the last method that has finite ones (none: no rate)."""
    settings = scenario.coverage
    if not settings.enabled:
        return None
    t = time.perf_counter()
    priced = [label for label, sol in solutions.items()
              if np.size(mu := sol.prices.get("airtime", np.empty(0))) and np.isfinite(mu).all()]
    last = priced[-1] if priced else None
    with _coverage_section(scenario):
        coverage = coverage_map(drop, solutions[last] if last else None,
                                resolution_m=settings.resolution_m, max_pixels=settings.max_pixels,
                                method=last, progress=progress)
    _say(progress, f"coverage maps: {coverage_text(coverage)}", t)
    return coverage


@contextlib.contextmanager
def _coverage_section(scenario: Scenario) -> Iterator[None]:
    """Raise the block's refusals of the ``[coverage]`` settings naming the file and section
    (the same class: a :class:`~cellopt.errors.ResourceLimitError` stays one). A setting
    outside its usual range is not warned about again: loading the scenario did, naming
    the file."""
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=r"(resolution_m|max_pixels)=.* outside the usual "
                                    "range", category=UserWarning)
            yield
    except ValidationError as err:
        raise type(err)([f"{scenario.path}: [coverage] {p}" for p in err.problems]) from None


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


def _report_page(result: RunResult, seed: int, columns: dict[str, Any], figures: dict[str, Any]) -> str:
    """The report: every method's association on one map (a random sample of
    :data:`REPORT_USERS` users above that many), the coverage maps, the areas, the tables."""
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
    users = _stack(frames)
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


def _with_offsets(cells: gpd.GeoDataFrame, label: str, methods: Sequence[MethodSpec],
                  deployment: Deployment | None) -> gpd.GeoDataFrame:
    """A method's cell table with ``offset_db``, the offset its rule applies [dB] (0 for
    max-RSRP, the tier's bias for range expansion and the best per-tier bias, the fitted
    offset for per-cell offsets; NaN for a method that is not an offset rule), when the run
    has deployable settings."""
    if deployment is None:
        return cells
    return cells.assign(offset_db=rule_offsets(label, methods, deployment, cells))


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


def _remove_stale(out: Path, written: set[str]) -> list[Path]:
    """Remove the files of :data:`OUTPUT_FILES` in `out` that this run did not write (those of
    an earlier run), if cellopt wrote them; warn about the others. Return the removed files."""
    removed = []
    for name in OUTPUT_FILES:
        path = out / name
        if name in written or not path.is_file():
            continue
        if _is_output(path):
            path.unlink(missing_ok=True)
            removed.append(path)
        else:
            warnings.warn(f"{path} is not from this run, and not a file cellopt writes, so it is "
                          "left as it is; this run's results are the other files", stacklevel=3)
    return removed


def _is_output(path: Path) -> bool:
    """Whether `path`, a name of :data:`OUTPUT_FILES`, holds what cellopt writes there."""
    if path.name == "report.html":
        return is_report(path)
    if path.suffix == ".tif":
        try:
            with rasterio.open(path) as raster:
                return raster.tags().get("SOFTWARE", "").startswith("cellopt ")
        except rasterio.errors.RasterioError:
            return False
    if path.name in _HEADERS or path.suffix == ".png":
        header = _HEADERS.get(path.name, b"\x89PNG\r\n\x1a\n")
        try:
            with open(path, "rb") as f:
                start = f.read(256)
        except OSError:
            return False
        return start.startswith(header) and (path.suffix != ".png" or b"Software\x00Matplotlib" in start)
    if path.suffix == ".gpkg":
        try:
            return "methods" in pyogrio.list_layers(path)[:, 0]
        except (pyogrio.errors.DataSourceError, OSError):
            return False
    return False  # run.json: check_owner reads it


def _say(progress: bool, what: str, since: float) -> None:
    """One progress line on stderr: what was done and how long it took."""
    if progress:
        print(f"  {what} ({time.perf_counter() - since:.1f} s)", file=sys.stderr, flush=True)


def _solve(scenario: Scenario, drop: Drop, spec: MethodSpec, progress: bool) -> Solution:
    """`scenario.solve` with `spec`, showing the iterations on stderr with `progress`."""
    t = time.perf_counter()
    options = dict(spec.options)
    power = spec.name == POWER
    if progress and power:  # a bar per phase: column generation, then the bounds
        options["progress"] = True
    elif progress and "callback" not in options:
        shown = [0.0]

        def show(row: dict[str, Any]) -> None:  # one line, rewritten at most twice a second
            if time.perf_counter() - shown[0] < 0.5:
                return
            shown[0] = time.perf_counter()
            gap = row.get("gap")
            gap_text = "" if gap is None or not np.isfinite(gap) else f", gap {gap:.2e}"
            print(f"\r  {spec.label}: iteration {row.get('iteration', '?')}{gap_text}   ", end="",
                  file=sys.stderr, flush=True)
        options["callback"] = show
    solution = scenario.solve(drop, spec, **options)
    if progress:
        print("\r", end="", file=sys.stderr)
    gap = "" if solution.gap is None else f", gap {solution.gap:.2e}"
    if power and solution.power is not None:  # what stopped column generation, in words
        _say(progress, f"{spec.label}: {solution.status}{gap}; {explain_stop(solution)}", t)
    else:
        _say(progress, f"{spec.label}: {solution.status}{gap}, {solution.n_iter} iterations", t)
    return solution


def _power_patterns(drop: Drop, solutions: dict[str, Solution]) -> gpd.GeoDataFrame | None:
    """Every cell's power in every pattern of each power solution (None: there is none).

    One row per (method, pattern, cell), at the cell's position: ``cell_id``, ``pattern``
    (its number), ``pattern_share`` (θ_s, the share of the band it gets), ``tier``,
    ``power_dbm`` (−inf: off) and ``off``.
    """
    cells = drop.network.cells.reset_index(drop=True)
    frames = {}
    for label, sol in solutions.items():
        if sol.power is None:
            continue
        n_patterns, n_cells = sol.power.patterns.shape
        pattern = np.repeat(np.arange(n_patterns), n_cells)
        at = np.tile(np.arange(n_cells), n_patterns)
        power_dbm = sol.power.patterns.ravel()
        frames[label] = gpd.GeoDataFrame({
            "cell_id": cells["cell_id"].to_numpy()[at], "pattern": pattern,
            "pattern_share": sol.power.pattern_share[pattern], "tier": cells["tier"].to_numpy()[at],
            "power_dbm": power_dbm, "off": np.isneginf(power_dbm)},
            geometry=cells.geometry.to_numpy()[at], crs=cells.crs)
    return _stack(frames) if frames else None


def _write_csv(f: Any, chunks: Iterator[pd.DataFrame]) -> None:
    """Write frames one under the other as one CSV (the header once)."""
    for i, chunk in enumerate(chunks):
        _plain(chunk).to_csv(f, index=False, header=i == 0)


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


def _figures(result: RunResult, seed: int, sample: np.ndarray | None) -> dict[str, Any]:
    """The map, the rate CDF and the convergence plot (matplotlib figures, by file name).

    With a `sample` of user rows, the map and the CDF show those users only.
    """
    from cellopt.plotting import plot_network, plot_rate_cdf

    drop, name = result.drop, result.scenario.name
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
    ax_conv = _plot_bounds(result)
    ax_conv.set_title(f"{name}: objective and upper bound")
    return {"network_map.png": ax_map.figure, "rate_cdf.png": ax_cdf.figure,
            "convergence.png": ax_conv.figure}


def _plot_bounds(result: RunResult) -> Any:
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
