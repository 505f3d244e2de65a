"""Symmetric positive definite Newton systems of the solvers: sparse + low-rank, solved fast.

The Newton matrices of ``dual`` and ``ipm`` are a sparse part (what users and cells
couple) plus, with free pattern shares, the curvature of the pattern-share simplex of
each share block. For a block that holds many groups (one block of every cell: a pattern
touches every cell) that curvature is dense, but of low rank: it is kept as ``U C Uᵀ``
and solved by Woodbury. Small blocks (one cell, a cluster) are added explicitly.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse as sp
import scipy.sparse.linalg as spla

from cellopt.solvers.common import one_blas_thread

__all__ = ["EXPLICIT_BLOCK", "SymmetricSystem", "share_curvature"]

#: Share blocks of up to this many rows enter the matrix explicitly; larger ones low-rank.
EXPLICIT_BLOCK = 200
_DENSE_MAX = 500  # systems up to this size are factorized densely


class SymmetricSystem:
    """``sparse + U C Uᵀ``: a symmetric positive (semi)definite matrix, shape (n, n).

    Attributes
    ----------
    sparse : scipy.sparse array, shape (n, n)
    U : scipy.sparse array, shape (n, r), or None
    C : ndarray, shape (r, r), or None
        Symmetric; may be singular (a block's shares sum to one).
    extra_diag : ndarray, shape (n,), or 0
        The diagonal of ``U C Uᵀ``.
    """

    def __init__(self, sparse: sp.sparray):
        self.sparse = sp.csr_array(sparse)
        self.U: sp.csr_array | None = None
        self.C: np.ndarray | None = None
        self.extra_diag: np.ndarray | float = 0.0

    def add(self, curvature: tuple) -> None:
        """Add the output of :func:`share_curvature`."""
        explicit, U, C, extra = curvature
        self.sparse = self.sparse + explicit
        if U is not None:
            self.U, self.C, self.extra_diag = U, C, extra

    def diagonal(self) -> np.ndarray:
        return self.sparse.diagonal() + self.extra_diag

    def restricted(self, free: np.ndarray, scale_diag: np.ndarray) -> _Factorizable:
        """The system on the rows `free`, Jacobi-scaled by ``scale_diag[free]``."""
        return _Factorizable(self, free, scale_diag)


class _Factorizable:
    """Solves (A_FF + U_F C U_Fᵀ) d = b, Jacobi-scaled, by dense Cholesky or sparse LU.

    The sparse part is solved as (Â + reg I) d̂ = b̂ with Â = D^{-1/2} A_FF D^{-1/2} of
    unit diagonal: variables whose curvature differs by many orders (prices near zero
    on a free cell, shares near a bound) would swamp an absolute regularization.
    reg starts at ``max(1e-10, damping)`` and grows ×1000 (up to 6 times) if the
    factorization fails. With ``Û = D^{-1/2} U_F``,
    ``(Â + Û C Ûᵀ)⁻¹ b̂ = Â⁻¹ b̂ − Â⁻¹ Û (I + C Ûᵀ Â⁻¹ Û)⁻¹ C Ûᵀ Â⁻¹ b̂``, which needs no
    inverse of C.
    """

    def __init__(self, system: SymmetricSystem, free: np.ndarray, scale_diag: np.ndarray):
        self.dense = len(free) <= _DENSE_MAX
        diag = scale_diag[free]
        self.d = 1.0 / np.sqrt(np.maximum(diag, 1e-300 + 1e-30 * float(np.max(diag, initial=0.0))))
        n = system.sparse.shape[0]
        if self.dense and n <= _DENSE_MAX * 2:
            # the same entries without scipy's sparse fancy indexing (~1 ms per call)
            full = system.sparse.toarray()
            self.A = full[np.ix_(free, free)] * self.d[:, None] * self.d[None, :]
        elif self.dense:
            self.A = system.sparse[free][:, free].toarray() * self.d[:, None] * self.d[None, :]
        else:
            # D^{-1/2} A_FF D^{-1/2} picked out of the CSR arrays in one pass (the same
            # products as two sparse matrix products, without their overhead)
            H = sp.csr_array(system.sparse)
            pos = np.full(n, -1, np.int64)
            pos[free] = np.arange(len(free))
            rows = pos[np.repeat(np.arange(n), np.diff(H.indptr))]
            cols = pos[H.indices]
            keep = (rows >= 0) & (cols >= 0)
            r, c = rows[keep], cols[keep]
            self.A = sp.csc_matrix(((self.d[r] * H.data[keep]) * self.d[c], (r, c)),
                                   shape=(len(free), len(free)))
        self._cache: tuple | None = None
        self._woodbury: tuple | None = None
        self._shift = 0.0
        self.U = None
        if system.U is not None:
            U = system.U[free].toarray() * self.d[:, None]
            keep = np.flatnonzero(np.abs(U).sum(axis=0) > 0)
            if len(keep):
                self.U, self.C = U[:, keep], system.C[np.ix_(keep, keep)]

    def _factor(self, shift: float) -> tuple:
        """The factorization of Â + shift I (kept: the predictor and corrector share it)."""
        if self._cache is not None and self._cache[0] == shift:
            return self._cache[1]
        if self.dense:
            A = self.A.copy()
            A[np.diag_indices_from(A)] += shift
            with one_blas_thread():
                factor = ("dense", scipy.linalg.cho_factor(A, check_finite=False))
        else:
            n = self.A.shape[0]
            # Symmetric mode with a minimum-degree ordering of A + Aᵀ: 5–10× less fill and
            # time than the default COLAMD on these symmetric positive definite systems.
            factor = ("lu", spla.splu(sp.csc_matrix(self.A + shift * sp.eye(n)),
                                      permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                                      options=dict(SymmetricMode=True)))
        self._cache = (shift, factor)
        return factor

    def _solve_sparse_part(self, rhs: np.ndarray, shift: float) -> np.ndarray:
        kind, factor = self._factor(shift)
        if kind == "dense":
            with one_blas_thread():
                return scipy.linalg.cho_solve(factor, rhs, check_finite=False)
        return factor.solve(rhs)

    def solve(self, b: np.ndarray, damping: float = 0.0) -> np.ndarray:
        """d with (A_FF + U C Uᵀ + reg) d = b; b of shape (n_free,) or (n_free, k)."""
        shift = max(1e-10, damping, self._shift)
        rhs = b * (self.d if b.ndim == 1 else self.d[:, None])
        scale = self.d if b.ndim == 1 else self.d[:, None]
        for _ in range(6):
            try:
                if self.U is None:
                    out = scale * self._solve_sparse_part(rhs, shift)
                else:
                    k = 1 if rhs.ndim == 1 else rhs.shape[1]
                    if self._woodbury is None or self._woodbury[0] != shift:
                        a_u = self._solve_sparse_part(self.U, shift)
                        with one_blas_thread():
                            cap = np.eye(len(self.C)) + self.C @ (self.U.T @ a_u)
                            self._woodbury = (shift, a_u, scipy.linalg.lu_factor(cap))
                    _, a_u, cap_lu = self._woodbury
                    a_b = self._solve_sparse_part(rhs, shift).reshape(len(rhs), k)
                    with one_blas_thread():
                        z = scipy.linalg.lu_solve(cap_lu, self.C @ (self.U.T @ a_b))
                    out = a_b - a_u @ z
                    out = scale * (out[:, 0] if rhs.ndim == 1 else out)
                if np.isfinite(out).all():
                    self._shift = shift
                    return out
                raise np.linalg.LinAlgError("non-finite solve")
            except (np.linalg.LinAlgError, RuntimeError, ValueError):
                shift *= 1e3
        return scale * rhs / (1.0 + shift)


def share_curvature(n: int, rows: np.ndarray, cols: np.ndarray, col_block: np.ndarray,
                    weight: np.ndarray, row_scale: np.ndarray) -> tuple:
    """``Σ_b P_bᵀ (diag(a_b) − a_b a_bᵀ / Σ a_b) P_b``: the curvature of a share simplex.

    The shares of block b (columns) enter rows `rows` (one column per row); `a` =
    `weight` per column (> 0); P has entry ``row_scale[row]`` at (row, its column).

    Parameters
    ----------
    n : int
        Size of the system.
    rows, cols : ndarray of int64, shape (m,)
        Rows that carry a share, and that share's column.
    col_block : ndarray of int64, shape (n_columns,)
        Block of every column.
    weight : ndarray, shape (n_columns,)
    row_scale : ndarray, shape (n,)

    Returns
    -------
    (explicit, U, C, extra_diag)
        The explicit part (sparse, shape (n, n), blocks of at most :data:`EXPLICIT_BLOCK`
        rows) and the low-rank part ``U C Uᵀ`` of the larger blocks (None, None, 0 if
        there are none) with its diagonal.
    """
    n_blocks = int(col_block.max(initial=-1)) + 1
    blk = col_block[cols]
    size = np.bincount(blk, minlength=n_blocks)
    total = np.bincount(col_block, weight, minlength=n_blocks)
    small = size[blk] <= EXPLICIT_BLOCK
    # Explicit blocks: every pair of rows in the same block.
    order = np.flatnonzero(small)[np.argsort(blk[small], kind="stable")]
    re, ce, be = rows[order], cols[order], blk[order]
    count = size[be]
    first = np.zeros(n_blocks, np.int64)
    if len(be):
        starts = np.r_[True, be[1:] != be[:-1]]
        first[be[starts]] = np.flatnonzero(starts)
    i = np.repeat(np.arange(len(re)), count)
    j = first[be][i] + np.arange(len(i)) - np.repeat(np.cumsum(count) - count, count)
    a_i, a_j = weight[ce[i]], weight[ce[j]]
    val = row_scale[re[i]] * row_scale[re[j]] * (np.where(ce[i] == ce[j], a_i, 0.0)
                                                 - a_i * a_j / total[be[i]])
    explicit = sp.csr_array((val, (re[i], re[j])), shape=(n, n))
    rl, cl = rows[~small], cols[~small]
    if not len(rl):
        return explicit, None, None, 0.0
    used, local = np.unique(cl, return_inverse=True)
    U = sp.csr_array((row_scale[rl], (rl, local)), shape=(n, len(used)))
    a, bb = weight[used], col_block[used]
    same = bb[:, None] == bb[None, :]
    C = np.diag(a) - same * np.outer(a, a) / total[bb][:, None]
    extra = np.zeros(n)
    extra[rl] = row_scale[rl] ** 2 * weight[cl] * (1.0 - weight[cl] / total[blk[~small]])
    return explicit, U, C, extra
