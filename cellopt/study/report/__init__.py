"""A self-contained HTML report of one solved drop: notes, summary tables, an interactive map, figures.

:func:`write_report` writes one HTML5 file that works fully offline: every style, script and
figure is inline, text uses the reader's system fonts, and a Content-Security-Policy
forbids any network fetch (images are ``data:`` URIs). The page holds

* the title and the notes (scenario, seed, counts...) as a list;
* the summary tables, one HTML table each (numbers to 4 significant digits, right-aligned
  in a column of numbers only; text left-aligned and wrapped; index shown);
* an interactive map drawn as inline SVG: cells by tier (macro: triangle, or a pie slice
  around the boresight when the cells frame has a finite ``azimuth_deg``, so a
  three-sector site reads as three slices; pico: square; femto: diamond), filled for
  operator cells and hollow for third-party cells, coloured by tier or, by the "Colour cells
  by" choice, by a quantity with a colour bar (load, overload, users served, best-RSRP share,
  mean SINR, airtime price, mean power, share off, where the columns allow; grey: no value);
  with an ``offset_db`` column (the offset of each method's association rule, NaN for a
  method that is no offset rule) also by offset, on a diverging bar symmetric about 0 dB
  (negative blue, 0 white, positive red), each non-zero offset of the method shown then
  written beside its cell ("+6", "−3"), and this colouring chosen when the page opens if the
  selected method has offsets; users as dots coloured by the tier of their serving cell
  (grey when not served, hollow when unusable), guard-band users faded; association lines
  user → serving cell (or its nearest wraparound copy) as a layer that can be switched off
  (off by default above :data:`ASSOCIATION_LINES_MAX_USERS` users); optionally the outlines
  of the study area and other regions, and coverage rasters (:class:`CoverageLayer`) under
  the markers, one at a time. When the frames carry a ``method`` column (the rows of several
  methods stacked), a "Method" choice switches the association, colours, offset labels,
  tooltips, counts and per-cell table shown; the markers are drawn once and each method's
  state is a compact JSON block the script applies (2,000 users × 7 methods: about 2 MB;
  each further method adds about 0.1 MB per 1,000 users).
  Hovering a marker shows its key values; drag pans, the wheel and the +/− buttons zoom,
  "Reset" restores the first view. The legend and the controls sit beside the map, never
  over it. The SVG is built here; the small inline script only changes the view box,
  toggles layers and applies a method's state, so the page stays responsive with about
  10,000 users and 300 cells (about 2.7 MB of HTML for one method). Markers and labels keep
  their size on screen when zooming, and the labels let the mouse through to the markers;
* a per-cell table (of each method, switched with the map's method; at most
  :data:`CELL_TABLE_MAX_ROWS` rows each). Every table sorts by a column when its header is
  clicked (numbers numerically, text alphabetically; again: the other direction; missing
  values last);
* the figures, embedded as inline SVG (text drawn as paths, so no font is needed).

The page's skeleton, style sheet and script are package data, in ``assets/`` in this
package (``report_template.html``, ``report.css``, ``report.js``); the page holds their text.

There is no basemap: map tiles would have to be fetched from a server, which the page
never does.

The package's modules, each importing only modules listed before it: ``common`` (the
colours, how a value is written, small HTML pieces), ``coverage`` (:class:`CoverageLayer`),
``checks`` (of the arguments), ``tables``, ``figures``, ``colourings`` (how the map colours,
labels and describes the cells), ``layers`` (the map's SVG layers), ``legend``,
``map_section``, and ``page`` (:func:`write_report`, :func:`render_report`, :func:`is_report`).
The package holds their public names.
"""

from cellopt.study.report.colourings import POWER_RAMP_DB
from cellopt.study.report.common import TIER_COLORS, format_value
from cellopt.study.report.coverage import CoverageLayer
from cellopt.study.report.map_section import ASSOCIATION_LINES_MAX_USERS
from cellopt.study.report.page import is_report, render_report, write_report
from cellopt.study.report.tables import CELL_TABLE_MAX_ROWS

__all__ = ["ASSOCIATION_LINES_MAX_USERS", "CELL_TABLE_MAX_ROWS", "POWER_RAMP_DB", "TIER_COLORS",
           "CoverageLayer", "format_value", "is_report", "render_report", "write_report"]
