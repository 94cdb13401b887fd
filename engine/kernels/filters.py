"""The Spark job's frequent-window filter (:mod:`engine.partitioned`): saturating
byte counters indexed by a window's hash, and the bit set of the buckets that
reached sigma."""
from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NJIT
from .hashing import mix64


@njit(**NJIT)
def count_buckets(counters, h):
    """Add each hash of ``h`` to its bucket (saturating at 255); the buckets
    are ``counters.shape[0]``, a power of two."""
    mask = np.uint64(counters.shape[0] - 1)
    for i in range(h.shape[0]):
        j = mix64(h[i]) & mask
        c = counters[j]
        if c < 255:
            counters[j] = c + 1


@njit(**NJIT)
def threshold_bits(counters, threshold, bits):
    """Set bit i of ``bits`` (uint64 words) where ``counters[i] >= threshold``."""
    for i in range(counters.shape[0]):
        if counters[i] >= threshold:
            bits[i >> 6] |= np.uint64(1) << np.uint64(i & 63)


@njit(**NJIT)
def bits_have(bits, h, out):
    """``out[i]`` = whether the bucket of ``h[i]`` is set in ``bits``."""
    mask = np.uint64(bits.shape[0] * 64 - 1)
    for i in range(h.shape[0]):
        j = mix64(h[i]) & mask
        out[i] = (bits[j >> np.uint64(6)] >> (j & np.uint64(63))) & np.uint64(1)


@njit(**NJIT)
def gather_bytes(data, starts, ends, out, out_offsets):
    """Copy ``data[starts[i]:ends[i]]`` one after another into ``out``
    (sized to the total), their bounds into ``out_offsets`` (len n + 1):
    the texts of intervals and L-grams cut from a batch's segments."""
    at = 0
    out_offsets[0] = 0
    for i in range(starts.shape[0]):
        for j in range(starts[i], ends[i]):
            out[at] = data[j]
            at += 1
        out_offsets[i + 1] = at

