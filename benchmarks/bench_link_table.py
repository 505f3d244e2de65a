"""Link-table build time and peak memory for 100,000 users × ~2,000 cells, 8 candidates.

Run: ``python benchmarks/bench_link_table.py [--users N] [--rings R] [--workers W]``.
The layout is a hexagonal macro grid with one pico per sector (no wraparound), so that
the cell count is about 2,000 at the default ``--rings 10`` (331 sites, 993 macro
sectors, 993 picos). Peak memory is the process's maximum resident set size.
"""

from __future__ import annotations

import argparse
import resource
import time

from cellopt import radio, topology


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=100_000)
    parser.add_argument("--rings", type=int, default=10)
    parser.add_argument("--candidates", type=int, default=8)
    parser.add_argument("--workers", type=int, default=None)
    args = parser.parse_args()

    t0 = time.perf_counter()
    net = topology.hex_grid(n_rings=args.rings, wraparound=False)
    net = topology.add_picos(net, per_sector=1, rng=1)
    net = topology.drop_users(net, args.users, rng=2)
    t_build = time.perf_counter() - t0
    rss_before = peak_rss_mb()

    t0 = time.perf_counter()
    links = radio.link_table(net, n_candidates=args.candidates, rng=3, workers=args.workers)
    t_links = time.perf_counter() - t0

    print(f"network: {net.n_users} users x {net.n_cells} cells "
          f"({net.n_users * net.n_cells / 1e6:.0f} M pairs), built in {t_build:.2f} s")
    print(f"links:   {len(links)} links, {links.nbytes / 2**20:.1f} MiB of arrays")
    print(f"time:    {t_links:.2f} s  (target <= 20 s)")
    print(f"memory:  peak RSS {peak_rss_mb():.0f} MB (before link table: {rss_before:.0f} MB; "
          "target <= 2048 MB)")


if __name__ == "__main__":
    main()
