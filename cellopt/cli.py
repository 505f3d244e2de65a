"""Command line: ``cellopt run`` (one drop), ``cellopt experiment`` (sweeps), ``cellopt plot``."""

from __future__ import annotations

import argparse
import errno
import os
import sys
import time
import tomllib
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cellopt._version import __version__
from cellopt.errors import CelloptError, ValidationError

# The heavy modules (numpy, geopandas, the solvers, matplotlib) are imported by each
# command when it runs, so that `cellopt --help` answers at once.


#: Names of cell files (what ``read_cells`` reads), given where a scenario is expected.
CELL_FILE_SUFFIXES = (".csv", ".csv.gz", ".csv.bz2", ".csv.xz", ".csv.zip", ".tsv", ".gpkg",
                      ".geojson", ".json", ".shp", ".zip", ".parquet", ".xlsx", ".xls")
#: The scenario `cellopt run CELLS.csv` tells the user to write: the cell file's sites with 3
#: sectors each where it gives no azimuth, and users over the cells' area.
CELL_SCENARIO = """[network]
builder = "file"
path = {path}
sectors = 3
[users]
n = 1000
"""


def _load_scenario(args: argparse.Namespace) -> Any:
    """The scenario the command names; a cell file is refused with the scenario that runs it."""
    from cellopt.study.scenario import load_scenario

    path = Path(args.scenario)
    if path.is_file() and path.name.lower().endswith(CELL_FILE_SUFFIXES):
        raise ValidationError(_cell_file_hint(path, args.command))
    return load_scenario(args.scenario)


def _cell_file_hint(path: Path, command: str) -> str:
    """How to run a cell file: a scenario with ``builder = "file"``, as a shell command that
    writes it beside the file, and the command that runs it."""
    import json
    import shlex

    stem = path.name.split(".")[0] or "cells"
    toml = next(t for t in (path.with_name(f"{stem}{end}.toml") for end in
                            ("", "_scenario", *(f"_scenario{i}" for i in range(2, 1000))))
                if not t.exists())  # never one that exists
    text = CELL_SCENARIO.format(path=json.dumps(path.name, ensure_ascii=False))
    printf = text.replace("\\", "\\\\").replace("%", "%%").replace("\n", "\\n")
    return (f"{path} is a cell file, not a scenario (TOML); a scenario says how to build a drop on "
            f"its cells: fix: write one beside it and run it: `printf {shlex.quote(printf)} > "
            f"{shlex.quote(str(toml))} && cellopt {command} {shlex.quote(str(toml))}` (the file "
            "builder: the file's cells, 3 sectors per site where it gives no azimuth_deg, 1000 "
            "users over the cells' area, the methods max_rsrp and dual; more keys: "
            "docs/scenarios.md)")


