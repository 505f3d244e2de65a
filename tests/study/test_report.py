"""The HTML report: self-contained, escaped, complete; and it renders in a headless browser."""

import base64
import html
import io
import json
import math
import re
import shutil
import subprocess
from collections import Counter
from html.parser import HTMLParser

import matplotlib

matplotlib.use("Agg")

import geopandas as gpd
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
import shapely

from cellopt.errors import ValidationError
from cellopt.study import report
from cellopt.study.report import colourings, common, format_value, write_report
from cellopt.study.report import page as report_page

CRS = "EPSG:32610"
N_USERS, N_CELLS = 40, 3
NASTY_ID = "<b>&x"

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}


class _Scan(HTMLParser):
    """Counts class tokens and ids, and checks that the tags nest."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.classes: Counter[str] = Counter()
        self.ids: Counter[str] = Counter()
        self.tags: Counter[str] = Counter()
        self.attrs: list[tuple[str, str, str]] = []
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.text: list[str] = []

    def _open(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags[tag] += 1
        for name, value in attrs:
            value = value or ""
            self.attrs.append((tag, name, value))
            if name == "class":
                self.classes.update(value.split())
            elif name == "id":
                self.ids[value] += 1

    def handle_starttag(self, tag, attrs):
        self._open(tag, attrs)
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self._open(tag, attrs)

    def handle_endtag(self, tag):
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            if tag in self.stack:
                while self.stack.pop() != tag:
                    pass
        else:
            self.stack.pop()

    def handle_data(self, data):
        if not {"script", "style"} & set(self.stack[-1:]):
            self.text.append(data)


def scan(text: str) -> _Scan:
    s = _Scan()
    s.feed(text)
    s.close()
    return s


def make_frames(n_users: int = N_USERS, seed: int = 0) -> tuple[gpd.GeoDataFrame, gpd.GeoDataFrame]:
    rng = np.random.default_rng(seed)
    ids = np.array([NASTY_ID, "p1", "f2"], dtype=object)
    tiers = np.array(["macro", "pico", "femto"])
    cells = gpd.GeoDataFrame(
        {"cell_id": ids, "site_id": [0, 1, 2], "tier": tiers,
         "owner": ["operator", "operator", "third_party"], "azimuth_deg": [30.0, np.nan, np.nan],
         "tx_power_dbm": [46.0, 30.0, 20.0], "load": [0.8, np.nan, 0.1], "n_users": [20, 10, 2],
         "traffic_mbps": [50.0, 20.0, 3.5], "backhaul_mbps": [np.inf, np.inf, 10.0],
         "backhaul_use": [np.nan, np.nan, 0.35], "payment": [0.0, 0.0, 1.25]},
        geometry=gpd.points_from_xy([500_000.0, 500_600.0, 500_300.0],
                                    [4_100_000.0, 4_100_400.0, 4_099_700.0]),
        crs=CRS)
    serve = rng.integers(-1, N_CELLS, n_users)
    serve[:3] = [-1, 0, 2]
    served = serve >= 0
    users = gpd.GeoDataFrame(
        {"user_id": np.arange(n_users),
         "in_study_area": np.arange(n_users) % 5 != 0,
         "usable": np.arange(n_users) != 0,
         "serving_cell_id": pd.Series([ids[s] if s >= 0 else None for s in serve], dtype=object),
         "serving_tier": np.where(served, tiers[np.maximum(serve, 0)], "none"),
         "n_serving_cells": served.astype(int),
         "airtime_share": np.where(served, rng.uniform(0, 1, n_users), 0.0),
         "rate_mbps": np.where(served, rng.uniform(0.1, 20, n_users), 0.0),
         "sinr_db": np.where(served, rng.normal(5, 5, n_users), np.nan)},
        geometry=gpd.points_from_xy(500_000 + rng.uniform(-300, 900, n_users),
                                    4_100_000 + rng.uniform(-500, 600, n_users)),
        crs=CRS)
    return users, cells


def make_tables() -> dict[str, pd.DataFrame]:
    methods = pd.DataFrame(
        {"utility": [-171.923456, -228.6], "gap": [2.2e-5, np.nan], "iterations": [12, 1],
         "status": ["optimal", None]},
        index=pd.Index(["alm", "max_sinr"], name="method"))
    radio = pd.DataFrame({"cells": [1, 1, 1], "mean load": [0.8, np.nan, 0.1]},
                         index=pd.Index(["macro", "pico", "femto"], name="tier"))
    return {"Methods": methods, "Radio <summary>": radio}


@pytest.fixture
def figures():
    f1, a1 = plt.subplots(figsize=(4, 3))
    a1.plot([1, 2, 3], [0.1, 0.5, 1.0], label="alm")
    a1.legend()
    a1.set_title("Rate CDF")
    f2, a2 = plt.subplots(figsize=(4, 3))
    a2.semilogy([1, 2, 3], [3.0, 2.0, 1.5], "o-")
    yield {"Rate CDF": f1, "Convergence": f2}
    plt.close(f1)
    plt.close(f2)


@pytest.fixture
def page(tmp_path, figures):
    users, cells = make_frames()
    path = write_report(tmp_path / "out" / "report.html", title="Drop <1> & co", users=users, cells=cells,
                        tables=make_tables(), figures=figures, notes=["scenario: hex <grid>", "seed 7"])
    return path, users, cells


# ---------------------------------------------------------------------- content
def test_writes_one_valid_page(page, figures):
    path = page[0]
    assert path.name == "report.html" and path.is_file()
    assert [p.name for p in path.parent.iterdir()] == ["report.html"]  # no temporary file left
    text = path.read_text("utf-8")
    assert text.startswith("<!DOCTYPE html>")
    assert '<meta charset="utf-8">' in text
    s = scan(text)
    assert not s.errors and not s.stack
    duplicated = [i for i, n in s.ids.items() if n > 1]
    assert not duplicated
    assert s.ids["map"] == 1 and s.tags["svg"] >= 1
    for fig in figures.values():  # the caller closes the figures
        assert plt.fignum_exists(fig.number)


def test_nothing_is_fetched(page):
    text = page[0].read_text("utf-8")
    assert "http://" not in text and "https://" not in text
    s = scan(text)
    for tag, name, value in s.attrs:
        if name in ("src", "href", "xlink:href", "action", "poster", "data"):
            assert not re.match(r"\s*(https?:)?//", value, re.I), (tag, name, value)
            assert value.startswith(("#", "data:")), (tag, name, value)
    assert "@import" not in text
    assert set(re.findall(r"url\(\s*['\"]?(.)", text)) <= {"#"}  # only references inside the page
    assert "<link" not in text and "<iframe" not in text
    assert not re.search(r"<script[^>]*\bsrc=", text)
    assert "Content-Security-Policy" in text and "default-src 'none'" in text


def test_counts_match(page):
    path, users, _ = page
    s = scan(path.read_text("utf-8"))
    served = users["serving_cell_id"].notna().sum()
    assert s.classes["cell"] == N_CELLS
    assert s.classes["user"] == N_USERS
    assert s.classes["assoc"] == served
    guard = ~users["in_study_area"]
    assert s.classes["guard"] == guard.sum() + (guard & users["serving_cell_id"].notna()).sum()  # dots, lines
    assert s.classes["unusable"] == 1
    assert s.classes["summary-table"] == 2
    assert s.classes["figure"] == 2
    assert s.classes["third"] == 1
    assert s.tags["title"] == 1 + N_USERS + N_CELLS  # page title + one tooltip per marker


def test_escaping(page):
    text = page[0].read_text("utf-8")
    assert NASTY_ID not in text
    assert "&lt;b&gt;&amp;x" in text
    assert "<title>Drop &lt;1&gt; &amp; co</title>" in text
    assert "hex &lt;grid&gt;" in text and "Radio &lt;summary&gt;" in text
    # tooltip of a user served by that cell names it, escaped
    assert re.search(r"served by cell &lt;b&gt;&amp;x \(macro\)", text)


def test_missing_values_are_dashes(tmp_path):
    users, cells = make_frames()
    path = write_report(tmp_path / "r.html", title="t", users=users, cells=cells, tables=make_tables(),
                        figures={})
    text = path.read_text("utf-8")
    s = scan(text)
    visible = "\n".join(s.text)
    assert not re.search(r"\b(nan|NaN|None|inf|<NA>)\b", visible)
    assert "–" in visible  # missing gap, status, load, SINR
    assert "SINR: –" in visible and "not served" in visible
    assert "backhaul: unlimited" in visible
    assert "load: –" in visible
    assert 'class="num">2.2e-05<' in text and 'class="num">-171.9<' in text


def test_tables_show_index_and_caption(page):
    text = page[0].read_text("utf-8")
    table = re.search(r'<table class="summary-table" id="table-methods">.*?</table>', text, re.S).group(0)
    assert "<caption>Methods</caption>" in table
    assert '<th scope="col">method</th>' in table
    assert '<th scope="row">alm</th>' in table and '<th scope="row">max_sinr</th>' in table
    assert '<td class="num">12</td>' in table  # integers in full


@pytest.mark.parametrize(("value", "text"), [
    (0.5, "0.5"), (3.14159, "3.142"), (12345.6, "12350"), (9.99996, "10"), (1e-9, "1e-09"),
    (2.5e7, "2.5e+07"), (-171.923, "-171.9"), (0.0, "0"), (np.float32(0.25), "0.25"), (np.int64(7), "7"),
    (10**12, "1000000000000"), (True, "yes"), (None, "–"), (np.nan, "–"), (pd.NA, "–"), (np.inf, "∞"),
    (-np.inf, "−∞"), ("a<b", "a<b"),
])
def test_format_value(value, text):
    assert format_value(value) == text


def test_association_lines_off_above_threshold(tmp_path, monkeypatch):
    users, cells = make_frames()
    monkeypatch.setattr("cellopt.study.report.map_section.ASSOCIATION_LINES_MAX_USERS", 10)
    text = write_report(tmp_path / "r.html", title="t", users=users, cells=cells, tables={},
                        figures={}).read_text("utf-8")
    row = re.search(r'<div class="map-row ([^"]*)" id="map-row">', text).group(1).split()
    assert "show-assoc" not in row and "show-users" in row
    assert '<input type="checkbox" data-toggle="show-assoc">' in text
    assert scan(text).classes["assoc"] == users["serving_cell_id"].notna().sum()  # still there, hidden
    assert 'id="tables"' not in text and 'id="figures"' not in text


def test_minimal_columns_and_no_users(tmp_path):
    users, cells = make_frames()
    users = users[["user_id", "serving_cell_id", "geometry"]]
    cells = cells[["cell_id", "tier", "geometry"]]
    text = write_report(tmp_path / "r.html", title="t", users=users, cells=cells, tables={},
                        figures={}).read_text("utf-8")
    s = scan(text)
    assert s.classes["user"] == N_USERS and s.classes["cell"] == N_CELLS and not s.errors
    assert s.classes["t-macro"] > 0  # tier taken from the serving cell
    empty = write_report(tmp_path / "e.html", title="t", users=users.iloc[:0], cells=cells, tables={},
                         figures={}).read_text("utf-8")
    assert scan(empty).classes["user"] == 0 and scan(empty).classes["cell"] == N_CELLS


def test_overwrites_atomically(tmp_path):
    users, cells = make_frames()
    path = tmp_path / "r.html"
    path.write_text("old")
    write_report(path, title="new", users=users, cells=cells, tables={}, figures={})
    assert "<title>new</title>" in path.read_text("utf-8")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["r.html"]


def test_bad_input_is_refused(tmp_path):
    users, cells = make_frames()
    kw = {"title": "t", "tables": {}, "figures": {}}
    with pytest.raises(ValidationError, match="serving_cell_id"):
        write_report(tmp_path / "r.html", users=users.drop(columns="serving_cell_id"), cells=cells, **kw)
    dup = cells.copy()
    dup["cell_id"] = ["a", "a", "b"]
    with pytest.raises(ValidationError, match="duplicate cell_id"):
        write_report(tmp_path / "r.html", users=users, cells=dup, **kw)
    with pytest.raises(ValidationError, match="geographic"):
        write_report(tmp_path / "r.html", users=users.to_crs(4326), cells=cells.to_crs(4326), **kw)
    with pytest.raises(ValidationError, match="differs"):
        write_report(tmp_path / "r.html", users=users.to_crs(32611), cells=cells, **kw)
    with pytest.raises(ValidationError, match="GeoDataFrame"):
        write_report(tmp_path / "r.html", users=pd.DataFrame(users), cells=cells, **kw)
    assert not (tmp_path / "r.html").exists()


def test_unknown_serving_cell_warns(tmp_path):
    users, cells = make_frames()
    users.loc[1, "serving_cell_id"] = "nope"
    with pytest.warns(UserWarning, match="not in cells.cell_id"):
        text = write_report(tmp_path / "r.html", title="t", users=users, cells=cells, tables={},
                            figures={}).read_text("utf-8")
    assert scan(text).classes["assoc"] == users["serving_cell_id"].notna().sum() - 1


# ---------------------------------------------------------------------- in a browser
CHROMIUM = shutil.which("chromium")
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--host-resolver-rules=MAP * ~NOTFOUND",  # any network fetch would fail
    "--window-size=1400,1000", "--virtual-time-budget=2000", "--enable-logging=stderr", "--v=0",
]


def _chromium(tmp_path, name: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={tmp_path / ('profile-' + name)}",
                           *args], capture_output=True, text=True, timeout=60, check=False)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
@pytest.mark.slow
def test_renders_in_headless_chromium(page, tmp_path):
    pil = pytest.importorskip("PIL.Image")
    path, users, _ = page
    url = path.resolve().as_uri()
    dom = _chromium(tmp_path, "dom", "--dump-dom", url)
    png = tmp_path / "shot.png"
    shot = _chromium(tmp_path, "shot", f"--screenshot={png}", url)
    assert dom.returncode == 0, dom.stderr[-2000:]
    assert shot.returncode == 0, shot.stderr[-2000:]
    for run in (dom, shot):
        console = [line for line in run.stderr.splitlines() if ":CONSOLE" in line]
        assert not [c for c in console if "Uncaught" in c or "Content Security Policy" in c
                    or "Failed to load" in c], console

    s = scan(dom.stdout)
    assert 'data-ready="1"' in dom.stdout  # the script ran to its end
    assert s.ids["map"] == 1
    assert s.classes["cell"] == N_CELLS and s.classes["user"] == N_USERS
    assert s.classes["assoc"] == users["serving_cell_id"].notna().sum()
    assert s.classes["summary-table"] == 2 and s.classes["figure"] == 2
    assert re.search(r'id="scale-label">\d+(\.\d+)? k?m<', dom.stdout)
    assert re.search(r'<svg id="map"[^>]*style="--k: ?[0-9.]+', dom.stdout)

    image = np.asarray(pil.open(png).convert("RGB"), dtype=float)
    assert image.shape == (1000, 1400, 3)
    colours = np.unique(image.reshape(-1, 3).astype(np.uint8), axis=0)
    assert len(colours) > 100, len(colours)
    assert image.std() > 15
    # the map's markers are drawn: some pixels have the tier colours
    for hex_colour in (report.TIER_COLORS["macro"], report.TIER_COLORS["pico"]):
        rgb = np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)], dtype=float)
        assert (np.abs(image - rgb).sum(axis=2) < 30).sum() > 20, hex_colour


# ---------------------------------------------------------------------- methods, areas, coverage, tables
CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; img-src data:; "
       "font-src 'none'; connect-src 'none'; base-uri 'none'; form-action 'none'")


def stacked(methods=("max_rsrp", "alm")) -> tuple[gpd.GeoDataFrame, gpd.GeoDataFrame]:
    """The frames of several methods stacked: user 1 is served by the macro under the first method
    and by the pico under the others; the cells' load differs by method."""
    users, cells = make_frames()
    us, cs = [], []
    for k, m in enumerate(methods):
        u, c = users.copy(), cells.copy()
        if k:
            u.loc[1, ["serving_cell_id", "serving_tier"]] = ["p1", "pico"]
            u.loc[1, "rate_mbps"] = 7.25
        u.insert(0, "method", m)
        c.insert(0, "method", m)
        c["load"] = [0.8, np.nan, 0.1 * (k + 1)]
        us.append(u)
        cs.append(c)
    return (gpd.GeoDataFrame(pd.concat(us, ignore_index=True), crs=CRS),
            gpd.GeoDataFrame(pd.concat(cs, ignore_index=True), crs=CRS))


