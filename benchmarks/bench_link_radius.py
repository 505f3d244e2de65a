"""Link tables with an interference radius: time against network size, rate error, optimum.

Run: ``python benchmarks/bench_link_radius.py [--users N] [--rings ...]``
(``--density-rings ...``, ``--skip-fixed-density``, ``--candidates``).

Three tables, every link table built with ``workers=None`` (all CPUs), networks built
outside the timing:

1. Time against cells. Hexagonal macro grids (3 sectors, ISD 500 m, no wraparound) with
   ``--rings`` rings and ``--users`` users: the full link table (every cell interferes,
   time ∝ users × cells) against the table with the automatic interference radius
   (``auto_radius_m(net)``), and the user–cell pairs each evaluates (full:
   users × cells; radius: the cells within the radius of each user, counted with a
   k-d tree outside the timing, and the same floored at the minimum number of cells
   every user sees exactly). A second block keeps the user density fixed (users ∝
   cells, ``--users`` on the 8-ring grid) and times the radius version only, up to
   32 rings: its time should grow linearly with the network.
2. Rates with a radius against the full computation, on a 16-ring hex grid with 50,000
   users and a Poisson macro + pico layout (20 km side) with 20,000 users, for the
   automatic radius, 2 km and 4 km, with and without the far field: rate and SINR
   errors on the links both tables hold, the share of the full table's links kept, the
   share of users whose best cell (by RSRP) is unchanged, and the violations of the
   bound ``sinr_db + far_field_db >= full sinr_db`` (the SINR counting only the cells
   within the radius can only be higher than the exact one).
3. What it does to the optimum: ``method="dual"`` on the full table and on the tables
   with the automatic radius (far field on and off), objective, bound, status, the
   relative change of the objective and the mean change of the users' rates.
"""

from __future__ import annotations

import argparse
import resource
import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy.spatial import cKDTree

import cellopt
from cellopt import radio, topology
from cellopt.drop import Drop
from cellopt.linktable import LinkTable
from cellopt.network import Network
from cellopt.radio.far_field import auto_radius_m
from cellopt.radio.links import MIN_NEARBY_CELLS

