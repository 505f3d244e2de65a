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

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from cellopt import __version__
from cellopt.errors import CelloptError, StoreError, ValidationError
from cellopt.linktable import LinkTable
from cellopt.network import TIERS, Network
from cellopt.plotting import plot_gain_curve, plot_network, plot_rate_cdf
from cellopt.runner import _atomic_write, _read_meta, collect, load_rates, rate_summary, run_sweep
from cellopt.scenario import MethodSpec, load_scenario
from cellopt.solution import Solution
from cellopt.solvers import METHODS, solve


def link_summary(network: Network, links: LinkTable) -> pd.DataFrame:
    """Per-tier summary of the max-RSRP association: cells, users, SINR and peak rate.

    Returns
    -------
    pandas.DataFrame
        Index: tiers present and ``all``; columns ``cells``, ``users``, ``user_share``,
        ``sinr_p5_db``, ``sinr_p50_db``, ``rate_p5_mbps``, ``rate_p50_mbps``, where SINR
        and rate are those of each user's max-RSRP link on resource 0.
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
    for tier in [*(t for t in TIERS if (cell_tier == t).any()), "all"]:
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


def _percentile(values: np.ndarray, q: float) -> float:
    return float(np.nanpercentile(values, q)) if len(values) else float("nan")


def method_summary(network: Network, solutions: dict[str, Solution],
                   usable: np.ndarray) -> pd.DataFrame:
    """One row per method: utility, bound, gap, rate percentiles, tier shares, payment,
    offloaded share and cap violations.

    Rates and tier shares are over the users of the study area; users without any
    usable link (``usable`` False, outage) count with rate 0 in the percentiles.
    """
    tiers = network.cells["tier"].to_numpy()
    study = network.in_study_area()
    rows = {}
    for label, sol in solutions.items():
        rate = _all_users(sol.user_rate_mbps, usable)[study]
        serving = _all_users(sol.serving_cell, usable, fill=-1)[study]
        row = {
            "utility": sol.objective,
            "upper_bound": sol.upper_bound,
            "gap": sol.gap,
            **rate_summary(rate),
        }
        for tier in TIERS:
            if (tiers == tier).any():
                row[f"share_{tier}"] = float((tiers[serving[serving >= 0]] == tier).sum()
                                             / max(len(rate), 1))
        if sol.offload_share is not None and (network.cells["owner"] == "third_party").any():
            row["payment"] = sol.cost
            row["offload_share"] = sol.offload_share
        row["backhaul_violations"] = len(sol.exceeded_backhaul)
        row["time_s"] = sol.wall_s
        rows[label] = row
    return pd.DataFrame.from_dict(rows, orient="index")


def _all_users(values: np.ndarray, usable: np.ndarray, fill: float = 0.0) -> np.ndarray:
    """Per-user values of the usable users spread over all users, `fill` for the others."""
    out = np.full(len(usable), fill, dtype=np.asarray(values).dtype)
    out[usable] = values
    return out


def _run(args: argparse.Namespace) -> int:
    scenario = load_scenario(_scenario_path(args.scenario))
    seed = scenario.seeds[0] if args.seed is None else args.seed
    methods = (scenario.methods if not args.method
               else tuple(MethodSpec(name=m, label=m) for m in args.method))
    out = Path(args.out)
    _output_folder(out)  # before solving: a bad --out fails at once
    t0 = time.perf_counter()
    net, links, problem = scenario.build(seed)
    t_build = time.perf_counter() - t0
    usable = links.users_with_rate()
    solutions = {m.label: solve(problem, method=m.name, **m.options) for m in methods}
    summary = method_summary(net, solutions, usable)
    radio_summary = link_summary(net, links)

    _atomic_write(out / "radio_summary.csv", lambda f: radio_summary.to_csv(f, index_label="tier"))
    _atomic_write(out / "method_summary.csv", lambda f: summary.to_csv(f, index_label="method"))
    served_ids = net.users["user_id"].to_numpy()[usable]
    rates = pd.DataFrame({label: sol.user_rate_mbps for label, sol in solutions.items()})
    rates.insert(0, "user_id", served_ids)
    _atomic_write(out / "user_rates.csv", lambda f: rates.to_csv(f, index=False))
    last = solutions[methods[-1].label]
    serving = _all_users(last.serving_cell, usable, fill=-1)
    ax = plot_network(net, serving_cell=serving)
    ax.set_title(f"{scenario.name}: {net.n_cells} cells, {net.n_users} users ({methods[-1].label})")
    _save_figure(ax.figure, out / "network_map.png", dpi=120)
    n_out = int((~usable).sum())
    study = net.in_study_area()
    ax = plot_rate_cdf({label: _all_users(sol.user_rate_mbps, usable)[study]
                        for label, sol in solutions.items()})
    ax.set_title(f"{scenario.name}: user rates (seed {seed})")
    _save_figure(ax.figure, out / "rate_cdf.png", dpi=120)

    print(f"cellopt {__version__} - scenario {scenario.name!r} ({scenario.path}), seed {seed}")
    print(f"{net}")
    print(f"built in {t_build:.2f} s: {len(links)} candidate links, {problem}; "
          f"{n_out} user(s) without a usable link (rate 0)")
    if net.study_area is not None:
        print(f"statistics over the {int(study.sum())} users of the study area "
              f"({net.study_area.area / 1e6:.2f} km²); {int((~study).sum())} guard-band users "
              "are solved for but not counted")
    print("\nradio: max-RSRP cell, SINR and full-band peak rate of the serving link")
    print(radio_summary.to_string(float_format=lambda v: f"{v:.2f}"))
    print("\nassociation, one row per method:")
    print(summary.to_string(float_format=lambda v: f"{v:.4g}"))
    print(f"\nwrote {out}/: method_summary.csv, radio_summary.csv, user_rates.csv, "
          "network_map.png, rate_cdf.png")
    return 0


def _resolve_scenario(name: str) -> Path:
    """A scenario file path, or the name of a shipped one (``topologies/<name>.toml``)."""
    path = Path(name)
    if path.suffix != ".toml":
        shipped = Path("topologies") / f"{name}.toml"
        if shipped.exists():
            return shipped
    return path


def _scenario_path(name: str) -> Path:
    """The scenario file `name` names, checked to be a readable UTF-8 text file."""
    path = _resolve_scenario(name)
    shipped = sorted(p.stem for p in Path("topologies").glob("*.toml"))
    example = f"a shipped name ({', '.join(shipped)}) or " if shipped else ""
    if not path.exists():
        raise ValidationError(f"the scenario file {path} does not exist; fix: give {example}"
                              "a TOML file, e.g. topologies/hetnet.toml")
    if path.is_dir():
        raise ValidationError(f"the scenario {path} is a folder; fix: give a scenario file (TOML), "
                              "e.g. topologies/hetnet.toml")
    try:
        path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValidationError(f"{path}: not a text (UTF-8) file, so not a scenario ({err.reason} at "
                              f"byte {err.start}); fix: give a scenario file (TOML)") from None
    return path


def _output_folder(out: Path) -> None:
    """Create `out` if needed and make sure files can be written into it."""
    if out.exists() and not out.is_dir():
        raise ValidationError(f"--out {out} is an existing file; fix: give a folder (it is created "
                              "if missing)")
    out.mkdir(parents=True, exist_ok=True)
    if not os.access(out, os.W_OK | os.X_OK):
        raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(out))


def _save_figure(fig: Any, path: Path, dpi: int) -> None:
    """Save `fig` as PNG atomically (a full disk leaves no half-written image) and close it."""
    try:
        _atomic_write(path, lambda f: fig.savefig(f, format="png", dpi=dpi, bbox_inches="tight"), "wb")
    finally:
        plt.close(fig)


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


def sweep_table(index: pd.DataFrame, grid_keys: Sequence[str]) -> pd.DataFrame:
    """Mean over drops per grid point and method, with gains over the first method.

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


