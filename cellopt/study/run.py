"""One drop of a scenario, solved by each of its runs, with every output a planner reads.

:func:`run_scenario` is what ``cellopt run`` does. It solves the drop with each run of
the scenario (:mod:`cellopt.study.runkinds`), fits the deployable settings
(:mod:`cellopt.study.deployment`) and writes the files of :data:`RUN_OUTPUTS` into its
folder, one :class:`~cellopt.study.outputs.OutputFile` each (what writes it, when, how a
file of its own is recognised; docs/scenarios.md, "What ``cellopt run`` writes"): the
tables, the GeoPackage ``results.gpkg``, the coverage GeoTIFFs, the figures and
``report.html`` (:mod:`cellopt.study.runviews`), ``checksums.sha256`` (the SHA-256 of
every file without wall-clock values, in the format ``sha256sum -c`` checks) and
``run.json`` (:func:`~cellopt.study.store.run_record`).

The files replace those of an earlier run together, once every one is written whole
(:func:`~cellopt.study.atomic.atomic_files`): a run that fails or is interrupted leaves the
earlier run's files as they were, and no torn file. Then the files of :data:`OUTPUT_FILES`
that this run did not write (``report.html`` of a run with a report, before one without;
``power_patterns.csv``) are removed, if cellopt wrote them. The run holds the folder's
lock (:class:`~cellopt.study.lock.FolderLock`) from start to end: a second run into the
folder is refused meanwhile. A folder holding another scenario's results (its ``run.json``,
or a sweep's ``meta.json``, names another scenario file) is refused unless ``force``
(:func:`~cellopt.study.store.check_owner`), and so is a folder without ``run.json`` that
holds a file of a name the run writes which cellopt did not write (a folder of one's own).

Runs of more than :data:`CHUNK_USERS` users write the per-user tables a chunk of users at
a time and keep none in memory (:attr:`RunResult.users` is None).
"""

from __future__ import annotations

import contextlib
import dataclasses
import errno
import functools
import logging
import os
import sys
import time
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import IO, Any, NamedTuple

import geopandas as gpd
import numpy as np
import pandas as pd
import pyogrio
import pyogrio.errors
import rasterio

from cellopt.coverage import CoverageMap, check_coverage, coverage_map
from cellopt.drop import Drop
from cellopt.errors import StoreError, ValidationError
from cellopt.progress import shows
from cellopt.solution import Solution
from cellopt.study.atomic import AtomicFiles, atomic_files, leftover_temporaries, png_writer
from cellopt.study.deployment import Deployment, check_memory_of, deploy_run, rule_offsets
from cellopt.study.gis import gis_layers, write_geopackage
from cellopt.study.lock import FolderLock
from cellopt.study.outputs import (
    CHECKSUMS,
    OutputFile,
    When,
    checksum_lines,
    foreign_files,
    is_checksums,
    is_matplotlib_png,
    remove_stale,
    sha256_of,
    starts_with,
    write_json,
    write_table,
)
from cellopt.study.rasters import COVERAGE_FILES, write_geotiff_to
from cellopt.study.report import is_report
from cellopt.study.runkinds import RunKind, labels_problem
from cellopt.study.runviews import coverage_text, report_page, run_figures
from cellopt.study.scenario import Scenario
from cellopt.study.store import RUN_RECORD, check_owner, run_record
from cellopt.study.summary import link_summary, method_summary, network_place, traffic_model
from cellopt.study.tables import plain, power_patterns, stack, write_csv
from cellopt.topology.cellfiles import ColumnReading, recorded_readings

__all__ = ["CHUNK_USERS", "OUTPUT_FILES", "RUN_OUTPUTS", "RunOutput", "RunPlan", "RunResult",
           "run_scenario"]

_log = logging.getLogger("cellopt.study.run")

#: Users per chunk of the per-user tables; a run with more users streams them to disk.
CHUNK_USERS = 1_000_000


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


class RunPlan(NamedTuple):
    """What a run is asked to do, known before it builds anything: which files it may write
    (:attr:`When.planned <cellopt.study.outputs.When>` of each entry of :data:`RUN_OUTPUTS`)."""

    scenario: Scenario
    runs: tuple[RunKind, ...]
    report: bool


