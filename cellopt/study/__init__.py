"""Studies: scenario files, one-drop runs, resumable sweeps, capacity searches, summaries.

- :mod:`~cellopt.study.scenario` — TOML scenario files; one draw builds a
  :class:`cellopt.Drop`;
- :mod:`~cellopt.study.run` — one drop solved by every method, with tables, a
  GeoPackage, coverage GeoTIFFs, figures and an HTML report (``cellopt run``);
- :mod:`~cellopt.study.gis` — the GeoPackage's layers (per method, association lines,
  sector wedges, areas);
- :mod:`~cellopt.study.rasters` — coverage maps as GeoTIFF;
- :mod:`~cellopt.study.sweep` — drops × a parameter grid (``cellopt experiment``);
- :mod:`~cellopt.study.capacity` — the largest user density meeting a rate target;
- :mod:`~cellopt.study.summary` — summary tables;
- :mod:`~cellopt.study.store` — results folders: atomic files, one ``meta.json`` schema,
  resume checks;
- :mod:`~cellopt.study.tasks` — tasks on worker processes or a Dask cluster;
- :mod:`~cellopt.study.report` — the self-contained HTML report.
"""

# The function capacity stays in its module (cellopt.study.capacity.capacity, or cellopt.capacity):
# re-exported here it would hide the module of the same name.
from cellopt.study.capacity import CapacityResult, capacity_sweep, pooled_rates_mbps
from cellopt.study.gis import layer_suffixes, sector_wedges
from cellopt.study.rasters import write_geotiff
from cellopt.study.report import CoverageLayer, write_report
from cellopt.study.run import RunResult, run_scenario
from cellopt.study.scenario import (
    MethodSpec,
    Scenario,
    find_scenario,
    load_scenario,
    shipped_scenarios,
)
from cellopt.study.seeds import drop_seed, drop_seeds
from cellopt.study.store import cached_frame
from cellopt.study.summary import link_summary, method_summary, rate_summary, sweep_table
from cellopt.study.sweep import collect, load_rates, run_sweep
from cellopt.study.tasks import run_tasks

__all__ = [
    "CapacityResult", "CoverageLayer", "MethodSpec", "RunResult", "Scenario", "cached_frame",
    "capacity_sweep", "collect", "drop_seed", "drop_seeds", "find_scenario", "layer_suffixes",
    "link_summary", "load_rates", "load_scenario", "method_summary", "pooled_rates_mbps",
    "rate_summary", "run_scenario", "run_sweep", "run_tasks", "sector_wedges",
    "shipped_scenarios", "sweep_table", "write_geotiff", "write_report",
]
