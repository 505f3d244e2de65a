"""Compiled per-link kernels: numba, compiled on first use and cached on disk.

A kernel is a plain Python function over flat arrays, written as loops, decorated with
:func:`kernel`. Nothing is imported or compiled when the module that defines it is
imported (``import cellopt`` does not load numba); the first call compiles it with
``numba.njit(cache=True, nogil=True)`` and later processes load the compiled machine code
from numba's cache.

Every kernel has a numpy form beside it that computes the same thing with vectorized
calls; the tests hold the two equal to rounding on random inputs. The numpy form is also
the fallback: :func:`compiled` is False when numba cannot be imported (numba follows a
new CPython release by some months) or when the environment variable ``CELLOPT_JIT=0``
asks for it, and callers then take the numpy form. Results agree to rounding either way.

Where the cache goes: numba writes it to ``__pycache__`` beside the module; where that
folder cannot be written (a read-only site-packages), to ``$NUMBA_CACHE_DIR`` if set,
otherwise to the user's cache folder (``~/.cache/numba`` on Linux). See docs/model.md,
"Compiled kernels".
"""

from __future__ import annotations

import functools
import os
import types
from collections.abc import Callable
from typing import Any

#: Environment variable that turns the compiled kernels off (``CELLOPT_JIT=0``).
ENV_SWITCH = "CELLOPT_JIT"


@functools.cache
def _numba_available() -> bool:
    try:
        import numba  # noqa: F401
    except ImportError:
        return False
    return True


def compiled() -> bool:
    """Whether the compiled kernels run: numba importable and ``CELLOPT_JIT`` not ``0``."""
    if os.environ.get(ENV_SWITCH, "1").strip() == "0":
        return False
    return _numba_available()


class Kernel:
    """A function compiled by numba on its first call (``cache=True``, ``nogil=True``).

    ``kernel.py_func`` is the uncompiled function (for tests on tiny inputs).
    """

    def __init__(self, func: Callable[..., Any], options: dict[str, Any]):
        self.py_func = func
        self._options = options
        self._compiled: Callable[..., Any] | None = None
        functools.update_wrapper(self, func)

    def __call__(self, *args: Any) -> Any:
        return (self._compiled or self.dispatcher())(*args)

    def dispatcher(self) -> Callable[..., Any]:
        """The compiled function (compiled now if it was not yet).

        A kernel may call other kernels: the names of this module's globals that are
        :class:`Kernel` objects are bound to their compiled functions for the compilation.
        """
        if self._compiled is None:
            import numba

            func = self.py_func
            names = func.__code__.co_names
            calls = {name: value for name, value in func.__globals__.items()
                     if name in names and isinstance(value, Kernel) and value is not self}
            if calls:
                scope = dict(func.__globals__)
                scope.update({name: kernel.dispatcher() for name, kernel in calls.items()})
                bound = types.FunctionType(func.__code__, scope, func.__name__,
                                           func.__defaults__, func.__closure__)
                bound.__qualname__, bound.__module__ = func.__qualname__, func.__module__
                bound.__doc__ = func.__doc__
                func = bound
            self._compiled = numba.njit(cache=True, nogil=True, **self._options)(func)
        return self._compiled


def kernel(func: Callable[..., Any] | None = None, **options: Any) -> Any:
    """Decorate a loop kernel: compiled lazily by ``numba.njit`` (extra `options` passed on).

    Use as ``@kernel`` or ``@kernel(fastmath=False)``. Callers check :func:`compiled` and
    take the numpy form when it is False.
    """
    if func is None:
        return lambda f: Kernel(f, options)
    return Kernel(func, options)
