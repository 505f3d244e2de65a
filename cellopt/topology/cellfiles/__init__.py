"""Read real cell positions from files: plain CSV, vector files and OpenCelliD exports.

:func:`read_cells` is the entry point. The package's modules, by job:
:mod:`~cellopt.topology.cellfiles.reader` (``read_cells``, a read in one go),
:mod:`~cellopt.topology.cellfiles.formats` (telling formats apart, reading columns),
:mod:`~cellopt.topology.cellfiles.chunks` (reading ``chunk_rows`` rows at a time),
:mod:`~cellopt.topology.cellfiles.filters` (radio / mcc / mnc / bbox / polygon),
:mod:`~cellopt.topology.cellfiles.projection` (the metric CRS),
:mod:`~cellopt.topology.cellfiles.location` (cells in the sea, far from towns, or given in
degrees as metres),
:mod:`~cellopt.topology.cellfiles.opencellid` (OpenCelliD codes, de-duplication, sites),
:mod:`~cellopt.topology.cellfiles.checks` and :mod:`~cellopt.topology.cellfiles.problems`
(row checks, and the problem report naming the offending rows),
:mod:`~cellopt.topology.cellfiles.columns` (column aliases, units, and the reading table
:class:`ColumnReading`), :mod:`~cellopt.topology.cellfiles.units` (powers, heights and
frequencies converted, EARFCN and NR-ARFCN to MHz),
:mod:`~cellopt.topology.cellfiles.records` (the records they pass each other), and
:mod:`~cellopt.topology.cellfiles.measurements` (``read_measurements``: drive tests and
MDT exports, their positions read by the same rules).
"""

from cellopt.topology.cellfiles.columns import ColumnReading, ColumnUse
from cellopt.topology.cellfiles.measurements import MEASUREMENT_ALIASES, read_measurements
from cellopt.topology.cellfiles.opencellid import OPENCELLID_COLUMNS, OPENCELLID_REQUIRED
from cellopt.topology.cellfiles.reader import read_cells, recorded_readings

__all__ = ["MEASUREMENT_ALIASES", "OPENCELLID_COLUMNS", "OPENCELLID_REQUIRED", "ColumnReading", "ColumnUse",
           "read_cells", "read_measurements", "recorded_readings"]
