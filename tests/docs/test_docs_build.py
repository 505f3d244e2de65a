"""The documentation site builds, strictly, with an API page for every public module.

- ``mkdocs build --strict`` (mkdocs.yml: docs/, the tutorials, the API reference from the
  docstrings) succeeds, and every public module has its page, documenting each name of its
  ``__all__``, with the docstrings' Sphinx roles turned into links or code. The build needs
  the ``docs`` extra (``pip install -e '.[docs]'``), which the ``test`` extra leaves out:
  without it that test skips and says so; CI installs it and builds the site in .ci/run.
- ``dir(cellopt)`` lists the public names (``__all__``) and nothing of the module's own.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

import cellopt

ROOT = ROOT

#: Public module -> its API page in the built site (a folder with index.html).
API_PAGES = {
    "cellopt": "api/cellopt",
    "cellopt.radio": "api/radio",
    **{f"cellopt.radio.{m}": f"api/radio/{m}" for m in (
        "model", "links", "measured", "pathloss", "propagation", "tr38901", "cost231", "antenna", "antenna3d",
        "shadowing", "numerology", "spectral", "far_field", "raster_io", "raster_files", "interface",
        "predictions")},
    "cellopt.topology": "api/topology",
    "cellopt.solvers": "api/solvers",
    **{f"cellopt.solvers.{m}": f"api/solvers/{m}" for m in ("api", "registry", "arguments", "result")},
    "cellopt.problem": "api/problem",
    "cellopt.solution": "api/solution",
    "cellopt.drop": "api/drop",
    "cellopt.coverage": "api/coverage",
    "cellopt.coverage_grid": "api/coverage_grid",
    "cellopt.linktable": "api/linktable",
    "cellopt.network": "api/network",
    "cellopt.power": "api/power",
    "cellopt.deploy": "api/deploy",
    "cellopt.deploy.rule": "api/deploy",
    "cellopt.load_coupling": "api/load_coupling",
    "cellopt.study": "api/study",
    "cellopt.plotting": "api/plotting",
    "cellopt.parameters": "api/parameters",
    "cellopt.checks": "api/checks",
    "cellopt.errors": "api/errors",
}

#: The packages the build needs (the ``docs`` extra), by import name.
DOCS_PACKAGES = ("mkdocs", "mkdocstrings", "mkdocstrings_handlers.python", "material", "pymdownx")

#: A Sphinx role left as written (``:func:`` before a name in code).
ROLE_LEFT = re.compile(r":(?:class|func|meth|mod|data|attr|exc|obj|const):(?:<code>|`)")


def missing_docs_packages() -> list[str]:
    missing = []
    for name in DOCS_PACKAGES:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:  # a parent package is missing
            found = False
        if not found:
            missing.append(name)
    return missing


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site, built strictly into a temporary folder (about 10 s)."""
    missing = missing_docs_packages()
    if missing:
        pytest.skip(f"the docs extra is not installed (no {', '.join(missing)}): "
                    "pip install -e '.[docs]' to build the documentation here; CI builds it in .ci/run")
    out = tmp_path_factory.mktemp("site")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT, capture_output=True, text=True, env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False)
    assert done.returncode == 0, f"mkdocs build --strict failed:\n{done.stdout}\n{done.stderr}"
    assert "WARNING" not in done.stderr, done.stderr
    return out


def page(site: Path, module: str) -> str:
    path = site / API_PAGES[module] / "index.html"
    assert path.is_file(), f"no API page for {module} ({path.relative_to(site)})"
    return path.read_text(encoding="utf-8")


@pytest.mark.slow
def test_threegpp_is_documented_where_it_is_exported_and_where_it_is_defined(site):
    assert 'id="cellopt.radio.ThreeGPP"' in page(site, "cellopt.radio")
    assert 'id="cellopt.radio.propagation.ThreeGPP"' in page(site, "cellopt.radio.propagation")
    assert "TR 38.901" in page(site, "cellopt.radio.propagation")  # its docstring, rendered


@pytest.mark.slow
@pytest.mark.parametrize("module", list(API_PAGES))
def test_every_public_module_has_a_page_with_each_name_of_its_all(site, module):
    html = page(site, module)
    names = [n for n in importlib.import_module(module).__all__ if n != "__version__"]
    if module == "cellopt":  # the subpackages have pages of their own, linked from it
        subpackages = {n for n in names if f"cellopt.{n}" in API_PAGES}
        for name in subpackages:
            link = API_PAGES[f"cellopt.{name}"].removeprefix("api/")
            assert f'href="../{link}/"' in html, f"the cellopt page does not link to cellopt.{name}"
        names = [n for n in names if n not in subpackages]
    else:
        assert f'id="{module}"' in html
    undocumented = [n for n in names if f'id="{module}.{n}"' not in html]
    assert not undocumented, f"{API_PAGES[module]} does not document {module}.{undocumented}"
    assert not ROLE_LEFT.search(html), f"{API_PAGES[module]} shows a Sphinx role as written"


@pytest.mark.slow
def test_roles_become_links_to_the_pages(site):
    html = page(site, "cellopt.radio.links")  # link_table's docstring: :class:`RadioModel`, ...
    assert re.search(r'<a class="autorefs autorefs-internal"[^>]*href="\.\./model/#cellopt\.radio\.model\.'
                     r'RadioModel"><code>RadioModel</code></a>', html)


@pytest.mark.slow
def test_tutorials_are_on_the_home_page(site):
    html = (site / "index.html").read_text(encoding="utf-8")
    for script in sorted((ROOT / "docs" / "tutorials").glob("*.py")):
        assert f'href="tutorials/{script.name}"' in html
        assert (site / "tutorials" / script.name).is_file()
        first_line = script.read_text(encoding="utf-8").splitlines()[0].removeprefix('"""')
        assert first_line.split(":")[0] in html, f"{script.name} is not shown on the home page"


def test_dir_of_cellopt_lists_the_public_names_only():
    names = dir(cellopt)
    assert names == sorted(cellopt.__all__)
    private = [n for n in names if n.startswith("_") and not (n.startswith("__") and n.endswith("__"))]
    assert not private, f"dir(cellopt) shows private names: {private}"
    assert not {"importlib", "annotations", "TYPE_CHECKING", "Any"} & set(names)
    cellopt.Drop  # noqa: B018  (a lazy name, loaded: dir stays the same)
    assert dir(cellopt) == names
