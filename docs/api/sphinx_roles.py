"""A Griffe extension for the API reference: Sphinx roles in docstrings become links.

The docstrings cross-reference with Sphinx roles (``:func:`solve```, ``:class:`~cellopt.Drop```,
``:meth:`title <Drop.frames>```), which Markdown would show as they are written. Before
rendering, each role becomes an optional mkdocs-autorefs reference to the full path of its
target, resolved in the scope of the documented object: a link where the target has a
page, plain code where it does not (private helpers, NumPy, SciPy), never a build warning.
Loaded by ``mkdocs.yml`` (``extensions``); the built site does not include this file.
"""

from __future__ import annotations

import html
import re
from typing import Any

import griffe

#: A role: its kind, and its text (``target``, ``~target`` or ``title <target>``).
ROLE = re.compile(r":(?:py:)?(?:class|func|meth|mod|data|attr|exc|obj|const):`([^`]+)`")
#: ``title <target>``.
TITLED = re.compile(r"^(.*?)\s*<([^<>]+)>$")


def resolve(obj: griffe.Object, target: str) -> str | None:
    """The full path of `target` seen from `obj`, or None for a name outside its scope."""
    if target.startswith("cellopt.") or target == "cellopt":
        return target
    first, _, rest = target.partition(".")
    try:
        path = obj.resolve(first)
    except (griffe.NameResolutionError, ValueError):
        return None
    if not path.startswith("cellopt"):
        return None  # NumPy, SciPy, the standard library: no inventories are loaded
    return f"{path}.{rest}" if rest else path


def replace_roles(obj: griffe.Object, text: str) -> str:
    """`text` with every role replaced by an optional autorefs reference (or plain code)."""

    def replace(match: re.Match[str]) -> str:
        content = match.group(1).strip()
        titled = TITLED.match(content)
        if titled:
            title, target = titled.group(1), titled.group(2).strip()
        else:
            target = content.lstrip("!~")
            title = target.rsplit(".", 1)[-1] if content.startswith("~") else target
        target = target.lstrip(".")
        code = f"<code>{html.escape(title)}</code>"
        path = None if content.startswith("!") else resolve(obj, target)
        if path is None:
            return code
        return f'<autoref identifier="{html.escape(path)}" optional>{code}</autoref>'

    return ROLE.sub(replace, text)


class SphinxRoles(griffe.Extension):
    """Replace Sphinx roles in every docstring of the loaded packages."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None and ":" in obj.docstring.value:
            obj.docstring.value = replace_roles(obj, obj.docstring.value)
