"""Planner cell files as a careless or hostile user writes them: export dialects, unit slips
per column, empty and colliding values, columns given but not used, and the CLI route.

Every case is read (the same cells as the clean file), warned about (naming the column
and the fix) or refused with a :class:`~cellopt.errors.ValidationError` naming the file,
the column or rows and the fix; never a traceback of another kind.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import geopandas as gpd
import numpy as np
import pytest

from cellopt import cli
from cellopt.errors import ValidationError
from cellopt.topology import read_cells

HEADER = "Site,Sector,Latitude,Longitude,Azimuth,Height,Tilt,Power_W,Gain_dBi"
# Three masts in Munich, five sectors.
ROWS = [("MUC001", 1, 48.1374, 11.5755, 0, 30, 4, 20, 17),
        ("MUC001", 2, 48.1374, 11.5755, 120, 30, 4, 20, 17),
        ("MUC002", 1, 48.1500, 11.5900, 0, 25, 6, 20, 17),
        ("MUC002", 2, 48.1500, 11.5900, 240, 25, 6, 20, 17),
        ("MUC003", 1, 48.1300, 11.6000, 60, 35, 2, 20, 17)]
IDS = ["MUC001-1", "MUC001-2", "MUC002-1", "MUC002-2", "MUC003-1"]


def table(header: str = HEADER, rows: list[tuple] = ROWS, sep: str = ",", decimal: str = ".",
          newline: str = "\n") -> str:
    """The cell table as text in a dialect."""
    lines = [header.replace(",", sep)]
    lines += [sep.join(str(v).replace(".", decimal) if isinstance(v, float) else str(v)
                       for v in row) for row in rows]
    return newline.join(lines) + newline


def column(header: str, values: list) -> str:
    """Site, sector, position and one more column `header` holding `values`."""
    return table("Site,Sector,Latitude,Longitude," + header,
                 [(*r[:4], v) for r, v in zip(ROWS, values, strict=True)])


def read(tmp_path: Path, content: str | bytes, name: str = "plan.csv", **options):
    """The network read from `content`, and the messages of the warnings raised."""
    path = tmp_path / name
    path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        net = read_cells(path, progress=False, **options)
    return net, [str(w.message) for w in caught]


def refused(tmp_path: Path, content: str | bytes, *needles: str, **options) -> str:
    """The message of the refusal of `content`, which holds the file's name and `needles`."""
    with pytest.raises(ValidationError) as info:
        read(tmp_path, content, **options)
    message = str(info.value)
    for needle in ("plan.csv", "fix:", *needles):
        assert needle in message, message
    return message


def warned(messages: list[str], *needles: str) -> str:
    """The one warning that holds every needle."""
    hits = [m for m in messages if all(n in m for n in needles)]
    assert len(hits) == 1, messages
    assert "fix:" in hits[0] or "not used by cellopt" in hits[0], hits[0]
    return hits[0]


# ---------------------------------------------------------------- export dialects read

CLEAN = table()
READ_DIALECTS = {
    "semicolon, decimal comma": table(sep=";", decimal=","),
    "tab": table(sep="\t"),
    "pipe": table(sep="|"),
    "UTF-8 BOM": "\ufeff" + CLEAN,
    "CRLF": table(newline="\r\n"),
    "lone CR (old Mac Excel)": table(newline="\r"),
    "lone CR, semicolon": table(sep=";", decimal=",", newline="\r"),
    "Excel sep= line": "sep=;\n" + table(sep=";", decimal=","),
    "trailing empty columns": "".join(line + ",,\n" for line in CLEAN.splitlines()),
    "rows of delimiters only": CLEAN + ",,,,,,,,\n" * 3,
    "blank lines": CLEAN.replace("\nMUC002,1", "\n\n\nMUC002,1") + "\n\n",
    "units in brackets": table("Site,Sector,Latitude [deg],Longitude [deg],Azimuth [deg],"
                               "Height (m),Tilt (deg),Power [W],Gain [dBi]"),
    "quoted fields": CLEAN.replace("MUC003,1,", '"MUC003","1",'),
    "decimal commas in some columns, points in others": table(sep=";", rows=[
        (*r[:2], str(r[2]).replace(".", ","), str(r[3]).replace(".", ","), *r[4:8], r[8] + 0.5)
        for r in ROWS]),
}