def _experiment(args: argparse.Namespace) -> int:
    scenario = load_scenario(_scenario_path(args.scenario))
    grid = _parse_grid(args.grid)
    out = Path(args.out or Path("results") / scenario.name)
    args.out_folder = out
    t0 = time.perf_counter()
    index = run_sweep(scenario, out, drops=args.drops, grid=grid, workers=args.workers,
                      resume=args.resume, scheduler=args.scheduler, force=args.force)
    wall = time.perf_counter() - t0
    _plot_results(out)  # before printing: every file is written even if stdout is closed early
    print(f"cellopt {__version__} - experiment {scenario.name!r}: {index['drop'].nunique()} drop(s)"
          f" x {index['grid_id'].nunique()} grid point(s) in {wall:.1f} s -> {out}")
    print(sweep_table(index, list(grid)).to_string(float_format=lambda v: f"{v:.4g}"))
    return 0


def _plot_results(out: Path) -> list[Path]:
    """Rate CDFs per grid point (all drops pooled) and, for a one-key grid, gain curves."""
    if not out.is_dir():
        raise StoreError(f"{out} is not a folder; fix: give a folder written by `cellopt experiment`")
    meta = _read_meta(out)  # before collect: a folder that is not a sweep gets no index.csv
    index = collect(out)
    if index.empty:
        raise StoreError(f"{out} holds no finished drop yet; fix: run `cellopt experiment SCENARIO "
                         f"--out {out}` (with --resume to continue it) first")
    written = []
    for gid in index["grid_id"].unique():
        drops = index.loc[index["grid_id"] == gid, "drop"].unique()
        rates = pd.concat([load_rates(out, gid, int(k)) for k in drops], ignore_index=True)
        ax = plot_rate_cdf({m: rates[m].to_numpy() for m in rates.columns if m != "served"})
        ax.set_title(f"{gid}: {meta.get('grid_points', {}).get(gid) or 'scenario as given'}, "
                     f"{len(drops)} drop(s)")
        written.append(out / f"rate_cdf_{gid}.png")
        _save_figure(ax.figure, written[-1], dpi=110)
    keys = list(meta.get("grid", {}))
    numeric = len(keys) == 1 and pd.api.types.is_numeric_dtype(index[keys[0]]) \
        and not pd.api.types.is_bool_dtype(index[keys[0]])
    # A gain curve needs a numeric x axis and a method to compare with the first.
    if numeric and index["grid_id"].nunique() > 1 and index["method"].nunique() > 1:
        key, base = keys[0], index["method"].iloc[0]
        for col, label, name in (("rate_p5_mbps", "5th-percentile", "p5"),
                                 ("rate_p50_mbps", "median", "p50")):
            wide = index.pivot_table(index=["drop", key], columns="method", values=col)
            gains = {m: (wide[m] / wide[base]).unstack(key) for m in wide.columns if m != base}
            x = next(iter(gains.values())).columns.to_numpy(float)
            ax = plot_gain_curve(x, {m: g.to_numpy() for m, g in gains.items()}, xlabel=key,
                                 ylabel=f"{label} rate gain over {base}")
            written.append(out / f"gain_{name}.png")
            _save_figure(ax.figure, written[-1], dpi=110)
    return written


