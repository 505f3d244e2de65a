"""The smallest scenario the CLI, sweep and store tests run: 7 macro sites, 30 users."""

from __future__ import annotations


def small_scenario(drops: int) -> str:
    """TOML text of the small scenario with `drops` drops (seed base 3)."""
    return f"""
methods = ["max_rsrp", "alm"]

[network]
builder = "hex_grid"
n_rings = 1

[users]
n = 30

[radio]
n_candidates = 4

[seeds]
base = 3
drops = {drops}
"""
