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


#: Base of the polynomial rolling hash of an L-token window (odd, 64-bit):
#: hash = sum of (token + 1) * POLY ** (L - 1 - k), modulo 2 ** 64.
POLY = np.uint64(0x9E3779B97F4A7C15)


@njit(**NJIT)
def poly_power(L):
    """POLY ** (L - 1) modulo 2 ** 64: what the token leaving a window weighs."""
    out = np.uint64(1)
    for _ in range(L - 1):
        out = out * POLY
    return out


@njit(**NJIT)
def poly_hash(tokens, p, L):
    """The polynomial hash of the L token ids from ``p`` (O(L); the rolling
    scans keep it up to date in O(1) per position)."""
    h = np.uint64(0)
    for k in range(L):
        h = h * POLY + np.uint64(np.uint32(tokens[p + k])) + np.uint64(1)
    return h


@njit(**NJIT)
def prefix_hashes(tokens, out):
    """``out[i]`` = the polynomial hash of ``tokens[:i]`` (len n + 1, modulo
    2^64): the hash of ``tokens[a:a + k]`` is ``out[a + k] - out[a] * POLY^k``."""
    h = np.uint64(0)
    out[0] = h
    for i in range(tokens.shape[0]):
        h = h * POLY + np.uint64(np.uint32(tokens[i])) + np.uint64(1)
        out[i + 1] = h
