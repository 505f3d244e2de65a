"""Studies: scenario files, one-drop runs, resumable sweeps, capacity searches, summaries.

- :mod:`~cellopt.study.scenario` — TOML scenario files; one draw builds a
  :class:`cellopt.Drop`;
- :mod:`~cellopt.study.runkinds` — what a drop is solved with: a method, or the
  ``[power]`` section;
- :mod:`~cellopt.study.run` — one drop solved by every run, with tables, a
  GeoPackage, coverage GeoTIFFs, figures and an HTML report (``cellopt run``), one
  entry of :mod:`~cellopt.study.outputs` per file;
- :mod:`~cellopt.study.runviews` — a run's figures and report page;
- :mod:`~cellopt.study.tables` — a run's tables, and the columns they declare;
- :mod:`~cellopt.study.gis` — the GeoPackage's layers (per method, association lines,
  sector wedges, areas);
- :mod:`~cellopt.study.rasters` — coverage maps as GeoTIFF;
- :mod:`~cellopt.study.sweep` — drops × a parameter grid (``cellopt experiment``);
- :mod:`~cellopt.study.capacity` — the largest user density meeting a rate target;
- :mod:`~cellopt.study.summary` — summary tables;
- :mod:`~cellopt.study.store` — results folders: atomic files, one ``meta.json`` schema,
  resume checks; :mod:`~cellopt.study.lock` — one run per folder;
- :mod:`~cellopt.study.tasks` — tasks on worker processes or a Dask cluster;
- :mod:`~cellopt.study.report` — the self-contained HTML report.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

#: Public name -> its module. Loaded when first used, so that loading a scenario and
#: building a drop (:mod:`cellopt.study.scenario`) do not import what runs and reports
#: need: matplotlib, rasterio (GDAL), pyogrio. The function capacity stays in its module
#: (``cellopt.study.capacity.capacity``, or ``cellopt.capacity``): re-exported here it
#: would hide the module of the same name.
_LAZY: dict[str, str] = {
    **dict.fromkeys(["CapacityResult", "capacity_sweep", "pooled_rates_mbps"],
                    "cellopt.study.capacity"),
    **dict.fromkeys(["layer_suffixes", "sector_wedges"], "cellopt.study.gis"),
    "write_geotiff": "cellopt.study.rasters",
    **dict.fromkeys(["CoverageLayer", "write_report"], "cellopt.study.report"),
    **dict.fromkeys(["RunResult", "run_scenario"], "cellopt.study.run"),
    **dict.fromkeys(["MethodRun", "PowerRun", "RunKind"], "cellopt.study.runkinds"),
    **dict.fromkeys(["Scenario", "find_scenario", "load_scenario", "shipped_scenarios"],
                    "cellopt.study.scenario"),
    **dict.fromkeys(["drop_seed", "drop_seeds"], "cellopt.study.seeds"),
    "cached_frame": "cellopt.study.store",
    **dict.fromkeys(["link_summary", "method_summary", "rate_summary", "sweep_table"],
                    "cellopt.study.summary"),
    **dict.fromkeys(["collect", "load_rates", "run_sweep"], "cellopt.study.sweep"),
    "run_tasks": "cellopt.study.tasks",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
    else:  # a module of the package, e.g. cellopt.study.sweep
        try:
            value = importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as err:
            if err.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module 'cellopt.study' has no attribute {name!r}") from None
    globals()[name] = value  # later lookups skip __getattr__
    return value


def __dir__() -> list[str]:
    """The public names (``__all__``), loaded or not."""
    return sorted(__all__)


if TYPE_CHECKING:  # for type checkers and IDEs: the same names, eagerly
    from cellopt.study.capacity import CapacityResult, capacity_sweep, pooled_rates_mbps  # noqa: F401
    from cellopt.study.gis import layer_suffixes, sector_wedges  # noqa: F401
    from cellopt.study.rasters import write_geotiff  # noqa: F401
    from cellopt.study.report import CoverageLayer, write_report  # noqa: F401
    from cellopt.study.run import RunResult, run_scenario  # noqa: F401
    from cellopt.study.runkinds import MethodRun, PowerRun, RunKind  # noqa: F401
    from cellopt.study.scenario import Scenario, find_scenario, load_scenario, shipped_scenarios  # noqa: F401
    from cellopt.study.seeds import drop_seed, drop_seeds  # noqa: F401
    from cellopt.study.store import cached_frame  # noqa: F401
    from cellopt.study.summary import (  # noqa: F401
        link_summary,
        method_summary,
        rate_summary,
        sweep_table,
    )
    from cellopt.study.sweep import collect, load_rates, run_sweep  # noqa: F401
    from cellopt.study.tasks import run_tasks  # noqa: F401
