"""Large-scale propagation of 3GPP TR 38.901 (§7.4, §7.5) and TR 36.873 (§7.2).

Pure, vectorized numpy functions: path loss, LOS probability, shadow-fading σ and
decorrelation distance, outdoor-to-indoor (O2I) loss and the random heights of the
drop. Nothing random is drawn here: every random quantity is a function of uniforms in
[0, 1) or standard normals that the caller passes in (e.g. from
:func:`cellopt.radio.shadowing.uniform_hash`), so that values can be keyed by a
counter-based hash. Arrays broadcast against each other (numpy rules).

Sources, transcribed from the text of the reports:

- TR 38.901 v16.1.0 / v17.0.0: Table 7.4.1-1 (path loss, σ_SF), Table 7.4.2-1 (LOS
  probability), §7.4.3.1 with Tables 7.4.3-1, 7.4.3-2 and 7.4.3-3 (O2I building
  penetration), Table 7.2-1 (indoor UT height), Table 7.5-6 (SF decorrelation distance
  and the O2I σ_SF).
- TR 36.873 v12.7.0: Table 7.2-1 (3D-UMa, 3D-UMi path loss and O2I loss), Table 7.2-2
  (LOS probability, effective environment height), Table 6-1 (indoor UT height), Table
  7.3-6 (σ_SF and decorrelation distances).

Conventions of both reports: f_c in GHz in the formulas (in Hz in the breakpoint
distances, c = 3.0e8 m/s); distances and heights in metres; d_3D the BS–UT distance,
d_2D its horizontal projection. Each scenario's applicability ranges are declared once,
in :data:`VALIDITY`, and :func:`check_validity` holds :func:`pathloss_db` (and the
:class:`~cellopt.radio.ThreeGPP` model of the link table and coverage maps) to them: what
the formulas cannot evaluate (a distance or height ≤ 0, a breakpoint of 0 or less) is
refused, what lies outside the stated ranges warns and is evaluated as written: nothing
is clamped. Raising short distances to the minimum of the model (10 m outdoors, 1 m
indoors) is the caller's job.

The package's modules, by job: :mod:`~cellopt.radio.tr38901.validity` (the scenario names,
the argument checks and the applicability ranges), :mod:`~cellopt.radio.tr38901.pathloss`
(path loss and breakpoint distance), :mod:`~cellopt.radio.tr38901.los` (LOS probability),
:mod:`~cellopt.radio.tr38901.shadow_fading` (σ_SF and decorrelation distance),
:mod:`~cellopt.radio.tr38901.heights` (h_E and indoor floors) and
:mod:`~cellopt.radio.tr38901.o2i` (indoor distance and O2I loss).
"""

from cellopt.radio.tr38901.heights import (
    indoor_floor_height_m,
    uma_effective_height_m,
    uma_effective_height_pmf,
)
from cellopt.radio.tr38901.los import los_probability
from cellopt.radio.tr38901.o2i import indoor_distance_m, o2i_loss_db
from cellopt.radio.tr38901.pathloss import breakpoint_distance_m, pathloss_db
from cellopt.radio.tr38901.shadow_fading import decorrelation_distance_m, shadow_std_db
from cellopt.radio.tr38901.validity import SCENARIOS, VALIDITY, Validity, check_validity

__all__ = [
    "SCENARIOS",
    "VALIDITY",
    "Validity",
    "breakpoint_distance_m",
    "check_validity",
    "decorrelation_distance_m",
    "indoor_distance_m",
    "indoor_floor_height_m",
    "los_probability",
    "o2i_loss_db",
    "pathloss_db",
    "shadow_std_db",
    "uma_effective_height_m",
    "uma_effective_height_pmf",
]
