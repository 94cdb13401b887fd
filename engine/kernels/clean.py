"""Kernels of the cut rule: mark token positions covered by stop L-grams."""
from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NJIT
from .hashing import POLY, poly_hash, poly_power
from .templates import SLOT


#: Multiplier that spreads a window hash over the filter's bits.
FILTER_MIX = np.uint64(0xBF58476D1CE4E5B9)


@njit(**NJIT)
def gram_hashes(grams, L):
    """Hash of each row of ``grams`` (an (m, L) int32 array)."""
    out = np.empty(grams.shape[0], np.uint64)
    for i in range(grams.shape[0]):
        out[i] = poly_hash(grams[i], 0, L)
    return out


@njit(**NJIT)
def _filter_slot(h, bits):
    return (h * FILTER_MIX) >> np.uint64(64 - bits)


@njit(**NJIT)
def gram_filter(hashes, bits):
    """A bit set of 2 ** bits bits holding every hash: positions whose window
    hash is not in it are passed over without a search."""
    words = np.zeros(max(1, (1 << bits) >> 6), np.uint64)
    for i in range(hashes.shape[0]):
        b = _filter_slot(hashes[i], bits)
        words[b >> np.uint64(6)] |= np.uint64(1) << (b & np.uint64(63))
    return words


@njit(**NJIT)
def _find_gram(tokens, p, L, h, sorted_hash, sorted_grams):
    """Row of ``sorted_grams`` equal to ``tokens[p:p + L]`` (its hash ``h``), or -1."""
    m = sorted_hash.shape[0]
    i = np.searchsorted(sorted_hash, h)
    while i < m and sorted_hash[i] == h:
        same = True
        for k in range(L):
            if sorted_grams[i, k] != tokens[p + k]:
                same = False
                break
        if same:
            return i
        i += 1
    return -1


@njit(**NJIT)
def _roll(tokens, p, L, h, power):
    """The hash of the window at ``p`` from ``h``, the hash of the window at p - 1."""
    one = np.uint64(1)
    return (h - (np.uint64(np.uint32(tokens[p - 1])) + one) * power) * POLY \
        + np.uint64(np.uint32(tokens[p + L - 1])) + one


@njit(**NJIT)
def _gram_of(tokens, p, L, h, sorted_hash, sorted_grams, words, bits):
    """The row of the gram equal to the window at ``p`` (hash ``h``), -1 when
    none (most positions: the filter says so without a search)."""
    b = _filter_slot(h, bits)
    if not (words[b >> np.uint64(6)] >> (b & np.uint64(63))) & np.uint64(1):
        return -1
    return _find_gram(tokens, p, L, h, sorted_hash, sorted_grams)


@njit(**NJIT)
def gram_groups(sorted_hash, sorted_grams):
    """For rows sorted by hash: the first row holding the same gram (so equal
    grams share one representative; distinct grams of one hash stay apart)."""
    m = sorted_hash.shape[0]
    L = sorted_grams.shape[1]
    rep = np.empty(m, np.int64)
    i = 0
    while i < m:
        j = i
        while j < m and sorted_hash[j] == sorted_hash[i]:
            j += 1
        for r in range(i, j):
            rep[r] = r
            for q in range(i, r):
                if rep[q] != q:
                    continue
                same = True
                for k in range(L):
                    if sorted_grams[q, k] != sorted_grams[r, k]:
                        same = False
                        break
                if same:
                    rep[r] = q
                    break
        i = j
    return rep


@njit(**NJIT)
def _credit(counts, last, o, a, b, shield):
    """Add to owner ``o`` the positions of [a, b) past its last covered end
    and outside ``shield`` (empty: nothing shielded)."""
    lo = max(a, last[o])
    if shield.shape[0] == 0:
        if b > lo:
            counts[o] += b - lo
    else:
        for q in range(lo, b):
            if shield[q] == 0:
                counts[o] += 1
    if b > last[o]:
        last[o] = b


@njit(**NJIT)
def _credit_class(counts, last, cls, a, b, class_ptr, class_owners, shield, out):
    for k in range(class_ptr[cls], class_ptr[cls + 1]):
        _credit(counts, last, class_owners[k], a, b, shield)
    if out.shape[0]:
        for q in range(a, b):
            out[q] = 1


