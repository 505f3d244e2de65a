"""The files of per-cell rasters: their metadata, opened with rasterio, and their pixel values.

:class:`RasterInfo` is one cell's raster (no pixels): its file, band, CRS, grid, nodata,
scale and offset. A folder of single-band GeoTIFFs, or one multi-band GeoTIFF, is read
into them here, every file checked (georeferenced, a projected CRS, a north-up grid, band
descriptions that name the cells), each problem named with its file and fix. rasterio is
imported when a file is first opened (:func:`_rio`): loading a scenario or building a
drop, which read no raster, do not pay for GDAL. :class:`~cellopt.radio.raster_io.RasterSet`
reads and samples the pixels.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pyproj

from cellopt.errors import ValidationError

__all__ = ["RasterInfo"]

#: File names read from a folder (any case).
SUFFIXES: tuple[str, ...] = (".tif", ".tiff")
# Ids shown in a message before the rest are counted.
_IDS_LISTED = 5
_FIX_SOURCE = ("give a folder of single-band GeoTIFFs named <cell_id>.tif, or one multi-band GeoTIFF "
               "whose band descriptions are the cell ids")


@dataclass(frozen=True, eq=False)
class RasterInfo:
    """Metadata of one cell's raster (no pixels).

    Attributes
    ----------
    cell_id : str
        The cell the raster is for.
    path : pathlib.Path
        Its file.
    band : int
        Its band in the file, from 1.
    crs : pyproj.CRS
        Its CRS, projected.
    transform : affine.Affine
        Pixel (column, row) corner → (x, y) in `crs`; north-up (no rotation, no shear).
    nodata : float or None
        The band's nodata value (NaN is always missing too).
    shape : (int, int)
        (rows, columns).
    resolution_m : (float, float)
        Pixel width and height [m].
    scale, offset : float
        Value = stored value × scale + offset (GeoTIFF band scale and offset; 1 and 0 when
        unset).
    n_bands : int
        Bands of the file (1 in a folder).
    """

    cell_id: str
    path: Path
    band: int
    crs: pyproj.CRS
    transform: Any
    nodata: float | None
    shape: tuple[int, int]
    resolution_m: tuple[float, float]
    scale: float = 1.0
    offset: float = 0.0
    n_bands: int = 1

    @property
    def bounds(self) -> tuple[float, float, float, float]:
        """(left, bottom, right, top) of the raster's extent in its own CRS."""
        t = self.transform
        rows, cols = self.shape
        xs = (t.c, t.c + t.a * cols)
        ys = (t.f, t.f + t.e * rows)
        return min(xs), min(ys), max(xs), max(ys)

    @property
    def label(self) -> str:
        """The file, and the band for a multi-band file, for messages."""
        return f"{self.path} band {self.band} (cell {self.cell_id!r})" if self.n_bands > 1 else str(self.path)



def _read_folder(folder: Path) -> dict[str, RasterInfo]:
    """The rasters of a folder, one single-band file per cell, by cell id."""
    files = sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in SUFFIXES)
    if not files:
        others = sorted(p.name for p in folder.iterdir())
        held = f"it holds {len(others)} other entries: {_few(others)}" if others else "it is empty"
        raise ValidationError(f"raster folder {folder} holds no .tif or .tiff file ({held}); fix: "
                              f"{_FIX_SOURCE}")
    infos: dict[str, RasterInfo] = {}
    problems = []
    for path in files:
        try:
            found = _file_infos(path, in_folder=True)
        except ValidationError as err:
            problems += err.problems
            continue
        info = found[0]
        if info.cell_id in infos:
            problems.append(f"{folder}: two files for cell {info.cell_id!r}: {infos[info.cell_id].path.name} "
                            f"and {path.name}; fix: keep one of them")
            continue
        infos[info.cell_id] = info
    if problems:
        raise ValidationError(problems)
    return infos


