"""``dual`` in one process against ``dual_dask`` on a local Dask cluster of 2 workers.

Run: ``python benchmarks/bench_dask_dual.py [--users 200000] [--cells 2000] [--tol 1e-4]``

The instance is built with numpy alone: cells and users uniform in a square (500 m per
cell), each user's 8 nearest cells as candidates, a path loss of 128.1 + 37.6 log10(d/km)
dB with 8 dB log-normal shadowing, the SINR against the other candidates at full power,
and Shannon rates on 20 MHz. Users are listed in random order (as a drop gives them), so
contiguous blocks of user rows are spatially mixed. Backhaul caps of 30–90 % of a
rough load estimate on 40 % of the cells and access prices on 20 % make both kinds of
price (airtime μ and backhaul ν) cross the network.

Four solves, side by side: ``dual``; ``dual`` again in a fresh process started with
``WORKER_MALLOC_ENV``, the allocator settings of the workers (a like-for-like single
process: Dask's default settings made evaluations 2–3× slower, and plain glibc
defaults can be slower than these too); ``dual_dask`` with 2 parts of contiguous user rows
(the default); ``dual_dask`` with 2 parts by region (:func:`partition_users`). For the
distributed ones, the bytes sent and received per iteration (mean, max over the history)
are printed against the bytes of the links (user, cell, resource and rate per link).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from scipy.spatial import cKDTree

import cellopt
from cellopt.cluster import WORKER_MALLOC_ENV, local_client
from cellopt.solvers.dask_dual import partition_users


def build(n_users: int, n_cells: int, n_cand: int = 8, seed: int = 1
          ) -> tuple[cellopt.Problem, np.ndarray, np.ndarray]:
    """The instance (see the module docstring) and the users' positions x, y [m]."""
    rng = np.random.default_rng(seed)
    side = np.sqrt(n_cells) * 500.0
    cells = rng.uniform(0.0, side, (n_cells, 2))
    users = rng.uniform(0.0, side, (n_users, 2))
    dist, cand = cKDTree(cells).query(users, k=n_cand)
    d_km = np.maximum(dist, 10.0) / 1e3
    rx_dbm = 46.0 - (128.1 + 37.6 * np.log10(d_km)) + rng.normal(0.0, 8.0, dist.shape)
    rx_mw = 10.0 ** (rx_dbm / 10.0)
    noise_mw = 10.0 ** ((-174.0 + 10.0 * np.log10(20e6) + 9.0) / 10.0)
    sinr = rx_mw / (noise_mw + rx_mw.sum(axis=1, keepdims=True) - rx_mw)
    rate = np.maximum(20.0 * np.log2(1.0 + sinr), 0.01)            # Mbit/s on 20 MHz
    user = np.repeat(np.arange(n_users), n_cand)
    cell = cand.ravel()
    rate = rate.ravel()
    # Rough loads: every user on its best link, equal airtime per cell.
    best = cand[np.arange(n_users), np.argmax(rate.reshape(n_users, n_cand), axis=1)]
    best_rate = rate.reshape(n_users, n_cand).max(axis=1)
    count = np.bincount(best, minlength=n_cells)
    traffic = np.bincount(best, best_rate, minlength=n_cells) / np.maximum(count, 1)
    backhaul = np.where((rng.random(n_cells) < 0.4) & (count > 0),
                        traffic * rng.uniform(0.3, 0.9, n_cells), np.inf)
    marginal = np.median(count[best] / best_rate)                  # 1 / (rate / users), α = 1
    price = np.where(rng.random(n_cells) < 0.2, marginal * rng.uniform(0.1, 1.5, n_cells), 0.0)
    problem = cellopt.Problem.from_links(user, cell, rate, n_users=n_users, n_cells=n_cells,
                                         backhaul_mbps=backhaul, price_per_mbps=price)
    return problem, users[:, 0], users[:, 1]


def link_bytes(p: cellopt.Problem) -> int:
    """Bytes of the links as the solver holds them: user, cell, resource, rate."""
    return int(p.user.nbytes + p.cell.nbytes + p.resource.nbytes + p.rate_mbps.nbytes)


def summary(sol: cellopt.Solution, wall_s: float) -> dict:
    """What the table prints of one solve."""
    h = sol.history
    out = dict(objective=sol.objective, upper_bound=sol.upper_bound, gap=sol.gap,
               status=sol.status, n_iter=sol.n_iter, n_eval=int(h["n_eval"].iloc[-1]),
               wall_s=wall_s, utility=sol.utility, message=sol.message)
    for col in ("bytes_sent", "bytes_received"):
        if col in h and len(h) > 1:
            values = h[col].to_numpy()[1:]  # row 0: the start
            out[col] = (float(values.mean()), float(values.max()))
    return out