def _run(args: argparse.Namespace) -> int:
    from cellopt.study.run import run_scenario
    from cellopt.study.runviews import coverage_text
    from cellopt.study.store import default_folder

    scenario = _load_scenario(args)
    methods = scenario.runs if not args.method else [_method(scenario, m) for m in args.method]
    if args.scheduler is not None:
        methods = _with_scheduler(methods, args.scheduler)
    out = Path(args.out) if args.out else default_folder(scenario.name, scenario.path.stem)
    result = run_scenario(scenario, out, seed=args.seed, methods=methods,
                          report=not args.no_report, progress=args.progress, force=args.force)
    drop, seed = result.drop, result.drop.seed
    print(f"cellopt {__version__} - scenario {scenario.name!r} ({scenario.path}), seed {seed}")
    for reading in result.readings:
        print(reading)
    print(f"{drop.network}")
    if not result.readings:  # a reading says where its file's cells lie
        print(f"where: {result.place}")
    print(f"traffic: {result.traffic}")
    print(f"built in {result.build_s:.2f} s: {len(drop.links)} candidate links, {drop.problem}; "
          f"{int((~drop.solvable).sum())} user(s) without a usable link (rate 0)")
    if drop.network.study_area is not None:
        study = drop.in_study_area
        print(f"statistics over the {int(study.sum())} users of the study area "
              f"({drop.network.study_area.area / 1e6:.2f} km²); {int((~study).sum())} guard-band "
              "users are solved for but not counted")
    print("\nradio: max-RSRP cell, SINR and full-band peak rate of the serving link")
    print(result.radio_summary.to_string(float_format=lambda v: f"{v:.2f}"))
    print("\nassociation, one row per method:")
    summary = result.method_summary
    if result.deployment is not None:  # the rules' judgement follows in a table of its own
        summary = summary.drop(columns=result.deployment.summary.columns)
    print(summary.to_string(float_format=lambda v: f"{v:.4g}"))
    if result.deployment is not None:
        deployment = result.deployment
        attrs = deployment.offsets.attrs
        print("\ndeployable settings, judged on the training drops and on held-out drops (new "
              "users and shadowing; kept share: of the optimizer's gain over max-RSRP):")
        print(deployment.judgement_table().to_string(float_format=lambda v: f"{v:.4g}"))
        print(f"\n{deployment.summary_line()}")
        print(f"offsets fitted on {attrs['training_drops']} drops in {deployment.fit_s:.2f} s "
              f"({attrs['rounds']} rounds, {attrs['status']}); the optimizer "
              f"{deployment.optimizer!r} solved the drop in {deployment.optimizer_s:.2f} s")
    if result.coverage is not None:
        print(f"\ncoverage maps: {coverage_text(result.coverage)}")
    print(f"\nwrote {out}/: {', '.join(p.name for p in result.files)}")
    if result.removed:
        print(f"removed the earlier run's {', '.join(p.name for p in result.removed)} (not "
              "written by this run)")
    return 0


def _method(scenario: Any, name: str) -> Any:
    """The run ``--method NAME`` asks for: a solver method, or "power" (the [power] section)."""
    from cellopt.study.runkinds import run_named

    run = run_named(scenario, name)
    if run is None:
        raise ValidationError(f"--method {name}: the scenario {scenario.path} has no [power] "
                              "section; fix: add one (docs/scenarios.md, \"Power\") or run "
                              "hetnet_power")
    return run


def _with_scheduler(methods: Sequence[Any], address: str) -> list[Any]:
    """`methods` with ``scheduler=address`` for each that takes a Dask scheduler."""
    takes = [m for m in methods if m.distributed]
    if not takes:
        raise ValidationError(f"--scheduler {address}: none of the methods "
                              f"{[m.name for m in methods]} runs on a Dask cluster; fix: add "
                              "--method dual_dask, or leave out --scheduler")
    return [m.with_options(scheduler=address) if m in takes else m for m in methods]


def _parse_grid(items: Sequence[str] | None) -> dict[str, list[Any]]:
    """``section.key=v1,v2,...`` items (values read as TOML scalars) into a grid."""
    grid: dict[str, list[Any]] = {}
    fix = "fix: write section.key=v1,v2 (e.g. picos.per_sector=0,2,4)"
    for item in items or []:
        key, sep, values = item.partition("=")
        key = key.strip()
        section, dot, name = key.partition(".")
        if not sep or not dot or not section or not name or "." in name:
            raise ValidationError(f"--grid {item!r}; {fix}")
        if key in grid:
            raise ValidationError(f"--grid {key} is given twice; fix: list all its values in one "
                                  f"--grid {key}=v1,v2")
        parsed = []
        for value in values.split(","):
            try:
                parsed.append(tomllib.loads(f"v = {value.strip()}")["v"])
            except tomllib.TOMLDecodeError:
                raise ValidationError(
                    f"--grid {item!r}: the value {value.strip()!r} is not a TOML value; {fix}, with "
                    'no empty values, strings in quotes (e.g. network.builder="hex_grid")') from None
        grid[key] = parsed
    return grid


