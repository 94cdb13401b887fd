"""Excerpt kernels: the token windows the out-of-core growth can read.

See :mod:`engine.outofcore` for why the growth reads an excerpt of the token
array instead of the whole array, and for the proof that it reads nothing
outside it.  ``keep`` is the final start flags of a chunk (one byte per
token, after the L-gram filter); a *run* is a maximal stretch of kept
positions ``[u, v)`` inside one document ``[s, e)``, and its *window* is
``[max(u - 1, s), min(v + min_len, e))``.  Windows of one document that
overlap or touch are merged; the excerpt of a document is its windows in
order with one ``-1`` between two of them (the tokens between them are not
copied).  A document without a kept position has an empty excerpt.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NJIT

#: The token id written between two windows of one document.
GAP = -1


@njit(**NJIT)
def windows(keep, doc_offsets, d_begin, d_end, min_len, fill, tokens, ex_len, ex_nwin,
            ex_tokens, ex_doc, win_off, win_real, win_t, pos_base, doc_base):
    """The windows of documents ``[d_begin, d_end)`` of a chunk (its own
    ``keep``, ``tokens`` and ``doc_offsets`` from 0).

    ``fill`` false: write each document's excerpt length and number of
    windows into ``ex_len[doc_base + d]`` and ``ex_nwin[doc_base + d]``.
    ``fill`` true: copy the excerpt to ``ex_tokens[ex_doc[doc_base + d]:]``
    and each window's first position (``pos_base`` added: the corpus'
    position) and first excerpt index to ``win_real`` and ``win_t`` from
    ``win_off[doc_base + d]``.  O(tokens of the documents)."""
    for d in range(d_begin, d_end):
        s = doc_offsets[d]
        e = doc_offsets[d + 1]
        g = doc_base + d
        n_tok = 0
        n_win = 0
        t = 0
        w = 0
        if fill:
            t = ex_doc[g]
            w = win_off[g]
        ws = -1  # the open window [ws, we)
        we = -1
        p = s
        while p < e:
            if not keep[p]:
                p += 1
                continue
            u = p
            while p < e and keep[p]:
                p += 1
            a = u - 1 if u > s else s
            b = p + min_len if p + min_len < e else e
            if ws >= 0 and a <= we:
                we = b  # overlaps or touches the open window: one window
                continue
            if ws >= 0:
                # close the open window, then the gap
                if fill:
                    for q in range(ws, we):
                        ex_tokens[t] = tokens[q]
                        t += 1
                    ex_tokens[t] = GAP
                    t += 1
                n_tok += we - ws + 1
            if fill:
                win_real[w] = a + pos_base
                win_t[w] = t
                w += 1
            n_win += 1
            ws = a
            we = b
        if ws >= 0:
            if fill:
                for q in range(ws, we):
                    ex_tokens[t] = tokens[q]
                    t += 1
            n_tok += we - ws
        if not fill:
            ex_len[g] = n_tok
            ex_nwin[g] = n_win


@njit(**NJIT)
def translate(values, key_from, key_to, lo, hi):
    """``values[lo:hi]``, each a position inside a window, from one side of
    the window table to the other, in place: ``v - key_from[j] + key_to[j]``
    for the last window ``j`` with ``key_from[j] <= v`` (``key_from`` and
    ``key_to`` both increasing: the windows' first corpus positions and first
    excerpt indices, either way round).

    Each search starts from the previous value's window, galloping forward
    when the values increase (sorted values cost O(values + windows)) and by
    bisection otherwise."""
    n = key_from.shape[0]
    j = 0
    prev = -1
    for i in range(lo, hi):
        v = values[i]
        a = 0
        b = n
        if v >= prev:  # gallop forward from j, then bisect in (k, min(k + step, n))
            step = 1
            k = j
            while k + step < n and key_from[k + step] <= v:
                k += step
                step *= 2
            a = k
            b = k + step if k + step < n else n
        while b - a > 1:
            mid = (a + b) // 2
            if key_from[mid] <= v:
                a = mid
            else:
                b = mid
        j = a
        prev = v
        values[i] = v - key_from[j] + key_to[j]
