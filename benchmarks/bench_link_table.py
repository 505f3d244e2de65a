"""Link-table build time and peak memory for 100,000 users × ~2,000 cells, 8 candidates,
under the TR 36.814 model and the TR 38.901 3-D model, on the same network.

Run: ``python benchmarks/bench_link_table.py [--users N] [--rings R] [--workers W]
[--models tr36814 tr38901] [--radius M] [--repeat N]``. The layout is a hexagonal macro grid with one
pico per sector (no wraparound), so that the cell count is about 2,000 at the default
``--rings 10`` (331 sites, 993 macro sectors, 993 picos); the macros carry 10-element
panels tilted 12° (used by the 3-D antenna only). The models:

- ``tr36814``: TR 36.814 path loss and the 2-D sector pattern (the default RadioModel);
- ``tr38901``: macros TR 38.901 UMa and picos UMi street canyon at 3.5 GHz, with LOS
  states, heights, O2I loss for the 80 % indoor users and the 3-D panel pattern.

Times are given per million user–cell pairs (the dense computation evaluates every
pair) and per million links of the table. ``--radius M`` also times the interference-
radius path (``interference_radius_m=M``, the far field on). Peak memory is the
process's maximum resident set size.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time

from cellopt import radio, topology


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


MODELS = {
    "tr36814": radio.RadioModel(),
    "tr38901": radio.RadioModel(
        pathloss={"macro": radio.ThreeGPP("uma", 3.5), "pico": radio.ThreeGPP("umi", 3.5),
                  "femto": radio.tr36814_pico},
        antenna="tr38901", rat="nr", subcarrier_spacing_khz=30.0),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--rings", type=int, default=10)
    parser.add_argument("--candidates", type=int, default=8)
    parser.add_argument("--workers", type=int, default=None)
    parser.add_argument("--models", nargs="+", choices=sorted(MODELS), default=sorted(MODELS))
    parser.add_argument("--radius", type=float, default=None,
                        help="also time interference_radius_m=RADIUS (far field on)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="build each table this many times and report the median (1)")
    args = parser.parse_args()

    t0 = time.perf_counter()
    net = topology.hex_grid(n_rings=args.rings, wraparound=False, electrical_tilt_deg=12.0,
                            panel_rows=10, panel_columns=1)
    net = topology.add_picos(net, per_sector=1, rng=1)
    net = topology.drop_users(net, args.users, indoor_fraction=0.8, rng=2)
    t_build = time.perf_counter() - t0
    pairs = net.n_users * net.n_cells
    print(f"network: {net.n_users} users x {net.n_cells} cells ({pairs / 1e6:.0f} M pairs), "
          f"built in {t_build:.2f} s")
    radii = [None] + ([args.radius] if args.radius else [])
    for name in args.models:
        for radius in radii:
            times = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                links = radio.link_table(net, model=MODELS[name], n_candidates=args.candidates,
                                         rng=3, workers=args.workers,
                                         interference_radius_m=radius,
                                         far_field=radius is not None)
                times.append(time.perf_counter() - t0)
            t = statistics.median(times)
            where = "every cell" if radius is None else f"radius {radius:g} m"
            print(f"{name:8} {where:14} {t:7.2f} s  {t / pairs * 1e6:.3f} s per M pairs  "
                  f"{t / len(links) * 1e6:.2f} s per M links ({len(links):,} links)  "
                  f"peak RSS {peak_rss_mb():.0f} MB")


if __name__ == "__main__":
    import warnings

    warnings.filterwarnings("ignore", message=r"the cells' \[.*\] are not used")  # tr36814
    main()
