"""Bad, damaged and unusual cell files: each is refused with a clear error or read exactly
as its canonical form is.

Every file is a few lines written into ``tmp_path``. Refused files must raise a
:class:`cellopt.errors.CelloptError` subclass whose message names the problem; accepted
variants of an OpenCelliD export (other column order, case, extra or missing optional
columns, no header, compression) must give the same cells, ids and positions as the
canonical export.
"""

from __future__ import annotations

import gzip
import json
import tempfile
import zipfile
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import shapely
from helpers.checks import assert_same_cells, raises
from hypothesis import given, settings
from hypothesis import strategies as st

from cellopt import Network
from cellopt.errors import CelloptError, ValidationError
from cellopt.topology.cellfiles import OPENCELLID_COLUMNS, OPENCELLID_REQUIRED, read_cells

UTM = "EPSG:32610"  # UTM 10N, San Francisco
HEADER = ",".join(OPENCELLID_COLUMNS)


def ocid_row(radio="LTE", mcc=311, net=480, area=9728, cell=25601, lon=-122.40, lat=37.78,
             range_=1000, samples=10, updated=1491242559) -> str:
    """One line of an OpenCelliD export (in the export's column order)."""
    return (f"{radio},{mcc},{net},{area},{cell},0,{lon},{lat},{range_},{samples},1,"
            f"1458613761,{updated},0")


def ocid(*rows: str, header: str = HEADER) -> str:
    return "\n".join([header, *rows]) + "\n"


GOOD = ocid_row()

# A small export: an eNB with two sectors, a cell seen in two areas (the first row has
# more samples and is more recent, so every de-duplication rule keeps it), a GSM and a
# UMTS cell. Positions in San Francisco, within a few km.
BASE = pd.DataFrame({
    "radio": ["LTE", "LTE", "LTE", "LTE", "GSM", "UMTS"],
    "mcc": 311, "net": 480,
    "area": [9728, 9728, 9728, 9729, 17, 17],
    "cell": [256 * 100 + 1, 256 * 100 + 2, 256 * 101 + 1, 256 * 101 + 1, 4001, 123456],
    "unit": 0,
    "lon": [-122.4000, -122.3997, -122.3900, -122.3899, -122.3800, -122.3700],
    "lat": [37.7800, 37.7800, 37.7850, 37.7850, 37.7900, 37.7750],
    "range": 1000,
    "samples": [30, 20, 50, 10, 5, 7],
    "changeable": 1, "created": 1458613761,
    "updated": [1491242559, 1491242559, 1491242600, 1491000000, 1491242559, 1491242559],
    "averageSignal": 0,
})[list(OPENCELLID_COLUMNS)]


def geojson(*features: dict) -> str:
    return json.dumps({"type": "FeatureCollection", "features": list(features)})


def feature(geometry: dict | None, **properties) -> dict:
    return {"type": "Feature", "properties": properties, "geometry": geometry}


def point(lon: float, lat: float) -> dict:
    return {"type": "Point", "coordinates": [lon, lat]}


def two_file_zip(path: Path) -> None:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("a.csv", "lon,lat\n-122.4,37.78\n")
        archive.writestr("b.csv", "lon,lat\n-122.5,37.78\n")


def directory(path: Path) -> None:
    path.mkdir()
    (path / "notes.txt").write_text("not cells\n")


