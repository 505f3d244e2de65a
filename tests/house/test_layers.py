"""The package is layered: no module imports one of a higher layer, not even late.

Layers, from the bottom: the version, the catalogue, the errors and the cluster
connection; the data model; the link table; radio; topology; problem and solution;
solvers; the drop (network → problem → tables) and its coverage maps; the problems built
on a drop (power, load coupling); the deployable settings fitted to them; plotting;
studies; the command line. A module may import its own layer and the layers below.
Every import counts, at the top of a module or inside a function, under
``if TYPE_CHECKING:`` too, and so does a module named for a dynamic import:
``importlib.import_module("cellopt....")`` or a ``"cellopt.module:attribute"`` string (a
lookup by name, which an import statement would have shown). The package face
(``cellopt`` itself, whose names load every layer) is above them all: no module imports a
name from it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from helpers import ROOT

PACKAGE = ROOT / "cellopt"

#: Module-name prefixes of each layer, bottom first.
LAYERS: list[tuple[str, ...]] = [
    ("cellopt._version", "cellopt.errors", "cellopt.status", "cellopt.parameters", "cellopt.checks",
     "cellopt.crs", "cellopt.cluster", "cellopt.jit", "cellopt.progress"),
    ("cellopt.network", "cellopt.network_checks"),
    ("cellopt.linktable",),  # below radio, which builds link tables
    ("cellopt.radio",),
    ("cellopt.topology",),
    ("cellopt.problem", "cellopt.solution"),
    ("cellopt.solvers",),
    ("cellopt.drop", "cellopt.coverage", "cellopt.coverage_grid"),
    ("cellopt.load_coupling", "cellopt.power"),
    ("cellopt.deploy",),
    ("cellopt.plotting",),
    ("cellopt.study",),
    ("cellopt.cli",),
]


#: The layer of the package face, ``cellopt`` itself: above every other.
FACE = len(LAYERS)


def layer_of(module: str) -> int | None:
    """The layer of a ``cellopt`` module (None for the package itself, which loads lazily)."""
    best = None
    for level, prefixes in enumerate(LAYERS):
        for prefix in prefixes:
            if module == prefix or module.startswith(prefix + "."):
                best = level
    return best


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = path.relative_to(package.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(tree: ast.AST, module: str, is_package: bool,
             package: Path = PACKAGE) -> list[tuple[str, int]]:
    """Every cellopt module `tree` imports, with its line (relative imports resolved).

    A name imported from the package face that is not a module of `package`
    (``from cellopt import __version__``) is an import of ``cellopt`` itself.
    """
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(a.name, node.lineno) for a in node.names if a.name.startswith("cellopt")]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                package = module if is_package else module.rpartition(".")[0]
                for _ in range(node.level - 1):
                    package = package.rpartition(".")[0]
                base = f"{package}.{base}" if base else package
            if not base.startswith("cellopt"):
                continue
            if base == "cellopt":  # "from cellopt import radio" imports the subpackage
                out += [(f"cellopt.{a.name}" if _is_module(package / a.name) else "cellopt",
                         node.lineno) for a in node.names]
            else:
                out.append((base, node.lineno))
    return out


def _is_module(path: Path) -> bool:
    return path.is_dir() or path.with_suffix(".py").is_file()


#: A ``"module:attribute"`` string naming a cellopt module (a lookup by name).
_MODULE_ATTRIBUTE = re.compile(r"(cellopt(?:\.\w+)*):\w+")


def named(tree: ast.AST) -> list[tuple[str, int]]:
    """Every cellopt module `tree` names for a dynamic import, with its line: the argument
    of ``importlib.import_module("cellopt....")`` and the module of a
    ``"cellopt.module:attribute"`` string."""
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant):
            function = node.func.attr if isinstance(node.func, ast.Attribute) else \
                getattr(node.func, "id", None)
            target = node.args[0].value
            if function == "import_module" and isinstance(target, str) and target.startswith("cellopt"):
                out.append((target, node.lineno))
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            found = _MODULE_ATTRIBUTE.fullmatch(node.value)
            if found:
                out.append((found.group(1), node.lineno))
    return sorted(out, key=lambda item: item[1])


def upward_imports(package: Path = PACKAGE) -> list[str]:
    """Every import of a higher layer in `package`, as ``module:line -> module``."""
    found = []
    for path in sorted(package.rglob("*.py")):
        module = module_name(path, package)
        level = layer_of(module)
        if level is None:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for target, line in [*imported(tree, module, path.name == "__init__.py", package),
                             *named(tree)]:
            target_level = FACE if target == "cellopt" else layer_of(target)
            if target_level is not None and target_level > level:
                found.append(f"{module}:{line} -> {target}")
    return found


def test_every_module_has_a_layer():
    missing = [module_name(p) for p in PACKAGE.rglob("*.py")
               if module_name(p) != "cellopt" and layer_of(module_name(p)) is None]
    assert not missing, f"add these modules to a layer of tests/house/test_layers.py: {missing}"


def test_no_import_runs_back_up_a_layer():
    assert upward_imports() == []


def test_upward_imports_are_found_under_type_checking_and_from_the_package_face(tmp_path):
    # The arrows the layout forbids, in a package of the same name: the link table naming
    # the radio model for a type hint, and a study module reading the version from the
    # package face instead of cellopt._version.
    package = tmp_path / "cellopt"
    (package / "radio").mkdir(parents=True)
    (package / "study").mkdir()
    for name in ("__init__.py", "radio/__init__.py", "radio/model.py", "study/__init__.py",
                 "_version.py"):
        (package / name).write_text("")
    (package / "linktable.py").write_text(
        "from typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n"
        "    from cellopt.radio.model import RadioModel\n")
    (package / "study" / "store.py").write_text(
        "import cellopt\nfrom cellopt import __version__\nfrom cellopt._version import __version__\n")
    assert upward_imports(package) == ["cellopt.linktable:4 -> cellopt.radio.model",
                                       "cellopt.study.store:1 -> cellopt",
                                       "cellopt.study.store:2 -> cellopt"]


def test_upward_imports_by_name_are_found(tmp_path):
    # The catalogue at the bottom layer reaching up by name: through importlib, and through
    # a "module:attribute" string that a lookup imports when first read. A name in its own
    # layer (the errors) is no arrow up.
    package = tmp_path / "cellopt"
    (package / "radio").mkdir(parents=True)
    for name in ("__init__.py", "network.py", "errors.py", "radio/__init__.py", "radio/model.py"):
        (package / name).write_text("")
    (package / "parameters.py").write_text(
        "import importlib\nfrom importlib import import_module\n\n"
        "TIERS = importlib.import_module(\"cellopt.network\").TIERS\n"
        "OWNERS = import_module(\"cellopt.network\").OWNERS\n"
        "ANTENNAS = \"cellopt.radio.model:ANTENNAS\"\n"
        "ERROR = \"cellopt.errors:ValidationError\"\n")
    assert upward_imports(package) == ["cellopt.parameters:4 -> cellopt.network",
                                       "cellopt.parameters:5 -> cellopt.network",
                                       "cellopt.parameters:6 -> cellopt.radio.model"]


#: Modules allowed to import cellopt modules inside functions: the command line imports
#: each subcommand's modules only when it runs, so that ``cellopt --help`` stays quick.
LATE_IMPORTS_ALLOWED = ("cellopt.cli",)
#: Modules anyone may import inside a function: plotting loads matplotlib (about half a
#: second), which a study that draws nothing should not pay for.
LATE_TARGETS_ALLOWED = ("cellopt.plotting",)


def late_imports(package: Path = PACKAGE) -> list[str]:
    """Every import of a cellopt module inside a function, as ``module:line``."""
    found = []
    for path in sorted(package.rglob("*.py")):
        module = module_name(path, package)
        if module in LATE_IMPORTS_ALLOWED:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        is_package = path.name == "__init__.py"
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                found += [f"{module}:{line}" for target, line in imported(fn, module, is_package)
                          if target not in LATE_TARGETS_ALLOWED]
    return sorted(set(found))


def test_no_late_imports_of_cellopt_modules():
    assert late_imports() == []


def architecture_layers(page: Path = PACKAGE.parent / "docs" / "architecture.md") -> list[set[str]]:
    """The modules of each row of docs/architecture.md's layer table, bottom first."""
    rows = []
    for line in page.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 3 and cells[0].isdigit():
            names = [n.rstrip("/") for n in cells[1].split("`")[1::2]]
            rows.append({f"cellopt.{n}" for n in names})
    return rows


def test_the_architecture_page_lists_the_layers_of_this_test():
    """The layer table a contributor reads is the one this test enforces, row by row."""
    assert architecture_layers() == [set(layer) for layer in LAYERS]
