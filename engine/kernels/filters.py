"""The Spark job's kernels (:mod:`engine.partitioned`): the frequent-window
filter (saturating byte counters indexed by a window's hash, and the bit set
of the buckets that reached sigma), the windows' hashes and groups, and the
byte copies that build the segments' text."""
from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NJIT
from .hashing import FNV_OFFSET, FNV_PRIME, POLY, mix64, poly_power


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


@njit(**NJIT)
def window_hashes(th, doc_offsets, L, h_out, start_out):
    """The hash of every L-token window inside one document, in order: the
    polynomial ``r = sum(th[s + k] * POLY^(L-1-k))`` of its tokens' hashes
    ``th`` (64-bit, wrapping), rolled from one window to the next, then
    ``h = r ^ (r >> 31)``; its start in ``start_out``.  Returns the windows
    written (``h_out`` holds at least that many).  O(tokens)."""
    n = 0
    shift = np.uint64(31)
    top = poly_power(L)                     # the leaving token's weight
    for d in range(doc_offsets.shape[0] - 1):
        a = doc_offsets[d]
        e = doc_offsets[d + 1]
        if e - a < L:
            continue
        r = np.uint64(0)
        for k in range(L):
            r = r * POLY + th[a + k]
        for s in range(a, e - L + 1):
            if s > a:
                r = (r - th[s - 1] * top) * POLY + th[s + L - 1]
            h_out[n] = r ^ (r >> shift)
            start_out[n] = s
            n += 1
    return n


@njit(**NJIT)
def window_groups(h, ids, ws, order, L, gid):
    """Group ids of windows sorted by hash (``order``): a new group where
    the hash changes.  Exact only when every run of one hash holds one L-gram
    (the windows at ``ws`` of the token ids ``ids``): returns False, with
    ``gid`` incomplete, at the first run that holds two (a collision)."""
    g = -1
    first = 0
    for i in range(order.shape[0]):
        r = order[i]
        if i == 0 or h[r] != h[order[i - 1]]:
            g += 1
            first = ws[r]
        else:
            b = ws[r]
            for k in range(L):
                if ids[first + k] != ids[b + k]:
                    return False
        gid[i] = g
    return True


@njit(**NJIT)
def join_tokens(voc_data, voc_off, tokens, seg_a, seg_e, out, out_offsets):
    """Segment i's tokens ``tokens[seg_a[i]:seg_e[i]]`` (ids into a
    vocabulary of UTF-8 strings: ``voc_data[voc_off[t]:voc_off[t + 1]]``)
    joined by single spaces, one after another into ``out`` (sized to the
    total), their bounds into ``out_offsets`` (len n + 1)."""
    at = 0
    out_offsets[0] = 0
    space = np.uint8(32)
    for i in range(seg_a.shape[0]):
        for p in range(seg_a[i], seg_e[i]):
            if p > seg_a[i]:
                out[at] = space
                at += 1
            t = tokens[p]
            for j in range(voc_off[t], voc_off[t + 1]):
                out[at] = voc_data[j]
                at += 1
        out_offsets[i + 1] = at


@njit(**NJIT)
def char_bytes(data, doc_start, doc, chars, out):
    """Byte offset in ``data`` (UTF-8) of code point ``chars[i]`` of
    document ``doc[i]`` (its bytes ``doc_start[doc[i]]`` to
    ``doc_start[doc[i] + 1]``; a place past its end gives its end), for
    queries in order (by document, then by code point)."""
    d = -1
    at = 0
    count = 0
    for i in range(chars.shape[0]):
        if doc[i] != d:
            d = doc[i]
            at = doc_start[d]
            count = 0
        end = doc_start[d + 1]
        while count < chars[i] and at < end:
            at += 1                             # past the lead byte, then its continuation bytes
            while at < end and (data[at] & 0xC0) == 0x80:
                at += 1
            count += 1
        out[i] = at


@njit(**NJIT)
def string_hashes(data, offsets, out):
    """A 64-bit hash of each UTF-8 string ``data[offsets[i]:offsets[i + 1]]``
    (FNV-1a, then Murmur3's finalizer): the same in every process."""
    for i in range(offsets.shape[0] - 1):
        h = FNV_OFFSET
        for j in range(offsets[i], offsets[i + 1]):
            h ^= np.uint64(data[j])
            h *= FNV_PRIME
        out[i] = mix64(h)