def _experiment(args: argparse.Namespace) -> int:
    from cellopt.study.lock import FolderLock
    from cellopt.study.store import SettingsMismatch, default_folder
    from cellopt.study.summary import sweep_table
    from cellopt.study.sweep import grid_scenarios, plot_sweep, resumed_drops, run_sweep

    scenario = _load_scenario(args)
    grid = _parse_grid(args.grid)
    grid_scenarios(scenario, grid, cli=True)  # a bad key or value, named as --grid gives it
    args.grid_used = grid
    out = Path(args.out) if args.out else default_folder(scenario.name, scenario.path.stem)
    with FolderLock(out):  # the drops, the index and the figures: one run's
        args.out_folder = out
        stored = resumed_drops(out) if args.resume else None
        if args.drops is not None:
            drops, source = args.drops, "--drops"
        elif stored is not None:
            drops, source = stored, f"as in the sweep being resumed in {out}"
        else:
            drops, source = scenario.drops, "the scenario's [seeds] drops"
        t0 = time.perf_counter()
        try:
            index = run_sweep(scenario, out, drops=drops, grid=grid, workers=args.workers,
                              resume=args.resume, scheduler=args.scheduler, force=args.force)
        except SettingsMismatch as err:
            raise _mismatch(err, args, out, drops, source) from None
        wall = time.perf_counter() - t0
        plot_sweep(out)  # before printing: every file is written even if stdout is closed early
    print(f"cellopt {__version__} - experiment {scenario.name!r}: {index['drop'].nunique()} drop(s)"
          f" x {index['grid_id'].nunique()} grid point(s) in {wall:.1f} s -> {out} "
          f"(drops: {drops}, {source})")
    print(sweep_table(index, list(grid)).to_string(float_format=lambda v: f"{v:.4g}"))
    return 0


def _resume_command(scenario: str, out: Path, grid: dict[str, Any], drops: int | None,
                    force: bool = False) -> str:
    """The ``cellopt experiment ... --resume`` command that continues a sweep, as typed."""
    import shlex

    from cellopt.study.store import grid_text

    words = ["cellopt", "experiment", scenario, "--out", str(out), "--resume"]
    for item in grid_text(grid):
        words += ["--grid", item]
    if drops is not None:
        words += ["--drops", str(drops)]
    if force:
        words.append("--force")
    return shlex.join(words)


def _mismatch(err: Any, args: argparse.Namespace, out: Path, drops: int, source: str
              ) -> CelloptError:
    """A refused resume (:class:`~cellopt.study.store.SettingsMismatch`), with the drops stored
    and asked for, and, where only the grid differs, the command that continues the stored sweep."""
    from cellopt.errors import StoreError

    stored = err.stored.get("drops")
    what = err.what + (f"; the folder holds a sweep of {stored} drop(s), this run asked for {drops} "
                       f"({source})" if isinstance(stored, int) else "")
    if set(err.differ) != {"grid"}:
        return StoreError(f"{what}; fix: give another out_dir (--out), or run the scenario and "
                          "settings it was written for")
    command = _resume_command(args.scenario, out, err.differ["grid"][0] or {},
                              stored if isinstance(stored, int) else None)
    return StoreError(f"{what}; fix: continue the stored sweep with `{command}`, or give another "
                      "out_dir (--out) for this grid")


def _plot(args: argparse.Namespace) -> int:
    from cellopt.study.sweep import plot_sweep

    written = plot_sweep(Path(args.results))
    print("wrote " + ", ".join(str(p) for p in written))
    return 0


def _methods(args: argparse.Namespace) -> int:
    from cellopt.solvers import method_table
    from cellopt.solvers.registry import DEFAULT_METHODS

    print("default (solve(problem) without a method), by the problem's features:")
    for feature, name, why in DEFAULT_METHODS:
        print(f"    {feature}: {name} ({why})")
    print()
    table = method_table()
    for name, row in table.iterrows():
        caps = [c.replace("_", " ") for c in ("single_association", "patterns", "share_blocks",
                                              "distributed") if row[c]]
        print(f"{name} ({row['kind']}): {row['summary']}")
        print(f"    supports: {', '.join(caps) or '-'}; warm start: {row['warm_start'] or '-'}")
        print(f"    options: {row['options'] or '-'}")
    return 0