def _plot(args: argparse.Namespace) -> int:
    written = _plot_results(Path(args.results))
    print("wrote " + ", ".join(str(p) for p in written))
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cellopt", description=__doc__)
    parser.add_argument("--version", action="version", version=f"cellopt {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="solve one drop of a scenario with its methods; print a summary "
                         "per method, write tables, a network map and a rate CDF")
    run.add_argument("scenario", help="scenario file (TOML), e.g. topologies/hetnet.toml")
    run.add_argument("--method", action="append", metavar="M",
                     help=f"method to run instead of the scenario's (repeatable): {sorted(METHODS)}")
    run.add_argument("--out", default="results/run", help="output folder (results/run)")
    run.add_argument("--seed", type=int, default=None,
                     help="build seed of the drop (default: the scenario's first drop)")
    run.set_defaults(func=_run)

    exp = sub.add_parser("experiment", help="drops x a parameter grid, in parallel, resumable; "
                         "writes one file per drop, an index, a summary and figures")
    exp.add_argument("scenario", help="a shipped scenario name (topologies/NAME.toml) or a TOML file")
    exp.add_argument("--drops", type=int, default=None, help="number of drops (scenario's seeds.drops)")
    exp.add_argument("--grid", action="append", metavar="SECTION.KEY=V1,V2",
                     help="a parameter to sweep (repeatable; the grid is the product)")
    where = exp.add_mutually_exclusive_group()
    where.add_argument("--workers", type=int, default=1, help="worker processes (1)")
    where.add_argument("--scheduler", default=None, metavar="ADDRESS",
                       help="run on this Dask distributed scheduler (pip install 'cellopt[dask]')")
    exp.add_argument("--resume", action="store_true",
                     help="skip drops already in --out (checked; damaged ones are computed again)")
    exp.add_argument("--force", action="store_true",
                     help="with --resume: keep the drops of a folder whose meta.json or scenario.toml "
                     "is missing, as drops of this scenario")
    exp.add_argument("--out", default=None, help="results folder (results/<scenario name>)")
    exp.set_defaults(func=_experiment)

    plot = sub.add_parser("plot", help="regenerate the figures of a results folder without solving")
    plot.add_argument("results", help="a folder written by `cellopt experiment`")
    plot.set_defaults(func=_plot)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status.

    0 on success; 2 for input cellopt refuses (a :class:`~cellopt.errors.CelloptError`),
    including a results folder that cannot be resumed and a Dask scheduler that cannot be
    reached; 1
    for an ``OSError`` (permissions, a full disk, a path that is not a folder, ...); 130
    when interrupted (Ctrl+C), with the finished drops of a sweep kept. Each error is one
    ``cellopt: error: ...`` line naming the bad value or path and the fix; anything else
    is a bug and keeps its traceback.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    if getattr(args, "force", False) and not args.resume:
        parser.error("--force only applies with --resume")
    with warnings.catch_warnings():
        warnings.showwarning = _show_warning
        try:
            return args.func(args)
        except KeyboardInterrupt:
            print(f"cellopt: interrupted{_kept(args)}", file=sys.stderr)
            return 130
        except BrokenPipeError:  # stdout closed early (piped into head): the files are written
            _silence_stdout()
            return 1
        except CelloptError as err:  # refused input: the message says the fix
            print(f"cellopt: error: {err}", file=sys.stderr)
            return 2
        except OSError as err:
            full = err.errno in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)
            print(f"cellopt: error: {_os_error(err)}{_kept(args) if full else ''}", file=sys.stderr)
            return 1


