"""Check that a change leaves every result the same: snapshot one commit, then compare.

``snapshot OUT`` runs ``cellopt run NAME`` for every shipped scenario (or those named with
``--scenarios``) into ``OUT/runs/NAME`` and the experiments with small arguments into
``OUT/experiments/NAME`` (their CSVs in ``OUT/experiments/NAME/figures``). ``compare A B``
then checks every table of A against B value for value: the CSVs cell by cell (NaN
equal to NaN; the wall-clock columns ``time_s`` and ``wall_s`` left out) and every layer of
each GeoPackage frame by frame. The experiments' CSVs must also be byte-identical, except
those with a wall-clock column (``wall_s``), which are compared without it.

To compare two commits, snapshot each from its own checkout (``git worktree add``) with
the same interpreter and ``PYTHONPATH`` pointing at that checkout::

    PYTHONPATH=/tmp/base python benchmarks/compare_runs.py snapshot /tmp/snap_before
    python benchmarks/compare_runs.py snapshot /tmp/snap_after
    python benchmarks/compare_runs.py compare /tmp/snap_before /tmp/snap_after

``experiments/power_energy.py`` is left out: its solves stop on a wall-clock limit, so
its tables are not a function of the commit alone. ``--skip country`` leaves out the
10-million-user scenario (8 minutes, 13 GB).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

#: Experiments and the small arguments they are snapshot with (CSV outputs only matter).
EXPERIMENTS = {
    "hetnet_gain": ["--drops", "2", "--workers", "1"],
    "ye_random_gain": ["--drops", "2", "--workers", "1"],
    "femto_backhaul": ["--drops", "1", "--backhaul", "1", "10", "--workers", "1"],
    "femto_capacity": ["--replicates", "1", "--drops", "1", "--adoptions", "0", "0.1",
                       "--prices", "0.01", "1", "--price-drops", "1", "--workers", "1"],
    "femto_demand": ["--replicates", "1", "--drops", "1", "--adoptions", "0.05", "0.1",
                     "--colocated", "0.6", "--workers", "1"],
}
ROOT = Path(__file__).resolve().parents[1]
#: Every run loads scipy's BLAS first: before the solvers governed it (up to the commit
#: that made one_blas_thread see every BLAS library), whether they did depended on import
#: order, and with it the last digits of alm's results. Loaded first, it is governed on
#: both sides of a comparison.
PRELOAD = "import scipy.linalg, sys, runpy; "
CLI = PRELOAD + "from cellopt.cli import main; sys.exit(main(sys.argv[1:]))"
#: An experiment run as ``python experiments/NAME.py`` would be: its folder first on the
#: path (the scripts share ``experiments/_outputs.py``), which runpy does not do.
SCRIPT = PRELOAD + ("import os; sys.argv = sys.argv[1:]; "
                    "sys.path.insert(0, os.path.dirname(os.path.abspath(sys.argv[0]))); "
                    "runpy.run_path(sys.argv[0], run_name='__main__')")


def shipped() -> list[str]:
    out = subprocess.run([sys.executable, "-c", CLI, "scenarios"], capture_output=True, text=True,
                         check=True).stdout
    return [line.split()[0] for line in out.splitlines() if line and not line.startswith(("(", " "))]


def snapshot(out: Path, scenarios: list[str] | None, skip: list[str], experiments: bool) -> None:
    names = [s for s in (scenarios or shipped()) if s not in skip]
    for name in names:
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", CLI, "run", name, "--out", str(out / "runs" / name),
                        "--no-report", "--no-progress"], check=True, stdout=subprocess.DEVNULL)
        print(f"run {name}: {time.perf_counter() - t0:.0f} s", flush=True)
    if not experiments:
        return
    for name, args in EXPERIMENTS.items():
        if name in skip:
            continue
        t0 = time.perf_counter()
        folder = out / "experiments" / name
        subprocess.run([sys.executable, "-c", SCRIPT, str(ROOT / "experiments" / f"{name}.py"), *args,
                        "--out", str(folder / "results"), "--figures", str(folder / "figures")],
                       check=True, stdout=subprocess.DEVNULL)
        print(f"experiment {name}: {time.perf_counter() - t0:.0f} s", flush=True)


#: Wall-clock columns, left out of every comparison.
TIME_COLUMNS = ("time_s", "wall_s")


def _frames_equal(a: pd.DataFrame, b: pd.DataFrame, where: str) -> list[str]:
    a, b = (f.drop(columns=[c for c in f.columns if c in TIME_COLUMNS]) for f in (a, b))
    if list(a.columns) != list(b.columns):
        return [f"{where}: columns differ: {list(a.columns)} vs {list(b.columns)}"]
    if len(a) != len(b):
        return [f"{where}: {len(a)} rows vs {len(b)}"]
    problems = []
    for col in a.columns:
        x, y = a[col], b[col]
        if col == "geometry":
            same = np.asarray(x.geom_equals_exact(y, tolerance=0) | (x.isna() & y.isna()))
        elif x.dtype.kind in "fc" and y.dtype.kind in "fc":
            xv, yv = x.to_numpy(float), y.to_numpy(float)
            same = (xv == yv) | (np.isnan(xv) & np.isnan(yv))
        else:
            same = np.asarray((x.astype(object) == y.astype(object)) | (x.isna() & y.isna()))
        if not same.all():
            first = int(np.flatnonzero(~same)[0])
            problems.append(f"{where}: column {col!r} differs in {int((~same).sum())} rows "
                            f"(first: row {first}, {x.iloc[first]!r} vs {y.iloc[first]!r})")
    return problems


def compare(a: Path, b: Path) -> int:
    import pyogrio

    problems: list[str] = []
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.suffix in (".csv", ".gpkg"))
    for rel in files:
        other = b / rel
        if not other.exists():
            problems.append(f"{rel}: missing in {b}")
            continue
        if rel.suffix == ".csv":
            left, right = pd.read_csv(a / rel), pd.read_csv(other)
            timed = any(c in TIME_COLUMNS for c in left.columns)
            if "figures" in rel.parts and not timed and (a / rel).read_bytes() != other.read_bytes():
                problems.append(f"{rel}: not byte-identical")
            problems += _frames_equal(left, right, str(rel))
        else:
            layers = [name for name, _ in pyogrio.list_layers(a / rel)]
            others = [name for name, _ in pyogrio.list_layers(other)]
            if layers != others:
                problems.append(f"{rel}: layers {layers} vs {others}")
                continue
            for layer in layers:
                problems += _frames_equal(pyogrio.read_dataframe(a / rel, layer=layer),
                                          pyogrio.read_dataframe(other, layer=layer), f"{rel}:{layer}")
    new = sorted(p.relative_to(b) for p in b.rglob("*") if p.suffix in (".csv", ".gpkg")
                 and not (a / p.relative_to(b)).exists())
    problems += [f"{rel}: only in {b}" for rel in new]
    for p in problems:
        print(p)
    print(f"{len(files)} tables compared, {len(problems)} differences")
    return 1 if problems else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True)
    snap = sub.add_parser("snapshot")
    snap.add_argument("out", type=Path)
    snap.add_argument("--scenarios", nargs="+")
    snap.add_argument("--skip", nargs="+", default=[])
    snap.add_argument("--no-experiments", action="store_true")
    cmp_ = sub.add_parser("compare")
    cmp_.add_argument("a", type=Path)
    cmp_.add_argument("b", type=Path)
    args = parser.parse_args()
    if args.command == "snapshot":
        snapshot(args.out, args.scenarios, args.skip, not args.no_experiments)
        return 0
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