def page_data(text: str) -> dict:
    block = re.search(r'<script type="application/json" id="map-data">(.*?)</script>', text, re.S)
    return json.loads(block.group(1))


def title(data: dict, refs: list[int]) -> str:
    return "\n".join(data["lines"][k] for k in refs)


def origin(text: str, users: gpd.GeoDataFrame) -> tuple[float, float]:
    """(ox, oy): map x = ox + svg x, map y = oy − svg y, from the first user's dot."""
    cx, cy = map(float, re.search(r'<circle class="user[^"]*" cx="([-\d.]+)" cy="([-\d.]+)"', text).groups())
    p = users.geometry.iloc[0]
    return p.x - cx, p.y + cy


def test_method_selector(tmp_path):
    users, cells = stacked(("max_rsrp", "range_expansion", "alm"))
    text = write_report(tmp_path / "r.html", title="t", users=users, cells=cells, tables={},
                        figures={}).read_text("utf-8")
    s = scan(text)
    assert not s.errors and not [i for i, n in s.ids.items() if n > 1]
    radios = re.findall(r'<input type="radio" name="method" value="(\d)"( checked)?> ([\w_]+)</label>', text)
    assert [(v, name) for v, _, name in radios] == [("0", "max_rsrp"), ("1", "range_expansion"), ("2", "alm")]
    assert [name for _, c, name in radios if c] == ["alm"]  # the last method by default
    assert '<span id="map-method">: alm</span>' in text
    assert s.classes["user"] == N_USERS and s.classes["cell"] == N_CELLS  # drawn once, shared
    assert s.tags["title"] == 1 + N_USERS + N_CELLS
    data = page_data(text)
    assert [m["name"] for m in data["methods"]] == ["max_rsrp", "range_expansion", "alm"]
    assert data["selected"] == 2
    chosen = write_report(tmp_path / "s.html", title="t", users=users, cells=cells, tables={}, figures={},
                          selected_method="max_rsrp").read_text("utf-8")
    assert re.search(r'value="0" checked> max_rsrp<', chosen) and page_data(chosen)["selected"] == 0
    assert '<span id="map-method">: max_rsrp</span>' in chosen
    # the static page shows the selected method: user 1 by the macro, its line to the macro
    assert re.search(r'<circle class="user t-macro"[^>]*><title>user 1\nserved by cell &lt;b&gt;&amp;x',
                     chosen)
    # no method column: no selector, no data, as before
    plain = write_report(tmp_path / "p.html", title="t", users=make_frames()[0], cells=make_frames()[1],
                         tables={}, figures={}).read_text("utf-8")
    assert '<input type="radio" name="method"' not in plain and 'id="map-data"' not in plain


