"""The compiled kernels of the power bounds and pricing equal their numpy forms."""

from __future__ import annotations

import numpy as np
import pytest
from helpers.problems import random_cells_network

from cellopt import jit
from cellopt.power import GainTable, PatternSpace, kernels


def _random_brackets(seed: int, n_links: int = 300, n_levels: int = 3, scope: int = 3):
    rng = np.random.default_rng(seed)
    n_cfg = n_levels ** scope
    rate = rng.uniform(0, 50, (n_links, n_cfg))
    a = np.where(rng.random(n_links) < 0.2, 0.0, rng.uniform(0, 0.1, n_links))
    n_pairs = 40
    delta = rng.normal(0, 0.5, (n_pairs, n_levels))
    slot = rng.integers(0, n_pairs, (n_links, scope))
    return rate, a, delta, slot, n_levels


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("temperature", [0.0, 0.05, 1.0])
def test_link_brackets_kernel_equals_numpy(seed, temperature):
    rate, a, delta, slot, L = _random_brackets(seed, scope=1 + seed % 4)
    fast = kernels.link_brackets(rate, a, delta, slot, L, temperature, True)
    slow = kernels.link_brackets_numpy(rate, a, delta, slot, L, temperature, True)
    assert jit.compiled()
    np.testing.assert_allclose(fast[0], slow[0], rtol=1e-12, atol=1e-12)
    if temperature > 0:
        np.testing.assert_allclose(fast[1], slow[1], rtol=1e-10, atol=1e-12)
        np.testing.assert_allclose(fast[2], slow[2], rtol=1e-10, atol=1e-12)
    else:
        assert fast[1] is None and slow[1] is None


