"""A family of networks, each solved by ``alm``, ``dual``, ``ipm`` and cvxpy + Clarabel.

Every member of the family is solved by the three certified methods and by the
``reference`` (cvxpy + Clarabel) at the same ``tol``, back to back in one process. Per
network the table gives the links, each method's wall time, CPU time, status, certified
gap, the rate-equivalent distance of its objective from the reference's, its speed
ratio to the reference (reference wall time / method wall time) and a check column; at
the end, per method, the median and the worst (smallest) ratio over the family.

Run
---
::

    python benchmarks/bench_solvers.py                  # the whole family (4-5 min*)
    python benchmarks/bench_solvers.py --quick          # its smallest members (~15 s*)
    python benchmarks/bench_solvers.py --only hex3_k8 --only ye_5000
    python benchmarks/bench_solvers.py --list           # the members, without solving
    python benchmarks/bench_solvers.py --json rows.json --tol 1e-4 --load

(*) On this project's 2-core machine, shared, at a1537e8; 9 min at 2985ba7, whose ``alm``
spun OpenBLAS threads (see "Conditions"). About a minute of the full run is building
the problems (40-60 s of it ``hex16_k8``'s link table).

Options: ``--tol`` (default 1e-4), ``--reference-max-links`` (default 300,000: above
it the reference is "skipped" and the member leaves the ratio statistics; cvxpy's
compilation alone takes minutes and GB beyond), ``--load`` (two busy loops,
``python -c "while True: pass"``, run for the duration of the solves and are killed at
the end), ``--blas-threads N`` (every solve inside ``threadpoolctl.threadpool_limits(N,
"blas")``; default: the library's own settings, what a user gets), ``--repeat N``
(best of N timed solves per method), ``--json PATH`` (every row, with the machine's
load average and the code's git state), ``--seed-offset N`` (N added to every member's
seeds: the same kinds of network on other drops, to check a figure on networks the
methods were not tuned on).

The family
----------
Every problem is built from fixed seeds, so every run solves the same problems
(``--seed-offset`` shifts them all).

- ``hex*``: 3GPP hex grids (``topology.hex_grid``, ISD 500 m, 1 to 16 rings) with 1 to
  4 picos per sector (``add_picos``), 2/3 of the users clustered near picos
  (``drop_users``), Shannon efficiency (every candidate link has a positive rate), 5, 8,
  16 or 32 candidates per user (``radio.link_table(n_candidates=k)``), from 15,000 to
  1,000,000 links. ``hex3_k8`` and ``hex16_k8`` are the old benchmark's cases (a) and (b).
- ``hex*_w_a*``: the 1-, 2- and 3-ring networks with unequal weights (log-normal,
  σ = 0.7 of ln) and α = 0.5 or α = 2; ``*_dem`` adds finite demands (a uniform factor
  0.3-3 of an equal share of the user's best cell: about half the users end at their
  demand). Built with ``Problem.replace``.
- ``ye_*``: the shipped ``ye_random`` scenario (Poisson macro/pico/femto tiers in a
  2 km torus, single-slope path loss, shadowing, 8 candidates) at 500, 5,000 and 15,000
  users/km², and at 1,500 users/km² with demands uniform in 0.05-0.5 Mbit/s (about half
  bind); 16,000 to 480,000 links.
- ``sf_femto_*``: the San Francisco window of the shipped ``sf_femto`` scenario
  (OpenCelliD sites, open-access femtocells with log-normal backhaul caps, indoor users,
  TR 36.942 efficiency) with a price of 0.05 per Mbit/s on the femtocells' traffic,
  3,000 and 10,000 users/km², 16 candidates (33,000 and 109,000 links); needs
  ``../shared/data/`` beside the checkout and is skipped with a message without it.
- ``city_*``: its synthetic stand-in ``city_synthetic`` (what
  ``load_scenario("sf_femto", use_stand_in=True)`` loads when the data are absent: a
  37-site hex grid, ISD 200 m, the same femtocells, caps and price), always run
  (27,000 and 80,000 links).

``--quick`` runs the smallest member of each kind (marked in ``--list``).

It does NOT cover: power patterns (free pattern shares: ``bench_power.py``), several
resources per cell, load-coupled interference (rounds of solves), single association
(rounding), ``dual_dask`` (``bench_dask_dual.py``), α = 0 (linear utility), hot starts,
peak memory (one process runs everything; see "Conditions"), or the reference above
``--reference-max-links``.

Conditions
----------
All solves run in this one process, after every problem of the run is built and after
one untimed warm-up solve of every method on a tiny network (imports, cvxpy's first
compilation, numpy/scipy code paths). Each member's methods then run back to back on
the same ``Problem`` object, in an order rotated from member to member (so that no
method is always first after a build or last before the next one), with
``gc.collect()`` before each timed solve. Wall time is ``time.perf_counter`` around
``cellopt.solve`` (the reference's includes cvxpy's compilation), CPU time is
``time.process_time`` (this process, every thread).

Why in-process and not, as before, a fresh subprocess per solve. The old benchmark's
41.7 s for ``alm`` on case (a) (160,000 links), where an in-process solve took
5.9-7.1 s, was not the subprocess. Measured on this 2-core machine (shared: load
average 2-6 from other work, including a stray busy loop), code of 2985ba7 (before
a1537e8 put every solve on one BLAS thread), ``alm`` on case (a), seconds wall (CPU)::

    busy loops beside   in-process        fresh subprocess   whole solve on 1 BLAS thread
    0                   4.3-4.6 (3.0)     5.0-5.3 (3.3-3.6)  1.6-2.1 (1.1)
    2                   12.9-14.8 (4.5)   13.0-14.2 (4.4)    5.5-5.7 (1.2)
    4                   23.3-25.2 (5.2)   22.4-22.5 (4.9)    9.1-9.4 (1.2)

Subprocess and in-process agree at equal load. Start-up, imports and unpickling take
0.3-1.7 s and were outside the timer; there is no JIT or cache, and a first solve in a
process is not slower than a second. What made ``alm`` slow, and its time grow with the
machine's load, was OpenBLAS threads spinning: numpy and scipy each bundle an OpenBLAS
with its own pool of 2 threads, the solvers alternate between them (scipy's for the
dense Schur factorizations, numpy's for the dot products of the line searches), and
an idle pool's threads busy-wait for a while before sleeping, starving the other pool
on 2 cores. A loop of one 444 × 444 Cholesky (scipy) and ten dot products of
160,000-entry vectors (numpy) takes 470-490 ms per round with both libraries on 2
threads, 11-67 ms with the Cholesky inside ``one_blas_thread()`` as at 2985ba7, and
0.94 ms with everything on one thread; CPU time equals wall time throughout (spinning).
The spinning threads also compete with every other process, so the cost grows with the
load: 41.7 s is the table's trend at roughly seven busy threads beside the solve, which
two other cellopt jobs (each spinning 2 threads) and the stray loop provide; the
5.9-7.1 s in-process solves ran on a quieter machine. ``ipm`` had the same exposure
(median ratio to the reference 2.2x → 6.5x on 1 BLAS thread over four members), ``dual``
hardly any, ``alm`` most (median 0.12x → 1.05x; 25 s → 0.6 s on the 15,704-link
``ye_500``). A second trap of subprocesses on a shared tree: each imports whatever a
colleague's editor last saved (measured during this work: a subprocess's ``alm`` ran an
edited ``alm.py`` at 0.46 CPU s while its parent's imported copy took 1.2).

So: one process, the same conditions for every method (same BLAS settings, same warm
state, the same problem object), CPU time beside wall time, the load average printed
per member and the code's git state recorded. ``--blas-threads 1`` times every method
on one BLAS thread whatever the library does (a no-op since a1537e8, where
``cellopt.solve`` runs each method inside ``one_blas_thread()``). On a loaded machine
read the time ratios beside the CPU ratios.

Checks
------
Each certified method's answer is compared with the reference's: Δ is the
rate-equivalent distance of the two objectives
(:func:`~cellopt.solvers.certificate.certified_gap` between them, > 0 when the method is
below the reference). Both are feasible and certified, so Δ ≤ the method's gap ≤ tol;
"DIFF" flags Δ > tol, "BOUND" a feasible objective above the other solve's upper bound
(by more than 1e-9 rate-equivalent: a bound or a feasibility is wrong), "STATUS" a
status other than optimal.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import gc
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np

METHODS = ("alm", "dual", "ipm", "reference")
CERTIFIED = ("alm", "dual", "ipm")
#: A feasible objective above another solve's upper bound by more than this
#: (rate-equivalent) is flagged.
BOUND_SLACK = 1e-9


# ----------------------------------------------------------------------------- family
def hex_problem(n_rings: int, picos: int, n_users: int, k: int, *, seed: int,
                wraparound: bool = True) -> Any:
    """A HetNet drop on a hex grid: picos, 2/3 of the users clustered, Shannon rates."""
    from cellopt import Drop, radio, topology

    net = topology.hex_grid(n_rings=n_rings, wraparound=wraparound)
    net = topology.add_picos(net, per_sector=picos, rng=seed)
    net = topology.drop_users(net, n_users, clustered_fraction=2 / 3, rng=seed + 1)
    links = radio.link_table(net, n_candidates=k, rng=seed + 2,
                             model=radio.RadioModel(spectral_efficiency="shannon"))
    return Drop.from_network(net, links).problem


def reweighted(problem: Any, alpha: float, *, seed: int, demand: bool = False) -> Any:
    """The problem with log-normal weights (σ = 0.7 of ln), another α, optionally demands.

    Demands are a uniform factor in [0.3, 3] of the user's rate if every one of its
    candidate cells were shared equally among the users whose best link it is (so that
    some bind and some do not).
    """
    rng = np.random.default_rng(seed)
    changes: dict[str, Any] = {"alpha": float(alpha),
                               "weight": rng.lognormal(0.0, 0.7, problem.n_users)}
    if demand:
        best = np.full(problem.n_users, -1)
        order = np.lexsort((-problem.rate_mbps, problem.user))
        first = np.r_[True, problem.user[order][1:] != problem.user[order][:-1]]
        best[problem.user[order[first]]] = order[first]
        load = np.bincount(problem.cell[best], minlength=problem.n_cells)
        fair = problem.rate_mbps[best] / np.maximum(load[problem.cell[best]], 1)
        changes["demand_mbps"] = fair * rng.uniform(0.3, 3.0, problem.n_users)
    return problem.replace(**changes)


def scenario_problem(name: str, seed: int, **overrides: dict[str, Any]) -> Any:
    """The problem of one drop of a shipped scenario with overrides."""
    import cellopt

    return cellopt.load_scenario(name).with_overrides(**overrides).build(seed).problem


def sf_data_missing() -> str | None:
    """Why the ``sf_femto`` members cannot run (None when its cell file is there)."""
    import cellopt

    scenario = cellopt.load_scenario("sf_femto")
    if scenario.data_missing:
        return (f"sf_femto's cell file {scenario.network['path']} is absent "
                "(clone the shared data beside the checkout); its stand-in city_* runs")
    return None


FEMTO_PRICE = {"price_per_mbps": 0.05}


@dataclasses.dataclass(frozen=True)
class Member:
    """One network of the family."""

    name: str
    what: str
    build: Callable[[], Any]
    quick: bool = False
    needs_sf_data: bool = False


def family(seed_offset: int = 0) -> list[Member]:
    """The members, smallest first within each kind; `seed_offset` is added to every
    seed (the same kinds of network on other drops: checks on networks nobody tuned on)."""
    def hexes(rings: int, picos: int, users: int, k: int, seed: int, **kw: Any
              ) -> Callable[[], Any]:
        return lambda: hex_problem(rings, picos, users, k, seed=seed + seed_offset, **kw)

    def weighted(base: Callable[[], Any], alpha: float, seed: int, demand: bool = False
                 ) -> Callable[[], Any]:
        return lambda: reweighted(base(), alpha, seed=seed + seed_offset, demand=demand)

    hex1 = hexes(1, 4, 3_000, 5, 11)
    hex2 = hexes(2, 4, 6_000, 8, 21)
    hex3 = hexes(3, 3, 20_000, 8, 1)
    ye = "ye_random: Poisson macro/pico/femto tiers 4/20/40 per km², 2 km torus, 8 cand."
    sf = ("sf_femto: SF downtown OpenCelliD sites, 2 % femtocells (log-normal backhaul caps, "
          "0.05 per Mbit/s)")
    city = ("city_synthetic (sf_femto's stand-in): 37 sites, ISD 200 m, 2 % femtocells, caps, "
            "0.05 per Mbit/s")

    def ye_drop(seed: int, density: float, **users: Any) -> Callable[[], Any]:
        return lambda: scenario_problem("ye_random", seed + seed_offset,
                                        users={"density_per_km2": density, **users})

    def priced(name: str, seed: int, density: float) -> Callable[[], Any]:
        return lambda: scenario_problem(name, seed + seed_offset, femtocells=FEMTO_PRICE,
                                        users={"density_per_km2": density},
                                        radio={"n_candidates": 16})

    return [
        Member("hex1_k5", "hex grid 1 ring (7 sites) + 4 picos/sector, 3,000 users, 5 cand.",
               hex1, quick=True),
        Member("hex1_w_a0.5", "hex1_k5 with log-normal weights, α = 0.5",
               weighted(hex1, 0.5, 12), quick=True),
        Member("hex1_w_a2_dem", "hex1_k5 with log-normal weights, α = 2, finite demands",
               weighted(hex1, 2.0, 13, demand=True), quick=True),
        Member("hex2_k8", "hex grid 2 rings (19 sites) + 4 picos/sector, 6,000 users, 8 cand.",
               hex2, quick=True),
        Member("hex2_w_a0.5", "hex2_k8 with log-normal weights, α = 0.5", weighted(hex2, 0.5, 22)),
        Member("hex2_w_a2", "hex2_k8 with log-normal weights, α = 2", weighted(hex2, 2.0, 23)),
        Member("hex2_k32", "hex2_k8's network and users with 32 candidates per user",
               hexes(2, 4, 6_000, 32, 21)),
        Member("hex3_k8", "old case (a): 3 rings (37 sites) + 3 picos/sector, 20,000 users, "
               "8 cand.", hex3),
        Member("hex3_w_a0.5", "hex3_k8 with log-normal weights, α = 0.5", weighted(hex3, 0.5, 32)),
        Member("hex3_w_a2_dem", "hex3_k8 with log-normal weights, α = 2, finite demands",
               weighted(hex3, 2.0, 33, demand=True)),
        Member("hex4_k16", "hex grid 4 rings (61 sites) + 2 picos/sector, 18,000 users, 16 cand.",
               hexes(4, 2, 18_000, 16, 41)),
        Member("hex6_k32", "hex grid 6 rings (127 sites) + 1 pico/sector, 15,000 users, 32 cand.",
               hexes(6, 1, 15_000, 32, 61)),
        Member("hex8_k32", "hex grid 8 rings (217 sites) + 1 pico/sector, 31,250 users, 32 cand.",
               hexes(8, 1, 31_250, 32, 81)),
        Member("hex16_k8", "old case (b): 16 rings (817 sites) + 1 pico/sector, 125,000 users, "
               "8 cand., no wraparound", hexes(16, 1, 125_000, 8, 1, wraparound=False)),
        Member("ye_500", f"{ye}, 500 users/km²", ye_drop(1, 500.0), quick=True),
        Member("ye_1500_dem", f"{ye}, 1,500 users/km², demands uniform 0.05-0.5 Mbit/s",
               ye_drop(2, 1500.0,
                       demand_mbps={"distribution": "uniform", "low": 0.05, "high": 0.5})),
        Member("ye_5000", f"{ye}, 5,000 users/km²", ye_drop(3, 5000.0)),
        Member("ye_15000", f"{ye}, 15,000 users/km²", ye_drop(4, 15000.0)),
        Member("sf_femto_3000", f"{sf}, 3,000 users/km², 16 cand.", priced("sf_femto", 2, 3000.0),
               quick=True, needs_sf_data=True),
        Member("sf_femto_10000", f"{sf}, 10,000 users/km², 16 cand.",
               priced("sf_femto", 3, 10000.0), needs_sf_data=True),
        Member("city_10000", f"{city}, 10,000 users/km², 16 cand.",
               priced("city_synthetic", 2, 10000.0), quick=True),
        Member("city_30000", f"{city}, 30,000 users/km², 16 cand.",
               priced("city_synthetic", 3, 30000.0)),
    ]


def warmup_problem() -> Any:
    """A tiny network for the untimed warm-up solves."""
    return hex_problem(1, 1, 200, 4, seed=99)


# ----------------------------------------------------------------------------- solving
@contextlib.contextmanager
def blas_threads(n: int | None) -> Iterator[None]:
    """``threadpool_limits(n, "blas")`` around a solve, or nothing (library defaults)."""
    if n is None:
        yield
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=n, user_api="blas"):
        yield


def solve_timed(problem: Any, method: str, tol: float, *, blas: int | None, repeat: int,
                ref_max_links: int) -> tuple[Any, dict[str, Any]]:
    """Best of `repeat` solves: (solution or None, row of timings and certificate)."""
    import cellopt

    options = {"max_links": max(problem.n_links, 1)} if method == "reference" else {}
    if method == "reference" and problem.n_links > ref_max_links:
        return None, dict(method=method, status="skipped",
                          note=f"{problem.n_links:,} links > --reference-max-links "
                               f"{ref_max_links:,}")
    best: tuple[Any, dict[str, Any]] | None = None
    for _ in range(repeat):
        gc.collect()
        wall0, cpu0 = time.perf_counter(), time.process_time()
        try:
            with blas_threads(blas):
                sol = cellopt.solve(problem, method=method, tol=tol, **options)
        except Exception as err:  # a benchmark reports a failure, it does not stop
            return None, dict(method=method, status="error",
                              note=f"{type(err).__name__}: {str(err)[:200]}")
        row = dict(method=method, status=sol.status, wall_s=time.perf_counter() - wall0,
                   cpu_s=time.process_time() - cpu0, gap=sol.gap, objective=sol.objective,
                   upper_bound=sol.upper_bound, utility=sol.utility, n_iter=sol.n_iter)
        if method == "reference" and "compile_time_s" in sol.history:
            row["compile_s"] = float(sol.history["compile_time_s"].iloc[-1])
        if best is None or row["wall_s"] < best[1]["wall_s"]:
            best = (sol, row)
    assert best is not None
    return best


def _rate_gap(problem: Any, high: float | None, low: float, util_low: float) -> float | None:
    from cellopt.solvers.certificate import certified_gap

    if high is None or not (np.isfinite(low) and np.isfinite(high)):
        return None
    return certified_gap(problem, high, low, util_low)


def compare(problem: Any, row: dict[str, Any], ref: dict[str, Any], tol: float) -> dict[str, Any]:
    """Δ (rate-equivalent, > 0: the method below the reference) and the flags of a row."""
    out: dict[str, Any] = {"delta": None, "flags": []}
    if row.get("status") not in ("optimal",):
        out["flags"].append("STATUS")
    if "objective" not in row or "objective" not in ref:
        return out
    if ref["objective"] >= row["objective"]:
        delta = _rate_gap(problem, ref["objective"], row["objective"], row["utility"])
    else:
        delta = _rate_gap(problem, row["objective"], ref["objective"], ref["utility"])
        delta = None if delta is None else -delta
    out["delta"] = delta
    if delta is None or delta > tol:
        out["flags"].append("DIFF")
    for a, b in ((row, ref), (ref, row)):
        if b["upper_bound"] is not None and a["objective"] > b["upper_bound"]:
            over = _rate_gap(problem, a["objective"], b["upper_bound"], b["utility"])
            if over is None or over > BOUND_SLACK:
                out["flags"].append("BOUND")
    return out


# ----------------------------------------------------------------------------- output
def _f(value: float | None, fmt: str, missing: str = "-") -> str:
    return missing if value is None else format(value, fmt)


def print_member(index: int, total: int, member: Member, info: dict[str, Any],
                 rows: list[dict[str, Any]]) -> None:
    print(f"\n[{index}/{total}] {member.name}: {member.what}")
    print(f"      {info['links']:,} links, {info['users']:,} users, {info['cells']:,} cells, "
          f"α={info['alpha']:g}; built in {info['build_s']:.1f} s; "
          f"load avg {info['load_before']:.1f} -> {info['load_after']:.1f}")
    print(f"  {'method':<10} {'status':<10} {'time s':>8} {'cpu s':>8} {'iters':>5} "
          f"{'gap':>8} {'Δ vs ref':>9} {'vs ref':>8} {'cpu vs':>7}  check")
    for r in rows:
        if "wall_s" not in r:
            print(f"  {r['method']:<10} {r['status']:<10} {r.get('note', '')}")
            continue
        ratio = _f(r.get("ratio"), ".2f")
        cpu_ratio = _f(r.get("cpu_ratio"), ".2f")
        check = " ".join(r.get("flags", [])) or ("ok" if r["method"] != "reference" else "")
        if r["method"] in CERTIFIED and r.get("ratio") is None:
            check = (" ".join(r.get("flags", [])) + " (no reference)").strip()
        print(f"  {r['method']:<10} {r['status']:<10} {r['wall_s']:>8.2f} {r['cpu_s']:>8.2f} "
              f"{r['n_iter']:>5} {_f(r['gap'], '.1e'):>8} {_f(r.get('delta'), '.1e'):>9} "
              f"{ratio + ('x' if r.get('ratio') else ''):>8} "
              f"{cpu_ratio + ('x' if r.get('cpu_ratio') else ''):>7}  {check}")
    ref = next((r for r in rows if r["method"] == "reference" and "compile_s" in r), None)
    if ref:
        print(f"  (reference: {ref['compile_s']:.1f} s of its time is cvxpy's compilation)")
    sys.stdout.flush()


def print_summary(results: list[dict[str, Any]], tol: float) -> None:
    print(f"\nSummary (tol={tol:g}): speed ratio = reference wall time / method wall time "
          "(cpu: the same in CPU time)")
    head = "".join(f" {m:>14}" for m in CERTIFIED)
    print(f"{'network':<15} {'links':>10} {'ref s':>8}{head}")
    for res in results:
        rows = {r["method"]: r for r in res["rows"]}
        ref = rows.get("reference", {})
        cells = []
        for m in CERTIFIED:
            r = rows.get(m, {})
            if "wall_s" not in r:
                cells.append(r.get("status", "-"))
            elif r.get("ratio") is None:
                cells.append(f"{r['wall_s']:.2f}s")
            else:
                cells.append(f"{r['ratio']:.2f}x" + ("!" if r.get("flags") else ""))
        ref_s = f"{ref['wall_s']:.2f}" if "wall_s" in ref else ref.get("status", "-")
        print(f"{res['name']:<15} {res['links']:>10,} {ref_s:>8}"
              + "".join(f" {c:>14}" for c in cells))
    print("(a method's time in s where the reference was skipped; '!' marks a flagged row)")
    print(f"\n{'method':<8} {'n':>3} {'median':>8} {'worst':>8} {'(on)':<15} {'cpu median':>10} "
          f"{'cpu worst':>9}  flagged")
    for m in CERTIFIED:
        rows = [(res["name"], r) for res in results for r in res["rows"]
                if r["method"] == m and r.get("ratio") is not None]
        flagged = [f"{name}:{'/'.join(r['flags'])}" for res in results for r in res["rows"]
                   for name in [res["name"]] if r["method"] == m and r.get("flags")]
        if not rows:
            print(f"{m:<8} {0:>3}  (no member with a reference)  {' '.join(flagged)}")
            continue
        ratios = [r["ratio"] for _, r in rows]
        cpu = [r["cpu_ratio"] for _, r in rows]
        worst = min(rows, key=lambda nr: nr[1]["ratio"])
        print(f"{m:<8} {len(rows):>3} {statistics.median(ratios):>7.2f}x {worst[1]['ratio']:>7.2f}x "
              f"{worst[0]:<15} {statistics.median(cpu):>9.2f}x {min(cpu):>8.2f}x  "
              f"{' '.join(flagged) or 'none'}")


# ----------------------------------------------------------------------------- machine
def code_state() -> dict[str, Any]:
    """Where cellopt is imported from, its HEAD and the files under cellopt/ that differ
    from it (read-only git calls; other people may be editing the tree)."""
    import cellopt

    root = Path(cellopt.__file__).resolve().parents[1]

    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", "--no-optional-locks", *args], cwd=root, text=True,
                                  capture_output=True, timeout=30).stdout
        except (OSError, subprocess.SubprocessError):
            return ""
    modified = [line[3:] for line in git("status", "--porcelain", "--", "cellopt").splitlines()
                if len(line) > 3]
    return {"path": str(root), "head": git("rev-parse", "--short", "HEAD").strip(),
            "modified": modified}


@contextlib.contextmanager
def busy_loops(n: int) -> Iterator[None]:
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        yield
    finally:
        for proc in procs:
            proc.kill()
        for proc in procs:
            proc.wait()


# ----------------------------------------------------------------------------- main
def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="only the smallest members")
    parser.add_argument("--only", action="append", metavar="NAME",
                        help="run this member (repeatable); see --list")
    parser.add_argument("--list", action="store_true", help="list the members and exit")
    parser.add_argument("--tol", type=float, default=1e-4)
    parser.add_argument("--reference-max-links", type=int, default=300_000)
    parser.add_argument("--load", action="store_true",
                        help="two busy loops beside the solves (killed at the end)")
    parser.add_argument("--blas-threads", type=int, default=None,
                        help="BLAS threads for every solve (default: the library's)")
    parser.add_argument("--repeat", type=int, default=1, help="best of N timed solves")
    parser.add_argument("--json", type=Path, default=None, help="write every row here")
    parser.add_argument("--seed-offset", type=int, default=0, metavar="N",
                        help="add N to every member's seeds: the same family on other drops")
    args = parser.parse_args(argv)

    members = family(args.seed_offset)
    if args.list:
        for m in members:
            print(f"{m.name:<15} {'quick' if m.quick else '':<6} {m.what}")
        return
    if args.only:
        unknown = sorted(set(args.only) - {m.name for m in members})
        if unknown:
            parser.error(f"unknown member(s) {unknown}; --list shows them")
        members = [m for m in members if m.name in args.only]
    elif args.quick:
        members = [m for m in members if m.quick]

    state = code_state()
    print(f"cellopt from {state['path']} at {state['head'] or '? (not a git checkout)'}"
          + (f", modified: {', '.join(state['modified'])}" if state["modified"] else "")
          + f"; {os.cpu_count()} cores; load avg {os.getloadavg()[0]:.1f}; tol={args.tol:g}; "
          f"BLAS threads: {args.blas_threads or 'library default'}; "
          f"busy loops: {2 if args.load else 0}", flush=True)

    missing = sf_data_missing() if any(m.needs_sf_data for m in members) else None
    built: list[tuple[Member, Any, float]] = []
    for m in members:
        if m.needs_sf_data and missing:
            print(f"{m.name}: skipped: {missing}", flush=True)
            continue
        t0 = time.perf_counter()
        problem = m.build()
        built.append((m, problem, time.perf_counter() - t0))
        print(f"built {m.name}: {problem} in {built[-1][2]:.1f} s", flush=True)

    results: list[dict[str, Any]] = []
    with busy_loops(2 if args.load else 0):
        tiny = warmup_problem()
        for method in METHODS:  # untimed: imports, cvxpy's first compile, first calls
            with blas_threads(args.blas_threads):
                __import__("cellopt").solve(tiny, method=method, tol=args.tol)
        for index, (m, problem, build_s) in enumerate(built):
            load_before = os.getloadavg()[0]
            shift = index % len(METHODS)
            order = METHODS[shift:] + METHODS[:shift]
            by_method: dict[str, dict[str, Any]] = {}
            for method in order:
                _, row = solve_timed(problem, method, args.tol, blas=args.blas_threads,
                                     repeat=args.repeat, ref_max_links=args.reference_max_links)
                by_method[method] = row
            ref = by_method["reference"]
            for method in CERTIFIED:
                row = by_method[method]
                if "wall_s" in row and "wall_s" in ref:
                    row["ratio"] = ref["wall_s"] / row["wall_s"]
                    row["cpu_ratio"] = ref["cpu_s"] / max(row["cpu_s"], 1e-9)
                    row.update(compare(problem, row, ref, args.tol))
                elif row.get("status") not in ("optimal", None):
                    row["flags"] = ["STATUS"]
            rows = [by_method[meth] for meth in METHODS]
            info = dict(name=m.name, what=m.what, links=problem.n_links, users=problem.n_users,
                        cells=problem.n_cells, alpha=problem.alpha, build_s=build_s,
                        load_before=load_before, load_after=os.getloadavg()[0],
                        order=list(order), rows=rows)
            results.append(info)
            print_member(index + 1, len(built), m, info, rows)
    print_summary(results, args.tol)

    if args.json:
        meta = dict(tol=args.tol, load=args.load, blas_threads=args.blas_threads,
                    repeat=args.repeat, seed_offset=args.seed_offset,
                    reference_max_links=args.reference_max_links,
                    cores=os.cpu_count(), code=state, python=sys.version.split()[0],
                    numpy=np.__version__)
        flat = [dict(network=res["name"], links=res["links"], users=res["users"],
                     cells=res["cells"], alpha=res["alpha"], build_s=res["build_s"],
                     load_before=res["load_before"], load_after=res["load_after"], **row)
                for res in results for row in res["rows"]]
        args.json.write_text(json.dumps(dict(meta=meta, rows=flat), indent=1, default=float))
        print(f"\nwrote {len(flat)} rows to {args.json}")


if __name__ == "__main__":
    main()