def test_per_method_data(tmp_path):
    users, cells = stacked()
    text = write_report(tmp_path / "r.html", title="t", users=users, cells=cells, tables={},
                        figures={}).read_text("utf-8")
    data = page_data(text)
    first, last = data["methods"]
    tiers = data["tiers"]
    # user 1 (second dot): the macro under max_rsrp, the pico under alm
    assert tiers[int(first["t"][1])] == "macro" and tiers[int(last["t"][1])] == "pico"
    assert "served by cell <b>&x (macro)" in title(data, first["ut"][1])
    assert "served by cell p1 (pico)" in title(data, last["ut"][1])
    assert "rate: 7.25 Mbit/s" in title(data, last["ut"][1])
    ox, oy = origin(text, users)
    macro, pico = cells.geometry.iloc[0], cells.geometry.iloc[1]
    assert (first["lx"][1], first["ly"][1]) == pytest.approx((macro.x - ox, oy - macro.y), abs=0.06)
    assert (last["lx"][1], last["ly"][1]) == pytest.approx((pico.x - ox, oy - pico.y), abs=0.06)
    assert first["lx"][0] is None  # user 0 is not served
    assert first["n"]["users-pico"] + 1 == last["n"]["users-pico"]
    assert first["n"]["users-macro"] - 1 == last["n"]["users-macro"]
    # the cells' colours and tooltips per method (page order: macro, pico, femto)
    assert "load: 10 %" in title(data, first["ct"][2]) and "load: 20 %" in title(data, last["ct"][2])
    assert first["cs"][2] != last["cs"][2]
    # the static page is the selected (last) method's, user 1 drawn as served by the pico
    assert re.search(r'<circle class="user t-pico"[^>]*><title>user 1\nserved by cell p1 \(pico\)', text)
    s = scan(text)
    assert s.classes["assoc"] == users[users["method"] == "alm"]["serving_cell_id"].notna().sum()
    block = re.search(r'id="map-data">(.*?)</script>', text, re.S).group(1)
    assert "<" not in block  # "<b>&x" escaped inside the JSON block


