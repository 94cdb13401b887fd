"""Numba configuration shared by every kernel.

All kernels are compiled with the same flags, defined here once:

* ``cache=True`` so that the compiled machine code is stored beside the
  sources and reloaded by later processes (``make install`` warms it).
  Numba's cache only watches the file that defines a kernel, so every tunable
  is passed as an argument, never read from a module constant.
* ``nogil=True`` so that long kernels release the GIL: the dashboard keeps
  serving other sessions while a run mines, and the wrappers can run two
  kernels at once from a small thread pool, each on its own buffers.
* no ``parallel=True``: numba has no atomics on the CPU and its threading
  layers misbehave when two Python threads enter parallel regions at once
  (workqueue aborts) or after ``fork`` (OpenMP).  Parallel work is instead
  done by the wrappers: each worker thread calls a ``nogil`` kernel on a
  disjoint slice with its own output buffer, and the buffers are merged
  afterwards; ``workers=1`` is the serial twin and is tested equal.

The threading layer is still pinned (to ``workqueue``, the one that ships with
numba and needs no extra library) so that an accidental ``prange`` behaves
the same on every machine.
"""
from __future__ import annotations

import os
import threading

import numba

numba.config.THREADING_LAYER = "workqueue"


def _no_blas(*args, **kwargs):
    raise ImportError("no BLAS: no kernel of boilerscope uses np.dot or np.linalg")


# Numba probes for scipy's BLAS when it loads its first kernel: its array
# math module, imported then, binds numba.np.linalg.ensure_blas and calls it,
# which imports scipy.linalg when scipy is installed (0.3 s of every
# process here; scipy comes with the bench's datasketch, and with many data
# environments).  No kernel here uses BLAS (test_layers checks that, and
# that loading a kernel imports no scipy), so the probe is answered before
# that module is imported.
import numba.np.linalg  # noqa: E402

numba.np.linalg.ensure_blas = _no_blas

#: Flags of every ``@njit`` kernel in :mod:`engine.kernels`.
NJIT = dict(cache=True, nogil=True, error_model="numpy", boundscheck=False)

#: One process-wide lock held around multi-threaded kernel sections, so that
#: two dashboard sessions mining at once take turns instead of oversubscribing
#: the two cores.
KERNEL_LOCK = threading.Lock()


def default_workers() -> int:
    """Number of worker threads for the multi-threaded stages."""
    env = os.environ.get("BOILERSCOPE_WORKERS")
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            pass
    return max(1, min(os.cpu_count() or 1, 8))