def _scenarios(args: argparse.Namespace) -> int:
    from cellopt.study.scenario import SHIPPED_DIR, load_scenario, shipped_scenarios

    for name in shipped_scenarios():
        print(f"{name:16s} {load_scenario(name).description.strip().splitlines()[0]}")
    print(f"\n(files in {SHIPPED_DIR}; run one with `cellopt run NAME`)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cellopt", description=__doc__)
    parser.add_argument("--version", action="version", version=f"cellopt {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="solve one drop of a scenario with its methods; print a summary "
                         "per method, write tables, a GeoPackage, figures and report.html")
    run.add_argument("scenario", help="a shipped scenario name (see `cellopt scenarios`), e.g. "
                     "hetnet, or a scenario file (TOML); a cell file (.csv, .gpkg, .geojson, ...) "
                     "is not run as it is: the error gives the scenario to write for it, with "
                     "builder = \"file\"")
    run.add_argument("--method", action="append", metavar="M",
                     help="method to run instead of the scenario's (repeatable), e.g. alm, dual, "
                     "max_rsrp; power: the scenario's [power] section")
    run.add_argument("--out", default=None, help="output folder (results/<scenario name>)")
    run.add_argument("--force", action="store_true",
                     help="write into --out even if it holds another scenario's results (its "
                     "run.json or meta.json names another scenario file); their files of the "
                     "same names are replaced")
    run.add_argument("--seed", type=int, default=None,
                     help="build seed of the drop (default: the scenario's first drop)")
    run.add_argument("--no-report", action="store_true", help="do not write report.html")
    run.add_argument("--progress", action=argparse.BooleanOptionalAction, default=None,
                     help="show each stage's time, the link table's progress and each method's "
                     "iterations on stderr (default: when stderr is a terminal)")
    run.add_argument("--scheduler", metavar="ADDRESS", default=None,
                     help="Dask scheduler (e.g. tcp://HOST:8786) for the methods that run on a "
                     "cluster, e.g. --method dual_dask")
    run.set_defaults(func=_run)

    exp = sub.add_parser("experiment", help="drops x a parameter grid, in parallel, resumable; "
                         "writes two files per drop, an index and figures, and prints the mean per "
                         "method with gains over the first")
    exp.add_argument("scenario", help="a shipped scenario name (see `cellopt scenarios`) or a TOML "
                     "file (for a cell file, the error says the scenario to write)")
    exp.add_argument("--drops", type=int, default=None,
                     help="number of drops at every grid point (default: the scenario's [seeds] "
                     "drops, whatever --grid says; with --resume, the number of the sweep in --out, "
                     "so that a resume finishes that sweep; give it to add drops)")
    exp.add_argument("--grid", action="append", metavar="SECTION.KEY=V1,V2",
                     help="a scenario key to sweep, values read as TOML (repeatable; the grid is the "
                     "product; the drop count does not depend on it)")
    where = exp.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=1, help="worker processes (1)")
    where.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="run on this Dask distributed scheduler (pip install 'cellopt[dask]')")
    exp.add_argument("--resume", action="store_true",
                     help="skip drops already in --out (checked; damaged ones are computed again); "
                     "the scenario and --grid must be those of the stored sweep")
    exp.add_argument("--force", action="store_true",
                     help="with --resume: keep the drops of a folder whose meta.json or scenario.toml "
                     "is missing, as drops of this scenario")
    exp.add_argument("--out", default=None, help="results folder (results/<scenario name>)")
    exp.set_defaults(func=_experiment)

    plot = sub.add_parser("plot", help="regenerate the figures of a results folder without solving")
    plot.add_argument("results", help="a folder written by `cellopt experiment` (a `cellopt run` "
                      "folder holds its figures already)")
    plot.set_defaults(func=_plot)

    shipped = sub.add_parser("scenarios", help="list the shipped scenarios")
    shipped.set_defaults(func=_scenarios)
    methods = sub.add_parser("methods", help="list the solver methods, what each supports and its "
                             "options")
    methods.set_defaults(func=_methods)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status.

    0 on success; 2 for input cellopt refuses (a :class:`~cellopt.errors.CelloptError`),
    including a results folder that cannot be resumed and a Dask scheduler that cannot be
    reached; 1 for an ``OSError`` (permissions, a full disk, a path that is not a folder,
    an error of GDAL or another writer library, ...) and for an output folder another run
    is writing to (:class:`~cellopt.study.lock.FolderInUseError`); 130 when interrupted
    (Ctrl+C), with the finished drops of a sweep kept. Each error is one
    ``cellopt: error: ...`` line naming the bad value or path and the fix; anything else
    is a bug and keeps its traceback.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command == "experiment" and args.force and not args.resume:
        parser.error("--force only applies with --resume")
    with warnings.catch_warnings():
        # The command line shows each warning once, as one line, whatever filters its caller set.
        warnings.simplefilter("default")
        warnings.showwarning = _show_warning
        _SHOWN.clear()  # once per command
        try:
            return args.func(args)
        except KeyboardInterrupt:
            print(f"cellopt: interrupted{_kept(args)}", file=sys.stderr)
            return 130
        except BrokenPipeError:  # stdout closed early (piped into head): the files are written
            _silence_stdout()
            return 1
        except CelloptError as err:  # refused input, or a busy folder: the message says the fix
            print(f"cellopt: error: {err}", file=sys.stderr)
            return 1 if _folder_in_use(err) else 2
        except OSError as err:
            full = err.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)
            print(f"cellopt: error: {_os_error(err)}{_kept(args) if full else ''}", file=sys.stderr)
            return 1


