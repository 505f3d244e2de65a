"""Moved to :mod:`cellopt.crs`; importable from here for one release."""

from cellopt._deprecated import moved_names

__getattr__ = moved_names("cellopt.topology.projection", dict.fromkeys(
    ["MAX_DISTANCE_ERROR", "describe_error", "metric_crs"], "cellopt.crs"))
