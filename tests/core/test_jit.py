"""The compiled-kernel wrapper: lazy, switchable, equal to the plain function."""

from __future__ import annotations

import subprocess
import sys

import numpy as np

from cellopt import jit


@jit.kernel
def _dot(a, b):
    total = 0.0
    for i in range(a.shape[0]):
        total += a[i] * b[i]
    return total


def test_kernel_equals_its_python_function():
    rng = np.random.default_rng(0)
    a, b = rng.random(1000), rng.random(1000)
    assert _dot(a, b) == _dot.py_func(a, b)
    assert abs(_dot(a, b) - a @ b) <= 1e-12 * abs(a @ b)


def test_switch_turns_the_kernels_off(monkeypatch):
    monkeypatch.setenv(jit.ENV_SWITCH, "0")
    assert not jit.compiled()
    monkeypatch.setenv(jit.ENV_SWITCH, "1")
    assert jit.compiled()


def test_import_cellopt_loads_no_numba():
    code = "import sys, cellopt, cellopt.solvers, cellopt.power; print('numba' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