#: Seeds: users, shadowing, Poisson layout, Poisson users.
USER_SEED, SHADOW_SEED, LAYOUT_SEED, POISSON_USER_SEED = 2, 3, 4, 5
#: Medium networks of tables 2 and 3.
MEDIUM_RINGS, MEDIUM_USERS = 16, 50_000
POISSON_SIDE_M, POISSON_USERS = 20_000.0, 20_000
POISSON_TIERS = {"macro": {"density_per_km2": 1.0}, "pico": {"density_per_km2": 4.0}}
#: Radii of table 2 ("auto": auto_radius_m).
RADII: tuple[str | float, ...] = ("auto", 2000.0, 4000.0)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def timed(fn: Callable[[], Any]) -> tuple[Any, float]:
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def print_table(title: str, headers: Sequence[str], rows: Sequence[Sequence[str]]) -> None:
    """An aligned plain-text table: title, header, rule, rows (first column left-aligned)."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths, strict=True)))

    print(f"\n{title}")
    print(line(headers))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print(line(r))
    print(flush=True)


def hex_network(rings: int, users: int) -> Network:
    net = topology.hex_grid(n_rings=rings, wraparound=False)
    return topology.drop_users(net, users, rng=USER_SEED)


def poisson_network() -> Network:
    net = topology.poisson_layout(POISSON_TIERS, side_m=POISSON_SIDE_M, wraparound=False,
                                  rng=LAYOUT_SEED)
    return topology.drop_users(net, POISSON_USERS, rng=POISSON_USER_SEED)


def pairs_within(net: Network, radius_m: float, n_candidates: int) -> tuple[int, int]:
    """User–cell pairs within the radius, and the same with each user floored at the minimum
    number of cells the link table counts exactly."""
    c, u = net.cell_arrays(), net.user_arrays()
    tree = cKDTree(np.column_stack([c["x_m"], c["y_m"]]))
    count = tree.query_ball_point(np.column_stack([u["x_m"], u["y_m"]]), radius_m,
                                  return_length=True)
    floor = min(max(n_candidates, MIN_NEARBY_CELLS), net.n_cells)
    return int(count.sum()), int(np.maximum(count, floor).sum())


def links_of(net: Network, n_candidates: int, radius: str | float | None = None,
             far_field: bool = True) -> tuple[LinkTable, float]:
    return timed(lambda: radio.link_table(net, n_candidates, rng=SHADOW_SEED, workers=None,
                                          interference_radius_m=radius, far_field=far_field))


def compare(full: LinkTable, near: LinkTable) -> dict[str, float]:
    """Rate and SINR errors of `near` on the links both tables hold, and what it keeps."""
    k = full.n_resources

    def key(t: LinkTable) -> np.ndarray:
        return (t.user * t.n_cells + t.cell) * k + t.resource

    _, i_f, i_n = np.intersect1d(key(full), key(near), assume_unique=True, return_indices=True)
    d_rate = np.abs(near.rate_mbps[i_n] - full.rate_mbps[i_f])
    d_sinr = np.abs(near.sinr_db[i_n] - full.sinr_db[i_f])
    shift = near.far_field_db[i_n].astype(float) if near.far_field_db is not None else 0.0
    violations = int(np.sum(near.sinr_db[i_n] + shift < full.sinr_db[i_f] - 1e-9))
    n = max(len(i_f), 1)
    return {
        "max_rate": float(d_rate.max(initial=0.0)),
        "mean_rate": float(d_rate.mean()) if len(d_rate) else 0.0,
        "abs_changed": float(np.sum(d_rate > 1e-3)) / n,
        "rel_changed": float(np.sum(d_rate > 0.01 * np.abs(full.rate_mbps[i_f]))) / n,
        "mean_sinr": float(d_sinr.mean()) if len(d_sinr) else 0.0,
        "max_sinr": float(d_sinr.max(initial=0.0)),
        "kept": len(i_f) / max(len(full), 1),
        "best_same": float(np.mean(full.best_by("rsrp_dbm") == near.best_by("rsrp_dbm"))),
        "violations": violations,
    }


def pct(x: float) -> str:
    return f"{100 * x:.2f} %"


def time_against_cells(args: argparse.Namespace, cache: dict[str, Any]) -> None:
    rows = []
    for rings in args.rings:
        net = hex_network(rings, args.users)
        r = auto_radius_m(net)
        full, t_full = links_of(net, args.candidates)
        near, t_near = links_of(net, args.candidates, r)
        in_r, floored = pairs_within(net, r, args.candidates)
        rows.append([str(rings), f"{net.n_cells:,}", f"{net.n_users:,}", f"{r:.0f}",
                     f"{t_full:.2f}", f"{t_near:.2f}", f"{t_full / t_near:.1f}",
                     f"{net.n_users * net.n_cells / 1e6:.1f}", f"{in_r / 1e6:.1f}",
                     f"{floored / 1e6:.1f}", f"{len(near):,}"])
        if rings == MEDIUM_RINGS and args.users == MEDIUM_USERS:
            cache["hex"] = (net, full, t_full)
        del full, near
    print_table(
        f"Table 1a: link-table time against cells, {args.users:,} users, {args.candidates} "
        "candidates, automatic radius (pairs in millions; 'floored': at least "
        f"{max(args.candidates, MIN_NEARBY_CELLS)} cells per user)",
        ["rings", "cells", "users", "R [m]", "full [s]", "radius [s]", "full/radius",
         "pairs full", "pairs in R", "floored", "links"], rows)

    if args.skip_fixed_density:
        return
    base_cells = topology.hex_grid(n_rings=8, wraparound=False).n_cells
    rows = []
    for rings in args.density_rings:
        cells = topology.hex_grid(n_rings=rings, wraparound=False).n_cells
        net = hex_network(rings, round(args.users * cells / base_cells))
        r = auto_radius_m(net)
        near, t_near = links_of(net, args.candidates, r)
        in_r, floored = pairs_within(net, r, args.candidates)
        rows.append([str(rings), f"{net.n_cells:,}", f"{net.n_users:,}", f"{r:.0f}",
                     f"{t_near:.2f}", f"{len(near):,}", f"{in_r / 1e6:.1f}", f"{floored / 1e6:.1f}",
                     f"{t_near / len(near) * 1e6:.2f}", f"{t_near / floored * 1e6:.3f}",
                     f"{t_near / in_r * 1e6:.3f}", f"{peak_rss_mb():.0f}"])
        del near, net
    print_table(
        f"Table 1b: radius link-table time at fixed user density ({args.users:,} users per "
        f"{base_cells} cells), automatic radius (pairs in millions)",
        ["rings", "cells", "users", "R [m]", "radius [s]", "links", "pairs in R", "floored",
         "s/1e6 links", "s/1e6 floored", "s/1e6 pairs in R", "peak RSS [MB]"], rows)


def rate_errors(args: argparse.Namespace, cache: dict[str, Any]) -> dict[str, Any]:
    """Table 2; returns per network (net, full table, auto-radius tables by far_field)."""
    if "hex" not in cache:
        net = hex_network(MEDIUM_RINGS, MEDIUM_USERS)
        full, t_full = links_of(net, args.candidates)
        cache["hex"] = (net, full, t_full)
    net = poisson_network()
    full, t_full = links_of(net, args.candidates)
    cache["poisson"] = (net, full, t_full)

    names = {"hex": f"hex {MEDIUM_RINGS} rings", "poisson": f"Poisson {POISSON_SIDE_M / 1e3:.0f} km"}
    kept: dict[str, Any] = {}
    rows = []
    for name in ("hex", "poisson"):
        net, full, t_full = cache[name]
        label = f"{names[name]} ({net.n_cells:,} cells, {net.n_users:,} users)"
        rows.append([label, "none", "-", f"{t_full:.2f}", f"{len(full):,}"] + ["-"] * 10)
        kept[name] = {"net": net, "full": full}
        for radius in RADII:
            for far_field in (True, False):
                near, t_near = links_of(net, args.candidates, radius, far_field)
                m = compare(full, near)
                tag = "auto" if radius == "auto" else f"{radius:.0f}"
                rows.append([label, f"{tag} ({near.radius_m:.0f})", "on" if far_field else "off",
                             f"{t_near:.2f}", f"{len(near):,}",
                             f"{m['max_rate']:.4f}", f"{m['mean_rate']:.5f}",
                             pct(m["abs_changed"]), pct(m["rel_changed"]),
                             f"{m['mean_sinr']:.4f}", f"{m['max_sinr']:.3f}", pct(m["kept"]),
                             pct(m["best_same"]), str(m["violations"]),
                             f"{100 * t_near / t_full:.0f} %"])
                if radius == "auto":
                    kept[name][far_field] = near
    print_table(
        "Table 2: rates with a radius against the full computation, on the links both tables "
        "hold (Δ = radius − full; rates in Mbit/s, SINR in dB)",
        ["network", "R [m]", "far", "time [s]", "links", "max|Δrate|", "mean|Δrate|",
         ">1e-3", ">1 %", "mean|ΔSINR|", "max|ΔSINR|", "links kept", "best same",
         "bound viol.", "time/full"], rows)
    return kept


def optimum(kept: dict[str, Any]) -> None:
    rows = []
    for name, tables in kept.items():
        net = tables["net"]
        label = f"hex {MEDIUM_RINGS} rings" if name == "hex" else \
            f"Poisson {POISSON_SIDE_M / 1e3:.0f} km"
        ref_drop = Drop.from_network(net, tables["full"])
        ref, t_ref = timed(lambda d=ref_drop: cellopt.solve(d.problem, method="dual", tol=1e-4))
        ref_rate = ref_drop.per_user(ref.user_rate_mbps)
        rows.append([label, "full", f"{int(ref_drop.solvable.sum()):,}", f"{ref.objective:.3f}",
                     f"{ref.upper_bound:.3f}", ref.status, f"{t_ref:.2f}", "-", "-", "-", "-"])
        for far_field in (True, False):
            drop = Drop.from_network(net, tables[far_field])
            sol, t_sol = timed(lambda d=drop: cellopt.solve(d.problem, method="dual", tol=1e-4))
            both = ref_drop.solvable & drop.solvable
            differ = int(np.sum(ref_drop.solvable != drop.solvable))
            d_rate = np.abs(drop.per_user(sol.user_rate_mbps)[both] - ref_rate[both])
            rel = (sol.objective - ref.objective) / abs(ref.objective)
            rows.append([label, f"auto, far {'on' if far_field else 'off'}",
                         f"{int(drop.solvable.sum()):,}", f"{sol.objective:.3f}",
                         f"{sol.upper_bound:.3f}", sol.status, f"{t_sol:.2f}", f"{rel:+.2e}",
                         f"{d_rate.mean():.4f}", f"{d_rate.mean() / ref_rate[both].mean():.2e}",
                         str(differ)])
    print_table(
        "Table 3: the optimum (method='dual', tol=1e-4) on the full table and with the automatic "
        "radius (rates in Mbit/s, over the users solvable in both)",
        ["network", "links", "solvable", "objective", "upper bound", "status", "solve [s]",
         "rel Δobj", "mean|Δrate|", "rel to mean", "solvable differ"], rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=50_000,
                        help="users of table 1a, and per 8-ring grid in table 1b")
    parser.add_argument("--rings", type=int, nargs="+", default=[8, 16, 24])
    parser.add_argument("--density-rings", type=int, nargs="+", default=[8, 16, 24, 32])
    parser.add_argument("--skip-fixed-density", action="store_true")
    parser.add_argument("--candidates", type=int, default=8)
    args = parser.parse_args()

    t0 = time.perf_counter()
    # Warm-up (imports, first allocations) outside every timing.
    warm = hex_network(1, 100)
    radio.link_table(warm, args.candidates, rng=SHADOW_SEED)
    radio.link_table(warm, args.candidates, rng=SHADOW_SEED, interference_radius_m="auto")

    cache: dict[str, Any] = {}
    time_against_cells(args, cache)
    kept = rate_errors(args, cache)
    cache.clear()
    optimum(kept)
    print(f"total run time {time.perf_counter() - t0:.1f} s, peak RSS {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    main()