@dataclasses.dataclass(eq=False)
class RunOutput:
    """What the writers of :data:`RUN_OUTPUTS` read: a run's result and what is made for them.

    Attributes
    ----------
    result : RunResult
        Its ``files`` are those written so far.
    out : Path
        The run's folder.
    seed : int
        The build seed.
    report : bool
        Whether ``report.html`` is written.
    columns : dict of str to dict
        :meth:`Drop.user_columns <cellopt.Drop.user_columns>` of each solution, by label.
    patterns : geopandas.GeoDataFrame or None
        The power patterns (:func:`~cellopt.study.tables.power_patterns`).
    staged : AtomicFiles
        The set the files are written to, moved into place together once all are written.
    """

    result: RunResult
    out: Path
    seed: int
    report: bool
    columns: dict[str, dict[str, Any]]
    patterns: gpd.GeoDataFrame | None
    staged: AtomicFiles
    figures: dict[str, Any] | None = dataclasses.field(default=None, init=False, repr=False)

    def user_chunks(self) -> Iterator[gpd.GeoDataFrame]:
        """The per-user table, method by method, a chunk of :data:`CHUNK_USERS` users at a time
        (whole when it is in memory)."""
        if self.result.users is not None:
            yield self.result.users
            return
        drop = self.result.drop
        for label, cols in self.columns.items():
            for start in range(0, drop.network.n_users, CHUNK_USERS):
                chunk = drop.user_frame(cols, slice(start, start + CHUNK_USERS))
                yield chunk.assign(method=label)[["method", *chunk.columns]]

    def figure(self, name: str) -> Any:
        """The matplotlib figure of the file `name` (:func:`~cellopt.study.runviews.run_figures`:
        all three drawn when the first is asked for)."""
        if self.figures is None:
            self.figures = run_figures(self.result, self.seed)
        return self.figures[name]

    def report_page(self) -> str:
        """The page of ``report.html`` (:func:`~cellopt.study.runviews.report_page`)."""
        return report_page(self.result, self.seed, self.columns,
                           {name: self.figure(name) for name in ("rate_cdf.png", "convergence.png")})

    def close(self) -> None:
        """Close the figures drawn."""
        if self.figures:
            import matplotlib.pyplot as plt

            for fig in self.figures.values():
                plt.close(fig)


# ---------------------------------------------------------------------------- the files
def _write_geopackage(path: Path, run: RunOutput) -> None:
    result = run.result
    write_geopackage(path, gis_layers(result.drop, run.columns, result.cells, run.patterns,
                                      CHUNK_USERS))


def _write_geotiff(quantity: str, path: Path, run: RunOutput) -> None:
    write_geotiff_to(path, run.result.coverage, quantity, target=run.out / COVERAGE_FILES[quantity])


def _write_png(name: str, f: IO[bytes], run: RunOutput) -> None:
    png_writer(run.figure(name))(f)


def _write_checksums(f: IO[str], run: RunOutput) -> None:
    """The SHA-256 of every file written so far that holds no wall-clock value."""
    checked = {entry.name for entry in RUN_OUTPUTS if entry.checked}
    f.write(checksum_lines({path.name: sha256_of(run.staged.temporary(path))
                            for path in run.result.files if path.name in checked}))


def _write_record(f: IO[str], run: RunOutput) -> None:
    result = run.result
    write_json(f, run_record(result.scenario.name, result.scenario.path, seed=run.seed,
                             methods=list(result.solutions)))


def _is_geotiff(path: Path) -> bool:
    """A GeoTIFF cellopt wrote (its ``SOFTWARE`` tag)."""
    try:
        with rasterio.open(path) as raster:
            return raster.tags().get("SOFTWARE", "").startswith("cellopt ")
    except rasterio.errors.RasterioError:
        return False


def _is_geopackage(path: Path) -> bool:
    """A GeoPackage of a run (its ``methods`` table)."""
    try:
        return "methods" in pyogrio.list_layers(path)[:, 0]
    except (pyogrio.errors.DataSourceError, OSError):
        return False


#: Written with a run that chooses power patterns (a ``[power]`` section).
WITH_PATTERNS = When(lambda plan: any(r.patterns for r in plan.runs),
                     lambda run: run.patterns is not None)