def solve_dual_here(path: str, tol: float) -> dict:
    """``dual`` on the pickled problem at `path` (run in a subprocess)."""
    problem = pickle.loads(Path(path).read_bytes())
    t0 = time.perf_counter()
    sol = cellopt.solve(problem, method="dual", tol=tol)
    return summary(sol, time.perf_counter() - t0)


def dual_with_malloc_env(problem: cellopt.Problem, tol: float) -> dict:
    """``dual`` in a fresh process started with the workers' allocator settings."""
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "problem.pkl"
        path.write_bytes(pickle.dumps(problem))
        code = (f"import json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
                f"from bench_dask_dual import solve_dual_here; "
                f"print(json.dumps(solve_dual_here({str(path)!r}, {tol!r})))")
        out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                             check=True, env={**os.environ, **WORKER_MALLOC_ENV})
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=200_000)
    parser.add_argument("--cells", type=int, default=2_000)
    parser.add_argument("--tol", type=float, default=1e-4)
    args = parser.parse_args()

    t0 = time.perf_counter()
    p, x_m, y_m = build(args.users, args.cells)
    caps = int(np.isfinite(p.backhaul_mbps).sum())
    print(f"{p}; {int((p.price_per_mbps > 0).sum())} priced cells; built in "
          f"{time.perf_counter() - t0:.1f} s")
    links = link_bytes(p)
    print(f"links: {links / 1e6:.1f} MB; prices per round: {p.n_groups + caps} "
          f"({(p.n_groups + caps) * 8 / 1e3:.1f} kB)")

    runs = {}
    t0 = time.perf_counter()
    runs["dual"] = summary(cellopt.solve(p, method="dual", tol=args.tol), time.perf_counter() - t0)
    runs["dual (malloc env)"] = dual_with_malloc_env(p, args.tol)
    with local_client(n_workers=2) as client:   # what dual_dask starts when given no scheduler
        t0 = time.perf_counter()
        sol = cellopt.solve(p, method="dual_dask", tol=args.tol, scheduler=client)
        runs["dual_dask (rows)"] = summary(sol, time.perf_counter() - t0)
        part = partition_users(x_m, y_m, 2)
        t0 = time.perf_counter()
        sol = cellopt.solve(p, method="dual_dask", tol=args.tol, scheduler=client, part=part)
        runs["dual_dask (region)"] = summary(sol, time.perf_counter() - t0)

    scale = float(p.weight.sum())  # α = 1: the rate-equivalent scale of objective differences
    ref = runs["dual"]["objective"]
    names = list(runs)
    width = 21
    rows = [
        ("objective", lambda r: f"{r['objective']:.4f}"),
        ("upper bound", lambda r: f"{r['upper_bound']:.4f}"),
        ("gap", lambda r: f"{r['gap']:.2e}"),
        ("|Δ objective| / Σw vs dual", lambda r: f"{abs(r['objective'] - ref) / scale:.1e}"),
        ("status", lambda r: r["status"]),
        ("iterations", lambda r: str(r["n_iter"])),
        ("evaluations", lambda r: str(r["n_eval"])),
        ("wall time [s]", lambda r: f"{r['wall_s']:.1f}"),
        ("sent / iter, mean", lambda r: _kb(r, "bytes_sent", 0)),
        ("sent / iter, max", lambda r: _kb(r, "bytes_sent", 1)),
        ("received / iter, mean", lambda r: _kb(r, "bytes_received", 0)),
        ("received / iter, max", lambda r: _kb(r, "bytes_received", 1)),
        ("(sent+recv) / iter ÷ links", lambda r: "-" if "bytes_sent" not in r else
         f"{(r['bytes_sent'][0] + r['bytes_received'][0]) / links:.4f}"),
    ]
    print()
    print(f"{'':<28}" + "".join(f"{n:>{width}}" for n in names))
    for label, fn in rows:
        print(f"{label:<28}" + "".join(f"{fn(runs[n]):>{width}}" for n in names))
    print()
    for name in names[2:]:
        tail = re.search(r"\d+ parts on .*", runs[name]["message"])
        print(f"{name}: {tail.group(0) if tail else runs[name]['message']}")


def _kb(run: dict, column: str, which: int) -> str:
    return f"{run[column][which] / 1e3:.1f} kB" if column in run else "-"


if __name__ == "__main__":
    main()