def test_methods_missing_rows(tmp_path):
    """A user or a cell without a row in a method is hidden while that method is shown."""
    users, cells = stacked()
    users = users.drop(index=users.index[(users["method"] == "alm") & (users["user_id"] == 5)])
    cells = cells[~((cells["method"] == "alm") & (cells["cell_id"] == "f2"))]
    users.loc[(users["method"] == "alm") & (users["serving_cell_id"] == "f2"), "serving_cell_id"] = None
    text = write_report(tmp_path / "r.html", title="t", users=users, cells=cells, tables={},
                        figures={}).read_text("utf-8")
    s = scan(text)
    assert s.classes["user"] == N_USERS and s.classes["cell"] == N_CELLS
    assert s.classes["absent"] == 2  # user 5's dot, the femto
    data = page_data(text)
    assert int(data["methods"][1]["f"][5]) & 4 and not int(data["methods"][0]["f"][5]) & 4
    assert data["methods"][1]["cs"][2] is None and data["methods"][0]["cs"][2] is not None
    assert data["methods"][1]["n"]["cells"] == N_CELLS - 1


def test_lines_end_at_nearest_image(tmp_path):
    users, cells = make_frames()
    served = users["serving_cell_id"].notna().to_numpy()
    users["serving_x_m"] = np.where(served, 510_000.0, np.nan)
    users["serving_y_m"] = np.where(served, 4_090_000.0 + np.arange(N_USERS), np.nan)
    k = int(np.flatnonzero(served)[1])
    users.loc[k, ["serving_x_m", "serving_y_m"]] = np.nan  # falls back to the cell's own position
    text = write_report(tmp_path / "r.html", title="t", users=users, cells=cells, tables={},
                        figures={}).read_text("utf-8")
    ox, oy = origin(text, users)
    line = r'<path class="assoc[^"]*" d="M[-\d.]+ [-\d.]+L([-\d.]+) ([-\d.]+)"'
    ends = [tuple(map(float, e)) for e in re.findall(line, text)]
    assert len(ends) == served.sum()
    expected = []
    for i in np.flatnonzero(served):
        if i == k:
            cell = cells.geometry[cells["cell_id"] == users.loc[i, "serving_cell_id"]].iloc[0]
            expected.append((cell.x - ox, oy - cell.y))
        else:
            expected.append((510_000.0 - ox, oy - (4_090_000.0 + i)))
    assert np.allclose(ends, expected, atol=0.06)
    assert "nearest wraparound copy" in text
    # with methods: the page data ends there too
    su, sc = stacked()
    su["serving_x_m"] = np.where(su["serving_cell_id"].notna(), 510_000.0, np.nan)
    su["serving_y_m"] = np.where(su["serving_cell_id"].notna(), 4_090_000.0, np.nan)
    text = report.render_report(title="t", users=su, cells=sc, tables={}, figures={})
    ox, oy = origin(text, su)
    first = page_data(text)["methods"][0]
    assert (first["lx"][1], first["ly"][1]) == pytest.approx((510_000.0 - ox, oy - 4_090_000.0), abs=0.06)
    with pytest.raises(ValidationError, match="serving_y_m"):
        write_report(tmp_path / "x.html", title="t", users=users.drop(columns="serving_y_m"), cells=cells,
                     tables={}, figures={})


def test_areas_drawn(tmp_path):
    users, cells = make_frames()
    study = shapely.box(499_800, 4_099_400, 501_000, 4_100_700)
    region = shapely.Polygon([(499_000, 4_099_000), (502_000, 4_099_000), (502_000, 4_102_000)],
                             holes=[[(501_000, 4_099_500), (501_500, 4_099_500), (501_500, 4_100_000)]])
    text = write_report(tmp_path / "r.html", title="t", users=users, cells=cells, tables={}, figures={},
                        areas={"study area": study, "region <r>": region}).read_text("utf-8")
    s = scan(text)
    assert not s.errors
    groups = re.findall(r'<g id="(area-[\w-]+)" class="area"><path d="([^"]+)" stroke="(#\w+)"'
                        r'( stroke-dasharray="[^"]+")?>', text)
    assert [g[0] for g in groups] == ["area-study-area", "area-region-r"]
    assert groups[0][3] != groups[1][3] and groups[0][2] != groups[1][2]  # distinct styles
    assert groups[0][1].count("M") == 1 and groups[0][1].endswith("Z")
    assert groups[1][1].count("M") == 2  # the hole too
    ox, oy = origin(text, users)
    xy = np.array(re.findall(r"[-\d.]+", groups[0][1]), float).reshape(-1, 2)
    assert xy.min(axis=0) == pytest.approx([499_800 - ox, oy - 4_100_700], abs=0.06)
    assert xy.max(axis=0) == pytest.approx([501_000 - ox, oy - 4_099_400], abs=0.06)
    # listed in the legend, each with a checkbox that shows or hides it
    assert '<input type="checkbox" data-show="area-study-area" checked>' in text
    assert '<input type="checkbox" data-show="area-region-r" checked>' in text
    assert "region &lt;r&gt;" in text
    # the first view spans the region
    x, y, w, h = map(float, re.search(r'<svg id="map" viewBox="([^"]+)"', text).group(1).split())
    assert x <= 499_000 - ox and x + w >= 502_000 - ox and y <= oy - 4_102_000 and y + h >= oy - 4_099_000
    with pytest.raises(ValidationError, match="shapely geometry"):
        write_report(tmp_path / "x.html", title="t", users=users, cells=cells, tables={}, figures={},
                     areas={"a": [(0, 0), (1, 1)]})


