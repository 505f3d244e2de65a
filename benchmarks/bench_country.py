"""A national network: 100,000 cells and 10 million users, link table and certified solve.

Run: ``python benchmarks/bench_country.py [--users N] [--radius-m R] [--candidates K]``.

Stages, each timed and with its own peak memory (the process's resident set, sampled
every 20 ms while the stage runs, so a stage's peak includes what earlier stages keep):

1. network: :func:`cellopt.topology.country_layout` (10⁵ km², rural macros and 50 cities);
2. users: :func:`cellopt.topology.drop_users`, 70 % around the city picos;
3. links: :func:`cellopt.radio.link_table` with an interference radius;
4. problem: the association problem of the users with a usable link;
5. solve: ``method="dual"`` to a certified gap of 1e-4.

Then, side by side on a sample of the same network small enough for cvxpy (a square
window, ``--reference-users`` users), the ``dual`` and the cvxpy ``reference`` methods:
objectives, bounds and times, and their ratios. Targets on this 2-core machine: at most
10 minutes in all, peak memory at most 16 GB, gap ≤ 1e-4.
"""

from __future__ import annotations

import argparse
import os
import threading
import time
from contextlib import contextmanager

import numpy as np

import cellopt
from cellopt import radio, topology
from cellopt.drop import Drop

PAGE_BYTES = os.sysconf("SC_PAGE_SIZE")


def rss_bytes() -> int:
    """The resident set of this process [bytes] (Linux)."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE_BYTES


class Stages:
    """Times each stage and samples its peak resident memory in a background thread."""

    def __init__(self) -> None:
        self.rows: list[tuple[str, float, float, str]] = []

    @contextmanager
    def stage(self, name: str):
        peak = [rss_bytes()]
        done = threading.Event()

        def sample() -> None:
            while not done.wait(0.02):
                peak[0] = max(peak[0], rss_bytes())

        thread = threading.Thread(target=sample, daemon=True)
        thread.start()
        note: list[str] = []
        t0 = time.perf_counter()
        try:
            yield note
        finally:
            wall = time.perf_counter() - t0
            done.set()
            thread.join()
            peak[0] = max(peak[0], rss_bytes())
            self.rows.append((name, wall, peak[0] / 1e9, " ".join(note)))
            print(f"  {name:<9} {wall:8.1f} s   peak {peak[0] / 1e9:6.2f} GB   {' '.join(note)}",
                  flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=10_000_000)
    parser.add_argument("--radius-m", type=float, default=1000.0)
    parser.add_argument("--candidates", type=int, default=4)
    parser.add_argument("--tol", type=float, default=1e-4)
    parser.add_argument("--reference-users", type=int, default=3000)
    args = parser.parse_args()
    stages = Stages()
    t_all = time.perf_counter()
    print(f"country: {args.users:,} users, radius {args.radius_m:g} m, {args.candidates} candidates")
    with stages.stage("network") as note:
        net = topology.country_layout(rng=1)
        note.append(f"{net.n_cells:,} cells over {net.area_km2:,.0f} km²")
    with stages.stage("users") as note:
        net = topology.drop_users(net, args.users, clustered_fraction=0.7, cluster_tier="pico",
                                  cluster_radius_m=300.0, rng=2)
        note.append(f"{net.n_users:,} users")
    with stages.stage("links") as note:
        links = radio.link_table(net, n_candidates=args.candidates, rng=3,
                                 interference_radius_m=args.radius_m, progress=True)
        note.append(f"{len(links):,} links, {links.nbytes / 1e9:.2f} GB of arrays")
    with stages.stage("problem") as note:
        drop = Drop.from_network(net, links)
        note.append(f"{drop.problem.n_users:,} users with a usable link, "
                    f"{drop.problem.n_links:,} links")
    with stages.stage("solve") as note:
        sol = cellopt.solve(drop.problem, method="dual", tol=args.tol)
        note.append(f"{sol.status}, gap {sol.gap:.2e}, {sol.n_iter} Newton steps")
    total = time.perf_counter() - t_all
    peak = max(r[2] for r in stages.rows)
    print(f"total {total:.0f} s (target ≤ 600 s), peak {peak:.2f} GB (target ≤ 16 GB), "
          f"gap {sol.gap:.2e} (target ≤ 1e-4), objective {sol.objective:.6g}, "
          f"bound {sol.upper_bound:.6g}")

    # ---- the same network, a window small enough for cvxpy: dual and reference side by side
    c = net.cell_arrays()
    centre = np.array([np.median(c["x_m"]), np.median(c["y_m"])])
    del links, drop, sol
    for side in (2000.0, 4000.0, 8000.0, 16000.0):
        box = (np.abs(c["x_m"] - centre[0]) < side) & (np.abs(c["y_m"] - centre[1]) < side)
        if box.sum() >= 30:
            break
    small = topology.drop_users(
        net.replace(cells=net.cells[box].reset_index(drop=True), users=net.users.iloc[:0]),
        args.reference_users, rng=4)
    small_drop = Drop.from_network(small, radio.link_table(small, n_candidates=args.candidates,
                                                           rng=3, interference_radius_m=args.radius_m))
    print(f"\nside by side on a window of {small.n_cells} cells and {small.n_users:,} users:")
    print(f"  {'method':<10} {'objective':>14} {'upper bound':>14} {'gap':>9} {'status':>10} {'time s':>8}")
    times = {}
    for method in ("dual", "reference"):
        t0 = time.perf_counter()
        s = cellopt.solve(small_drop.problem, method=method, tol=args.tol)
        times[method] = time.perf_counter() - t0
        gap = "—" if s.gap is None else f"{s.gap:.2e}"
        bound = "—" if s.upper_bound is None else f"{s.upper_bound:.8g}"
        print(f"  {method:<10} {s.objective:>14.8g} {bound:>14} {gap:>9} {s.status:>10} "
              f"{times[method]:>8.2f}")
        times[method + "_objective"] = s.objective
    print(f"  reference / dual time: {times['reference'] / times['dual']:.1f}×; objective "
          f"difference {times['dual_objective'] - times['reference_objective']:+.2e}")


if __name__ == "__main__":
    main()
