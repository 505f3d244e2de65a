"""Cost of the coverage maps `cellopt run` writes, on a family of shipped scenarios.

Run: ``python benchmarks/bench_coverage.py [--scenarios NAME ...] [--seeds S ...]
[--resolution M] [--max-pixels N] [--repeat N]``.

For each scenario and seed: build the drop, solve it with ``dual``, then time
:func:`cellopt.coverage.coverage_map` at the scenario's coverage settings (or the ones
given), the median of ``--repeat`` runs. The table gives the grid, the pixels inside the
area, the time, the time per 10⁴ pixels, the time of the drop's own link table (the same
machinery for the users) and the ratio of the two, and the peak resident memory. The
family varies the layout (hexagonal, Poisson, indoor hall), the tiers (macro, pico,
femto), the radio model (TR 36.814, TR 38.901 3-D), the area (guard band or not) and the
size, up to the national ``country`` layout, whose map is coarsened to the pixel budget.
It does not cover cell files (their cost is that of a layout of the same cell count).
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time

from cellopt.coverage import coverage_map
from cellopt.study import Scenario, load_scenario

FAMILY = ("hetnet", "macro_3gpp", "femto_backhaul", "city_synthetic", "nr_hetnet",
          "nr_inh_calibration", "hetnet_power", "ye_random", "country")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scenarios", nargs="+", default=list(FAMILY))
    parser.add_argument("--seeds", nargs="+", type=int, default=[1, 2])
    parser.add_argument("--resolution", type=float, default=None,
                        help="pixel size [m] (default: the scenario's [coverage] resolution_m)")
    parser.add_argument("--max-pixels", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--users", type=int, default=2000,
                        help="users per drop (the map does not depend on them; fewer build faster)")
    args = parser.parse_args()
    print(f"{'scenario':<20} {'seed':>4} {'cells':>6} {'grid':>11} {'res_m':>6} {'pixels':>9} "
          f"{'map_s':>7} {'s/1e4px':>8} {'links_s':>8} {'map/links':>9} {'rss_mb':>7}")
    per_pixel = []
    for name in args.scenarios:
        scenario = load_scenario(name)
        raw = dict(scenario.raw)  # a user count in place of a density (country: 10 million)
        raw["users"] = {k: v for k, v in raw.get("users", {}).items() if k != "density_per_km2"}
        raw["users"]["n"] = args.users
        raw["methods"] = ["dual"]
        scenario = Scenario.from_dict(raw, scenario.path)
        settings = scenario.coverage
        resolution = args.resolution or settings.resolution_m
        max_pixels = args.max_pixels or settings.max_pixels
        for seed in args.seeds:
            t = time.perf_counter()
            drop = scenario.build(seed)
            links_s = time.perf_counter() - t
            solution = drop.solve("dual")
            times = []
            for _ in range(args.repeat):
                t = time.perf_counter()
                cov = coverage_map(drop, solution, resolution_m=resolution, max_pixels=max_pixels)
                times.append(time.perf_counter() - t)
            map_s = statistics.median(times)
            pixels = int((cov.best_server >= 0).sum())
            per_pixel.append(map_s / max(pixels, 1) * 1e4)
            rows, cols = cov.shape
            rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
            print(f"{name:<20} {seed:>4} {drop.network.n_cells:>6} {f'{cols}x{rows}':>11} "
                  f"{cov.resolution_m:>6g} {pixels:>9,} {map_s:>7.2f} {per_pixel[-1]:>8.3f} "
                  f"{links_s:>8.2f} {map_s / links_s:>9.2f} {rss:>7.0f}", flush=True)
    print(f"time per 10^4 pixels: median {statistics.median(per_pixel):.3f} s, "
          f"worst {max(per_pixel):.3f} s over {len(per_pixel)} maps")


if __name__ == "__main__":
    main()
