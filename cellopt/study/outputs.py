"""Output files as entries: what writes each file, when, and how a file of its own is known.

Every file a run, a sweep or a capacity search writes is an :class:`OutputFile`: its name
in the results folder (a template such as ``results/{task}.csv`` for files written per
task), its writer (one call shape: ``write(f, context)`` on an open file, or
``write(path, context)`` on a temporary path for the writers that take one, GDAL's), when
it is written (:class:`When`), how a file of that name that cellopt wrote is recognised
(``recognise``; a file it does not recognise is not replaced without ``--force``) and
whether it is listed in a run's ``checksums.sha256`` (not when it holds wall-clock
values: the time a solve took, the time the file was written). A file is written through
the atomic writer (:mod:`cellopt.study.atomic`): on its own (:meth:`OutputFile.write_to`)
or as one of a set that replaces the earlier set together (:meth:`OutputFile.stage`).

The run's table is :data:`cellopt.study.run.RUN_OUTPUTS`; a sweep's, a capacity
search's and a results folder's files are entries of the same type in
:mod:`cellopt.study.sweep`, :mod:`cellopt.study.capacity` and :mod:`cellopt.study.store`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import re
import warnings
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import IO, Any

import pandas as pd

from cellopt.study.atomic import AtomicFiles, atomic_path, atomic_write

__all__ = ["ALWAYS", "CHECKSUMS", "OutputFile", "When", "checksum_lines", "foreign_files",
           "is_checksums", "is_matplotlib_png", "remove_stale", "sha256_of", "starts_with",
           "write_json", "write_table"]

#: The checksums of a run's files, in the format of ``sha256sum`` (``sha256sum -c`` checks them).
CHECKSUMS = "checksums.sha256"


@dataclasses.dataclass(frozen=True)
class When:
    """When a file is written.

    Attributes
    ----------
    planned : callable
        ``planned(plan) -> bool``: whether the run may write it, known before it builds
        anything (the files it will replace are checked then).
    holds : callable
        ``holds(context) -> bool``: whether it writes it, once everything is computed.
    """

    planned: Callable[[Any], bool]
    holds: Callable[[Any], bool]


#: Written by every run.
ALWAYS = When(lambda plan: True, lambda context: True)


@dataclasses.dataclass(frozen=True)
class OutputFile:
    """One file of a results folder: its name, its writer, when, and how it is recognised.

    Attributes
    ----------
    name : str
        Its path in the folder; ``{field}`` parts are filled per file (``task=...``).
    write : callable
        ``write(f, context)`` on the open (temporary) file; for ``mode="path"``,
        ``write(path, context)`` on a temporary path that the writer creates.
    mode : {"w", "wb", "path"}
        Text (UTF-8), binary, or a path (GDAL's writers, which choose the format by the
        suffix: the temporary path keeps it).
    when : When
        When it is written (:data:`ALWAYS` by default).
    recognise : callable or None
        ``recognise(path) -> bool``: whether the file at `path` holds what cellopt writes
        there (a run removes its own stale files and refuses to replace others without
        ``--force``); None: never taken for one.
    checked : bool
        Listed in a run's :data:`CHECKSUMS` (False for a file with wall-clock values, whose
        bytes change from one run to the next).
    what : str
        What it holds, in a line.
    """

    name: str
    write: Callable[[Any, Any], object]
    mode: str = "w"
    when: When = ALWAYS
    recognise: Callable[[Path], bool] | None = None
    checked: bool = True
    what: str = ""

    def path(self, folder: str | Path, **fields: Any) -> Path:
        """The file in `folder`, its name's ``{field}`` parts filled with `fields`."""
        return Path(folder) / self.name.format(**fields)

    def matches(self, name: str) -> bool:
        """Whether `name` (a path in the folder, with ``/``) is a file of this entry."""
        parts = re.split(r"\{[^}]*\}", self.name)
        return re.fullmatch("[^/]+".join(map(re.escape, parts)), name) is not None

    def write_to(self, folder: str | Path, context: Any, **fields: Any) -> Path:
        """Write the file on its own, atomically (:func:`~cellopt.study.atomic.atomic_write`);
        return its path."""
        path = self.path(folder, **fields)
        if self.mode != "path":
            return atomic_write(path, lambda f: self.write(f, context), self.mode)
        with atomic_path(path, keep_suffix=True) as tmp:
            self.write(tmp, context)
        return path

    def stage(self, files: AtomicFiles, folder: str | Path, context: Any, **fields: Any) -> Path:
        """Write the file as one of the set `files`, which moves them into place together."""
        path = self.path(folder, **fields)
        if self.mode != "path":
            return files.write(path, lambda f: self.write(f, context), self.mode)
        with files.path(path, keep_suffix=True) as tmp:
            self.write(tmp, context)
        return path

    def is_own(self, path: Path) -> bool:
        """Whether the file at `path` is one cellopt wrote at this entry's name."""
        return self.recognise is not None and self.recognise(path)


