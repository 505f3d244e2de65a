"""Scenario files: one TOML file describes a topology, its users, radio, problem and methods.

A scenario file has these sections (every key is optional unless marked *required*;
absent keys take the defaults of the function they are passed to)::

    name, description, methods      # top-level keys, before the first [section]
    [network]       # required: builder = one of cellopt.study.builders.BUILDERS, and its keys
    [picos]         # topology.add_picos
    [femtocells]    # topology.add_femtocells
    [users]         # required: topology.drop_users, or measured users and links
                    # (links = "drive_test.csv": topology.read_measurements,
                    # radio.link_table_from_frame; docs/measured_links.md)
    [radio]         # RadioModel fields, its path loss per tier, and link_table options
    [problem]       # the problem's alpha, third-party cells' backhaul and price, and
                    # interference = "full" or "load_coupled" (cellopt.load_coupling)
    [power]         # power patterns chosen jointly with the association (cellopt.power),
                    # run after the methods
    [seeds]         # the base seed and the number of drops: drop k is built with the seed
                    # of the k-th child of SeedSequence(base).spawn(drops)
    [coverage]      # coverage rasters (cellopt.coverage.CoverageSettings)
    [deploy]        # settings a live network takes (cellopt.deploy.DeploySettings)

The keys of each section are the parameters of what it feeds, read from their signatures
and type hints: ``[network]``'s from its builder's function (:mod:`cellopt.study.builders`),
the others' in :data:`cellopt.study.schema.SECTION_KEYS`, with their TOML kinds.
docs/scenarios.md ("Schema") lists them (a table :func:`cellopt.study.schema.key_table`
generates) and says what each means.

Unknown keys, wrong types, values outside their possible range (the parameter catalogue
:mod:`cellopt.parameters`: e.g. ``tx_power_dbm`` in [−100, 100] dBm, fractions in
[0, 1], counts whole and ≥ 0, tiers and owners known names) and missing required
sections raise
:class:`cellopt.ValidationError` naming the file, the section and the key, when the file
is loaded. So do counts whose arrays would not fit in memory (the hex grid's sites,
picos, femtocells and users as density × area, and the link table users × candidates ×
resources): a :class:`cellopt.ResourceLimitError` names the key, the estimate and the
limit (``CELLOPT_MAX_MEMORY_GB``). Values that are legal but unusual (a unit slip, such
as ``isd_m = 0.5``) warn when the drop is built.

Randomness: :meth:`Scenario.build` spawns five independent streams from
``numpy.random.SeedSequence(seed)`` — picos, femtocells, users, shadowing and the
Poisson layout, in this order — so adding femtocells does not move the users, and
nothing touches numpy's global state.
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import os
import sys
import time
import tomllib
import warnings
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

from cellopt import drop as _drop
from cellopt import radio, topology
from cellopt.coverage import CoverageSettings
from cellopt.deploy.settings import DeploySettings
from cellopt.errors import ValidationError
from cellopt.load_coupling import LoadCoupling
from cellopt.network import Network
from cellopt.power import PowerProblem
from cellopt.power.patterns import UnusualLevelWarning
from cellopt.progress import shows
from cellopt.study import schema as _schema
from cellopt.study import seeds as _seeds
from cellopt.study.builders import BUILDERS, LINK_KEYS, has_tier, problem_options, radio_model
from cellopt.study.runkinds import MethodRun, PowerRun, RunKind
from cellopt.study.schema import Distribution

__all__ = [
    "SHIPPED_DIR",
    "Distribution",
    "Scenario",
    "find_scenario",
    "load_scenario",
    "shipped_scenarios",
]


@dataclasses.dataclass(frozen=True)
class Scenario:
    """A parsed, validated scenario file; :meth:`build` makes one drop from it.

    Attributes
    ----------
    path : Path
        The TOML file (relative paths inside it are resolved against its folder).
    name, description : str
    network : dict
        ``builder`` and its options (``path`` resolved to an absolute path).
    picos, femtocells : dict or None
        Options of :func:`~cellopt.topology.add_picos` /
        :func:`~cellopt.topology.add_femtocells`; None if the section is absent.
    users : dict
        Options of :func:`~cellopt.topology.drop_users`.
    radio : dict
        :class:`~cellopt.radio.RadioModel` scalars plus ``n_candidates``, ``window_db``,
        ``interference_radius_m``, ``far_field``.
    problem : dict
        ``alpha``, and ``backhaul_mbps`` / ``price_per_mbps`` for third-party cells.
    methods : tuple of MethodRun
        The association methods of the ``methods`` array.
    power : PowerRun or None
        The ``[power]`` section (its keys the options); None if absent. :attr:`runs` lists
        it after the methods.
    seed_base, drops : int
    raw : dict
        The parsed TOML, used by :meth:`with_overrides`.
    coverage : CoverageSettings
        The ``[coverage]`` section (its defaults when absent): whether to write coverage
        rasters, their resolution and pixel budget (:func:`cellopt.coverage.coverage_map`).
    deploy : DeploySettings
        The ``[deploy]`` section (its defaults when absent): the training and held-out
        drops, the value set and search budget of the offsets, the schedule's period and
        the sleep threshold (:mod:`cellopt.deploy`).
    """

    path: Path
    name: str
    description: str
    network: dict[str, Any]
    picos: dict[str, Any] | None
    femtocells: dict[str, Any] | None
    users: dict[str, Any]
    radio: dict[str, Any]
    problem: dict[str, Any]
    methods: tuple[MethodRun, ...]
    power: PowerRun | None
    seed_base: int
    drops: int
    raw: dict[str, Any] = dataclasses.field(repr=False, compare=False)
    coverage: CoverageSettings = dataclasses.field(default_factory=CoverageSettings)
    deploy: DeploySettings = dataclasses.field(default_factory=DeploySettings)

    @classmethod
    def from_dict(cls, raw: dict[str, Any], path: str | Path) -> Scenario:
        """Validate a parsed TOML document; `path` names it in messages and anchors paths."""
        path = Path(path)
        check = _schema.Checker(path)
        unknown = [k for k in raw if k not in _schema.TOP_KEYS]
        if unknown:
            raise check.fail("top level:", f"unknown key {unknown[0]!r}; valid: {_schema.TOP_KEYS}")
        for sec in _schema.REQUIRED:
            if sec not in raw:
                raise check.fail(f"[{sec}]", "section is missing; it is required")
        for key in ("name", "description"):
            if key in raw and not isinstance(raw[key], str):
                raise check.fail(f"key {key!r}", f"expected string, got {_schema.toml_type(raw[key])}")

        net_raw = raw["network"]
        if not isinstance(net_raw, dict):
            raise check.fail("[network]", f"must be a table, got {_schema.toml_type(net_raw)}")
        name = net_raw.get("builder")
        if name not in BUILDERS:
            raise check.fail("[network] key 'builder'", f"expected one of {sorted(BUILDERS)}, "
                             f"got {name!r}")
        builder = BUILDERS[name]
        network = check.table({k: v for k, v in net_raw.items() if k != "builder"},
                              f"[network] (builder {name!r})", builder.keys)
        for key in builder.required:
            if key not in network:
                raise check.fail(f"[network] key {key!r}", f"is required with builder {name!r}")
        for key in network:
            if builder.keys[key] == "path":  # relative to the scenario file
                network[key] = str((path.parent / network[key]).resolve())
        problem = builder.check(network) if builder.check is not None else None
        if problem is not None:
            raise check.fail(*problem)
        network["builder"] = name

        sections = {s: (check.table(raw[s], f"[{s}]", keys) if s in raw else None)
                    for s, keys in _schema.SECTION_KEYS.items()}
        for tier, options in ((sections["radio"] or {}).get("path_loss") or {}).items():
            options["source"] = str((path.parent / options["source"]).resolve())
            if not Path(options["source"]).exists():  # read at build; its absence known now
                where = "" if tier == "*" else f" tier {tier!r}"
                raise check.fail(f"[radio] key 'path_loss'{where}", f"source {options['source']} "
                                 "does not exist; fix: give the folder of single-band GeoTIFFs "
                                 "named <cell_id>.tif, or the multi-band GeoTIFF, relative to "
                                 "the scenario file")
        measured = "links" in sections["users"]
        if measured:  # relative to the scenario file
            sections["users"]["links"] = str((path.parent / sections["users"]["links"]).resolve())
        seeds = sections["seeds"] or {}
        for key, low, high in (("base", 0, 2**63 - 1), ("drops", 1, _seeds.MAX_DROPS)):
            if key in seeds and not low <= seeds[key] <= high:
                raise check.fail(f"[seeds] key {key!r}", f"must be ≥ {low} and ≤ {high:,}, got "
                                 f"{seeds[key]:,}; fix: give a {'seed' if key == 'base' else 'drop count'}"
                                 f" in [{low}, {high:,}]")
        check.ranges("network", network)
        for section, values in sections.items():
            if values is not None and section != "seeds":
                check.ranges(section, values)
        check.consistency(network, sections)
        _in_file(path, "radio", lambda: radio_model(sections["radio"] or {}, open_rasters=False))
        _warn_absent_tiers(path, network, sections)
        coverage = _in_file(path, "coverage", lambda: CoverageSettings(
            **(sections["coverage"] or ({"enabled": False} if measured else {}))))
        _warn_unused_coverage(path, sections["coverage"], coverage)
        methods = check.methods(raw.get("methods", ["max_rsrp", "dual"]))
        if "label" in (sections["power"] or {}):
            check.label(sections["power"]["label"], "[power] key 'label'")
        power = None if sections["power"] is None else PowerRun.from_section(sections["power"])
        if power is not None:
            if power.label in [m.label for m in methods]:
                raise check.fail("[power]", f"label {power.label!r} is a method's label too; fix: "
                                 "give [power] a distinct 'label'")
            check.distinct_labels([*(m.label for m in methods), power.label], "[power] key 'label'")
        return cls(
            path=path, name=raw.get("name", path.stem), description=raw.get("description", ""),
            network=network, picos=sections["picos"], femtocells=sections["femtocells"],
            users=sections["users"], radio=sections["radio"] or {},
            problem=sections["problem"] or {}, methods=methods, power=power,
            seed_base=seeds.get("base", 1), drops=seeds.get("drops", 1), raw=raw,
            coverage=coverage,
            deploy=_deploy_settings(check, sections["deploy"] or ({"enabled": False} if measured
                                                                  else None)),
        )

    @property
    def seeds(self) -> _seeds.DropSeeds:
        """The build seeds of the drops, computed on demand (see
        :class:`~cellopt.study.seeds.DropSeeds`)."""
        return _seeds.DropSeeds(self.seed_base, self.drops)

    @property
    def runs(self) -> tuple[RunKind, ...]:
        """What :func:`~cellopt.study.run_scenario` and :func:`~cellopt.study.run_sweep`
        solve each drop with: the methods, then the ``[power]`` section if present
        (:mod:`cellopt.study.runkinds`; ``run.solve(scenario, drop)`` solves a drop)."""
        return self.methods + (() if self.power is None else (self.power,))

    def power_problem(self, drop: _drop.Drop, run: PowerRun | None = None) -> PowerProblem:
        """The power problem of a drop under the ``[power]`` section (or `run`): its
        ``levels_db``, ``energy_price_per_w`` and ``n_interferers``.

        Raises
        ------
        ValidationError
            Naming the file and ``[power]``: for a scenario without the section, or a
            power problem this network refuses.
        """
        run = self.power if run is None else run
        if run is None:
            raise ValidationError(f"{self.path}: [power] the scenario has no [power] section; fix: "
                                  "add one (levels_db, energy_price_per_w)")
        built = run.problem_options
        with warnings.catch_warnings():  # the file's unusual levels warned when it was loaded
            warnings.simplefilter("ignore", UnusualLevelWarning)
            return self._stage(False, "power", lambda: PowerProblem.from_drop(drop, **built))

    def with_overrides(self, **section_updates: Mapping[str, Any] | Any) -> Scenario:
        """A copy with keys of sections replaced, validated again.

        ``with_overrides(users={"n": 30}, seeds={"drops": 2})`` merges into the sections;
        a non-table value (``methods=[...]``, ``name="x"``) replaces the key.
        """
        raw = dict(self.raw)
        for section, update in section_updates.items():
            if isinstance(update, Mapping) and isinstance(raw.get(section), dict):
                raw[section] = {**raw[section], **update}
            else:
                raw[section] = dict(update) if isinstance(update, Mapping) else update
        return Scenario.from_dict(raw, self.path)

    def radio_model(self) -> radio.RadioModel:
        """The :class:`~cellopt.radio.RadioModel` of the ``[radio]`` section.

        Its keys were checked, and warned about, when the file was loaded
        (:meth:`from_dict`): the same warnings are not given again for each drop.
        """
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            return radio_model(self.radio)

    def build(self, seed: int | None = None, *, cell_seed: int | None = None,
              progress: bool | None = None) -> _drop.Drop:
        """One drop: the network, its link table and the association problem.

        Parameters
        ----------
        seed : int, optional
            Seed of the drop (default ``seeds.base``). Picos, femtocells, users and
            shadowing draw from independent streams spawned from it.
        cell_seed : int, optional
            Seed of the cells alone (the layout of a random builder, picos and
            femtocells; default `seed`). Drops with one `cell_seed` and different
            seeds have the same cells, and new users and shadowing: the held-out
            drops on which a configuration fitted to one drop is judged
            (:mod:`cellopt.deploy`).
        progress : bool or None
            Show each step's time and the link table's progress bar on stderr. None
            (default): when standard error is a terminal (:mod:`cellopt.progress`).

        Returns
        -------
        Drop
            The network (all cells and users), the links of every user, and the problem
            of the users with a usable link (:attr:`Drop.solvable`).
        """
        progress = shows(progress)
        seed = self.seed_base if seed is None else seed
        cell_seed = seed if cell_seed is None else cell_seed
        for name, value in (("seed", seed), ("cell_seed", cell_seed)):
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                raise ValidationError(f"{self.path}: {name}={value!r}; fix: give an integer ≥ 0")
        # children are the same whatever the count, so a fifth stream moves no other one
        pico_ss, femto_ss, _, _, layout_ss = np.random.SeedSequence(cell_seed).spawn(5)
        _, _, user_ss, shadow_ss, _ = np.random.SeedSequence(seed).spawn(5)
        net = self._stage(progress, "network", lambda: self._network(np.random.default_rng(layout_ss)))
        if net.n_cells == 0:
            raise ValidationError(f"{self.path}: [network] the network has no cells; fix: a "
                                  "builder, file or filter that yields at least one cell")
        if self.measured:
            return self._measured_drop(net, int(seed), progress)
        if self.picos is not None:
            net = self._stage(progress, "picos", lambda: topology.add_picos(
                net, **self.picos, rng=np.random.default_rng(pico_ss)))
        if self.femtocells is not None:
            net = self._stage(progress, "femtocells", lambda: topology.add_femtocells(
                net, **self.femtocells, rng=np.random.default_rng(femto_ss)))
        users = dict(self.users)
        if users.get("colocated_fraction", 0.0) > 0 and "building_radius_m" in self.radio:
            users["building_radius_m"] = self.radio["building_radius_m"]  # one building size
        net = self._stage(progress, "users", lambda: topology.drop_users(
            net, **users, rng=np.random.default_rng(user_ss)))
        model = self.radio_model()
        link_options = {k: v for k, v in self.radio.items() if k in LINK_KEYS}
        links = self._stage(progress, "radio", lambda: radio.link_table(
            net, **link_options, model=model, rng=np.random.default_rng(shadow_ss),
            progress=progress))
        drop = self._stage(progress, "problem", lambda: _drop.Drop.from_network(
            net, links, seed=int(seed), **problem_options(self.problem, net)))
        if self.problem.get("interference", "full") == "full" or drop.problem.n_users == 0:
            return drop
        coupling = self._stage(progress, "problem", lambda: LoadCoupling.from_drop(
            drop, n_interferers=self.problem.get("n_interferers", 32)))
        return dataclasses.replace(drop, coupling=coupling)

    @property
    def measured(self) -> bool:
        """True if the users and links come from a measurement file (``[users] links``)."""
        return "links" in self.users

    def _measured_drop(self, net: Network, seed: int, progress: bool) -> _drop.Drop:
        """The drop of ``[users] links``: the users and links of the file on the network's
        cells (:func:`~cellopt.topology.read_measurements`,
        :func:`~cellopt.radio.link_table_from_frame`); the same whatever the seed."""
        path = Path(self.users["links"])
        if not path.exists():
            raise ValidationError(f"{self.path}: [users] key 'links': the file {path} does not "
                                  "exist; fix: put the measurements there or correct the path "
                                  "(relative to the scenario file)")
        frame = self._stage(progress, "users", lambda: topology.read_measurements(
            path, crs=net.crs, source_crs=self.users.get("source_crs")))
        options = {k: v for k, v in self.radio.items() if k in LINK_KEYS}
        options |= {k: self.users[k] for k in ("weight", "demand_mbps") if k in self.users}
        net, links = self._stage(progress, "users", lambda: radio.link_table_from_frame(
            net, frame, model=self.radio_model(), **options))
        return self._stage(progress, "problem", lambda: _drop.Drop.from_network(
            net, links, seed=seed, **problem_options(self.problem, net)))

    # ------------------------------------------------------------------ helpers
    def _stage(self, progress: bool, section: str, fn: Callable[[], Any]) -> Any:
        """Run one build step, prefixing its validation errors with the file and section
        (and, with `progress`, saying on stderr how long it took)."""
        t0 = time.perf_counter()
        try:
            out = fn()
        except ValidationError as err:  # the same class: a ResourceLimitError stays one
            raise type(err)([f"{self.path}: [{section}] {p}" for p in err.problems]) from err
        if progress:
            print(f"  built {section} ({time.perf_counter() - t0:.1f} s)", file=sys.stderr, flush=True)
        return out

    def _network(self, rng: np.random.Generator) -> Network:
        """The network of the [network] section, built by its builder."""
        hint = _packaged_data_hint(self)
        if hint is not None:
            raise ValidationError(hint)
        builder = BUILDERS[self.network["builder"]]
        return builder.build({k: v for k, v in self.network.items() if k != "builder"}, rng)

    @property
    def data_missing(self) -> bool:
        """True for a file-based scenario whose cell file does not exist."""
        return "path" in self.network and not Path(self.network["path"]).exists()


def from_checkout() -> bool:
    """Whether the shipped scenarios are read from a checkout of the repository (an
    editable install, or a checkout on the path), where their relative data paths such as
    ``../../shared/data/`` reach the folder beside it; False for an installed package."""
    return (SHIPPED_DIR.parent / "pyproject.toml").is_file()


def _packaged_data_hint(scenario: Scenario) -> str | None:
    """Why a shipped scenario's cell file is absent from an installed package, and the fix
    (None unless that is the case): its path is relative to the repository's
    ``topologies/``, which the package does not reproduce."""
    if not scenario.data_missing or from_checkout():
        return None
    if scenario.path.resolve().parent != SHIPPED_DIR.resolve():
        return None
    file = Path(scenario.network["path"])
    written = Path(os.path.relpath(file, scenario.path.parent)).as_posix()
    stand_in = scenario.network.get("stand_in")
    return (f"the cell file {file} does not exist: the shipped scenario {scenario.name!r} reads "
            f"{written} relative to topologies/ in a checkout of the cellopt repository (the data "
            f"folder beside the checkout), and this cellopt is an installed package "
            f"({SHIPPED_DIR}), where that path leads nowhere; fix: install cellopt from a clone "
            "whose data folder is beside it, editable (`pip install -e .` in the clone; README.md, "
            f"\"Set up and go\"), or copy {scenario.path} and set its [network] path to your copy "
            "of the file" + (f", or run its synthetic stand-in {Path(stand_in).stem}"
                               if stand_in else ""))


def _deploy_settings(check: _schema.Checker, section: dict[str, Any] | None) -> DeploySettings:
    """The ``[deploy]`` section's settings, its errors naming the file and the section."""
    try:
        return DeploySettings(**(section or {}))
    except ValidationError as err:
        raise check.fail("[deploy]", err.problems[0]) from None