@pytest.mark.parametrize("chunk_rows", [None, 2])
@pytest.mark.parametrize("dialect", list(READ_DIALECTS))
def test_dialect_reads_the_same_cells(tmp_path, dialect, chunk_rows):
    net, _ = read(tmp_path, READ_DIALECTS[dialect], chunk_rows=chunk_rows)
    cells = net.cells
    assert cells["cell_id"].tolist() == IDS
    assert np.allclose(cells["tx_power_dbm"], 10 * np.log10(20) + 30)
    assert cells["height_m"].tolist() == [30, 30, 25, 25, 35]
    assert cells["azimuth_deg"].tolist() == [0, 120, 0, 240, 60]
    assert np.allclose(cells["lat"], [r[2] for r in ROWS])


def test_rows_of_delimiters_keep_the_file_rows_in_messages(tmp_path):
    bad = table(rows=[*ROWS[:2], (*ROWS[2][:7], -3, 17)])
    lines = bad.splitlines(keepends=True)
    refused(tmp_path, "".join(lines[:3]) + ",,,,,,,,\n" + lines[3], "rows [3]", "Power_W")


def test_chunked_read_skips_rows_of_delimiters_too(tmp_path):
    net, _ = read(tmp_path, READ_DIALECTS["rows of delimiters only"], chunk_rows=2)
    assert net.cells["cell_id"].tolist() == IDS


# ------------------------------------------------------------ export dialects refused

REFUSED_DIALECTS = {
    "UTF-16 (Excel 'Unicode text')": (table(sep="\t").encode("utf-16"), ("UTF-16", "UTF-8")),
    "latin-1 name": (table(rows=[("Zürich", 1, 47.37, 8.54, 0, 30, 4, 20, 17)]).encode(
        "latin-1"), ("not UTF-8", "0xfc")),
    "xlsx named .csv": (b"PK\x03\x04" + bytes(200), ("zip archive", "export the sheet")),
    "empty file": (b"", ("empty",)),
    "header only": (HEADER + "\n", ("no data rows",)),
    "comment line first": ("# exported by Atoll 3.4\n" + CLEAN, ("comment", "delete the comment")),
    "header repeated mid-file": (CLEAN + HEADER + "\n", ("rows [5]", "repeats the header")),
    "thousands separator": (column("Power_mW", ['"20,000.0"'] * 5),
                            ("Power_mW", "not a number", "thousands separator")),
    "European thousands separator": (table("Site;Sector;Latitude;Longitude;Power_mW", [
        (*r[:4], '"20.000,0"') for r in ROWS], sep=";", decimal=","),
        ("Power_mW", "thousands separator")),
    "thousands points in a decimal-comma file": (table("Site;Sector;Latitude;Longitude;Power_mW", [
        (*r[:2], str(r[2]).replace(".", ","), str(r[3]).replace(".", ","), "20.000")
        for r in ROWS], sep=";"), ("'Power_mW'", "'20.000'", "thousands separator")),
    "decimal comma in a comma-separated file": (column("Height", ['"30,5"'] * 5),
                                                ("'Height'", "decimal comma")),
    "unit in the values": (column("Power_dBm", ["43 dBm"] * 5),
                           ("'Power_dBm' (read as tx_power_dbm) is not a number", "unit")),
    "degree sign in the values": (column("Azimuth", ["120°"] * 5), ("'Azimuth'", "°")),
    "degrees-minutes-seconds": (table("Site,Sector,Latitude,Longitude", [
        (*r[:2], "48°08'14\"N", "11°34'32\"E") for r in ROWS]),
        ("Latitude", "degrees-minutes-seconds")),
    "a row longer than the header": (CLEAN.replace("MUC002,2,", "MUC002,2,9,9,"), ("parsed",)),
    "a line break in a quoted id": (CLEAN.replace("MUC003,1,", '"MUC\n003",1,'),
                                    ("rows [4]", "line break")),
}