def write_table(f: IO[str], frame: pd.DataFrame) -> None:
    """The writer of a table written as it is, without its index."""
    frame.to_csv(f, index=False)


def write_json(f: IO[str], record: Mapping[str, Any]) -> None:
    """The writer of a JSON record (indented)."""
    json.dump(record, f, indent=2)


# ---------------------------------------------------------------------------- recognisers
def _start(path: Path, n: int = 256) -> bytes | None:
    """The first `n` bytes of the file at `path`; None if it cannot be read."""
    try:
        with open(path, "rb") as f:
            return f.read(n)
    except OSError:
        return None


def starts_with(header: bytes) -> Callable[[Path], bool]:
    """The recogniser of a file whose first bytes are `header` (a table's header line)."""
    return lambda path: (_start(path) or b"").startswith(header)


def is_matplotlib_png(path: Path) -> bool:
    """Whether the file at `path` is a PNG written by matplotlib."""
    start = _start(path) or b""
    return start.startswith(b"\x89PNG\r\n\x1a\n") and b"Software\x00Matplotlib" in start


#: A line of :data:`CHECKSUMS`: a SHA-256 in hex, two spaces (text mode), a file name.
_CHECKSUM_LINE = re.compile(rb"[0-9a-f]{64}  [^/\n]+")


def is_checksums(path: Path) -> bool:
    """Whether the file at `path` holds only lines of checksums, as cellopt writes them."""
    start = _start(path, 1 << 16)
    lines = (start or b"").splitlines()
    return bool(lines) and all(_CHECKSUM_LINE.fullmatch(line) for line in lines)


# ---------------------------------------------------------------------------- checksums
def sha256_of(path: Path) -> str:
    """The SHA-256 of the file at `path`, in hex (read a MiB at a time)."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def checksum_lines(digests: Mapping[str, str]) -> str:
    """Lines of ``sha256sum``'s format, one per file: its SHA-256, two spaces, its name."""
    return "".join(f"{digest}  {name}\n" for name, digest in digests.items())


# ---------------------------------------------------------------------------- a folder's files
def foreign_files(folder: Path, entries: Iterable[OutputFile], names: Iterable[str]) -> list[str]:
    """The files of `names` in `folder` that their entry does not recognise as cellopt's."""
    by_name = {entry.name: entry for entry in entries}
    return [name for name in names
            if (folder / name).is_file() and not by_name[name].is_own(folder / name)]


def remove_stale(folder: Path, entries: Iterable[OutputFile], written: set[str]) -> list[Path]:
    """Remove the files of `entries` in `folder` that were not `written` now (those of an
    earlier run), where their entry recognises them; warn about the others. Return the
    removed files."""
    removed = []
    for entry in entries:
        path = folder / entry.name
        if entry.name in written or not path.is_file():
            continue
        if entry.is_own(path):
            path.unlink(missing_ok=True)
            removed.append(path)
        else:
            warnings.warn(f"{path} is not from this run, and not a file cellopt writes, so it is "
                          "left as it is; this run's results are the other files", stacklevel=3)
    return removed