def _folder_in_use(err: BaseException) -> bool:
    """Whether `err` is a :class:`~cellopt.study.lock.FolderInUseError` (its module is loaded
    if it is one: it is not imported here, so that `cellopt --help` stays quick)."""
    lock = sys.modules.get("cellopt.study.lock")
    return lock is not None and isinstance(err, lock.FolderInUseError)


def _silence_stdout() -> None:
    """Send what is left for stdout to /dev/null, so that exiting does not fail on the closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout without a file descriptor (tests)
        pass


def _kept(args: argparse.Namespace) -> str:
    """What an interrupted or failed sweep keeps, and the command that continues it: the
    scenario, folder, grid and (if given) drop count of this run."""
    out = getattr(args, "out_folder", None)  # set once the sweep's folder is known
    if args.command != "experiment" or out is None:
        return ""
    command = _resume_command(args.scenario, out, getattr(args, "grid_used", {}), args.drops,
                              args.force)
    return f"; finished drops are kept in {out}: continue with `{command}`"


#: The fix for an OSError, by errno.
_OS_FIXES = {
    errno.ENOENT: "check the path",
    errno.EACCES: "make it writable (or readable) for you, or choose another folder with --out",
    errno.EPERM: "make it writable (or readable) for you, or choose another folder with --out",
    errno.EROFS: "the file system is read-only: choose another folder with --out",
    errno.ENOSPC: "the disk is full: free space, or choose another folder with --out",
    errno.EDQUOT: "the disk quota is used up: free space, or choose another folder with --out",
    errno.EFBIG: "the file is larger than this process may write (a full disk or a file-size limit, "
                 "ulimit -f): free space or raise the limit, or choose another folder with --out",
    errno.EISDIR: "give a file there, not a folder",
    errno.ENOTDIR: "a part of this path is a file, not a folder: choose another path",
    errno.EEXIST: "it exists and is not a folder: choose another path",
    errno.EIO: "check the disk and the folder, then run again (the earlier file is kept)",
}


def _os_error(err: OSError) -> str:
    """One line for an OSError: what failed, on which path, and the fix."""
    where = f": {err.filename}" if err.filename else ""
    if err.filename2:
        where += f" -> {err.filename2}"
    fix = _OS_FIXES.get(err.errno, "check the path and the disk")
    return f"{err.strerror or err}{where}; fix: {fix}"


#: The cellopt warnings this command has shown: a warning raised again (a sweep's task
#: loads its scenario again, and code that sets warning filters in between makes Python
#: forget what it showed) is not shown twice.
_SHOWN: set[str] = set()


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: Any = None, line: str | None = None) -> None:
    """Show cellopt's own warnings as one ``cellopt: warning:`` line, once; others as usual."""
    if Path(filename).resolve().is_relative_to(Path(__file__).resolve().parent):
        if str(message) in _SHOWN:
            return
        _SHOWN.add(str(message))
        print(f"cellopt: warning: {message}", file=sys.stderr if file is None else file)
    else:
        text = warnings.formatwarning(message, category, filename, lineno, line)
        (sys.stderr if file is None else file).write(text)


if __name__ == "__main__":
    sys.exit(main())
