"""The page's tables: the summary tables and the per-cell tables, each sortable by a column."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import geopandas as gpd
import numpy as np
import pandas as pd

from cellopt.study.report.common import DASH, esc, format_value, slug

#: Rows of the per-cell table (of each method); a longer cells frame shows its first rows, and
#: the table's caption says so.
CELL_TABLE_MAX_ROWS = 2000


def tables_section(tables: Mapping[str, pd.DataFrame]) -> str:
    """The summary tables, each with its caption (empty without tables)."""
    if not tables:
        return ""
    used: set[str] = set()
    parts = [_table_html(name, frame, slug(str(name), used, "table")) for name, frame in tables.items()]
    return f'<section id="tables"><h2>Tables</h2>{"".join(parts)}</section>'


def cell_tables(cells: gpd.GeoDataFrame, methods: list[str], selected: str | None) -> str:
    """The per-cell tables: one per method (all but the selected one hidden), or one."""
    if not isinstance(cells, gpd.GeoDataFrame) or len(cells) == 0:
        return ""
    geometry = [c for c in cells.columns if isinstance(cells[c].dtype, gpd.array.GeometryDtype)]
    plain = pd.DataFrame(cells.drop(columns=geometry))
    if "method" in plain.columns:
        method = plain["method"].astype(str)
        groups = [(m, plain[method.to_numpy() == m].drop(columns="method")) for m in methods]
        groups = [(m, g) for m, g in groups if len(g)]
    else:
        groups = [(None, plain)]
    used: set[str] = set()
    parts = []
    for m, frame in groups:
        n = len(frame)
        shown = frame.iloc[:CELL_TABLE_MAX_ROWS].set_index("cell_id")
        caption = "Cells" if m is None else f"Cells: {m}"
        if n > CELL_TABLE_MAX_ROWS:
            caption += f" (the first {CELL_TABLE_MAX_ROWS:,} of {n:,} rows)"
        wrap = "" if m is None else f' data-method="{esc(m)}"' + ("" if m == selected else " hidden")
        parts.append(_table_html(caption, shown, slug("cells" if m is None else f"cells {m}", used, "table"),
                                 table_class="cell-table", wrap_class="table-wrap sortable cell-table-wrap",
                                 wrap_attrs=wrap))
    note = ('<p class="small">The cells of the method the map shows (choose it beside the map). '
            if groups[0][0] is not None else '<p class="small">')
    note += "Click a column's header to sort by it.</p>"
    return f'<section id="cells"><h2>Cells</h2>{note}{"".join(parts)}</section>'


def _label(value: Any) -> str:
    if isinstance(value, tuple):
        return " / ".join(format_value(v) for v in value if not (isinstance(v, str) and v == ""))
    return format_value(value)


_NUM = ' class="num"'
_SORT_NUM = ' data-sort="num"'


def _is_number(value: Any) -> bool:
    numeric = isinstance(value, int | float | np.integer | np.floating)
    return numeric and not isinstance(value, bool | np.bool_)


def _numeric(values: Iterable[Any]) -> bool:
    """Whether a column holds numbers (and missing values) only: right-aligned, sorted as numbers."""
    return all(_is_number(v) or format_value(v) == DASH for v in values)


def _table_html(name: str, frame: pd.DataFrame, table_id: str, *, table_class: str = "summary-table",
                wrap_class: str = "table-wrap sortable", wrap_attrs: str = "") -> str:
    """One table, its headers sortable by the page's script (``data-sort="num"``: as numbers)."""
    if not isinstance(frame, pd.DataFrame):
        frame = pd.DataFrame(frame)
    index = frame.index
    n_index = index.nlevels
    index_names = [format_value(n) if n is not None else "" for n in index.names]
    index_numeric = [_numeric(index.get_level_values(k)) and len(index) > 0 for k in range(n_index)]
    numeric = [_numeric(frame.iloc[:, j]) for j in range(frame.shape[1])]
    head = "".join(f'<th scope="col"{_SORT_NUM if num else ""}>{esc(n)}</th>'
                   for n, num in zip(index_names, index_numeric, strict=True))
    head += "".join(f'<th scope="col"{_NUM + _SORT_NUM if num else ""}>{esc(_label(c))}</th>'
                    for c, num in zip(frame.columns, numeric, strict=True))
    td = [f"<td{_NUM}>" if num else "<td>" for num in numeric]
    rows = []
    for key, values in zip(index, frame.itertuples(index=False, name=None), strict=True):
        keys = key if n_index > 1 else (key,)
        cells = "".join(f'<th scope="row">{esc(format_value(k))}</th>' for k in keys)
        cells += "".join(f"{t}{esc(format_value(v))}</td>" for t, v in zip(td, values, strict=True))
        rows.append(f"<tr>{cells}</tr>")
    return (f'<div class="{wrap_class}"{wrap_attrs}><table class="{table_class}" id="{table_id}">'
            f"<caption>{esc(name)}</caption><thead><tr>{head}</tr></thead>"
            f'<tbody>{"".join(rows)}</tbody></table></div>')
