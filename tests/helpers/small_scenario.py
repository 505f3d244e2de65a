"""The smallest scenario the CLI, sweep and store tests run: 7 macro sites, 30 users."""

from __future__ import annotations

#: The deployable settings of the small scenario: fitted on 2 drops, judged on 1 (the
#: defaults, 16 and 5, are what tests/deploy/test_deploy_run.py and `cellopt run hetnet` check).
FEW_DEPLOY_DROPS = "[deploy]\ntraining_drops = 2\nheld_out_drops = 1\n"


def small_scenario(drops: int, deploy: str = FEW_DEPLOY_DROPS) -> str:
    """TOML text of the small scenario with `drops` drops (seed base 3) and the `[deploy]`
    section `deploy`."""
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

{deploy}"""