def shipped_dir() -> Path:
    """The folder of the shipped scenarios: the package ``cellopt.topologies``, which the
    build maps to ``topologies/`` at the top of the repository (a checkout that is on the
    path but not installed reads that folder directly)."""
    try:
        return Path(str(importlib.resources.files("cellopt.topologies")))
    except ModuleNotFoundError:
        return Path(__file__).resolve().parents[2] / "topologies"


#: The folder of the scenarios shipped with cellopt.
SHIPPED_DIR = shipped_dir()


def shipped_scenarios() -> list[str]:
    """The names of the scenarios shipped with cellopt (``cellopt run NAME`` runs one)."""
    return sorted(p.stem for p in SHIPPED_DIR.glob("*.toml"))


def find_scenario(name: str | Path) -> Path:
    """The scenario file `name` names: a TOML file, or the name of a shipped scenario.

    A path that exists wins over a shipped name.

    Raises
    ------
    ValidationError
        For a file that does not exist (listing the shipped names), a folder, or a file
        that is not UTF-8 text.
    """
    path = Path(name)
    if not path.exists() and path.suffix != ".toml" and len(path.parts) == 1:
        shipped = SHIPPED_DIR / f"{path.name}.toml"
        if shipped.exists():
            return shipped
    if not path.exists():
        raise ValidationError(f"the scenario file {name} does not exist, and {str(name)!r} is not "
                              f"a shipped scenario; fix: give a shipped name "
                              f"({', '.join(shipped_scenarios())}) or a TOML file")
    if path.is_dir():
        raise ValidationError(f"the scenario {path} is a folder; fix: give a scenario file (TOML) or "
                              f"a shipped name ({', '.join(shipped_scenarios())})")
    try:
        path.read_bytes().decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValidationError(f"{path}: not a text (UTF-8) file, so not a scenario ({err.reason} at "
                              f"byte {err.start}); fix: give a scenario file (TOML)") from None
    return path