@pytest.mark.parametrize("dialect", list(REFUSED_DIALECTS))
def test_dialect_refused_naming_the_fix(tmp_path, dialect):
    content, needles = REFUSED_DIALECTS[dialect]
    refused(tmp_path, content, *needles)


def test_repeated_header_refused_in_chunks_too(tmp_path):
    refused(tmp_path, CLEAN + HEADER + "\n", "rows [5]", "repeats the header", chunk_rows=2)


# ------------------------------------------------------------------ unit slips warned

# (column header, its values, what the warning must name)
SLIPS_WARNED = {
    "W in a dBm column": ("Power_dBm", [20] * 5, ("'Power_dBm'", "W given as dBm")),
    "mW in a W column": ("Power_W", [20000] * 5, ("'Power_W'", "mW given as W")),
    "W in a mW column": ("Power_mW", [20] * 5, ("'Power_mW'", "W given as mW")),
    "kW in a W column": ("Power_W", [0.02] * 5, ("'Power_W'", "kW given as W")),
    "linear gain in a dBi column": ("Gain_dBi", [50] * 5, ("'Gain_dBi'", "linear")),
    "centimetres or feet in a metre column": ("Height_m", [500] * 5,
                                              ("'Height_m'", "ft or cm given as m")),
    "centimetres in a metre column": ("Height_m", [1000] * 5, ("'Height_m'", "look like cm given")),
    "MHz in a GHz column": ("Freq_GHz", [2600] * 5, ("'Freq_GHz'", "MHz given as GHz")),
    "GHz in a MHz column": ("Freq_MHz", [2.6] * 5, ("'Freq_MHz'", "GHz given as MHz")),
    "Hz in a MHz column": ("Freq_MHz", [2.6e9] * 5, ("'Freq_MHz'", "Hz given as MHz")),
    "radians in a beamwidth column": ("HBW", [1.13] * 5, ("'HBW'", "radians")),
    "beamwidth over 180°": ("HBW", [400] * 5, ("'HBW'", "theta_3db_deg")),
    "radians in an azimuth column": ("Azimuth", [0, 2.09, 4.19, 1.05, 3.14], ("'Azimuth'",
                                                                             "radians")),
    "radians in a tilt column": ("M-Tilt", [0.07] * 5, ("'M-Tilt'", "radians")),
    "radians in an electrical tilt column": ("E-Tilt", [0.05] * 5, ("'E-Tilt'", "radians")),
    "radians in a vertical beamwidth column": ("VBW", [0.12] * 5, ("'VBW'", "radians")),
    "uptilt sign convention": ("Tilt", [-4, -6, -2, -4, 0], ("'Tilt'", "positive below")),
    "electrical tilt outside the usual range": ("E-Tilt", [60] * 5, ("'E-Tilt'", "tilt_deg")),
    "uplink EARFCN": ("EARFCN", [24300] * 5, ("'EARFCN'", "no downlink channel")),
    "NR-ARFCN outside the table": ("NR-ARFCN", [5_000_000] * 5,
                                   ("'NR-ARFCN'", "no downlink channel")),
}


@pytest.mark.parametrize("slip", list(SLIPS_WARNED))
def test_unit_slip_warned_naming_the_column(tmp_path, slip):
    header, values, needles = SLIPS_WARNED[slip]
    net, messages = read(tmp_path, column(header, values))
    message = warned(messages, *needles)
    assert "plan.csv" in message
    assert len(net.cells) == 5


def test_clean_file_warns_of_nothing_but_columns_not_used(tmp_path):
    _, messages = read(tmp_path, CLEAN)
    assert messages == [], messages


