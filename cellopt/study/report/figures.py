"""The page's figures: matplotlib figures as inline SVG, their ids and style rules kept to each."""

from __future__ import annotations

import io
import re
from collections.abc import Mapping

import matplotlib as mpl
from matplotlib.figure import Figure

from cellopt.study.report.common import esc, slug


def figures_section(figures: Mapping[str, Figure]) -> str:
    """The figures, each an inline SVG with its caption (empty without figures)."""
    if not figures:
        return ""
    used: set[str] = set()
    parts = []
    for name, fig in figures.items():
        fig_id = slug(str(name), used, "fig")
        parts.append(f'<figure class="figure" id="{fig_id}">{_figure_svg(fig, fig_id)}'
                     f"<figcaption>{esc(name)}</figcaption></figure>")
    return f'<section id="figures"><h2>Figures</h2><div class="figures">{"".join(parts)}</div></section>'


def _figure_svg(fig: Figure, fig_id: str) -> str:
    """`fig` as an inline ``<svg>`` element whose ids are prefixed with `fig_id` (unique on the page)."""
    buf = io.StringIO()
    with mpl.rc_context({"svg.fonttype": "path", "svg.hashsalt": "cellopt-report", "svg.image_inline": True}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    svg = buf.getvalue()
    svg = svg[svg.find("<svg"):]
    svg = re.sub(r"<metadata>.*?</metadata>\s*", "", svg, flags=re.DOTALL)
    svg = re.sub(r'\s+xmlns(:\w+)?="[^"]*"', "", svg)
    svg = re.sub(r'\bid="([^"]+)"', rf'id="{fig_id}-\1"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", rf"url(#{fig_id}-\1)", svg)
    svg = re.sub(r'href="#([^"]+)"', rf'href="#{fig_id}-\1"', svg)

    def scope_rule(r: re.Match[str]) -> str:
        return r.group(1) + ",".join(f"#{fig_id} {sel.strip()}" for sel in r.group(2).split(",")) + "{"

    def scope(m: re.Match[str]) -> str:  # style rules of one figure apply to that figure only
        rules = re.sub(r"(^|\})\s*([^{}]+?)\s*\{", scope_rule, m.group(2))
        return f"{m.group(1)}{rules}</style>"

    svg = re.sub(r"(<style[^>]*>)(.*?)</style>", scope, svg, flags=re.DOTALL)
    return svg.strip()
