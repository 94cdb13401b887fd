"""Warm numba's cache: compile every kernel once (``make install`` runs it)."""
from __future__ import annotations

import time

import numpy as np
import pyarrow as pa


def main() -> None:
    from .api import _warm_up
    from .tokenize import tokenize_arrow
    t = time.perf_counter()
    tokenize_arrow(pa.array(["Warm up, warm up.", None, "x"]))
    _warm_up()
    from .kernels import coverage as KC
    KC.distinct_per_group(np.zeros(1, np.int64), np.ones(1, np.int64), np.zeros(1, np.int64), 1)
    print(f"numba kernels ready ({time.perf_counter() - t:.1f} s)")


if __name__ == "__main__":
    main()