UNITS_CONVERTED = {
    "Azimuth (rad)": ([0, np.pi / 2, np.pi, 1.5 * np.pi, 0.5], "azimuth_deg",
                      [0, 90, 180, 270, np.degrees(0.5)]),
    "Tilt [rad]": ([0.07] * 5, "tilt_deg", [np.degrees(0.07)] * 5),
    "E-Tilt_rad": ([0.05] * 5, "electrical_tilt_deg", [np.degrees(0.05)] * 5),
    "HBW (radians)": ([1.13] * 5, "beamwidth_deg", [np.degrees(1.13)] * 5),
    "Height (cm)": ([3000] * 5, "height_m", [30] * 5),
    "Height_mm": ([30000] * 5, "height_m", [30] * 5),
}


@pytest.mark.parametrize("header", list(UNITS_CONVERTED))
def test_unit_in_the_name_is_converted_not_dropped(tmp_path, header):
    values, target, expected = UNITS_CONVERTED[header]
    net, messages = read(tmp_path, column(header, values))
    assert np.allclose(net.cells[target].to_numpy(float), expected)
    assert not any("look like radians" in m or "outside the usual" in m for m in messages)


def test_empty_azimuth_in_radians_is_omni(tmp_path):
    net, _ = read(tmp_path, column("Azimuth_rad", ["", 1.0, 2.0, 3.0, 4.0]))
    assert np.isnan(net.cells["azimuth_deg"].iloc[0])


# ----------------------------------------------------------------- unit slips refused

SLIPS_REFUSED = {
    "azimuth over 360": ("Azimuth", [0, 120, 480, 240, 720], ("rows [2, 4]", "'Azimuth'",
                                                              "modulo 360")),
    "negative azimuth": ("Azimuth", [0, -120, 0, 240, 60], ("rows [1]", "'Azimuth'")),
    "tilt over 90": ("M-Tilt", [95] * 5, ("'M-Tilt'", "tilt_deg")),
    "height in centimetres over 1000": ("Height", [3000] * 5, ("'Height'", "height_m")),
    "metres in a km column": ("Height_km", [30] * 5, ("'Height_km'", "height_m")),
    "negative height": ("Height_m", [-5] * 5, ("'Height_m'",)),
    "power of 0 W": ("Power_W", [0, 20, 20, 20, 20], ("rows [0]", "'Power_W'")),
    "power of inf dBm": ("Power_dBm", ["inf", 43, 43, 43, 43], ("rows [0]", "'Power_dBm'")),
    "tier in capitals": ("tier", ["Macro"] * 5, ("'tier'", "lower case")),
    "tier not known": ("tier", ["micro"] * 5, ("'tier'", "macro")),
    "fractional panel rows": ("panel_rows", [0.5] * 5, ("'panel_rows'",)),
    "negative backhaul": ("backhaul_mbps", [-5] * 5, ("'backhaul_mbps'",)),
    "beamwidth as text": ("HBW", ["wide"] * 5, ("'HBW'", "not a number")),
    "EARFCN as text": ("EARFCN", ["B20"] * 5, ("'EARFCN'", "not a number")),
    "frequency as text": ("Freq_MHz", ["800M"] * 5, ("Freq_MHz", "not a number")),
    "power without a unit": ("Power", [43] * 5, ("'Power'", "Power_dBm")),
    "height in a dBm column": ("Height_dBm", [30] * 5, ("'Height_dBm'", "m, cm, mm, km or ft")),
    "azimuth in metres": ("Azimuth_m", [30] * 5, ("'Azimuth_m'", "degrees or radians")),
}


@pytest.mark.parametrize("slip", list(SLIPS_REFUSED))
def test_unit_slip_refused_naming_the_column(tmp_path, slip):
    header, values, needles = SLIPS_REFUSED[slip]
    refused(tmp_path, column(header, values), *needles)


