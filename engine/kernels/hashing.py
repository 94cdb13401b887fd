"""Hash helpers shared by the kernels."""
from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NJIT

FNV_OFFSET = np.uint64(0xCBF29CE484222325)
FNV_PRIME = np.uint64(0x100000001B3)


@njit(**NJIT)
def mix64(h):
    """Murmur3's 64-bit finalizer (FNV-1a's low bits are weak on their own)."""
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xFF51AFD7ED558CCD)
    h ^= h >> np.uint64(33)
    h *= np.uint64(0xC4CEB9FE1A85EC53)
    h ^= h >> np.uint64(33)
    return h