def _read_file(path: Path) -> dict[str, RasterInfo]:
    """The rasters of one file, by cell id (its bands' descriptions)."""
    return {info.cell_id: info for info in _file_infos(path, in_folder=False)}


def _file_infos(path: Path, in_folder: bool) -> list[RasterInfo]:
    """Metadata of every band of `path`, checked; ValidationError with all its problems."""
    try:
        with _open(path) as src:
            crs, transform = src.crs, src.transform
            count, shape = src.count, (src.height, src.width)
            descriptions = list(src.descriptions)
            nodata = src.nodatavals
            scales, offsets = src.scales, src.offsets
            georeferenced = not (crs is None and transform.is_identity)
    except _rio().errors.RasterioIOError as err:
        raise ValidationError(f"{path}: not a raster rasterio can read ({err}); fix: give GeoTIFF files, "
                              "or remove this file from the folder") from None
    problems = []
    if not georeferenced:
        problems.append(f"{path}: not georeferenced (no transform, no CRS); fix: export the raster as a "
                        "GeoTIFF with its grid and projected CRS")
    elif crs is None:
        problems.append(f"{path}: no CRS; fix: assign the CRS the planning tool used, e.g. "
                        f"`gdal_edit.py -a_srs EPSG:32632 {path}` (a projected CRS in metres)")
    pcrs = None if crs is None else pyproj.CRS.from_user_input(crs.to_wkt())
    factor = None
    if pcrs is not None:
        factor = _metres_per_unit(pcrs)
        if factor is None:
            what = "geographic (degrees)" if pcrs.is_geographic else "not projected"
            problems.append(f"{path}: its CRS {pcrs.name!r} is {what}; pixel sizes and distances need a "
                            f"projected CRS; fix: reproject it, e.g. `gdalwarp -t_srs EPSG:32632 -r bilinear "
                            f"{path} out.tif` with the UTM zone of the area")
    if transform.b != 0.0 or transform.d != 0.0:
        problems.append(f"{path}: its grid is rotated or sheared (transform {tuple(transform)[:6]}); fix: "
                        f"warp it to a north-up grid, e.g. `gdalwarp -r bilinear {path} out.tif`")
    if transform.a == 0.0 or transform.e == 0.0:
        problems.append(f"{path}: its transform has a zero pixel size; fix: export it with its grid")
    if in_folder and count != 1:
        problems.append(f"{path}: {count} bands, but the files of a folder hold one cell each; fix: give "
                        "this multi-band file itself as the source, or split its bands into "
                        "<cell_id>.tif files")
    ids: list[str] = []
    if in_folder or (count == 1 and not descriptions[0]):
        ids = [path.stem]
    else:
        blank = [b for b, d in enumerate(descriptions, 1) if not d]
        if blank:
            problems.append(f"{path}: bands {_few(blank)} have no description, which must be their cell "
                            "id; fix: set them, e.g. with rasterio: `with rasterio.open(path, 'r+') as ds: "
                            "ds.set_band_description(band, cell_id)`, or split the bands into "
                            "<cell_id>.tif files")
        repeated: dict[str, list[int]] = {}
        for b, d in enumerate(descriptions, 1):
            if d:
                repeated.setdefault(d, []).append(b)
        repeated = {d: bands for d, bands in repeated.items() if len(bands) > 1}
        if repeated:
            shown = "; ".join(f"{d!r}: bands {bands}" for d, bands in list(repeated.items())[:_IDS_LISTED])
            problems.append(f"{path}: band descriptions repeat ({shown}); each band is one cell; fix: "
                            "give each band its own cell id as description")
        ids = [str(d) for d in descriptions]
    if problems:
        raise ValidationError(problems)
    res = (abs(transform.a) * factor, abs(transform.e) * factor)
    return [RasterInfo(cell_id=cell, path=path, band=b, crs=pcrs, transform=transform,
                       nodata=None if nodata[b - 1] is None else float(nodata[b - 1]), shape=shape,
                       resolution_m=res, scale=float(scales[b - 1]), offset=float(offsets[b - 1]),
                       n_bands=count)
            for b, cell in enumerate(ids, 1)]