def test_coordinates_in_radians_refused(tmp_path):
    rows = [(*r[:2], np.radians(r[2]), np.radians(r[3])) for r in ROWS]
    refused(tmp_path, table("Site,Sector,Lat_rad,Lon_rad", rows), "'Lat_rad'", "unit rad",
            "degrees")


def test_read_cells_default_out_of_range_named_as_the_argument(tmp_path):
    refused(tmp_path, table("Site,Sector,Latitude,Longitude", [r[:4] for r in ROWS]),
            "read_cells(..., height_m=-5)", height_m=-5)


COORDINATES_REFUSED = {
    "E7 integers (OpenCelliD style)": ([(*r[:2], int(r[2] * 1e7), int(r[3] * 1e7), *r[4:])
                                        for r in ROWS], ("Latitude", "divide by 1e7")),
    "projected metres in lat/lon": ([(*r[:2], 5_330_000.0 + i, 691_000.0 + i, *r[4:])
                                     for i, r in enumerate(ROWS)], ("Latitude", "source_crs")),
    "lat/lon swapped in all rows": ([(*r[:2], r[3], r[2], *r[4:]) for r in ROWS],
                                    ("look swapped",)),
    "lat/lon swapped in one row": ([*ROWS[:4], (*ROWS[4][:2], ROWS[4][3], ROWS[4][2],
                                                *ROWS[4][4:])], ("rows [4]", "look swapped")),
    "0, 0 for a missing position": ([*ROWS[:4], (*ROWS[4][:2], 0, 0, *ROWS[4][4:])],
                                    ("rows [4]", "both 0", "missing position")),
    "0, 0 in every row": ([(*r[:2], 0.0, 0.0, *r[4:]) for r in ROWS],
                          ("rows [0, 1, 2, 3, 4]", "both 0")),
    "one row on another continent": ([*ROWS[:4], (*ROWS[4][:2], 40.71, -74.0, *ROWS[4][4:])],
                                     ("rows [4]", "km from the other cells", "too wide")),
}


@pytest.mark.parametrize("chunk_rows", [None, 2])
@pytest.mark.parametrize("case", list(COORDINATES_REFUSED))
def test_coordinate_slip_refused(tmp_path, case, chunk_rows):
    rows, needles = COORDINATES_REFUSED[case]
    refused(tmp_path, table(rows=rows), *needles, chunk_rows=chunk_rows)


def test_one_row_far_from_the_others_warned(tmp_path):
    rows = [*ROWS[:4], (*ROWS[4][:2], 40.4168, -3.7038, *ROWS[4][4:])]  # Madrid
    net, messages = read(tmp_path, table(rows=rows))
    warned(messages, "rows [4]", "km from the other cells", "region")
    assert len(net.cells) == 5


def test_degrees_in_x_y_with_a_projected_source_crs_refused(tmp_path):
    text = table("cell_id,x,y", [(f"c{i}", r[3], r[2]) for i, r in enumerate(ROWS)])
    refused(tmp_path, text, "look like longitude / latitude degrees", "EPSG:32632",
            source_crs="EPSG:32632")


def test_x_y_in_metres_of_a_local_crs_without_an_area_are_read(tmp_path):
    local = "+proj=tmerc +lat_0=48.1 +lon_0=11.6 +k=1 +x_0=0 +y_0=0 +ellps=WGS84 +units=m"
    text = table("cell_id,x,y", [("a", 10.0, 20.0), ("b", 150.0, -80.0), ("c", -170.0, 60.0)])
    net, _ = read(tmp_path, text, source_crs=local)
    assert len(net.cells) == 3


# ------------------------------------------------------------------------ vector files

def geo(rows: list[tuple] = ROWS, crs: str | None = "EPSG:4326", swap: bool = False,
        **columns) -> gpd.GeoDataFrame:
    lon, lat = [r[3] for r in rows], [r[2] for r in rows]
    if swap:
        lon, lat = lat, lon
    frame = gpd.GeoDataFrame({"Site": [r[0] for r in rows], "Sector": [r[1] for r in rows],
                              "Azimuth": [r[4] for r in rows], "Power_W": [r[7] for r in rows],
                              **columns}, geometry=gpd.points_from_xy(lon, lat), crs=crs)
    return frame