def _png(uri: str) -> np.ndarray:
    assert uri.startswith("data:image/png;base64,")
    from PIL import Image

    return np.asarray(Image.open(io.BytesIO(base64.b64decode(uri.split(",", 1)[1]))).convert("RGBA"))


def test_coverage_embedded(tmp_path):
    users, cells = make_frames()
    rows, cols = 30, 40
    rsrp = np.linspace(-120, -60, rows * cols).reshape(rows, cols)
    rsrp[0, :] = -20.0  # the north row: the top of the image, beyond the range (the top colour)
    rsrp[5:8, 10:20] = np.nan
    best = np.arange(rows * cols).reshape(rows, cols) % 7
    best[-1, :] = -1
    bounds = (499_000.0, 4_098_000.0, 503_000.0, 4_101_000.0)
    layers = [report.CoverageLayer("RSRP", rsrp, bounds, "dBm"),
              report.CoverageLayer("best server", best, (499_500.0, 4_099_000.0, 500_500.0, 4_100_000.0), "",
                                   categorical=True)]
    text = write_report(tmp_path / "r.html", title="t", users=users, cells=cells, tables={}, figures={},
                        coverage=layers).read_text("utf-8")
    s = scan(text)
    assert not s.errors
    images = re.findall(r'<g id="(cov-[\w-]+)" class="coverage" style="display:none"><image href="([^"]+)" '
                        r'x="([-\d.]+)" y="([-\d.]+)" width="([-\d.]+)" height="([-\d.]+)" '
                        r'preserveAspectRatio="none" style="image-rendering:pixelated">', text)
    assert [i[0] for i in images] == ["cov-rsrp", "cov-best-server"]
    ox, oy = origin(text, users)
    x, y, w, h = map(float, images[0][2:])
    assert (x, y, w, h) == pytest.approx((499_000 - ox, oy - 4_101_000, 4000, 3000), abs=0.06)
    # under the markers
    assert text.index('id="layer-coverage"') < text.index('id="layer-assoc"') < text.index('id="layer-cells"')
    png = _png(images[0][1])
    assert png.shape == (rows, cols, 4)
    assert (png[5:8, 10:20, 3] == 0).all() and (np.delete(png, np.s_[5:8], axis=0)[..., 3] == 255).all()
    viridis = np.array(matplotlib.colormaps["viridis"](1.0, bytes=True))
    assert (png[0, :] == viridis).all()  # row 0 at the top (north)
    cat = _png(images[1][1])
    assert cat.shape == (rows, cols, 4) and (cat[-1, :, 3] == 0).all() and (cat[:-1, :, 3] == 255).all()
    assert not (cat[0, 0] == cat[0, 1]).all()  # consecutive values differ
    # the choice: none first (checked), then each layer with its legend
    assert '<input type="radio" name="coverage" data-show="" checked> none' in text
    assert '<input type="radio" name="coverage" data-show="cov-rsrp cov-rsrp-legend"> RSRP' in text
    legend = re.search(r'<div class="ramp-legend cov-legend" id="cov-rsrp-legend" style="display:none">.*?'
                       r"</div></div>", text, re.S).group(0)
    assert "RSRP [dBm]" in legend and "dBm</span>" in legend
    assert "Colours distinguish cells" in text
    # the first view spans the rasters
    vx, vy, vw, vh = map(float, re.search(r'<svg id="map" viewBox="([^"]+)"', text).group(1).split())
    assert vx <= x and vx + vw >= x + w and vy <= y and vy + vh >= y + h
    # the CSP is unchanged
    assert re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', text).group(1) == CSP


def test_coverage_legend_ranges_and_labels(tmp_path):
    users, cells = make_frames()
    values = np.array([[0.0, 5.0], [10.0, np.nan]])
    bounds = (499_000, 4_099_000, 500_000, 4_100_000)
    layers = [report.CoverageLayer("SINR", values, bounds, "dB", vmin=-5, vmax=25),
              report.CoverageLayer("tier", np.array([[0, 1], [2, -1]]), bounds, "", categorical=True,
                                   labels={0: "macro", 1: "pico", 2: "femto"})]
    text = report.render_report(title="t", users=users, cells=cells, tables={}, figures={}, coverage=layers)
    assert "<span>-5 dB</span><span>10 dB</span><span>25 dB</span>" in text
    assert re.search(r'id="cov-tier-legend".*?<ul>.*?macro</li>.*?pico</li>.*?femto</li></ul>', text, re.S)
    with pytest.raises(ValidationError, match="bounds_m"):
        report.CoverageLayer("x", values, (1, 1, 0, 2), "dB")
    with pytest.raises(ValidationError, match="2-D"):
        report.CoverageLayer("x", np.zeros(3), (0, 0, 1, 1), "dB")
    with pytest.raises(ValidationError, match="whole numbers"):
        report.CoverageLayer("x", values / 3, (0, 0, 1, 1), "", categorical=True)
    with pytest.raises(ValidationError, match="vmin"):
        report.CoverageLayer("x", values, (0, 0, 1, 1), "dB", vmin=3, vmax=3)