def _in_file(path: Path, section: str, make: Callable[[], Any]) -> Any:
    """``make()``, the object a section describes (the ``[radio]`` section's model, made as
    each drop will make it but for the rasters of ``path_loss``; the ``[coverage]``
    settings), made when the file is loaded so that every key is refused or warned about
    then, each message naming the file, the section and the key.

    Raises
    ------
    ValidationError
        What `make` refuses, naming the file and the section.
    """
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            made = make()
        except ValidationError as err:
            raise ValidationError([_file_words(path, section, p) for p in err.problems]) from None
    said = set()
    for w in caught:
        text = _file_words(path, section, str(w.message))
        if text not in said:  # one warning per key, not one per tier sharing the model
            said.add(text)
            warnings.warn(text, w.category, stacklevel=4)
    return made


#: ``[radio]`` keys that may give a value per tier, as a table.
_PER_TIER_RADIO_KEYS = ("propagation", "path_loss", "shadowing_std_db", "pathloss_exponent",
                        "pathloss_reference_db", "min_distance_m")


def _warn_absent_tiers(path: Path, network: Mapping[str, Any],
                       sections: Mapping[str, Any]) -> None:
    """Warn about the tiers of ``[radio]``'s per-tier tables that the network gets no cells
    of: their values are ignored."""
    section = sections["radio"] or {}
    for key in _PER_TIER_RADIO_KEYS:
        value = section.get(key)
        if not isinstance(value, Mapping):
            continue
        absent = [t for t in value if t != "*" and has_tier(
            t, network, sections["picos"], sections["femtocells"]) is False]
        if absent:
            sections_of = {"pico": "[picos]", "femto": "[femtocells]"}
            add = " or ".join(sections_of[t] for t in absent if t in sections_of) or "the cells"
            warnings.warn(f"{path}: [radio] key {key!r} gives tiers {absent} a value, but the "
                          f"network gets no {' or '.join(absent)} cells: it is ignored; fix: "
                          f"remove {'it' if len(absent) == 1 else 'them'}, or add {add}",
                          UserWarning, stacklevel=4)