#: Written with deployable settings (docs/deploy.md).
WITH_DEPLOYMENT = When(lambda plan: plan.scenario.deploy.enabled,
                       lambda run: run.result.deployment is not None)
#: Written unless ``--no-report`` (``report=False``).
WITH_REPORT = When(lambda plan: plan.report, lambda run: run.report)


def _coverage_file(quantity: str, name: str) -> OutputFile:
    """The GeoTIFF of one coverage raster (the new user's rate: with a method of finite prices)."""
    when = When(lambda plan: plan.scenario.coverage.enabled,
                lambda run: run.result.coverage is not None
                and run.result.coverage.quantity(quantity) is not None)
    return OutputFile(name, functools.partial(_write_geotiff, quantity), "path", when, _is_geotiff,
                      what=f"GeoTIFF coverage map of {quantity} over the study area")


#: The figures a run draws, and what each shows.
_FIGURES = {"network_map.png": "cells and users coloured by serving tier (the last method)",
            "rate_cdf.png": "user rates of every method",
            "convergence.png": "objective and bound against iteration"}

#: Every file :func:`run_scenario` writes, in the order written: its name, its writer, when
#: it is written, how a file of its own is recognised, whether ``checksums.sha256`` lists it
#: (not those with wall-clock values: ``method_summary.csv``'s ``time_s``, the time written
#: in ``results.gpkg``'s ``gpkg_contents``, ``report.html`` and ``run.json``).
RUN_OUTPUTS: tuple[OutputFile, ...] = (
    OutputFile("method_summary.csv",
               lambda f, run: run.result.method_summary.to_csv(f, index_label="method"),
               recognise=starts_with(b"method,objective,"), checked=False,
               what="one row per method: objective, bound, gap, status, rates, shares, time_s"),
    OutputFile("radio_summary.csv",
               lambda f, run: run.result.radio_summary.to_csv(f, index_label="tier"),
               recognise=starts_with(b"tier,cells,users,"),
               what="per tier: cells, users, SINR and rate of the max-RSRP link"),
    OutputFile("user_rates.csv", lambda f, run: write_csv(f, run.user_chunks()),
               recognise=starts_with(b"method,user_id,x_m,y_m,"),
               what="one row per (method, user): position, serving cell, airtime, SINR, rate"),
    OutputFile("cell_stats.csv", lambda f, run: write_table(f, plain(run.result.cells)),
               recognise=starts_with(b"method,cell_id,x_m,y_m,"),
               what="one row per (method, cell): load, users, traffic, payment, power"),
    OutputFile("power_patterns.csv", lambda f, run: write_table(f, plain(run.patterns)),
               when=WITH_PATTERNS,
               recognise=starts_with(b"method,cell_id,x_m,y_m,pattern,pattern_share,"),
               what="one row per (method, pattern, cell): the pattern's share, the cell's power"),
    OutputFile("cell_config.csv",
               lambda f, run: write_table(f, run.result.deployment.cell_config(run.result.drop)),
               when=WITH_DEPLOYMENT, recognise=starts_with(b"cell_id,site_id,tier,offset_db"),
               what="the settings a live network takes, one row per cell (docs/deploy.md)"),
    OutputFile("deploy_drops.csv", lambda f, run: write_table(f, run.result.deployment.judgements),
               when=WITH_DEPLOYMENT, recognise=starts_with(b"rule,split,drop,seed,"),
               what="each deployable rule on every training and held-out drop"),
    OutputFile("results.gpkg", _write_geopackage, "path", recognise=_is_geopackage, checked=False,
               what="GeoPackage: a layer per method and kind, sectors, areas, the methods table"),
    *(_coverage_file(quantity, name) for quantity, name in COVERAGE_FILES.items()),
    *(OutputFile(name, functools.partial(_write_png, name), "wb", recognise=is_matplotlib_png,
                 what=what) for name, what in _FIGURES.items()),
    OutputFile("report.html", lambda f, run: f.write(run.report_page()), when=WITH_REPORT,
               recognise=is_report, checked=False, what="all of it in one self-contained page"),
    OutputFile(CHECKSUMS, _write_checksums, recognise=is_checksums, checked=False,
               what="the SHA-256 of the files above without wall-clock values (sha256sum -c)"),
    OutputFile(RUN_RECORD, _write_record, checked=False,  # check_owner reads it
               what="which scenario, seed and methods wrote the folder, cellopt's version, when"),
)
#: The names of :data:`RUN_OUTPUTS`, in the order written.
OUTPUT_FILES = tuple(entry.name for entry in RUN_OUTPUTS)


