"""Reading a large OpenCelliD export with read_cells: in one go against chunked (memory, time).

Run: ``python benchmarks/bench_read_cells.py [--rows N] [--chunk-rows N]``.

Writes a synthetic OpenCelliD export (header, 14 columns) of ``--rows`` rows (default
5,000,000, about 410 MB) to a temporary folder: radios GSM / UMTS / LTE / NR / CDMA
(30 / 30 / 30 / 5 / 5 %), MCC 262 / 232 / 228 / 204 (70 / 10 / 10 / 10 %), six MNCs,
positions uniform over a country-sized box (lon 5.9–15.0°, lat 47.3–55.0°, about
650 × 860 km). Then reads it with ``radio="LTE", mcc=262, mnc=1`` (about 3.5 % of the
rows) (a) in one go and (b) with ``chunk_rows``, each in a fresh Python process so that
each peak RSS (``ru_maxrss``) is its own, and prints rows, rows kept, cells, wall time and
peak RSS (and the RSS after importing cellopt, the floor of any read), and the ratios.
The file is written by a process of its own too: Linux counts in a child's ``ru_maxrss``
the RSS of its parent when it was started, so this script's own process stays small.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

FILTERS = {"radio": "LTE", "mcc": 262, "mnc": 1}


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def write_export(path: Path, n_rows: int, seed: int = 0) -> None:
    """A synthetic OpenCelliD export of `n_rows` rows (see the module docstring)."""
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(seed)
    radios = np.array(["GSM", "UMTS", "LTE", "NR", "CDMA"])
    step = 1_000_000  # written in parts, to keep this process small too
    for start in range(0, n_rows, step):
        n = min(step, n_rows - start)
        pd.DataFrame({
            "radio": radios[rng.choice(5, n, p=[0.3, 0.3, 0.3, 0.05, 0.05])],
            "mcc": rng.choice([262, 232, 228, 204], n, p=[0.7, 0.1, 0.1, 0.1]),
            "net": rng.choice([1, 2, 3, 7, 8, 20], n),
            "area": rng.integers(1, 60_000, n),
            "cell": rng.integers(0, 2**28, n),
            "unit": 0,
            "lon": np.round(rng.uniform(5.9, 15.0, n), 6),
            "lat": np.round(rng.uniform(47.3, 55.0, n), 6),
            "range": rng.integers(100, 20_000, n),
            "samples": rng.integers(1, 500, n),
            "changeable": 1,
            "created": rng.integers(1_300_000_000, 1_500_000_000, n),
            "updated": rng.integers(1_500_000_000, 1_600_000_000, n),
            "averageSignal": 0,
        }).to_csv(path, index=False, header=start == 0, mode="w" if start == 0 else "a")


def writer(path: str, n_rows: int) -> None:
    """Write the file and print the number of rows that pass the filters, as JSON."""
    import pandas as pd

    write_export(Path(path), n_rows)
    f = pd.read_csv(path, usecols=["radio", "mcc", "net"])
    kept = (f["radio"] == FILTERS["radio"]) & (f["mcc"] == FILTERS["mcc"]) & (f["net"] == FILTERS["mnc"])
    print(json.dumps({"kept": int(kept.sum())}))


def reader(path: str, chunk_rows: int) -> None:
    """Read the file once (chunk_rows 0: in one go) and print what it took, as JSON."""
    from cellopt.topology import read_cells

    rss_import = peak_rss_mb()
    t0 = time.perf_counter()
    net = read_cells(path, **FILTERS, chunk_rows=chunk_rows or None, progress=False)
    wall = time.perf_counter() - t0
    print(json.dumps({"cells": net.n_cells, "sites": int(net.cells["site_id"].nunique()),
                      "wall_s": wall, "rss_import_mb": rss_import, "rss_peak_mb": peak_rss_mb()}))


def run_child(*args: str) -> dict:
    """Run this script with `args` in a fresh process; what it printed last, as JSON."""
    out = subprocess.run([sys.executable, __file__, *args], capture_output=True, text=True,
                         check=False)
    if out.returncode:
        sys.exit(f"{' '.join(args)} failed:\n{out.stderr}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=5_000_000)
    parser.add_argument("--chunk-rows", type=int, default=500_000)
    parser.add_argument("--write", help=argparse.SUPPRESS)  # the child processes
    parser.add_argument("--read", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.write:
        writer(args.write, args.rows)
        return
    if args.read:
        reader(args.read, args.chunk_rows)
        return

    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "cell_towers.csv"
        t0 = time.perf_counter()
        kept = run_child("--write", str(path), "--rows", str(args.rows))["kept"]
        print(f"file:    {args.rows:,} rows, {path.stat().st_size / 1e6:.0f} MB, written in "
              f"{time.perf_counter() - t0:.1f} s; {kept:,} rows ({kept / args.rows:.1%}) pass "
              f"the filters {FILTERS}")
        runs = {"one go": run_child("--read", str(path), "--chunk-rows", "0"),
                f"chunk_rows={args.chunk_rows:,}": run_child("--read", str(path), "--chunk-rows",
                                                             str(args.chunk_rows))}
    for label, r in runs.items():
        print(f"{label:>22}: {r['cells']:,} cells at {r['sites']:,} sites, {r['wall_s']:6.1f} s, "
              f"peak RSS {r['rss_peak_mb']:6.0f} MB (after import {r['rss_import_mb']:.0f} MB)")
    whole, chunked = runs.values()

    def above_import(r: dict) -> float:
        return r["rss_peak_mb"] - r["rss_import_mb"]

    print(f"{'one go / chunked':>22}: peak RSS {whole['rss_peak_mb'] / chunked['rss_peak_mb']:.1f}x "
          f"({above_import(whole) / above_import(chunked):.1f}x above import), time "
          f"{whole['wall_s'] / chunked['wall_s']:.2f}x")


if __name__ == "__main__":
    main()
