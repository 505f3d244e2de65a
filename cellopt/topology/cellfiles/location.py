"""Where a cell file's cells lie: the checks of their positions against the map.

Positions in a projected CRS that look like degrees are refused; cells in the sea are
warned about, or refused as a longitude / latitude swap when swapping the columns puts
them on land (:func:`cellopt.topology.gazetteer.on_land`); a file whose cells lie mostly
far from any town of the gazetteer is warned about, naming a likely swap.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

from cellopt.errors import ValidationError, describe_rows
from cellopt.topology.cellfiles.records import Source
from cellopt.topology.gazetteer import describe_location, on_land, town_distance_km

__all__ = ["FAR_FROM_TOWNS_KM"]


def _check_degrees_in_metres(x: np.ndarray, y: np.ndarray, lon: np.ndarray, lat: np.ndarray,
                             src: Source) -> None:
    """Refuse positions in a projected source CRS that look like longitude / latitude
    degrees: every |x| ≤ 180 and |y| ≤ 90, so that they lie within metres of the CRS's
    origin, outside the area the CRS is meant for (as a UTM zone's degrees do)."""
    if src.geographic or not len(lon) or src.crs.area_of_use is None:
        return
    with np.errstate(invalid="ignore"):
        if not ((np.abs(x) <= 180) & (np.abs(y) <= 90)).all():
            return
    west, south, east, north = src.crs.area_of_use.bounds
    inside = (lat >= south - 1) & (lat <= north + 1) & (
        ((lon >= west - 1) & (lon <= east + 1)) if west <= east
        else ((lon >= west - 1) | (lon <= east + 1)))
    if inside.any():
        return
    xname, yname = src.labels()
    raise ValidationError(
        f"{src.name}: every position has |{xname}| ≤ 180 and |{yname}| ≤ 90, so in "
        f"{src.crs.to_string()} (metres) the cells lie within metres of its origin, outside "
        f"the area it is meant for ({west:g}° to {east:g}° E, {south:g}° to {north:g}° N): "
        "they look like longitude / "
        "latitude degrees; fix: give the coordinates' own CRS, source_crs='EPSG:4326' for "
        "degrees (or, in a CSV, name the columns 'lon', 'lat' and drop source_crs)")


# A file is refused as swapped when at least this share of its cells is in the sea and
# swapping lon and lat puts more than this share on land.
_SWAP_SHARE = 0.5


def _check_land(lon: np.ndarray, lat: np.ndarray, frame: pd.DataFrame, src: Source) -> np.ndarray:
    """Refuse a file whose cells are in the sea but on land with lon and lat swapped; warn
    about cells in the sea otherwise (:func:`cellopt.topology.gazetteer.on_land`). Returns
    which cells are in the sea."""
    sea = ~on_land(lon, lat)
    if not sea.any():
        return sea
    ids = None if src.id_col is None else frame[src.id_col].to_numpy(object)[sea]
    rows = describe_rows(frame.index.to_numpy()[sea], ids, total=int(sea.sum()))
    xname, yname = src.labels()
    swappable = src.geographic and bool((np.abs(lon) <= 90).all())
    if swappable and sea.mean() >= _SWAP_SHARE:
        swapped = on_land(lat, lon)
        if swapped.mean() > _SWAP_SHARE and swapped.sum() > (~sea).sum():
            raise ValidationError(
                f"{src.name}: {int(sea.sum())} of {len(sea)} cells lie in the sea ({rows}), but "
                f"{int(swapped.sum())} would be on land with longitude and latitude swapped: the "
                f"columns '{xname}' (read as longitude) and '{yname}' (read as latitude) look "
                f"swapped; fix: swap the values of '{xname}' and '{yname}', or their names "
                "(longitude is east-west, x; latitude north-south, y)")
    read_as = (f"'{xname}' is read as longitude, '{yname}' as latitude, WGS 84 degrees; "
               "projected coordinates need source_crs=" if src.geographic else
               f"'{xname}', '{yname}' are read in {src.crs.to_string()}, the source CRS")
    warnings.warn(f"{src.name}: {rows} lie in the sea (no land within about 9 km), and swapping "
                  "longitude and latitude does not put the file on land; fix: check these "
                  f"positions ({read_as}), or pass check_land=False for cells at sea on purpose",
                  UserWarning, stacklevel=3)
    return sea


#: Cells farther than this from every town of the gazetteer (towns of 15,000 people or
#: more) are unusual for a cellular network [km]; a file with most of its cells so far
#: is warned about (and its lon / lat checked for a swap).
FAR_FROM_TOWNS_KM = 100.0


def _check_towns(lon: np.ndarray, lat: np.ndarray, src: Source) -> None:
    """Warn about a file whose cells lie mostly far from any town of the gazetteer; say when
    swapping longitude and latitude would put them near towns (a likely swap)."""
    far = town_distance_km(lon, lat) > FAR_FROM_TOWNS_KM
    if far.mean() < _SWAP_SHARE:
        return
    xname, yname = src.labels()
    message = (f"{src.name}: {int(far.sum())} of {len(far)} cells lie more than "
               f"{FAR_FROM_TOWNS_KM:g} km from any town of the GeoNames gazetteer (towns of "
               f"15,000 people or more; {_where(lon, lat)}), which is unusual for a cellular "
               "network")
    fix = (f"check the positions ('{xname}' is read as longitude, '{yname}' as latitude, WGS "
           "84 degrees), or pass check_land=False for cells there on purpose")
    if src.geographic and bool((np.abs(lon) <= 90).all()):
        near = town_distance_km(lat, lon) <= FAR_FROM_TOWNS_KM
        if near.mean() > _SWAP_SHARE:
            message += (f"; with longitude and latitude swapped {int(near.sum())} of them would "
                        f"be near a town ({_where(lat, lon)}): the columns '{xname}' (read "
                        f"as longitude) and '{yname}' (read as latitude) look swapped")
            fix = (f"swap the values of '{xname}' and '{yname}', or their names (longitude is "
                   "east-west, x; latitude north-south, y)")
    warnings.warn(f"{message}; fix: {fix}", UserWarning, stacklevel=3)


def _where(lon: np.ndarray, lat: np.ndarray) -> str:
    """:func:`~cellopt.topology.gazetteer.describe_location` without its source."""
    return describe_location(lon, lat).split(" (nearest town")[0]
