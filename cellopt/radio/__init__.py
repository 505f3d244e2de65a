"""The radio model: path loss, antennas, shadowing, noise, SINR, rates and the link table."""

from cellopt.radio.antenna import angle_off_boresight_deg, sector_gain_db
from cellopt.radio.cost231 import Cost231Hata
from cellopt.radio.interface import DistanceLaw, Links, Propagation
from cellopt.radio.links import coupling_db, link_table, link_table_nbytes, resource_power_dbm
from cellopt.radio.measured import link_table_from_frame
from cellopt.radio.model import RadioModel, sinr_db, thermal_noise_dbm
from cellopt.radio.pathloss import free_space, tr36814_macro, tr36814_pico
from cellopt.radio.predictions import RasterPathLoss
from cellopt.radio.propagation import ThreeGPP
from cellopt.radio.shadowing import standard_normal_hash
from cellopt.radio.spectral import SPECTRAL_EFFICIENCY, nr_mcs, shannon, shannon_gap, tr36942

__all__ = [
    "SPECTRAL_EFFICIENCY",
    "Cost231Hata",
    "DistanceLaw",
    "Links",
    "Propagation",
    "RadioModel",
    "RasterPathLoss",
    "ThreeGPP",
    "angle_off_boresight_deg",
    "coupling_db",
    "free_space",
    "link_table",
    "link_table_from_frame",
    "link_table_nbytes",
    "nr_mcs",
    "resource_power_dbm",
    "sector_gain_db",
    "shannon",
    "shannon_gap",
    "sinr_db",
    "standard_normal_hash",
    "thermal_noise_dbm",
    "tr36814_macro",
    "tr36814_pico",
    "tr36942",
]