def _silence_stdout() -> None:
    """Send what is left for stdout to /dev/null, so that exiting does not fail on the closed pipe."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):  # stdout without a file descriptor (tests)
        pass


def _kept(args: argparse.Namespace) -> str:
    """What an interrupted or failed sweep keeps, and how to continue it."""
    out = getattr(args, "out_folder", None)  # set once the sweep's folder is known
    if args.command != "experiment" or out is None:
        return ""
    return (f"; finished drops are kept in {out}: continue with `cellopt experiment {args.scenario} "
            f"--out {out} --resume`")


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
}


def _os_error(err: OSError) -> str:
    """One line for an OSError: what failed, on which path, and the fix."""
    where = f": {err.filename}" if err.filename else ""
    if err.filename2:
        where += f" -> {err.filename2}"
    fix = _OS_FIXES.get(err.errno, "check the path and the disk")
    return f"{err.strerror or err}{where}; fix: {fix}"


def _show_warning(message: Warning | str, category: type[Warning], filename: str, lineno: int,
                  file: Any = None, line: str | None = None) -> None:
    """Show cellopt's own warnings as one ``cellopt: warning:`` line, others as usual."""
    if Path(filename).resolve().is_relative_to(Path(__file__).resolve().parent):
        print(f"cellopt: warning: {message}", file=sys.stderr if file is None else file)
    else:
        text = warnings.formatwarning(message, category, filename, lineno, line)
        (sys.stderr if file is None else file).write(text)


if __name__ == "__main__":
    sys.exit(main())
