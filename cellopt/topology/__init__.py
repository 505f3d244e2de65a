"""Topology builders: standard 3GPP layouts, real cell sites, femtocells and users."""

from cellopt.topology.areas import CELLS_REGION_BUFFER_M, cells_region, study_window
from cellopt.topology.cellfiles import read_cells, read_measurements
from cellopt.topology.country import country_layout
from cellopt.topology.femto import WIFI_DENSITY_PER_KM2, add_femtocells
from cellopt.topology.hexgrid import (
    DEFAULT_ORIGIN_LONLAT,
    SECTOR_ORIENTATIONS,
    add_picos,
    hex_grid,
    synthetic_crs,
)
from cellopt.topology.office import indoor_office
from cellopt.topology.poisson import poisson_layout
from cellopt.topology.sites import sectorize
from cellopt.topology.square import square_grid as square_grid
from cellopt.topology.users import drop_users

__all__ = ["CELLS_REGION_BUFFER_M", "DEFAULT_ORIGIN_LONLAT", "SECTOR_ORIENTATIONS", "WIFI_DENSITY_PER_KM2",
           "add_femtocells", "add_picos", "cells_region", "country_layout", "drop_users", "hex_grid",
           "indoor_office", "poisson_layout", "read_cells", "read_measurements", "sectorize", "study_window",
           "synthetic_crs"]