def test_sortable_tables(tmp_path, monkeypatch):
    users, cells = stacked(("max_rsrp", "range_expansion", "alm"))
    read = pd.DataFrame({"read as": ["latitude [°]", "tx_power_dbm"], "rows": [10, 12],
                         "note": ["WGS84 <deg>", 3.5]}, index=pd.Index(["lat", "power"], name="column"))
    monkeypatch.setattr("cellopt.study.report.tables.CELL_TABLE_MAX_ROWS", 2)
    tables = {**make_tables(), "How the columns were read": read}
    text = write_report(tmp_path / "r.html", title="t", users=users, cells=cells, tables=tables,
                        figures={}).read_text("utf-8")
    s = scan(text)
    assert not s.errors and not [i for i, n in s.ids.items() if n > 1]
    assert s.classes["sortable"] == 3 + 3  # the summary tables, one cell table per method
    # the text table: no numeric alignment for text, numbers right-aligned as a column
    table = re.search(r'<table class="summary-table" id="table-how-the-columns-were-read">.*?</table>', text,
                      re.S).group(0)
    assert '<th scope="col">read as</th>' in table and '<th scope="col">note</th>' in table
    assert '<th scope="col" class="num" data-sort="num">rows</th>' in table
    assert "<td>3.5</td>" in table and "<td>WGS84 &lt;deg&gt;</td>" in table  # a mixed column is text
    assert '<td class="num">12</td>' in table
    # the per-cell tables: one per method, the selected one shown, capped and saying so
    wraps = re.findall(r'<div class="table-wrap sortable cell-table-wrap" data-method="(\w+)"( hidden)?>'
                       r'<table class="cell-table" id="([\w-]+)"><caption>([^<]+)</caption>', text)
    assert [(m, h != "", i) for m, h, i, _ in wraps] == [
        ("max_rsrp", True, "table-cells-max-rsrp"), ("range_expansion", True, "table-cells-range-expansion"),
        ("alm", False, "table-cells-alm")]
    assert wraps[2][3] == f"Cells: alm (the first 2 of {N_CELLS} rows)"
    alm = re.search(r'id="table-cells-alm">.*?</table>', text, re.S).group(0)
    assert alm.count("<tr>") == 1 + 2 and '<th scope="col">cell_id</th>' in alm
    assert '<th scope="col" class="num" data-sort="num">load</th>' in alm and "method" not in alm
    assert '<a href="#cells">Cells</a>' in text
    # the script makes the headers sort buttons with aria-sort
    script = report_page._asset("report.js")
    assert "aria-sort" in script and '".sortable > table"' in script
    no_cells = write_report(tmp_path / "n.html", title="t", users=users, cells=cells, tables={}, figures={},
                            cell_table=False).read_text("utf-8")
    assert 'id="cells"' not in no_cells and "cell-table" not in no_cells.split("<style>")[0]


def test_bad_method_input(tmp_path):
    users, cells = stacked()
    kw = {"title": "t", "tables": {}, "figures": {}}
    with pytest.raises(ValidationError, match="selected_method 'lp'"):
        write_report(tmp_path / "r.html", users=users, cells=cells, selected_method="lp", **kw)
    plain_users, plain_cells = make_frames()
    with pytest.raises(ValidationError, match="no method column"):
        write_report(tmp_path / "r.html", users=plain_users, cells=plain_cells, selected_method="alm", **kw)
    with pytest.raises(ValidationError, match="cells table has a method column"):
        write_report(tmp_path / "r.html", users=plain_users, cells=cells, **kw)
    dup = pd.concat([users, users.iloc[:1]], ignore_index=True)
    with pytest.raises(ValidationError, match="repeated within a method"):
        write_report(tmp_path / "r.html", users=gpd.GeoDataFrame(dup, crs=CRS), cells=cells, **kw)
    dup_cells = gpd.GeoDataFrame(pd.concat([cells, cells.iloc[:1]], ignore_index=True), crs=CRS)
    with pytest.raises(ValidationError, match=r"duplicate cell_id .* within a method"):
        write_report(tmp_path / "r.html", users=users, cells=dup_cells, **kw)
    # the users' methods without cells of their own: every method shows the same cells
    text = write_report(tmp_path / "r.html", users=users, cells=plain_cells, **kw).read_text("utf-8")
    assert scan(text).classes["cell"] == N_CELLS and len(page_data(text)["methods"]) == 2
    assert not (tmp_path / "x.html").exists()


def test_page_size_methods(tmp_path):
    """2,000 users × 7 methods stay well under 5 MB (measured: 1.6 MB)."""
    rng = np.random.default_rng(1)
    users, cells = make_frames(2000)
    methods = [f"method {k}" for k in range(7)]
    us, cs = [], []
    for m in methods:
        u = users.copy()
        u["serving_cell_id"] = pd.Series(np.array([NASTY_ID, "p1", "f2", None], dtype=object)[
            rng.integers(0, 4, len(u))], dtype=object)
        tier = {NASTY_ID: "macro", "p1": "pico", "f2": "femto"}
        u["serving_tier"] = u["serving_cell_id"].map(tier).fillna("none")
        u["rate_mbps"] = rng.gamma(2, 3, len(u))
        u["sinr_db"] = rng.normal(5, 6, len(u))
        u["airtime_share"] = rng.uniform(0, 1, len(u))
        us.append(u.assign(method=m))
        cs.append(cells.assign(method=m))
    users = gpd.GeoDataFrame(pd.concat(us, ignore_index=True), crs=CRS)
    cells = gpd.GeoDataFrame(pd.concat(cs, ignore_index=True), crs=CRS)
    text = report.render_report(title="t", users=users, cells=cells, tables={}, figures={})
    size = len(text.encode())
    assert size < 5e6, size
    assert scan(text).classes["user"] == 2000


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
@pytest.mark.slow
def test_methods_and_sorting_in_headless_chromium(tmp_path):
    """The script switches the method (dots, lines, tooltips, counts, cell table) and sorts a table."""
    users, cells = stacked()
    layers = [report.CoverageLayer("RSRP", np.linspace(-120, -60, 200).reshape(10, 20),
                                   (499_500.0, 4_099_300.0, 501_000.0, 4_100_700.0), "dBm")]
    text = report.render_report(title="t", users=users, cells=cells, tables=make_tables(), figures={},
                                areas={"study area": shapely.box(499_800, 4_099_400, 501_000, 4_100_700)},
                                coverage=layers)
    assert 'id="layer-coverage"' in text
    probe = """<script>
      const pick = (name, k) => {
        const r = [...document.querySelectorAll(`input[name=${name}]`)][k];
        r.checked = true; r.dispatchEvent(new Event("change"));
      };
      pick("method", 0);
      pick("coverage", 1);
      const th = document.querySelector("#table-methods thead th:nth-child(2)");
      th.querySelector("button").click(); th.querySelector("button").click();
    </script>"""
    path = tmp_path / "probe.html"
    path.write_text(text.replace("</body>", probe + "</body>"), "utf-8")
    run = _chromium(tmp_path, "probe", "--dump-dom", path.resolve().as_uri())
    assert run.returncode == 0, run.stderr[-2000:]
    console = [line for line in run.stderr.splitlines() if ":CONSOLE" in line]
    assert not [c for c in console if "Uncaught" in c or "Content Security Policy" in c], console
    dom = run.stdout
    assert 'data-ready="1"' in dom and 'data-method="max_rsrp"' in dom
    s = scan(dom)
    assert s.classes["user"] == N_USERS
    first = users[users["method"] == "max_rsrp"]
    assert s.classes["assoc"] == first["serving_cell_id"].notna().sum()
    assert re.search(r'<circle class="user t-macro"[^>]*><title>user 1\nserved by cell &lt;b&gt;&amp;x', dom)
    assert '<span id="map-method">: max_rsrp</span>' in dom
    n_macro = (first["serving_tier"] == "macro").sum()
    assert f'data-count="users-macro">{n_macro}<' in dom
    assert re.search(r'data-method="max_rsrp"><table class="cell-table"', dom)  # shown
    assert re.search(r'data-method="alm" hidden=""><table class="cell-table"', dom)
    assert re.search(r'<g id="cov-rsrp" class="coverage" style="">', dom)
    assert re.search(r'id="cov-rsrp-legend" style="">', dom)
    # the Methods table sorted by utility, descending: alm (−171.9) before max_sinr (−228.6)
    table = re.search(r'<table class="summary-table" id="table-methods">.*?</table>', dom, re.S).group(0)
    assert 'aria-sort="descending"' in table and table.count("aria-sort") == 1
    assert table.index(">alm<") < table.index(">max_sinr<")
    assert '<button type="button" class="sort"' in table


