"""Time to a certified gap for ``alm``, ``dual`` and ``ipm`` against cvxpy + Clarabel, side by side.

Run: ``python benchmarks/bench_solvers.py [--case a|b|both] [--tol 1e-4] [--no-reference-b]``

Cases, both HetNet drops with 2/3 of the users clustered near picos and 8 candidate
cells per user; Shannon efficiency so that every candidate link has a positive rate:

- (a) 20,000 users, 37 macro sites × 3 sectors + 3 picos per sector = 444 cells,
  160,000 links;
- (b) 125,000 users, 817 macro sites × 3 sectors + 1 pico per sector = 4,902 cells,
  1,000,000 links.

Each solve runs in a fresh subprocess that loads the saved problem, so that its peak
resident memory (``ru_maxrss``) is the solver's own plus the problem's. The reference's
time includes cvxpy's compilation (reported separately). The "before" column is the
time measured on the landed code before ``ipm`` and the warm-started ``alm`` (commit
07a0a23, same machine).
"""

from __future__ import annotations

import argparse
import json
import pickle
import subprocess
import sys
import tempfile
import time
from pathlib import Path

#: Seconds measured on the landed code (commit 07a0a23) for case (a).
BEFORE = {"a": {"alm": 13.1, "dual": 0.40, "reference": 9.0}}

CASES = {
    "a": dict(n_rings=3, picos_per_sector=3, n_users=20_000, wraparound=True),
    "b": dict(n_rings=16, picos_per_sector=1, n_users=125_000, wraparound=False),
}


def build(case: str, folder: Path) -> Path:
    from cellopt import Problem, radio, topology

    spec = CASES[case]
    t0 = time.perf_counter()
    net = topology.hex_grid(n_rings=spec["n_rings"], wraparound=spec["wraparound"])
    net = topology.add_picos(net, per_sector=spec["picos_per_sector"], rng=1)
    net = topology.drop_users(net, spec["n_users"], clustered_fraction=2 / 3, rng=2)
    links = radio.link_table(net, n_candidates=8, rng=3,
                             model=radio.RadioModel(spectral_efficiency="shannon"))
    problem = Problem.from_network(net, links)
    path = folder / f"problem_{case}.pkl"
    path.write_bytes(pickle.dumps(problem))
    print(f"case ({case}): {problem} built in {time.perf_counter() - t0:.1f} s", flush=True)
    return path


def run_one(path: str, method: str, tol: float) -> dict:
    """Solve in this process and report (called in a subprocess)."""
    import resource

    import cellopt

    problem = pickle.loads(Path(path).read_bytes())
    t0 = time.perf_counter()
    big = {"max_links": problem.n_links} if method == "reference" else {}  # side by side
    sol = cellopt.solve(problem, method=method, tol=tol, **big)
    wall = time.perf_counter() - t0
    hist = sol.history
    out = dict(method=method, status=sol.status, objective=sol.objective,
               upper_bound=sol.upper_bound, gap=sol.gap, n_iter=sol.n_iter, wall_s=wall,
               peak_rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0)
    if "compile_time_s" in hist:
        out["compile_s"] = float(hist["compile_time_s"].iloc[-1])
    return out


def in_subprocess(path: Path, method: str, tol: float) -> dict:
    code = (f"import json, sys; sys.path.insert(0, {str(Path(__file__).parent)!r}); "
            f"from bench_solvers import run_one; "
            f"print(json.dumps(run_one({str(path)!r}, {method!r}, {tol!r})))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    if done.returncode:
        return dict(method=method, status="crashed", error=done.stderr.strip()[-400:])
    return json.loads(done.stdout.strip().splitlines()[-1])


def report(case: str, rows: list[dict]) -> None:
    ref = next((r for r in rows if r["method"] == "reference" and "wall_s" in r), None)
    print(f"\ncase ({case})")
    print(f"{'method':<10} {'status':<10} {'objective':>14} {'bound':>14} {'gap':>9} "
          f"{'iters':>6} {'time s':>8} {'peak MB':>8} {'vs ref':>8} {'before s':>9}")
    for r in rows:
        if "wall_s" not in r:
            print(f"{r['method']:<10} {r['status']:<10} {r.get('error', '')}")
            continue
        ratio = f"{ref['wall_s'] / r['wall_s']:.1f}x" if ref else "-"
        before = BEFORE.get(case, {}).get(r["method"])
        before = "-" if before is None else f"{before:.2f}"
        bound = "-" if r["upper_bound"] is None else f"{r['upper_bound']:.6f}"
        gap = "-" if r["gap"] is None else f"{r['gap']:.1e}"
        print(f"{r['method']:<10} {r['status']:<10} {r['objective']:>14.6f} {bound:>14} "
              f"{gap:>9} {r['n_iter']:>6} {r['wall_s']:>8.2f} {r['peak_rss_mb']:>8.0f} "
              f"{ratio:>8} {before:>9}")
    if ref and "compile_s" in ref:
        print(f"(reference: {ref['compile_s']:.1f} s of its time is cvxpy compilation)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=["a", "b", "both"], default="both")
    parser.add_argument("--tol", type=float, default=1e-4)
    parser.add_argument("--no-reference-b", action="store_true",
                        help="skip cvxpy on case (b) (minutes and several GB)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        for case in (["a", "b"] if args.case == "both" else [args.case]):
            path = build(case, Path(tmp))
            methods = ["alm", "dual", "ipm"]
            if not (case == "b" and args.no_reference_b):
                methods.append("reference")
            rows = [in_subprocess(path, m, args.tol) for m in methods]
            report(case, rows)


if __name__ == "__main__":
    main()