@njit(**NJIT)
def count_cut(tokens, doc_offsets, L, sorted_hash, sorted_grams, words, bits, gram_class, class_ptr,
              class_owners, n_owners, shield, out):
    """Positions each owner's L-grams cover, each counted once per owner.

    Gram ``g`` (a row of ``sorted_grams``, hashes sorted) belongs to the
    owners of its class, ``class_owners[class_ptr[c]:class_ptr[c + 1]]`` with
    ``c = gram_class[g]``; class -1 is nobody's (a kept gram).  Positions with
    ``shield`` set are not counted.  One rolling-hash scan for all owners;
    consecutive matched windows of one class are one interval, credited to
    its owners once: O(n + runs x owners of their class).  ``out`` (empty:
    not wanted) gets a 1 at every position inside a matched window of a
    class: with one class, the cut mask.
    """
    counts = np.zeros(n_owners, np.int64)
    last = np.zeros(n_owners, np.int64)
    if sorted_hash.shape[0] == 0:
        return counts
    power = poly_power(L)
    for d in range(doc_offsets.shape[0] - 1):
        s = doc_offsets[d]
        e = doc_offsets[d + 1]
        if e - s < L:
            continue
        h = poly_hash(tokens, s, L)
        cur = -1
        run_a = s
        run_b = s
        for p in range(s, e - L + 1):
            if p > s:
                h = _roll(tokens, p, L, h, power)
            g = _gram_of(tokens, p, L, h, sorted_hash, sorted_grams, words, bits)
            if g < 0 or gram_class[g] < 0:
                continue
            c = gram_class[g]
            if c == cur and p <= run_b:
                run_b = p + L
                continue
            if cur >= 0:
                _credit_class(counts, last, cur, run_a, run_b, class_ptr, class_owners, shield, out)
            cur = c
            run_a = p
            run_b = p + L
        if cur >= 0:
            _credit_class(counts, last, cur, run_a, run_b, class_ptr, class_owners, shield, out)
    return counts


@njit(**NJIT)
def _longest_match(tokens, p, e, pats, a, b, w_max, pos, width):
    """The end of the longest run ``tokens[p:end]`` (``end <= e``) matching
    the pattern ``pats[a:b]`` (each SLOT 1..w_max tokens), or -1.
    Backtracking over the slot widths, O(w_max ** slots) at worst."""
    m = b - a
    for i in range(m + 1):
        width[i] = 0
    pos[0] = p
    i = 0
    best = -1
    while i >= 0:
        if i == m:
            if pos[m] > best:
                best = pos[m]
            i -= 1
            continue
        tok = pats[a + i]
        if tok == SLOT:
            w = width[i] + 1
            if w <= w_max and pos[i] + w <= e:
                width[i] = w
                pos[i + 1] = pos[i] + w
                i += 1
                continue
        elif width[i] == 0 and pos[i] < e and tokens[pos[i]] == tok:
            width[i] = 1
            pos[i + 1] = pos[i] + 1
            i += 1
            continue
        width[i] = 0
        i -= 1
    return best


@njit(**NJIT)
def template_runs(tokens, doc_offsets, pats, pat_off, firsts, order, w_max):
    """Every (start, end, pattern) where the template pattern
    ``pats[pat_off[j]:pat_off[j + 1]]`` occurs from ``start`` (in one
    document), ``end`` the end of its longest occurrence from there: all the
    occurrences from one start cover that one run.  By start.

    ``firsts`` holds the patterns' first tokens sorted, ``order`` the pattern
    of each; a position is tried against the patterns beginning with its
    token only.  O(n log k + candidates x w_max ** slots).
    """
    cap = 16
    starts = np.empty(cap, np.int64)
    ends = np.empty(cap, np.int64)
    which = np.empty(cap, np.int64)
    found = 0
    k = firsts.shape[0]
    if k == 0:
        return starts[:0], ends[:0], which[:0]
    longest = 0
    for j in range(pat_off.shape[0] - 1):
        longest = max(longest, pat_off[j + 1] - pat_off[j])
    pos = np.empty(longest + 1, np.int64)
    width = np.zeros(longest + 1, np.int64)
    for d in range(doc_offsets.shape[0] - 1):
        e = doc_offsets[d + 1]
        for p in range(doc_offsets[d], e):
            t = tokens[p]
            i = np.searchsorted(firsts, t)
            while i < k and firsts[i] == t:
                j = order[i]
                end = _longest_match(tokens, p, e, pats, pat_off[j], pat_off[j + 1], w_max, pos, width)
                if end > p:
                    if found == cap:
                        cap *= 2
                        starts = _grown(starts, cap)
                        ends = _grown(ends, cap)
                        which = _grown(which, cap)
                    starts[found] = p
                    ends[found] = end
                    which[found] = j
                    found += 1
                i += 1
    return starts[:found], ends[:found], which[:found]


@njit(**NJIT)
def _grown(a, cap):
    out = np.empty(cap, a.dtype)
    out[:a.shape[0]] = a
    return out


@njit(**NJIT)
def mark_runs(n, starts, ends):
    """1 for every position inside one of the runs [starts, ends) (by start)."""
    out = np.zeros(n, np.uint8)
    cover = 0
    for i in range(starts.shape[0]):
        a = max(starts[i], cover)
        for p in range(a, ends[i]):
            out[p] = 1
        if ends[i] > cover:
            cover = ends[i]
    return out


@njit(**NJIT)
def count_runs(starts, ends, owner, n_owners, shield):
    """Positions inside each owner's runs (by start), each counted once per
    owner, outside ``shield`` (empty: none)."""
    counts = np.zeros(n_owners, np.int64)
    last = np.zeros(n_owners, np.int64)
    for i in range(starts.shape[0]):
        _credit(counts, last, owner[i], starts[i], ends[i], shield)
    return counts