# ---------------------------------------------------------------------- offsets of the association rules
OFFSET_METHODS = ("max_rsrp", "per-cell offsets", "alm")


def offset_frames(offsets=((0.0, 0.0, 0.0), (-3.0, 6.0, 0.0), (np.nan, np.nan, np.nan))):
    """The stacked frames with ``offset_db``: max_rsrp 0, per-cell offsets −3 (macro), +6 (pico)
    and 0 (femto), alm none (NaN: no offset rule). Page order of the cells: macro, pico, femto."""
    users, cells = stacked(OFFSET_METHODS)
    cells["offset_db"] = np.concatenate([np.asarray(o, float) for o in offsets])
    return users, cells


def rgb(hex_colour: str) -> tuple[int, int, int]:
    return tuple(int(hex_colour[i:i + 2], 16) for i in (1, 3, 5))


def offset_colour(style: str) -> str:
    return re.search(r"--by-offset:(#[0-9a-f]{6})", style).group(1)


def test_offset_colouring_offered(tmp_path):
    users, cells = offset_frames()
    text = report.render_report(title="t", users=users, cells=cells, tables={}, figures={})
    assert '<input type="radio" name="colour" data-toggle="by-offset"' in text
    assert re.search(r'data-toggle="by-offset"( checked)?> offset</label>', text)
    legend = re.search(r'<div class="ramp-legend" id="by-offset-legend">.*?</div></div>', text, re.S).group(0)
    assert "Cell offset (RSRP + offset picks the cell)" in legend
    assert "<span>−6 dB</span><span>0 dB</span><span>+6 dB</span>" in legend
    stops = re.findall(r'stop-color="(#[0-9a-f]{6})"', legend)
    assert len(stops) % 2 == 1  # an odd number: the middle one is 0 dB
    lo, mid, hi = rgb(stops[0]), rgb(stops[len(stops) // 2]), rgb(stops[-1])
    assert lo[2] > lo[0] + 60 and hi[0] > hi[2] + 60  # negative blue, positive red
    assert min(mid) > 230  # 0 dB: white
    assert "not an offset rule" in legend and "Labels:" in legend
    assert ".map-row:not(.by-offset) #by-offset-legend{display:none}" in text
    assert ".map-row.by-offset #map .cell path{fill:var(--by-offset)}" in text
    # the bar spans ±max|offset|, at least ±1 dB
    small = report.render_report(title="t", users=users, cells=offset_frames(
        ((0.0,) * 3, (0.5, -0.25, 0.0), (np.nan,) * 3))[1], tables={}, figures={})
    assert "<span>−1 dB</span><span>0 dB</span><span>+1 dB</span>" in small
    # not offered without the column, with NaN only, or with zeros only
    _, nan_cells = offset_frames(((np.nan,) * 3,) * 3)
    _, zero_cells = offset_frames(((0.0,) * 3, (0.0,) * 3, (np.nan,) * 3))
    for c in (cells.drop(columns="offset_db"), nan_cells, zero_cells):
        page = report.render_report(title="t", users=users, cells=c, tables={}, figures={})
        assert "by-offset" not in page and 'id="layer-offsets"' not in page and '"ol":' not in page
        assert '<input type="radio" name="colour" data-toggle="by-tier" checked> tier' in page
        assert ("offset: 0 dB" in page) == (c is zero_cells)  # the tooltips say 0, never NaN
        assert "offset: –" not in page
    # the existing colourings keep their sequential colours
    load = re.search(r'id="by-load-legend">.*?</div></div>', text, re.S).group(0)
    assert re.findall(r'stop-color="(#[0-9a-f]{6})"', load) == colourings._load_colors(np.linspace(0, 1, 6))


def test_offset_labels_and_colours(tmp_path):
    users, cells = offset_frames()
    text = write_report(tmp_path / "r.html", title="t", users=users, cells=cells, tables={}, figures={},
                        selected_method="per-cell offsets").read_text("utf-8")
    s = scan(text)
    assert not s.errors and not [i for i, n in s.ids.items() if n > 1]
    data = page_data(text)
    zero, rule, none = data["methods"]
    # the labels: the non-zero offsets of each method's cells (page order macro, pico, femto)
    assert rule["ol"] == ["−3", "+6", None]
    assert zero["ol"] == [None, None, None] and none["ol"] == [None, None, None]
    # the colours: +6 red, −3 blue, 0 white, NaN (no offset rule) the grey of "no value"
    r, g, b = rgb(offset_colour(rule["cs"][1]))
    assert r > b + 40 and r > g + 40  # a red hue (the bar's dark red end)
    r, g, b = rgb(offset_colour(rule["cs"][0]))
    assert b > r + 20
    assert min(rgb(offset_colour(zero["cs"][0]))) > 230
    assert {offset_colour(st) for st in none["cs"]} == {common.NO_LOAD_COLOR}
    # the static page draws the selected method's labels on a layer over the cells, tooltips beneath
    layer = re.search(r'<g id="layer-offsets">(.*?)</g></svg>', text, re.S).group(1)
    labels = re.findall(r'<g class="olabel( absent)?" data-cell="(\d)" transform="translate\([-\d. ]+\)">'
                        r'<text x="[-\d.]+" y="[-\d.]+" text-anchor="(\w+)">([^<]*)</text></g>', layer)
    assert [(a, int(j), t) for a, j, _, t in labels] == [("", 0, "−3"), ("", 1, "+6")]  # the femto: 0
    assert labels[1][2] == "start"  # right of the pico's square
    assert text.index('id="layer-cells"') < text.index('id="layer-offsets"')
    css = report_page._asset("report.css")
    assert re.search(r"#layer-offsets\{[^}]*pointer-events:none", css)
    assert re.search(r"\.olabel text\{[^}]*transform:scale\(var\(--k\)\)", css)  # keeps its size at zoom
    assert ".map-row:not(.by-offset) #layer-offsets{display:none}" in text
    # the sector's label sits beyond its slice along the boresight (azimuth 30°: up and right)
    x, y = (float(v) for v in re.search(r'data-cell="0"[^>]*><text x="([-\d.]+)" y="([-\d.]+)"',
                                         layer).groups())
    assert x > 0 and y < 0 and math.hypot(x, y) > 12
    # a method whose cells have no label hides them
    alm = report.render_report(title="t", users=users, cells=cells, tables={}, figures={})
    assert re.findall(r'<g class="olabel absent" data-cell="(\d)"[^>]*><text[^>]*></text>', alm) == ["0", "1"]


def test_offset_tooltip(tmp_path):
    users, cells = offset_frames()
    data = page_data(report.render_report(title="t", users=users, cells=cells, tables={}, figures={}))
    zero, rule, none = data["methods"]
    assert "offset: −3 dB" in title(data, rule["ct"][0]).split("\n")
    assert "offset: +6 dB" in title(data, rule["ct"][1]).split("\n")
    assert "offset: 0 dB" in title(data, zero["ct"][1]).split("\n")
    assert not [t for t in none["ct"] if "offset" in title(data, t)]  # NaN: no line
    cells["offset_db"] = cells["offset_db"].where(cells["offset_db"] != 6.0, 2.5)
    data = page_data(report.render_report(title="t", users=users, cells=cells, tables={}, figures={}))
    assert "offset: +2.5 dB" in title(data, data["methods"][1]["ct"][1])
    assert data["methods"][1]["ol"][1] == "+2.5"


@pytest.mark.parametrize(("selected", "offset_first"), [
    ("per-cell offsets", True), ("max_rsrp", True), ("alm", False), (None, False)])
def test_offset_colouring_default(tmp_path, selected, offset_first):
    """The offset colouring is chosen when the page opens if the method shown has finite offsets."""
    users, cells = offset_frames()
    text = report.render_report(title="t", users=users, cells=cells, tables={}, figures={},
                                selected_method=selected)
    checked = re.findall(r'<input type="radio" name="colour" data-toggle="([\w-]+)" checked>', text)
    assert checked == (["by-offset"] if offset_first else ["by-tier"])
    row = re.search(r'<div class="map-row ([^"]*)" id="map-row">', text).group(1).split()
    assert ("by-offset" in row) == offset_first
    # offsets of the other methods only, without a method column: the cells of every method
    plain_users, plain_cells = make_frames()
    plain_cells["offset_db"] = [0.0, 4.0, np.nan]
    plain = report.render_report(title="t", users=plain_users, cells=plain_cells, tables={}, figures={})
    assert re.search(r'data-toggle="by-offset" checked> offset<', plain)
    assert re.search(r'class="olabel" data-cell="1"[^>]*><text[^>]*>\+4</text>', plain)


@pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (apt-get install chromium)")
@pytest.mark.slow
def test_offset_labels_in_headless_chromium(tmp_path):
    """Choosing the offset colouring shows the labels of the method shown only; they let the
    mouse through to the cells; another colouring hides them."""
    users, cells = offset_frames()
    text = report.render_report(title="t", users=users, cells=cells, tables={}, figures={},
                                selected_method="alm")  # opens coloured by tier, no label
    probe = """<script>
      const pick = (name, test) => {
        const r = [...document.querySelectorAll(`input[name=${name}]`)].find(test);
        r.checked = true; r.dispatchEvent(new Event("change"));
      };
      const byText = t => r => r.parentNode.textContent.trim() === t;
      const state = () => [...document.querySelectorAll("#layer-offsets .olabel")].map(g => {
        const t = g.querySelector("text"), box = t.getBoundingClientRect();
        const shown = box.width > 0 && box.height > 0;
        let hit = null;
        if (shown) {
          const el = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
          hit = el ? el.closest("#layer-offsets") === null : null;
        }
        return {cell: +g.dataset.cell, text: t.textContent, shown, through: hit,
                events: getComputedStyle(t).pointerEvents};
      });
      const out = {start: state()};
      pick("colour", byText("offset")); out.offsetAlm = state();
      pick("method", byText("per-cell offsets")); out.offsetRule = state();
      pick("method", byText("max_rsrp")); out.offsetZero = state();
      pick("method", byText("per-cell offsets")); pick("colour", byText("tier")); out.tierRule = state();
      pick("colour", byText("offset")); out.again = state();
      document.body.dataset.probe = JSON.stringify(out);
    </script>"""
    path = tmp_path / "probe.html"
    path.write_text(text.replace("</body>", probe + "</body>"), "utf-8")
    run = _chromium(tmp_path, "offsets", "--dump-dom", path.resolve().as_uri())
    assert run.returncode == 0, run.stderr[-2000:]
    console = [line for line in run.stderr.splitlines() if ":CONSOLE" in line]
    assert not [c for c in console if "Uncaught" in c or "Content Security Policy" in c], console
    found = re.search(r'<body data-probe="([^"]*)"', run.stdout)
    assert found, run.stdout[-2000:]
    out = json.loads(html.unescape(found.group(1)))

    def shown(state):
        return [(s["cell"], s["text"]) for s in state if s["shown"]]

    assert shown(out["start"]) == [] and shown(out["offsetAlm"]) == []
    assert shown(out["offsetRule"]) == [(0, "−3"), (1, "+6")]
    assert shown(out["offsetZero"]) == [] and shown(out["tierRule"]) == []
    assert shown(out["again"]) == [(0, "−3"), (1, "+6")]
    assert all(s["events"] == "none" and s["through"] for s in out["offsetRule"])