def read_vector(tmp_path: Path, frame: gpd.GeoDataFrame, name: str, **options):
    path = tmp_path / name
    frame.to_file(path)
    return read(tmp_path, path.read_bytes(), name=name, **options)


VECTOR_REFUSED = {
    "projected metres labelled EPSG:4326": (
        lambda: geo().to_crs("EPSG:32632").set_crs("EPSG:4326", allow_override=True),
        ("outside [-90, 90]", "source_crs= their projected CRS")),
    "degrees labelled UTM": (lambda: geo().set_crs("EPSG:32632", allow_override=True),
                             ("look like longitude / latitude degrees",)),
    "swapped": (lambda: geo(swap=True), ("look swapped",)),
    "no features": (lambda: geo().iloc[:0], ("no data rows",)),
    "polygons": (lambda: geo().set_geometry(geo().to_crs("EPSG:32632").buffer(10.0).to_crs(
        "EPSG:4326")), ("not a Point",)),
    "negative azimuth": (lambda: geo(Azimuth=[0, -120, 0, 240, 60]), ("rows [1]", "'Azimuth'")),
    "azimuth as text": (lambda: geo(Azimuth=["N", 120, 0, 240, 60]), ("'Azimuth'",
                                                                    "not a number")),
    "empty power": (lambda: geo(Power_W=[None, 20, 20, 20, 20]), ("rows [0]", "Power_W")),
}


@pytest.mark.parametrize("case", list(VECTOR_REFUSED))
def test_vector_file_refused(tmp_path, case):
    make, needles = VECTOR_REFUSED[case]
    with pytest.raises(ValidationError) as info:
        read_vector(tmp_path, make(), "plan.gpkg")
    for needle in ("plan.gpkg", "fix:", *needles):
        assert needle in str(info.value), str(info.value)


def test_vector_unit_slips_warned_as_in_a_csv(tmp_path):
    _, messages = read_vector(tmp_path, geo(Power_W=[20_000] * 5,
                                            Azimuth=[0, 2.09, 4.19, 1.05, 3.14]), "plan.geojson")
    warned(messages, "plan.geojson", "'Power_W'", "mW given as W")
    warned(messages, "plan.geojson", "'Azimuth'", "radians")


def test_shapefile_without_a_crs_refused(tmp_path):
    geo().to_file(tmp_path / "plan.shp")
    (tmp_path / "plan.prj").unlink()
    with pytest.raises(ValidationError, match=r"plan\.shp: the file has no CRS; fix: pass "
                       "source_crs"):
        read_cells(tmp_path / "plan.shp")


KML = """<?xml version="1.0" encoding="UTF-8"?>
<kml xmlns="http://www.opengis.net/kml/2.2"><Document>
<Placemark><name>MUC001-1</name><Point><coordinates>11.5755,48.1374,0</coordinates></Point>
</Placemark>
<Placemark><name>MUC002-1</name><Point><coordinates>11.59,48.15,0</coordinates></Point>
</Placemark>
</Document></kml>
"""


def test_google_earth_kml_is_read_as_a_vector_file(tmp_path):
    net, messages = read(tmp_path, KML, name="plan.kml")
    assert np.allclose(net.cells.geometry.to_crs("EPSG:4326").x, [11.5755, 11.59])
    warned(messages, "plan.kml", "not used by cellopt", "'Name'")


def test_tab_named_text_is_tab_separated_and_mapinfo_tab_is_vector(tmp_path):
    net, _ = read(tmp_path, table(sep="\t"), name="plan.tab")
    assert net.cells["cell_id"].tolist() == IDS
    with pytest.raises(ValidationError, match="cannot be read as a vector file"):
        read(tmp_path, "!table\n!version 300\n", name="plan.tab")


