"""What a solver method's signature and docstring say of its options, as plain text.

The registry (:mod:`cellopt.solvers.registry`) reads each method's options from its
keyword-only parameters: their type hints written as text (:func:`type_name`), the first
sentence of each entry of the numpydoc "Parameters" section (:func:`parameter_docs`) and
the docstring's first paragraph (:func:`docstring_summary`), Sphinx roles and ``code``
markup made plain. The argument checks split a union written as text
(:func:`split_union`).
"""

from __future__ import annotations

import inspect
import re
import types
import typing
from collections.abc import Callable
from typing import Any, Literal

__all__ = ["docstring_summary", "parameter_docs", "split_union", "type_name"]


def type_name(tp: Any) -> str:
    """A type hint as it would be written: ``ndarray | None``, ``Mapping[str, Any]``."""
    if tp is type(None) or tp is None:
        return "None"
    if tp is Any:
        return "Any"
    if isinstance(tp, list):  # the parameters of a Callable
        return "[" + ", ".join(type_name(a) for a in tp) + "]"
    origin, args = typing.get_origin(tp), typing.get_args(tp)
    if origin in (typing.Union, types.UnionType):
        return " | ".join(type_name(a) for a in args)
    if origin is Literal:
        return f"Literal[{', '.join(repr(a) for a in args)}]"
    if origin is not None:
        name = getattr(origin, "__name__", None) or str(origin).replace("typing.", "")
        return f"{name}[{', '.join(type_name(a) for a in args)}]" if args else name
    if isinstance(tp, type):
        return tp.__name__
    return str(tp).replace("typing.", "")


def split_union(annotation: str) -> list[str]:
    """The members of a union written as text, split at top-level ``|``."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(annotation):
        depth += (ch == "[") - (ch == "]")
        if ch == "|" and depth == 0:
            parts.append(annotation[start:i].strip())
            start = i + 1
    parts.append(annotation[start:].strip())
    return parts


def docstring_summary(fn: Callable[..., Any]) -> str:
    """The first paragraph of `fn`'s docstring on one line, markup made plain ("" without one)."""
    doc = inspect.getdoc(fn) or ""
    return _plain(doc.strip().split("\n\n")[0].replace("\n", " ")) if doc else ""


_ROLE = re.compile(r":[\w:]+:`~?(?:[^`<]*<)?([^`>]+)>?`")
_SEE = re.compile(r"^As for :func:`~?([\w.]+)`\.?$")
_SENTENCE = re.compile(r"^(.*?[.!?])(?=\s+[A-Z]|\s*$)", re.S)


def parameter_docs(fn: Callable[..., Any], depth: int = 0) -> dict[str, str]:
    """Parameter name -> first sentence of its entry in `fn`'s numpydoc "Parameters".

    An entry that only says "As for :func:`other`." takes the entry of `other` (a function
    of the same module) for the same parameter.
    """
    lines = (inspect.getdoc(fn) or "").splitlines()
    start = next((i + 2 for i in range(len(lines) - 1) if lines[i].strip() == "Parameters"
                  and set(lines[i + 1].strip()) == {"-"}), None)
    if start is None:
        return {}
    entries: dict[str, list[str]] = {}
    names: list[str] = []
    for i in range(start, len(lines)):
        line = lines[i]
        if i + 1 < len(lines) and line.strip() and set(lines[i + 1].strip()) == {"-"}:
            break  # the next section
        if line and not line[0].isspace():
            names = [n.strip() for n in line.split(" : ")[0].split(",") if n.strip()]
            for n in names:
                entries[n] = []
        elif line.strip():
            for n in names:
                entries[n].append(line.strip())
    docs = {}
    for name, text_lines in entries.items():
        text = " ".join(text_lines)
        see = _SEE.match(text)
        if see and depth < 3:
            other = getattr(fn, "__globals__", {}).get(see.group(1).rsplit(".", 1)[-1])
            if callable(other) and parameter_docs(other, depth + 1).get(name):
                docs[name] = parameter_docs(other, depth + 1)[name]
                continue
        docs[name] = _first_sentence(text)
    return docs


def _first_sentence(text: str) -> str:
    match = _SENTENCE.match(text)
    return _plain(match.group(1) if match else text)


def _plain(text: str) -> str:
    """Docstring markup made plain: roles to their target's last name, ``code`` to code."""
    text = _ROLE.sub(lambda m: m.group(1).rsplit(".", 1)[-1] if "~" in m.group(0)
                     else m.group(1), text)
    return text.replace("``", "").strip()