# ---------------------------------------------------------------------- refused files
# (file name, content: text, bytes or a function writing the path, read_cells options,
#  distinctive part of the message)
BAD: list[tuple[str, str | bytes | Callable[[Path], None], dict, str]] = [
    # Whole-file problems.
    ("empty.csv", "", {}, "empty.csv: the file is empty (0 bytes)"),
    ("blank.csv", "\n\n\n", {}, "blank.csv: the file is empty (no header)"),
    ("spaces.csv", "   \n \n", {}, "spaces.csv: the file is empty (no header)"),
    ("header.csv", "cell_id,lon,lat\n", {}, "header.csv: the file has no data rows"),
    ("ocid_header.csv", HEADER + "\n", {}, "ocid_header.csv: the file has no data rows"),
    ("upper_header.csv", HEADER.upper() + "\n", {}, "the file has no data rows"),
    ("latin1.csv", "cell_id,lon,lat\ncafé,-122.4,37.78\n".encode("latin-1"), {},
     "the file is not UTF-8 text (byte 0xe9 cannot be decoded)"),
    ("utf16.csv", "lon,lat\n-122.4,37.78\n".encode("utf-16"), {},
     "the file is UTF-16 text, not CSV text; fix: save the file as UTF-8 CSV"),
    ("packed.csv", gzip.compress(b"lon,lat\n-122.4,37.78\n"), {},
     "the file is a gzip-compressed file, not CSV text; fix: name it with a .gz suffix"),
    ("book.csv", b"PK\x03\x04\x14\x00\x06\x00" + b"\x00" * 40, {},
     "the file is a zip archive (an Excel workbook, say)"),
    ("nul.csv", b"lon,lat\n-122.4\x00,37.78\n", {}, "the file is binary (it has NUL bytes)"),
    ("cells.xlsx", b"whatever", {}, "cells.xlsx: .xlsx files are not read"),
    ("cells.parquet", b"PAR1", {}, ".parquet files are not read"),
    ("fake.csv.gz", "lon,lat\n-122.4,37.78\n", {}, "fake.csv.gz: cannot be read as CSV"),
    ("two.csv.zip", two_file_zip, {}, "two.csv.zip: cannot be read as CSV (Multiple files"),
    ("folder", directory, {}, "folder is a directory without vector files"),
    ("folder.csv", directory, {"format": "csv"}, "folder.csv is a directory, not a csv file"),
    ("broken.geojson", "{not json", {}, "broken.geojson: cannot be read as a vector file"),
    ("long_row.csv", "lon,lat\n-122.4,37.78,5,6\n", {},
     "a row has more fields than the header"),
    ("ragged.csv", "lon,lat\n-122.4,37.78\n-122.41,37.78,5,6\n", {},
     "ragged.csv: cannot be parsed as CSV"),
    ("ragged_semicolon.csv", "lon;lat\n-122.4;37.78;5\n-122.4;37.79\n", {},
     "the header 'lon;lat' has no commas but ';', yet the first lines do not all have as many "
     "';'-separated fields as it: the delimiter is unclear; fix: give every line one field per "
     "column"),
    ("no_header.csv", "-122.4,37.78\n-122.41,37.78\n", {},
     "is numbers, not column names: the file has no header"),
    ("headerless_as_csv.csv", ocid(GOOD, header=GOOD), {"format": "csv"},
     "the first line is an OpenCelliD data row, not a header"),
    # Column names.
    ("twice.csv", "lon,lon,lat\n-122.4,-122.4,37.78\n", {},
     "columns ['lon', 'lon'] have the same name"),
    ("case_twice.csv", "lon,LAT,lat\n-122.4,37.78,37.78\n", {},
     "columns ['LAT', 'lat'] have the same name"),
    ("space_twice.csv", "lon, tier ,Tier,lat\n-122.4,macro,pico,37.78\n", {},
     "columns [' tier ', 'Tier'] have the same name"),
    ("ocid_twice.csv", ocid(GOOD + ",1", header=HEADER + ",CELL"), {},
     "columns ['cell', 'CELL'] have the same name"),
    ("no_area.csv", ocid("LTE,311,480,25601,0,-122.4,37.78,1000,10,1,1,1,0",
                         header=HEADER.replace("area,", "")), {},
     "has 13 OpenCelliD columns"),
    ("no_lonlat.csv", "radio,mcc,net,area,cell,x,y,range,samples,updated\n"
                      "LTE,311,480,1,2,3,4,5,6,7\n", {},
     "lacks the required ['lon', 'lat']"),
    ("no_radio.csv", ocid("311,480,9728,25601,0,-122.4,37.78,1000,10,1,1,1,0",
                          header=HEADER.replace("radio,", "")), {},
     "lacks the required ['radio']"),
    ("plain_as_ocid.csv", "cell_id,lon,lat\na,-122.4,37.78\n", {"format": "opencellid"},
     "lacks the OpenCelliD columns ['radio', 'mcc', 'net', 'area', 'cell']"),
    ("ocid_cell_id.csv", ocid(GOOD + ",x", header=HEADER + ",cell_id"), {},
     "an OpenCelliD export with the columns ['cell_id'], which read_cells makes itself"),
    ("ocid_tier.csv", ocid(GOOD + ",pico", header=HEADER + ",Tier"), {},
     "an OpenCelliD export with the columns ['Tier']"),
    ("ocid_mnc.csv", ocid(GOOD + ",480", header=HEADER + ",mnc"), {},
     "an OpenCelliD export with the columns ['mnc']"),
    ("ocid_source_crs.csv", ocid(GOOD), {"source_crs": UTM},
     "OpenCelliD positions are WGS 84 lon/lat (EPSG:4326), not source_crs=EPSG:32610"),
    # Coordinates.
    ("lon_empty.csv", "cell_id,lon,lat\na,,37.78\n", {}, "rows [0] (ids ['a']): lon is missing"),
    ("lat_nan.csv", "cell_id,lon,lat\na,-122.4,nan\n", {}, "rows [0] (ids ['a']): lat is missing"),
    ("lon_text.csv", "cell_id,lon,lat\na,-122.4,37.78\nb,west,37.78\n", {},
     "rows [1] (ids ['b']): lon is not a number"),
    ("lat_95.csv", "lon,lat\n-122.4,95\n", {}, "rows [0]: lat is outside [-90, 90]"),
    ("lon_200.csv", "lon,lat\n200,37.78\n", {}, "rows [0]: lon is outside [-180, 180]"),
    ("swapped.csv", "lon,lat\n37.78,-122.4\n", {}, "the lon/lat columns look swapped"),
    ("infinite.csv", "x,y\ninf,4180000\n", {"source_crs": UTM}, "x or y is infinite"),
    ("ocid_swapped.csv", ocid(ocid_row(lon=37.78, lat=-122.4)), {},
     "rows [0] (ids [25601]): lat is outside [-90, 90] while lon is within [-90, 90]"),
    ("ocid_no_lat.csv", ocid(ocid_row(lat="")), {}, "rows [0] (ids [25601]): lat is missing"),
    ("headerless_bad_row.csv", ocid(GOOD, header=ocid_row(mcc="", cell=7)), {},
     "rows [0] (ids [7]): mcc is missing or not a code in [0, 999]"),
    ("xy_no_crs.csv", "x,y\n550000,4180000\n", {}, "columns 'x', 'y' need source_crs"),
    ("xy_nowhere.csv", "x,y\n1e30,1e30\n", {"source_crs": UTM},
     "rows [0]: the position does not transform to lon/lat from EPSG:32610"),
    ("degrees_projected.csv", "lon,lat\n-122.4,37.78\n", {"source_crs": UTM},
     "columns 'lon', 'lat' are degrees but source_crs=EPSG:32610 is projected"),
    ("no_coordinates.csv", "east,north\n1,2\n", {}, "lacks coordinate columns"),
    ("half_coordinates.csv", "Longitude,height_m\n-122.4,30\n", {},
     "it has only 'Longitude' of them"),
    # Plain ids and attributes.
    ("dup_ids.csv", "cell_id,lon,lat\na,-122.4,37.78\na,-122.41,37.78\n", {},
     "rows [0, 1] (ids ['a', 'a']): duplicate cell_id"),
    ("dup_padded_ids.csv", "cell_id,lon,lat\n7,-122.4,37.78\n 7 ,-122.41,37.78\n", {},
     "rows [0, 1] (ids [7, 7]): duplicate cell_id"),
    ("dup_upper_ids.csv", "CELL_ID,lon,lat\nx,-122.4,37.78\nx,-122.41,37.78\n", {},
     "duplicate cell_id"),
    ("missing_id.csv", "cell_id,lon,lat\na,-122.4,37.78\n,-122.41,37.78\n", {},
     "rows [1] (ids [nan]): cell_id is missing"),
    ("missing_site.csv", "site_id,lon,lat\n1,-122.4,37.78\n,-122.41,37.78\n", {},
     "rows [1]: site_id is missing"),
    ("height_text.csv", "lon,lat,height_m\n-122.4,37.78,tall\n", {},
     "rows [0]: height_m is not a number"),
    ("tier_bad.csv", "lon,lat,Tier\n-122.4,37.78,huge\n", {}, "rows [0] (ids [0]): unknown tier"),
    ("azimuth_bad.csv", "lon,lat,azimuth_deg\n-122.4,37.78,400\n", {},
     "azimuth_deg is outside [0, 360)"),
    # OpenCelliD codes.
    ("mcc_text.csv", ocid(ocid_row(mcc="abc")), {},
     "rows [0] (ids [25601]): mcc is missing or not a code in [0, 999]"),
    ("mcc_big.csv", ocid(ocid_row(mcc=3110)), {}, "mcc is missing or not a code in [0, 999]"),
    ("net_negative.csv", ocid(ocid_row(net=-1)), {}, "net is missing or not a code in [0, 999]"),
    ("area_fraction.csv", ocid(ocid_row(area=1.5)), {},
     "area is missing or not a non-negative integer"),
    ("cell_empty.csv", ocid(GOOD, ocid_row(cell="")), {},
     "rows [1] (ids [nan]): cell is missing or not a non-negative integer"),
    ("cell_huge.csv", ocid(ocid_row(cell=2**60)), {},
     "cell is missing or not a non-negative integer"),
    ("radio_empty.csv", ocid(GOOD, ocid_row(radio="", cell=25602)), {},
     "rows [1] (ids [25602]): radio is missing"),
    ("radio_unknown.csv", ocid(ocid_row(radio="WIFI")), {},
     "radio is not one of ['GSM', 'UMTS', 'CDMA', 'LTE', 'NR']"),
    ("samples_text.csv", ocid(ocid_row(samples="many")), {},
     "samples is not a finite number ≥ 0"),
    ("range_negative.csv", ocid(ocid_row(range_=-5)), {}, "range is not a finite number ≥ 0"),
    ("updated_text.csv", ocid(ocid_row(updated="yesterday")), {},
     "updated is neither a number (Unix seconds) nor a date"),
    # Vector files.
    ("line.geojson", geojson(feature({"type": "LineString",
                                      "coordinates": [[-122.4, 37.78], [-122.3, 37.78]]},
                                     cell_id="l")), {},
     "rows [0] (ids ['l']): geometry is not a Point"),
    ("multipoint.geojson", geojson(feature({"type": "MultiPoint",
                                            "coordinates": [[-122.4, 37.78]]})), {},
     "geometry is not a Point"),
    ("null_geometry.geojson", geojson(feature(point(-122.4, 37.78)), feature(None)), {},
     "rows [1]: geometry is missing"),
    ("metres.geojson", geojson(feature(point(550000, 4180000))), {},
     "geometry y (lat) is outside [-90, 90]"),
    ("no_features.geojson", geojson(), {}, "no_features.geojson: the file has no data rows"),
    ("case_keys.geojson", geojson(feature(point(-122.4, 37.78), tier="macro", TIER="pico")),
     {}, "columns ['tier', 'TIER'] have the same name"),
    ("dup_vector_ids.geojson", geojson(feature(point(-122.4, 37.78), cell_id="a"),
                                       feature(point(-122.41, 37.78), cell_id="a")), {},
     "duplicate cell_id"),
    # Extent and CRS.
    ("sf_sydney.csv", "lon,lat\n-122.42,37.77\n151.21,-33.87\n", {},
     "no single local projection keeps their distances within 1%"),
    ("paris_new_york.csv", "lon,lat\n2.35,48.85\n-74.0,40.7\n", {},
     "fix: split the data by region"),
    ("ocid_world.csv", ocid(GOOD, ocid_row(cell=25602, lon=2.35, lat=48.85)), {},
     "the cells span lon [-122.4, 2.35], lat [37.78, 48.85]"),
    ("crs_degrees.csv", "lon,lat\n-122.4,37.78\n", {"crs": "EPSG:4326"},
     "crs=EPSG:4326 is not a projected CRS"),
    ("crs_feet.csv", "lon,lat\n-122.4,37.78\n", {"crs": "EPSG:2227"},
     "crs=EPSG:2227 has axes in ['US survey foot'], not metres"),
    ("crs_unknown.csv", "lon,lat\n-122.4,37.78\n", {"crs": "EPSG:999999"},
     "crs='EPSG:999999' is not a CRS"),
    ("source_crs_unknown.csv", "x,y\n1,2\n", {"source_crs": "metres please"},
     "source_crs='metres please' is not a CRS"),
    # Options and filters.
    ("merge_nan.csv", ocid(GOOD), {"merge_distance_m": float("nan")}, "merge_distance_m is nan"),
    ("merge_text.csv", ocid(GOOD), {"merge_distance_m": "50"}, "merge_distance_m is '50'"),
    ("cluster_text.csv", ocid(GOOD), {"cluster_sites": "no"},
     "cluster_sites='no' is not True or False"),
    ("bbox_text.csv", ocid(GOOD), {"bbox": (1, 2, "a", 4)}, "bbox=(1, 2, 'a', 4) is not"),
    ("format_bad.csv", ocid(GOOD), {"format": "xlsx"}, "format='xlsx' is unknown"),
    ("filter_radio.csv", ocid(GOOD), {"radio": "NR"}, "no rows left after filter radio=['NR']"),
    ("filter_no_column.csv", "lon,lat\n-122.4,37.78\n", {"mcc": 311},
     "filter mcc=311 needs a column 'mcc'"),
    ("flat_polygon.csv", ocid(GOOD), {"polygon": shapely.LineString([(0, 0), (1, 1)])},
     "polygon LineString has no area"),
    ("bbox_bad.csv", ocid(GOOD), {"bbox": (1, 2, 3)}, "bbox=(1, 2, 3) is not"),
]