def test_shapefile_cut_names_are_warned_with_the_reason(tmp_path):
    frame = geo().assign(Antenna_Height_m=30.0, Mechanical_Tilt=4.0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the shapefile driver warns that it cuts the names
        frame.to_file(tmp_path / "plan.shp")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        read_cells(tmp_path / "plan.shp")
    message = warned([str(w.message) for w in caught], "not used by cellopt")
    for needle in ("'Antenna_He'", "starts like height", "'Mechanical'", "starts like mtilt",
                   "10 characters"):
        assert needle in message, message


# ------------------------------------------------------------- empty and colliding values

EMPTY_REFUSED = {
    "latitude": (2, ("rows [0]", "Latitude is missing")),
    "height": (5, ("rows [0]", "'Height' (read as height_m) is empty")),
    "gain": (8, ("rows [0]", "'Gain_dBi' (read as antenna_gain_dbi) is empty")),
    "power in W": (7, ("rows [0]", "Power_W is missing")),
    "site": (0, ("rows [0]", "site_id is missing")),
}


@pytest.mark.parametrize("field", list(EMPTY_REFUSED))
def test_empty_required_value_refused(tmp_path, field):
    index, needles = EMPTY_REFUSED[field]
    first = list(ROWS[0])
    first[index] = ""
    refused(tmp_path, table(rows=[tuple(first), *ROWS[1:]]), *needles)


def test_empty_dbm_power_refused_naming_the_column(tmp_path):
    refused(tmp_path, column("Power_dBm", ["", 43, 43, 43, 43]), "rows [0]",
            "'Power_dBm' (read as tx_power_dbm) is empty")


def test_empty_azimuth_is_omni_and_empty_tilt_the_models(tmp_path):
    first = list(ROWS[0])
    first[4] = first[6] = ""
    net, _ = read(tmp_path, table(rows=[tuple(first), *ROWS[1:]]))
    assert np.isnan(net.cells["azimuth_deg"].iloc[0])
    assert np.isnan(net.cells["tilt_deg"].iloc[0])


def test_duplicate_cell_ids_refused(tmp_path):
    rows = [*ROWS[:4], ROWS[3]]
    refused(tmp_path, table(rows=rows), "rows [3, 4]", "duplicate cell_id")


def test_one_site_id_for_distant_masts_refused(tmp_path):
    rows = [*ROWS[:4], ("MUC001", 3, *ROWS[4][2:])]
    refused(tmp_path, table(rows=rows), "site_id 'MUC001'", "km apart")


def test_colocated_cells_with_different_site_ids_warned(tmp_path):
    rows = [*ROWS[:4], ("MUC009", 1, *ROWS[0][2:])]
    net, messages = read(tmp_path, table(rows=rows))
    warned(messages, "rows [0, 1, 4]", "different site ids", "MUC009")
    assert net.cells["site_id"].nunique() == 3


def test_two_columns_for_one_quantity_refused(tmp_path):
    refused(tmp_path, table(HEADER + ",Bearing", [(*r, r[4]) for r in ROWS]),
            "'Azimuth'", "'Bearing'", "ambiguous")


# ---------------------------------------------------------------- columns given, not used

NOT_USED = {
    "Bandwidth_MHz": ("Bandwidth_MHz", [20] * 5, "bandwidth_mhz="),
    "BW": ("BW", [20] * 5, "bandwidth_mhz="),
    "Band": ("Band", ["B20"] * 5, "not used by the radio model"),
    "Comment": ("Comment", ["new"] * 5, "not recognised"),
    "Freq without a unit": ("Freq", [800] * 5, "without a unit"),
}


@pytest.mark.parametrize("case", list(NOT_USED))
def test_column_not_used_is_warned(tmp_path, case):
    header, values, how = NOT_USED[case]
    net, messages = read(tmp_path, column(header, values))
    warned(messages, "not used by cellopt", f"'{header}'", how)
    assert header in net.cells.columns or header.lower() in net.cells.columns


# --------------------------------------------------------------- arguments not used

ARGUMENTS_NOT_USED = {
    "power with a power column": ({"tx_power_dbm": 20.0}, "tx_power_dbm=20.0", "'Power_W'"),
    "gain with a gain column": ({"antenna_gain_dbi": 15.0}, "antenna_gain_dbi=15.0",
                                "'Gain_dBi'"),
    "height with a height column": ({"height_m": 40.0}, "height_m=40.0", "'Height'"),
    "cluster_sites for a planner file": ({"cluster_sites": False}, "cluster_sites=False",
                                         "OpenCelliD"),
    "merge_distance_m for a planner file": ({"merge_distance_m": 10.0}, "merge_distance_m=10.0",
                                            "OpenCelliD"),
}


@pytest.mark.parametrize("case", list(ARGUMENTS_NOT_USED))
def test_argument_the_file_leaves_unused_is_warned(tmp_path, case):
    options, shown, source = ARGUMENTS_NOT_USED[case]
    _, messages = read(tmp_path, CLEAN, **options)
    warned(messages, "read_cells arguments", "not used", shown, source)


def test_argument_used_where_the_file_has_no_column_is_not_warned(tmp_path):
    net, messages = read(tmp_path, table("Site,Sector,Latitude,Longitude",
                                         [r[:4] for r in ROWS]), height_m=40.0)
    assert (net.cells["height_m"] == 40.0).all()
    assert not any("arguments" in m for m in messages), messages


def test_bandwidth_argument_in_hz_refused_and_in_khz_warned(tmp_path):
    with pytest.raises(ValidationError, match="bandwidth_mhz=2e"):
        read(tmp_path, CLEAN, bandwidth_mhz=2e7)
    _, messages = read(tmp_path, CLEAN, bandwidth_mhz=20_000)
    assert any("bandwidth_mhz=20000" in m and "usual range" in m for m in messages), messages


# ------------------------------------------------------------------------- the CLI route

CLI_FILES = {
    "negative azimuth": (column("Azimuth", [0, -120, 0, 240, 60]), "'Azimuth'"),
    "header only": (HEADER + "\n", "no data rows"),
    "repeated header": (CLEAN + HEADER + "\n", "repeats the header"),
    "unit in values": (column("Power_dBm", ["43 dBm"] * 5), "'Power_dBm'"),
    "comment line": ("# export\n" + CLEAN, "comment"),
    "lone CR and a bad power": (column("Power_W", [0, 20, 20, 20, 20]).replace("\n", "\r"),
                                "'Power_W'"),
}


@pytest.mark.parametrize("case", list(CLI_FILES))
def test_cli_run_refuses_with_one_error_line(tmp_path, capsys, case):
    content, needle = CLI_FILES[case]
    (tmp_path / "plan.csv").write_bytes(content.encode("utf-8"))
    scenario = tmp_path / "plan.toml"
    scenario.write_text('methods = ["max_rsrp"]\n[network]\nbuilder = "file"\npath = '
                        '"plan.csv"\n[users]\nn = 10\n[seeds]\nbase = 1\ndrops = 1\n',
                        encoding="utf-8")
    assert cli.main(["run", str(scenario), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err
    lines = [line for line in err.splitlines() if line.startswith("cellopt: error: ")]
    assert len(lines) == 1, err
    assert "plan.csv" in lines[0] and needle in lines[0] and "fix:" in lines[0], lines[0]


def test_no_case_raises_anything_but_validation_error(tmp_path):
    """Each refused case above raises ValidationError, not a bare parser error."""
    cases = [c for c, _ in REFUSED_DIALECTS.values()]
    cases += [column(h, v) for h, v, _ in SLIPS_REFUSED.values()]
    for n, content in enumerate(cases):
        path = tmp_path / f"case{n}.csv"
        path.write_bytes(content.encode("utf-8") if isinstance(content, str) else content)
        with pytest.raises(ValidationError), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            read_cells(path, progress=False)