def _file_words(path: Path, section: str, text: str) -> str:
    """A message of the objects a section makes in the file's words: its key, not the
    field of :class:`~cellopt.radio.RadioModel` or :class:`~cellopt.radio.ThreeGPP`."""
    text = text.removeprefix(f"[{section}] ")
    for prefix in ("RadioModel.", "ThreeGPP."):
        text = text.replace(prefix, "")
    return f"{path}: [{section}] {text}"


def _warn_unused_coverage(path: Path, keys: Mapping[str, Any] | None,
                          settings: CoverageSettings) -> None:
    """Warn about the ``[coverage]`` keys that ``enabled = false`` leaves unused."""
    unused = [k for k in keys or {} if k != "enabled"] if not settings.enabled else []
    if unused:
        one = len(unused) == 1
        warnings.warn(f"{path}: [coverage] enabled = false, so {', '.join(unused)} "
                      f"{'is' if one else 'are'} not used (no coverage map is made); fix: remove "
                      f"{'it' if one else 'them'}, or set enabled = true", UserWarning, stacklevel=4)


def load_scenario(path: str | Path, *, use_stand_in: bool = False) -> Scenario:
    """Read and validate a scenario (see the module docstring for the schema).

    Parameters
    ----------
    path : path or str
        A TOML file, or the name of a shipped scenario (:func:`shipped_scenarios`:
        ``"hetnet"``, ``"sf_femto"``, ...).
    use_stand_in : bool
        If the scenario's cell file is absent and it names a ``stand_in`` scenario, load
        that one instead, with a :class:`UserWarning` saying so. Otherwise building a
        drop of a scenario whose data is absent raises a ValidationError naming the
        file and the stand-in.
    """
    path = find_scenario(path)
    try:
        with path.open("rb") as f:
            raw = tomllib.load(f)
    except tomllib.TOMLDecodeError as err:
        raise ValidationError(f"{path}: not valid TOML: {err}") from err
    scenario = Scenario.from_dict(raw, path)
    stand_in = scenario.network.get("stand_in")
    if use_stand_in and scenario.data_missing and stand_in:
        warnings.warn(f"{path}: its cell file {scenario.network['path']} is absent; running "
                      f"the synthetic stand-in {stand_in} instead", UserWarning, stacklevel=2)
        return load_scenario(stand_in)
    return scenario