def run_scenario(scenario: Scenario, out: str | Path, *, seed: int | None = None,
                 methods: Sequence[RunKind] | None = None, report: bool = True,
                 progress: bool | None = None, force: bool = False) -> RunResult:
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
    methods : sequence of RunKind, optional
        Instead of the scenario's runs (:attr:`Scenario.runs`: its methods, then its
        ``[power]`` section if it has one; :mod:`cellopt.study.runkinds`).
    report : bool
        Also write ``report.html``.
    progress : bool or None
        Show each stage's time, the link table's progress bar and each method's
        iterations on stderr. None (default): when standard error is a terminal (:mod:`cellopt.progress`).
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
    progress = shows(progress)
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
            _check_foreign(out, _planned(scenario, methods, report))
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


def _planned(scenario: Scenario, methods: Sequence[RunKind] | None, report: bool) -> list[str]:
    """The names of :data:`OUTPUT_FILES` a run of `scenario` may write, as known before it
    builds anything."""
    plan = RunPlan(scenario, scenario.runs if methods is None else tuple(methods), report)
    return [entry.name for entry in RUN_OUTPUTS if entry.when.planned(plan)]


def _check_foreign(out: Path, names: Sequence[str]) -> None:
    """Refuse, before anything is built, to replace files of `names` in `out` that cellopt did
    not write (a folder of one's own, a source tree: ``--out docs``), unless the folder's
    :data:`~cellopt.study.store.RUN_RECORD` says a run wrote it (then
    :func:`~cellopt.study.store.check_owner` has checked whose)."""
    if (out / RUN_RECORD).is_file():
        return
    foreign = foreign_files(out, RUN_OUTPUTS, names)
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


def _run(scenario: Scenario, out: Path, *, seed: int | None, methods: Sequence[RunKind] | None,
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
    cells = stack({label: _with_offsets(drop.cell_frame(sol, columns[label]), label, methods, deployment)
                    for label, sol in solutions.items()})
    n_users = drop.network.n_users
    users = stack({label: drop.user_frame(c) for label, c in columns.items()}) \
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

    with atomic_files() as staged:  # moved into place together, once all are written
        run = RunOutput(result, out, seed, report, columns, power_patterns(drop, solutions), staged)
        try:
            for entry in RUN_OUTPUTS:
                if entry.when.holds(run):
                    t = time.perf_counter()
                    result.files.append(entry.stage(staged, out, run))
                    _say(progress, f"wrote {entry.name}", t)
        finally:
            run.close()
    result.removed = remove_stale(out, RUN_OUTPUTS, {p.name for p in result.files})
    return result
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


def _with_offsets(cells: gpd.GeoDataFrame, label: str, methods: Sequence[RunKind],
                  deployment: Deployment | None) -> gpd.GeoDataFrame:
    """A method's cell table with ``offset_db``, the offset its rule applies [dB] (0 for
    max-RSRP, the tier's bias for range expansion and the best per-tier bias, the fitted
    offset for per-cell offsets; NaN for a method that is not an offset rule), when the run
    has deployable settings."""
    if deployment is None:
        return cells
    return cells.assign(offset_db=rule_offsets(label, methods, deployment, cells))


def _say(progress: bool, what: str, since: float) -> None:
    """One progress line on stderr: what was done and how long it took."""
    if progress:
        print(f"  {what} ({time.perf_counter() - since:.1f} s)", file=sys.stderr, flush=True)


def _solve(scenario: Scenario, drop: Drop, run: RunKind, progress: bool) -> Solution:
    """``run.solve``, showing the iterations on stderr with `progress`, then how it ended."""
    t = time.perf_counter()
    solution = run.solve(scenario, drop, progress=progress)
    if progress:
        print("\r", end="", file=sys.stderr)
    _say(progress, f"{run.label}: {run.outcome(solution)}", t)
    return solution