def write(path: Path, content: str | bytes | Callable[[Path], None]) -> Path:
    if callable(content):
        content(path)
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)
    return path


@pytest.mark.parametrize(("name", "content", "options", "match"), BAD,
                         ids=[case[0] for case in BAD])
@pytest.mark.slow
def test_refused(tmp_path, name, content, options, match):
    path = write(tmp_path / name, content)
    with raises(ValidationError, match) as info:
        read_cells(path, **options)
    assert isinstance(info.value, CelloptError)
    assert all("fix:" in problem for problem in info.value.problems)


def test_enough_cases():
    assert len(BAD) + len(ACCEPTED) >= 60


# ---------------------------------------------------------------------- accepted variants
@pytest.fixture(scope="module")
def canonical(tmp_path_factory) -> Network:
    """The canonical export of BASE, read once."""
    folder = tmp_path_factory.mktemp("canonical")
    return read_cells(write(folder / "canonical.csv", BASE.to_csv(index=False)))


def padded(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.rename(columns=lambda c: f"  {c.upper()} ")


def quoted_header(frame: pd.DataFrame) -> str:
    text = frame.to_csv(index=False)
    head, _, rest = text.partition("\n")
    return ",".join(f'"{c}"' for c in head.split(",")) + "\n" + rest


def radio_text(frame: pd.DataFrame) -> pd.DataFrame:
    return frame.assign(radio=" " + frame["radio"].str.lower())


# (file name, the file's text or bytes made from BASE, read_cells options, extra columns
#  expected in the result)
ACCEPTED: list[tuple[str, Callable[[pd.DataFrame], str | bytes], dict, dict]] = [
    ("reordered.csv", lambda b: b[list(reversed(b.columns))].to_csv(index=False), {}, {}),
    ("upper.csv", lambda b: b.rename(columns=str.upper).to_csv(index=False), {}, {}),
    ("mixed_case.csv", lambda b: b.rename(columns=str.title).to_csv(index=False), {}, {}),
    ("padded.csv", lambda b: padded(b).to_csv(index=False), {}, {}),
    ("extra.csv", lambda b: b.assign(note="x", Operator="Verizon").to_csv(index=False), {},
     {"note": "x", "Operator": "Verizon"}),
    ("extra_first.csv", lambda b: b.assign(src=1)[["src", *b.columns]].to_csv(index=False),
     {}, {"src": 1}),
    ("no_samples.csv", lambda b: b.drop(columns="samples").to_csv(index=False), {}, {}),
    ("no_samples_updated.csv",
     lambda b: b.drop(columns=["samples", "updated"]).to_csv(index=False), {}, {}),
    ("required_only.csv", lambda b: b[list(OPENCELLID_REQUIRED)].to_csv(index=False), {}, {}),
    ("required_shuffled.csv",
     lambda b: b[["lat", "cell", "radio", "lon", "area", "net", "mcc"]].rename(
         columns=str.upper).to_csv(index=False), {}, {}),
    ("headerless.csv", lambda b: b.to_csv(index=False, header=False), {}, {}),
    ("headerless_forced.csv", lambda b: b.to_csv(index=False, header=False),
     {"format": "opencellid"}, {}),
    ("compressed.csv.gz", lambda b: gzip.compress(padded(b).to_csv(index=False).encode()), {},
     {}),
    ("bom_crlf.csv", lambda b: b"\xef\xbb\xbf" + b.to_csv(index=False, lineterminator="\r\n")
     .encode(), {}, {}),
    ("trailing_comma.csv",
     lambda b: "".join(line + ",\n" for line in b.to_csv(index=False).splitlines()), {}, {}),
    ("quoted_header.csv", quoted_header, {}, {}),
    ("radio_lower.csv", lambda b: radio_text(b).to_csv(index=False), {}, {}),
    ("forced.csv", lambda b: b[list(reversed(b.columns))].to_csv(index=False),
     {"format": "opencellid"}, {}),
    ("cells.txt", lambda b: b.to_csv(index=False), {}, {}),
    # Other delimiters, told from the first lines (a decimal comma where there is one), and
    # Excel's 'sep=' first line.
    ("semicolon.csv", lambda b: b.to_csv(index=False, sep=";"), {}, {}),
    ("semicolon_decimal_comma.csv", lambda b: b.to_csv(index=False, sep=";", decimal=","), {},
     {}),
    ("tabs.tsv", lambda b: b.to_csv(index=False, sep="\t"), {}, {}),
    ("excel_sep_comma.csv", lambda b: "sep=,\n" + b.to_csv(index=False), {}, {}),
    ("excel_sep_semicolon.csv.gz", lambda b: gzip.compress(
        ("\ufeffsep=;\r\n" + b.to_csv(index=False, sep=";", decimal=",", lineterminator="\r\n"))
        .encode()), {}, {}),
    ("headerless_semicolon.csv", lambda b: b.to_csv(index=False, header=False, sep=";"), {}, {}),
]


@pytest.mark.parametrize(("name", "make", "options", "extra"), ACCEPTED,
                         ids=[case[0] for case in ACCEPTED])
def test_accepted_as_canonical(tmp_path, canonical, name, make, options, extra):
    ref = canonical
    assert ref.n_cells == 5
    net = read_cells(write(tmp_path / name, make(BASE)), **options)
    assert_same_cells(net, ref)
    for col, value in extra.items():
        assert (net.cells[col] == value).all()
    made = set(ref.cells.columns)
    assert set(net.cells.columns) == made | set(extra)


def test_samples_rule_documented(tmp_path):
    """Without samples the most recently updated row wins; without either, the first."""
    frame = BASE.copy()
    frame.loc[3, "updated"] = 1_600_000_000  # the second row of cell 25857 is now newest
    net = read_cells(write(tmp_path / "a.csv", frame.drop(columns="samples").to_csv(index=False)))
    assert "LTE-311-480-9729-25857" in net.cells["cell_id"].tolist()
    net = read_cells(write(tmp_path / "b.csv", frame.to_csv(index=False)))
    assert "LTE-311-480-9728-25857" in net.cells["cell_id"].tolist()  # samples first
    swapped = frame.drop(columns=["samples", "updated"]).iloc[[0, 1, 3, 2, 4, 5]]
    net = read_cells(write(tmp_path / "c.csv", swapped.to_csv(index=False)))
    assert "LTE-311-480-9729-25857" in net.cells["cell_id"].tolist()  # first in the file


def test_plain_ids_kept_as_text(tmp_path):
    path = write(tmp_path / "cells.csv", "Cell_ID,LON,Lat,TIER,Power_dBm\n"
                                        "007,-122.40,37.78,pico,30\n7,-122.41,37.78,macro,46\n"
                                        "A7,-122.42,37.78,femto,20\n")
    net = read_cells(path, crs=UTM)
    assert net.cells["cell_id"].tolist() == ["007", "7", "A7"]
    assert net.cells["tier"].tolist() == ["pico", "macro", "femto"]
    net = read_cells(write(tmp_path / "ints.csv", "cell_id,lon,lat\n 3,-122.40,37.78\n"
                                                  "12,-122.41,37.78\n"), crs=UTM)
    assert net.cells["cell_id"].tolist() == [3, 12]


# ---------------------------------------------------------------------- property
CASES = (str.lower, str.upper, str.title, lambda c: f" {c} ")
EXTRAS = ("note", "quality", "Source", "site", "tier")  # 'tier' clashes with a made column
# Invalid values a row may get, by column.
INVALID = {"radio": ["", "WIFI"], "mcc": [-1, 1000, "x", ""], "net": ["x"], "cell": [-3, "c"],
           "lon": [float("nan"), 300.0], "lat": [float("nan"), 95.0], "samples": ["x"],
           "updated": ["soon"]}


@st.composite
def opencellid_tables(draw) -> pd.DataFrame:
    """OpenCelliD-like tables: random rows (a few invalid), columns, order and case."""
    n = draw(st.integers(1, 8))

    def column(values):
        return draw(st.lists(st.sampled_from(values), min_size=n, max_size=n))

    offsets = st.lists(st.floats(-0.05, 0.05), min_size=n, max_size=n)
    frame = pd.DataFrame({
        "radio": column(["LTE", "LTE", "GSM", "UMTS", "lte"]),
        "mcc": column([311, 310]), "net": column([480, 12]), "area": column([1, 2, 3]),
        "cell": column([25601, 25602, 25857, 4001]),  # repeats: duplicate cells
        "lon": -122.4 + np.array(draw(offsets)), "lat": 37.78 + np.array(draw(offsets)),
        "samples": column([1, 5, 9, ""]), "updated": column([0, 5, 9]),
        "range": 1000, "unit": 0, "changeable": 1, "created": 0, "averageSignal": 0,
    }).astype(object)
    for row in draw(st.sets(st.integers(0, n - 1), max_size=2)):  # a few invalid rows
        col = draw(st.sampled_from(sorted(INVALID)))
        frame.loc[row, col] = draw(st.sampled_from(INVALID[col]))
    keep = [c for c in OPENCELLID_COLUMNS if c in OPENCELLID_REQUIRED or draw(st.booleans())]
    lost = draw(st.sampled_from([None] * 20 + list(OPENCELLID_REQUIRED)))
    frame = frame[[c for c in keep if c != lost]]
    for extra in draw(st.lists(st.sampled_from(EXTRAS), unique=True, max_size=2)):
        frame[extra] = draw(st.sampled_from(["a", 1, ""]))
    case = draw(st.sampled_from(CASES))
    return frame[draw(st.permutations(list(frame.columns)))].rename(columns=case)


def outcome(table: pd.DataFrame, folder: Path, name: str) -> Network | CelloptError:
    path = folder / name
    table.to_csv(path, index=False)
    try:
        return read_cells(path)
    except CelloptError as exc:
        return exc


@settings(max_examples=25, deadline=None)
@given(table=opencellid_tables())
@pytest.mark.slow
def test_opencellid_like_tables(table):
    """Any such table gives finite positions and unique ids, or a CelloptError; and a
    complete one reads as its canonical form (export names, order, no extra columns)."""
    names = {c: c.strip().casefold() for c in table.columns}
    export = {c.casefold(): c for c in OPENCELLID_COLUMNS}
    plain = table.rename(columns=names)
    canonical_table = plain[[c for c in plain.columns if c in export]].rename(columns=export)
    canonical_table = canonical_table[[c for c in OPENCELLID_COLUMNS if c in canonical_table]]
    with tempfile.TemporaryDirectory() as folder:
        net = outcome(table, Path(folder), "variant.csv")
        complete = set(OPENCELLID_REQUIRED) <= set(canonical_table.columns)
        ref = outcome(canonical_table, Path(folder), "canonical.csv") if complete else None
    if isinstance(net, CelloptError):
        clash = "tier" in names.values()
        assert not complete or clash or isinstance(ref, CelloptError)
        return
    xy = np.column_stack([net.cells.geometry.x, net.cells.geometry.y])
    assert np.isfinite(xy).all()
    assert net.cells["cell_id"].is_unique
    assert 1 <= net.n_cells <= len(table)
    if complete:
        assert isinstance(ref, Network)
        assert net.cells["cell_id"].tolist() == ref.cells["cell_id"].tolist()
        np.testing.assert_array_equal(xy, np.column_stack([ref.cells.geometry.x,
                                                           ref.cells.geometry.y]))
