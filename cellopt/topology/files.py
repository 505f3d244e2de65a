"""Moved to :mod:`cellopt.topology.cellfiles`; importable from here for one release."""

from cellopt._deprecated import moved_names

__getattr__ = moved_names("cellopt.topology.files", {
    **dict.fromkeys(["OPENCELLID_COLUMNS", "OPENCELLID_REQUIRED", "read_cells"],
                    "cellopt.topology.cellfiles"),
    "MAX_DISTANCE_ERROR": "cellopt.crs",
})