def test_link_brackets_without_numba(monkeypatch):
    rate, a, delta, slot, L = _random_brackets(7)
    monkeypatch.setenv(jit.ENV_SWITCH, "0")
    off = kernels.link_brackets(rate, a, delta, slot, L, 0.1, True)
    monkeypatch.setenv(jit.ENV_SWITCH, "1")
    on = kernels.link_brackets(rate, a, delta, slot, L, 0.1, True)
    for x, y in zip(off, on, strict=True):
        np.testing.assert_allclose(x, y, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("n_s", [1, 2, 7])
@pytest.mark.parametrize(("n_table", "n_cand"), [(5, 3), (8, 8), (32, 8), (43, 4), (128, 6)])
def test_pattern_sinr_kernel_equals_numpy_bit_for_bit(n_table, n_cand, n_s):
    rng = np.random.default_rng(n_table)
    n_users, n_cells = 60, 150
    cell = np.stack([rng.choice(n_cells, n_table, replace=False) for _ in range(n_users)])
    gain = 10.0 ** rng.uniform(-14, -6, (n_users, n_table))
    power = np.where(rng.random((n_s, n_cells)) < 0.3, 0.0, 10.0 ** rng.uniform(2, 4.6, (n_s, n_cells)))
    background = 10.0 ** rng.uniform(-12, -9, n_users)
    args = (power, cell, gain, background, 1e-10, n_cand)
    np.testing.assert_array_equal(kernels.pattern_sinr(*args), kernels.pattern_sinr_numpy(*args))


def test_cell_max_kernel_equals_numpy():
    rng = np.random.default_rng(3)
    values = np.where(rng.random((5, 400)) < 0.2, 0.0, rng.exponential(size=(5, 400)))
    cell = rng.integers(0, 90, 400)
    np.testing.assert_array_equal(kernels.cell_max(values, cell, 100),
                                  kernels.cell_max_numpy(values, cell, 100))


def test_gain_table_sinr_is_the_same_without_numba(monkeypatch):
    net = random_cells_network(2, n_cells=12, n_users=50)
    gains = GainTable.from_network(net, rng=1, n_interferers=10)
    space = PatternSpace.from_network(net, [0.0, -10.0, None])
    rng = np.random.default_rng(0)
    power = space.power_mw(rng.integers(0, 3, (6, net.n_cells)))
    fast = gains.sinr(power)
    monkeypatch.setenv(jit.ENV_SWITCH, "0")
    np.testing.assert_array_equal(gains.sinr(power), fast)


@pytest.mark.parametrize("seed", range(3))
def test_move_gains_kernel_equals_numpy_bit_for_bit(monkeypatch, seed):
    from cellopt.power.patterns import _MoveEvaluator, link_coefficients

    net = random_cells_network(10 + seed, n_cells=14, n_users=80)
    gains = GainTable.from_network(net, rng=1, n_interferers=9, n_candidates=4)
    space = PatternSpace.from_network(net, [0.0, -10.0, None], 0.3)
    rng = np.random.default_rng(seed)
    coef = link_coefficients(gains, rng.uniform(0.01, 0.2, net.n_users), np.zeros(net.n_cells))
    evaluator = _MoveEvaluator(gains, space, coef)
    for pattern in rng.integers(0, 3, (4, net.n_cells)):
        fast = evaluator.gains_of_moves(pattern)
        monkeypatch.setenv(jit.ENV_SWITCH, "0")
        slow = evaluator.gains_of_moves(pattern)
        monkeypatch.setenv(jit.ENV_SWITCH, "1")
        for x, y in zip(fast, slow, strict=True):
            np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("seed", range(3))
def test_neighbourhood_gains_kernel_equals_numpy_bit_for_bit(monkeypatch, seed):
    from cellopt.power.patterns import link_coefficients
    from cellopt.power.search import Neighbourhoods

    net = random_cells_network(20 + seed, n_cells=13, n_users=70)
    gains = GainTable.from_network(net, rng=1, n_interferers=9, n_candidates=4)
    space = PatternSpace.from_network(net, [0.0, -10.0, None], 0.3)
    rng = np.random.default_rng(seed)
    coef = link_coefficients(gains, rng.uniform(0.01, 0.2, net.n_users), np.zeros(net.n_cells))
    hoods = Neighbourhoods(gains, space, 3)
    for pattern in rng.integers(0, 3, (4, net.n_cells)):
        fast = hoods.gains_of_configs(coef, pattern)
        monkeypatch.setenv(jit.ENV_SWITCH, "0")
        slow = hoods.gains_of_configs(coef, pattern)
        monkeypatch.setenv(jit.ENV_SWITCH, "1")
        for x, y in zip(fast, slow, strict=True):
            np.testing.assert_array_equal(x, y)


def test_config_and_move_sinr_kernels_equal_numpy_bit_for_bit():
    rng = np.random.default_rng(5)
    n_users, n_table, n_cand, n_pairs, n_k, n_b, m = 40, 9, 4, 120, 9, 7, 3
    gain = 10.0 ** rng.uniform(-14, -6, (n_users, n_table))
    rx = gain[:, :n_cand] * 10.0 ** rng.uniform(2, 4.6, (n_users, n_cand))
    rx[0] = 0.0  # cells off: the noise floor of the denominator
    noise = 1e-10
    total = rx.sum(axis=1) + 10.0 ** rng.uniform(-12, -9, n_users)
    user = rng.integers(0, n_users, n_pairs)
    cluster = rng.integers(0, n_b, n_pairs)
    slot = rng.integers(0, m, (n_pairs, n_cand))
    in_cluster = rng.random((n_pairs, n_cand)) < 0.4
    power_kbm = np.where(rng.random((n_k, n_b, m)) < 0.2, 0.0, 10.0 ** rng.uniform(2, 4.6, (n_k, n_b, m)))
    total_k = total[user][None] + rng.normal(0, 1e-9, (n_k, n_pairs))
    args = (total_k, power_kbm, cluster, user, slot, in_cluster, gain, rx, noise)
    np.testing.assert_array_equal(kernels.config_sinr(*args), kernels.config_sinr_numpy(*args))
    column = rng.integers(0, n_table, n_pairs)  # some beyond the candidates
    d_rx = rng.normal(0, 1e-9, n_pairs)
    args = (rx, total, user, column, d_rx, noise)
    np.testing.assert_array_equal(kernels.move_sinr(*args), kernels.move_sinr_numpy(*args))


def test_term_max_kernel_equals_numpy():
    rng = np.random.default_rng(6)
    values = np.where(rng.random((5, 30, 4)) < 0.3, 0.0, rng.exponential(size=(5, 30, 4)))
    term = rng.integers(0, 25, (30, 4))
    fast, slow = np.zeros((25, 5)), np.zeros((25, 5))
    fast[3] = slow[3] = 10.0  # a term already above every value keeps its own
    kernels.term_max(fast, values, term)
    kernels.term_max_numpy(slow, values, term)
    np.testing.assert_array_equal(fast, slow)
    assert fast[3].tolist() == [10.0] * 5 and fast.max() > 0