def _rio() -> Any:
    """rasterio, imported on first use: loading a scenario or building a drop, which read no
    raster, do not pay for it (GDAL)."""
    import rasterio
    import rasterio.enums
    import rasterio.errors
    import rasterio.windows

    return rasterio


@contextlib.contextmanager
def _open(path: Path) -> Iterator[Any]:
    """rasterio.open, the not-georeferenced warning left to the caller's checks.

    A file that cannot be opened raises rasterio's error (the callers say what it is not);
    a read in the block that fails (a damaged or truncated file) raises a ValidationError
    naming the file and GDAL's messages, for rasterio's own says only "Read failed".
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", _rio().errors.NotGeoreferencedWarning)
        src = _rio().open(path)
    with src:
        try:
            yield src
        except _rio().errors.RasterioIOError as err:
            raise ValidationError(f"{path}: reading its pixels failed ({_messages(err)}): the file "
                                  "is damaged or cut short; fix: export it again, or remove it "
                                  "from the source") from err


def _messages(err: BaseException, depth: int = 5) -> str:
    """The messages of `err` and of the errors it was raised from, one line (rasterio's
    "See previous exception for details" left out: the previous one is shown)."""
    parts: list[str] = []
    seen: BaseException | None = err
    while seen is not None and len(parts) < depth:
        text = " ".join(str(seen).replace("See previous exception for details.", "").split())
        part = f"{type(seen).__name__}: {text or 'no message'}"
        if part not in parts:
            parts.append(part)
        seen = seen.__cause__ or seen.__context__
    return "; ".join(parts)


def _metres_per_unit(crs: pyproj.CRS) -> float | None:
    """Metres per unit of a projected CRS's axes; None if it is not projected."""
    horizontal = crs.sub_crs_list[0] if crs.is_compound and crs.sub_crs_list else crs
    if not horizontal.is_projected:
        return None
    axes = [ax for ax in horizontal.axis_info if ax.unit_conversion_factor]
    return float(axes[0].unit_conversion_factor) if axes else 1.0


def _plain_values(raw: np.ndarray, info: RasterInfo) -> np.ndarray:
    """Raw pixel values as float64 with scale and offset applied, NaN where nodata (or
    not finite)."""
    values = raw.astype(np.float64) * info.scale + info.offset
    missing = ~np.isfinite(values)
    if info.nodata is not None:
        missing |= raw == info.nodata
    values[missing] = np.nan
    return values


def _values(data: np.ma.MaskedArray, info: RasterInfo) -> np.ndarray:
    """A band's values as float64 with scale and offset applied, NaN where missing (or infinite)."""
    values = np.asarray(data.data, dtype=np.float64) * info.scale + info.offset
    values[np.ma.getmaskarray(data) | ~np.isfinite(values)] = np.nan
    return values


def _holds_only_nodata(info: RasterInfo) -> bool:
    """True if no pixel of the band has a value (read block by block, stopping at the first value)."""
    with _open(info.path) as src:
        for _, window in src.block_windows(info.band):
            if np.isfinite(_values(src.read(info.band, window=window, masked=True), info)).any():
                return False
    return True


def _nodata_problem(info: RasterInfo) -> str:
    nodata = "" if info.nodata is None else f" (nodata value {info.nodata:g})"
    return (f"{info.label}: holds only nodata{nodata}; fix: export the prediction again, or remove the "
            f"raster of cell {info.cell_id!r}")


def _few(items: Sequence[Any]) -> str:
    """``['a', 'b'] and 3 more`` (the first few items, the rest counted)."""
    shown = list(items)[:_IDS_LISTED]
    more = f" and {len(items) - _IDS_LISTED} more" if len(items) > _IDS_LISTED else ""
    return f"{shown}{more}"
