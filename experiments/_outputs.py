"""Where the experiment scripts write, shared by all of them.

Every script writes its per-drop results to ``--out`` (default ``results/<experiment>/``
at the top of the repository) and its tables and figures to ``--figures`` (default the
folder ``figures/`` in ``--out``). The published tables and figures of docs/experiments.md
are in ``docs/figures/``, a folder of the repository; a script writes there only when told
(``--figures docs/figures``), and never with a synthetic stand-in in place of a scenario
whose data is absent (its numbers would replace the published ones of the real data).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path

from cellopt.study.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]
#: The folder of the published tables and figures (docs/experiments.md shows them).
PUBLISHED = ROOT / "docs" / "figures"


def add_output_options(parser: argparse.ArgumentParser, name: str) -> None:
    """Add ``--out`` (the per-drop results: ``results/<name>``) and ``--figures`` (the
    tables and figures: ``<out>/figures``) to `parser`."""
    parser.add_argument("--out", default=str(ROOT / "results" / name),
                        help=f"folder of the per-drop results (results/{name})")
    parser.add_argument("--figures", default=None,
                        help="folder of the tables and figures (default: figures/ in --out); "
                        "--figures docs/figures replaces the published ones")


def stand_ins(scenarios: Iterable[str]) -> list[str]:
    """The scenarios among `scenarios` whose cell file is absent (run as their stand-in)."""
    return [name for name in scenarios if load_scenario(name).data_missing]


def figures_folder(parser: argparse.ArgumentParser, args: argparse.Namespace,
                   missing: Iterable[str] = ()) -> Path:
    """The folder of the tables and figures (created), after refusing to write the
    numbers of a stand-in (the scenarios `missing`, whose data is absent) into the
    published ``docs/figures/``."""
    figures = Path(args.figures) if args.figures else Path(args.out) / "figures"
    missing = list(missing)
    if missing and figures.resolve() == PUBLISHED.resolve():
        parser.error(f"--figures {args.figures}: the data of {', '.join(missing)} is absent, so "
                     "this run uses the synthetic stand-in, whose numbers would replace the "
                     f"published ones in {PUBLISHED}; fix: put the data where the scenario reads "
                     "it (README.md, \"Set up and go\": the editable install of a clone beside "
                     "../shared/data/), or leave out --figures (results go to figures/ in --out)")
    figures.mkdir(parents=True, exist_ok=True)
    return figures


def snapshot(folder: Path) -> dict[str, int]:
    """The files of `folder` with their modification times [ns], for :func:`say_written`."""
    return {p.name: p.stat().st_mtime_ns for p in folder.iterdir() if p.is_file()}


def say_written(figures: Path, out: str | Path, before: dict[str, int]) -> None:
    """Print which tables and figures this run wrote in `figures` (those new or changed
    since the :func:`snapshot` `before`), and where the per-drop results are."""
    names = sorted(name for name, mtime in snapshot(figures).items() if before.get(name) != mtime)
    print(f"\nwrote {figures}/: {', '.join(names) or 'nothing'}")
    print(f"per-drop results in {out}/")
