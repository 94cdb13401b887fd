"""Kernels of the template miner (:mod:`engine.templates`): the growth of
one seed (:func:`grow_seed`, a driver over named steps: the node stack, the
closed chains, a family of children made, kept, grouped by key and pushed,
a maximal node reported) and the maximality check of one candidate on its
own occurrences."""
from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NJIT
from .hashing import FNV_OFFSET, FNV_PRIME, mix64

SLOT = -1


@njit(**NJIT)
def agram_hashes(tokens, pos, a):
    """A 64-bit hash of the a tokens from each position (FNV-style over the
    ids, then mixed); equal a-grams hash equal."""
    out = np.empty(pos.shape[0], np.uint64)
    for i in range(pos.shape[0]):
        h = FNV_OFFSET
        for k in range(a):
            h = (h ^ np.uint64(tokens[pos[i] + k])) * FNV_PRIME
        out[i] = mix64(h)
    return out


@njit(**NJIT)
def split_on_bit(keys, values, bit):
    """The (key, value) pairs whose key's bit ``bit`` (63: the top one) is 0,
    then those where it is 1, each in their order: ``keys0, values0, keys1,
    values1``.  One pass (numpy's boolean compress costs four)."""
    n = keys.shape[0]
    sh = np.uint64(bit)
    one = np.uint64(1)
    n1 = 0
    for j in range(n):
        n1 += np.int64((keys[j] >> sh) & one)
    k0 = np.empty(n - n1, np.uint64)
    v0 = np.empty(n - n1, np.int64)
    k1 = np.empty(n1, np.uint64)
    v1 = np.empty(n1, np.int64)
    a = 0
    b = 0
    for j in range(n):
        if (keys[j] >> sh) & one:
            k1[b] = keys[j]
            v1[b] = values[j]
            b += 1
        else:
            k0[a] = keys[j]
            v0[a] = values[j]
            a += 1
    return k0, v0, k1, v1


@njit(**NJIT)
def radix_sort_pairs(keys, values):
    """``keys`` (uint64) sorted, and ``values`` (int64) in the same order; equal
    keys keep their order (stable); both inputs are overwritten (they are
    one of the two buffers).  An LSD radix sort: eight passes of
    8-bit digits (256 write streams stay in the cache), each a count and a
    stable scatter of the (key, value) pairs; a pass whose digit is the same
    everywhere is skipped.  O(n), against numpy's O(n log n) merge sort for
    64-bit keys, and no gather afterwards."""
    n = keys.shape[0]
    k0 = keys
    v0 = values
    k1 = np.empty(n, np.uint64)
    v1 = np.empty(n, np.int64)
    count = np.empty(257, np.int64)
    for shift in range(0, 64, 8):
        sh = np.uint64(shift)
        count[:] = 0
        for j in range(n):
            count[np.int64((k0[j] >> sh) & np.uint64(0xFF)) + 1] += 1
        if count.max() == n:
            continue  # one digit value: this pass keeps the order
        for d in range(256):
            count[d + 1] += count[d]
        for j in range(n):
            d = np.int64((k0[j] >> sh) & np.uint64(0xFF))
            q = count[d]
            count[d] = q + 1
            k1[q] = k0[j]
            v1[q] = v0[j]
        k0, k1 = k1, k0
        v0, v1 = v1, v0
    return k0, v0


@njit(**NJIT)
def seed_groups(tokens, doc_of, pos, hashes, a, sigma):
    """The runs of equal hashes (``hashes`` sorted, ``pos`` sorted within a
    run) with df >= sigma: ``lo, hi, exact``.  ``exact`` is False when the
    a-grams of a run differ (a 64-bit collision: the caller splits it by
    the tokens themselves)."""
    n = pos.shape[0]
    lo_out = np.empty(16, np.int64)
    hi_out = np.empty(16, np.int64)
    exact = np.empty(16, np.bool_)
    m = 0
    lo = 0
    while lo < n:
        hi = lo + 1
        distinct = 1
        while hi < n and hashes[hi] == hashes[lo]:
            if doc_of[pos[hi]] != doc_of[pos[hi - 1]]:
                distinct += 1
            hi += 1
        if hi - lo >= sigma and distinct >= sigma:
            same = True
            for i in range(lo + 1, hi):
                for k in range(a):
                    if tokens[pos[i] + k] != tokens[pos[lo] + k]:
                        same = False
                        break
                if not same:
                    break
            if m == lo_out.shape[0]:
                lo_out = _fit(lo_out, m + 1)
                hi_out = _fit(hi_out, m + 1)
                exact = _fit(exact, m + 1)
            lo_out[m] = lo
            hi_out[m] = hi
            exact[m] = same
            m += 1
        lo = hi
    return lo_out[:m], hi_out[:m], exact[:m]


@njit(**NJIT)
def matchings(tokens, pattern, starts, ends, w_max, limit):
    """Every way each occurrence ``tokens[starts[o]:ends[o]]`` matches the
    pattern (``SLOT`` = a slot of 1..w_max tokens).

    Returns ``occ, slot, fstart, fwidth, complete``: one row per slot per
    matching (the occurrence, the slot's rank in the pattern, its filler's
    start and width); ``complete`` is False when the rows would pass
    ``limit`` (> 0) and the enumeration stopped.  Backtracking over the slot
    widths; O(matchings x pattern length).
    """
    m = pattern.shape[0]
    n_slots = 0
    for i in range(m):
        if pattern[i] == SLOT:
            n_slots += 1
    cap = 16 * max(1, n_slots) * max(1, starts.shape[0])
    occ = np.empty(cap, np.int64)
    slot = np.empty(cap, np.int64)
    fstart = np.empty(cap, np.int64)
    fwidth = np.empty(cap, np.int64)
    n = 0
    pos = np.empty(m + 1, np.int64)
    width = np.zeros(m, np.int64)
    for o in range(starts.shape[0]):
        e = ends[o]
        pos[0] = starts[o]
        i = 0
        while i >= 0:
            if i == m:
                if pos[m] == e:
                    if limit > 0 and n + n_slots > limit:
                        return occ[:n], slot[:n], fstart[:n], fwidth[:n], False
                    if n + n_slots > cap:
                        cap *= 2
                        occ2 = np.empty(cap, np.int64)
                        slot2 = np.empty(cap, np.int64)
                        fs2 = np.empty(cap, np.int64)
                        fw2 = np.empty(cap, np.int64)
                        occ2[:n] = occ[:n]
                        slot2[:n] = slot[:n]
                        fs2[:n] = fstart[:n]
                        fw2[:n] = fwidth[:n]
                        occ, slot, fstart, fwidth = occ2, slot2, fs2, fw2
                    j = 0
                    for k in range(m):
                        if pattern[k] == SLOT:
                            occ[n] = o
                            slot[n] = j
                            fstart[n] = pos[k]
                            fwidth[n] = pos[k + 1] - pos[k]
                            n += 1
                            j += 1
                i -= 1
                continue
            if pattern[i] == SLOT:
                w = width[i] + 1
                if w <= w_max and pos[i] + w <= e:
                    width[i] = w
                    pos[i + 1] = pos[i] + w
                    i += 1
                else:
                    width[i] = 0
                    i -= 1
            else:
                if width[i] == 0 and pos[i] < e and tokens[pos[i]] == pattern[i]:
                    width[i] = 1
                    pos[i + 1] = pos[i] + 1
                    i += 1
                else:
                    width[i] = 0
                    i -= 1
    return occ[:n], slot[:n], fstart[:n], fwidth[:n], True


@njit(**NJIT)
def _reaches(keys, docs, n, df, key_docs, key_last):
    """True when one of ``keys[:n]`` comes with df distinct documents.

    ``docs[:n]`` must come grouped (a document's entries together, as they
    are for occurrences sorted by start); ``key_docs`` (zeros) and
    ``key_last`` (-1) are the caller's scratch, one entry per token id, and
    are left as they came.  O(n), no sort.
    """
    hit = False
    for j in range(n):
        k = keys[j]
        if key_last[k] != docs[j]:
            key_last[k] = docs[j]
            key_docs[k] += 1
            if key_docs[k] >= df:
                hit = True
    for j in range(n):
        key_docs[keys[j]] = 0
        key_last[keys[j]] = -1
    return hit


LEFT_TOKEN, LEFT_SLOT, RIGHT_TOKEN, RIGHT_SLOT = 1, 2, 4, 8  #: extension families (bits)


@njit(**NJIT)
def _maximal_core(tokens, doc_of, doc_offsets, starts, ends, fstart, fwidth, lo, n, stride, n_slots, df,
                  w_max, max_slots, known, key_docs, key_last):
    """1 when the embeddings ``lo .. lo + n - 1`` of a candidate with df
    documents show it maximal, else 0.

    An embedding is one way an occurrence matches: ``starts[i], ends[i]``
    and, for its slot j (in pattern order), the filler
    ``fstart[i * stride + j]``, ``fwidth[i * stride + j]``.  The embeddings
    are every matching of every occurrence, grouped by document.  ``known``
    (bits ``LEFT_TOKEN`` ...) names the extension families already counted
    by the caller and found below df.  Every test counts distinct documents
    per token id (:func:`_reaches`); nothing is sorted:

    * a token right before (after) the occurrences, or, while the pattern
      has fewer than ``max_slots`` slots, a token 2 to W + 1 positions
      before (after) them (a slot and that token), in df documents;
    * a slot made constant or narrowed: some filler of that slot begins (or
      ends) with the same tokens f in every document.  When f does, so does
      its first (last) token, and a filler made constant is such an f, so
      counting the first and the last token of each slot's fillers decides.
    """
    w_hi = w_max if n_slots < max_slots else 0
    keys = np.empty(max(1, n * max(1, w_hi)), np.int64)
    docs = np.empty(keys.shape[0], np.int64)
    for side in range(2):
        for slotted in range(2 if w_hi > 0 else 1):
            bit = (RIGHT_TOKEN if side else LEFT_TOKEN) * (2 if slotted else 1)
            if known & bit:
                continue
            w_lo = 1 if slotted else 0
            w_top = w_hi if slotted else 0
            m = 0
            for o in range(lo, lo + n):
                st = starts[o]
                for w in range(w_lo, w_top + 1):
                    if side == 0:
                        q = st - 1 - w
                        if q < doc_offsets[doc_of[st]]:
                            break
                    else:
                        q = ends[o] + w
                        if q >= doc_offsets[doc_of[st] + 1]:
                            break
                    keys[m] = tokens[q]
                    docs[m] = doc_of[st]
                    m += 1
            if _reaches(keys, docs, m, df, key_docs, key_last):
                return 0
    for j in range(n_slots):
        for side in range(2):
            for i in range(n):
                r = (lo + i) * stride + j
                keys[i] = tokens[fstart[r]] if side == 0 else tokens[fstart[r] + fwidth[r] - 1]
                docs[i] = doc_of[starts[lo + i]]
            if _reaches(keys, docs, n, df, key_docs, key_last):
                return 0
    return 1


@njit(**NJIT)
def maximal_check(tokens, doc_of, doc_offsets, pattern, starts, ends, df, w_max, max_slots,
                  key_docs, key_last):
    """1 when the pattern, whose occurrences (sorted by start) are ``starts,
    ends``, is maximal (:mod:`engine.templates`), else 0: its embeddings
    enumerated by :func:`matchings`, then :func:`_maximal_core` with no
    family known.  ``key_docs`` (zeros) and ``key_last`` (-1), one entry per
    token id, are scratch, left as they came."""
    n_slots = 0
    for i in range(pattern.shape[0]):
        if pattern[i] == SLOT:
            n_slots += 1
    if n_slots == 0:
        none = np.zeros(1, np.int64)
        return _maximal_core(tokens, doc_of, doc_offsets, starts, ends, none, none, 0, starts.shape[0], 0,
                             0, df, w_max, max_slots, 0, key_docs, key_last)
    occ, slot, fstart, fwidth, _ = matchings(tokens, pattern, starts, ends, w_max, 0)
    n = occ.shape[0] // n_slots
    es = np.empty(n, np.int64)
    ee = np.empty(n, np.int64)
    for i in range(n):
        es[i] = starts[occ[i * n_slots]]
        ee[i] = ends[occ[i * n_slots]]
    return _maximal_core(tokens, doc_of, doc_offsets, es, ee, fstart, fwidth, 0, n, n_slots, n_slots, df,
                         w_max, max_slots, 0, key_docs, key_last)


@njit(**NJIT)
def _fit(arr, need):
    """``arr`` or a copy at least twice as large holding its content."""
    if need <= arr.shape[0]:
        return arr
    out = np.empty(max(need, 2 * arr.shape[0]), arr.dtype)
    out[:arr.shape[0]] = arr
    return out


@njit(**NJIT)
def _bits(x):
    """Bits needed for 0 <= x."""
    b = 0
    while x > 0:
        b += 1
        x >>= 1
    return b


@njit(**NJIT)
def _ceil_div(a, b):
    return -((-a) // b)


@njit(**NJIT)
def _narrowable_everywhere(tokens, fstart, fwidth, lo, n, stride, n_slots):
    """True when, for some slot, the fillers of all the embeddings
    ``lo .. lo + n - 1`` begin (or all end) with one token."""
    for j in range(n_slots):
        r0 = lo * stride + j
        first = tokens[fstart[r0]]
        last = tokens[fstart[r0] + fwidth[r0] - 1]
        same_first = True
        same_last = True
        for i in range(lo + 1, lo + n):
            r = i * stride + j
            if same_first and tokens[fstart[r]] != first:
                same_first = False
            if same_last and tokens[fstart[r] + fwidth[r] - 1] != last:
                same_last = False
            if not (same_first or same_last):
                break
        if same_first or same_last:
            return True
    return False


@njit(**NJIT)
def _preceded_alike(tokens, doc_of, doc_offsets, spool, lo, n):
    """Whether one token precedes every embedding ``spool[lo:lo + n]`` (inside its document)."""
    s0 = spool[lo]
    for i in range(lo, lo + n):
        si = spool[i]
        if si - 1 < doc_offsets[doc_of[si]] or tokens[si - 1] != tokens[s0 - 1]:
            return False
    return True


@njit(**NJIT)
def _followed_alike(tokens, doc_of, doc_offsets, spool, epool, lo, n):
    """Whether one token follows every embedding (``epool[lo:lo + n]`` their ends)."""
    e0 = epool[lo]
    for i in range(lo, lo + n):
        ei = epool[i]
        if ei >= doc_offsets[doc_of[spool[i]] + 1] or tokens[ei] != tokens[e0]:
            return False
    return True


@njit(**NJIT)
def _by_start_end(starts, ends, lo, n):
    """Indices ``lo .. lo + n - 1`` sorted by (start, end)."""
    ms = 0
    mw = 0
    for i in range(lo, lo + n):
        if starts[i] > ms:
            ms = starts[i]
        if ends[i] - starts[i] > mw:
            mw = ends[i] - starts[i]
    bw = _bits(mw)
    if _bits(ms) + bw <= 63:
        packed = np.empty(n, np.int64)
        for i in range(n):
            packed[i] = (starts[lo + i] << bw) | (ends[lo + i] - starts[lo + i])
        return lo + np.argsort(packed)
    o = np.argsort(ends[lo:lo + n], kind="mergesort")
    return lo + o[np.argsort(starts[lo:lo + n][o], kind="mergesort")]


@njit(**NJIT)
def _fit_rows(arr, need):
    """``arr`` (2-D) or a copy with at least twice as many rows holding its content."""
    if need <= arr.shape[0]:
        return arr
    out = np.empty((max(need, 2 * arr.shape[0]), arr.shape[1]), arr.dtype)
    out[:arr.shape[0]] = arr
    return out


# The node stack of :func:`grow_seed`: one row (int64) per node, these columns.
(NODE_PAT_OFF,   # its pattern: ppool[pat_off:pat_off + pat_len]
 NODE_PAT_LEN,
 NODE_OCC_OFF,   # its embeddings: rows occ_off .. occ_off + occ_len - 1 of the embedding pools
 NODE_OCC_LEN,
 NODE_DF,        # distinct documents
 NODE_CONSTS,    # constant tokens of the pattern (the rest are slots)
 NODE_PHASE,     # 0: right growth, 1: left growth
 NODE_FIRST,     # left phase: length of a first left segment, else 0
 NODE_ADF,       # right phase: the anchor's df once closed, else -1
 NODE_THR,       # left phase: threshold
 NODE_FIELDS) = range(11)

# The table of reported templates of :func:`grow_seed`: row i holds where
# template i's pattern, occurrences and filler rows begin in the outputs, and
# its df; the row after the last holds the ends.
TAB_PAT, TAB_OCC, TAB_FILL, TAB_DF, TAB_FIELDS = range(5)


@njit(**NJIT)
def _push_node(nodes, top, pat_off, pat_len, occ_off, occ_len, df, consts, phase, first, adf, thr):
    """Push a node: ``nodes`` (rows ``0 .. top - 1`` in use; regrown when
    full) with the node written in row ``top``.  O(1) amortised."""
    nodes = _fit_rows(nodes, top + 1)
    nodes[top, NODE_PAT_OFF] = pat_off
    nodes[top, NODE_PAT_LEN] = pat_len
    nodes[top, NODE_OCC_OFF] = occ_off
    nodes[top, NODE_OCC_LEN] = occ_len
    nodes[top, NODE_DF] = df
    nodes[top, NODE_CONSTS] = consts
    nodes[top, NODE_PHASE] = phase
    nodes[top, NODE_FIRST] = first
    nodes[top, NODE_ADF] = adf
    nodes[top, NODE_THR] = thr
    return nodes


@njit(**NJIT)
def _left_chain(tokens, doc_of, doc_offsets, ppool, spool, po, pl, oo, ol, consts, first, a, work):
    """The closed chain to the left of a left node whose embeddings are all
    preceded by one token: its only child prepends that token, with the same
    embeddings and df, and is passed in place (the pattern shifted, the
    starts moved back), while the left segment stays shorter than A and the
    node stays closed.

    Returns ``ppool, pl, consts, first, work, closed`` (``closed``: still
    closed, so the chain reached A tokens and nothing below is a template).
    O(embeddings + pattern length) per token prepended, charged to ``work``.
    """
    closed = True
    while closed and first + 1 < a:
        ppool = _fit(ppool, po + pl + 1)
        ppool[po + 1:po + pl + 1] = ppool[po:po + pl].copy()
        ppool[po] = tokens[spool[oo] - 1]
        pl += 1
        consts += 1
        first += 1
        for i in range(oo, oo + ol):
            spool[i] -= 1
        work += ol + pl  # one pass over the embeddings, the pattern shifted
        closed = _preceded_alike(tokens, doc_of, doc_offsets, spool, oo, ol)
    return ppool, pl, consts, first, work, closed


@njit(**NJIT)
def _right_chain(tokens, doc_of, doc_offsets, ppool, spool, epool, po, pl, oo, ol, consts, work, max_work):
    """The closed chain to the right of a right node whose embeddings are
    all followed by one token: its only child appends that token, with the
    same embeddings and df, and is never visited; the node takes its place
    (in place: the pools above it are free), until the chain opens or the
    work passes ``max_work`` (> 0).

    Returns ``ppool, pl, consts, work``.  O(embeddings) per token appended,
    charged to ``work``.
    """
    closed = True
    while closed:
        ppool = _fit(ppool, po + pl + 1)
        ppool[po + pl] = tokens[epool[oo]]
        pl += 1
        consts += 1
        for i in range(oo, oo + ol):
            epool[i] += 1
        work += ol + 1  # one pass over the embeddings, one token appended
        closed = _followed_alike(tokens, doc_of, doc_offsets, spool, epool, oo, ol)
        if max_work > 0 and work > max_work:
            break
    return ppool, pl, consts, work


@njit(**NJIT)
def _family(kind, phase, first, a, n_sl, max_slots, sigma, thr, thr_here, adf):
    """Whether a node grows the family of children ``kind`` (0: ``x * P``,
    1: ``x P``, 2: ``P x``, 3: ``P * x``), and its threshold: ``t, bit``
    (``t`` = -1: not grown; ``bit`` the family's extension bit for
    :func:`_maximal_core`).  O(1)."""
    if phase == 1 and kind >= 2:
        return -1, 0  # a left node grows to the left only
    if (kind == 0 or kind == 3) and n_sl >= max_slots:
        return -1, 0
    if kind == 1 and not (phase == 1 and first > 0 and first + 1 < a):
        return -1, 0
    if kind == 0:
        return (thr if phase == 1 else thr_here), LEFT_SLOT
    if kind == 1:
        return thr, LEFT_TOKEN
    if kind == 2:
        return (sigma if adf < 0 else thr_here), RIGHT_TOKEN
    return thr_here, RIGHT_SLOT


@njit(**NJIT)
def _candidates(tokens, doc_of, doc_offsets, spool, epool, oo, ol, kind, w_max, ck, cfw, cd, csrc, key_docs,
                key_last):
    """The candidate children of one family of a node (embeddings ``oo ..
    oo + ol - 1``): for each embedding and slot width w (1..W for the slot
    kinds, else none), the key (the token added: before the start or after
    the end, past a slot of w tokens for the slot kinds) inside the
    embedding's document, with w, the document and the embedding (from the
    node's first).  The distinct documents of each key are counted on the
    way in ``key_docs`` / ``key_last`` (the embeddings come grouped by
    document); the caller resets them (:func:`_kept`).

    Returns ``ck, cfw, cd, csrc, n`` (the buffers, regrown, and the number of
    candidates).  O(embeddings x W).
    """
    slot_kind = kind == 0 or kind == 3
    width_hi = w_max if slot_kind else 1
    need = ol * width_hi
    ck = _fit(ck, need)
    cfw = _fit(cfw, need)
    csrc = _fit(csrc, need)
    cd = _fit(cd, need)
    n = 0
    for i in range(ol):
        si, ei = spool[oo + i], epool[oo + i]
        d_si = doc_of[si]
        d_lo, d_hi = doc_offsets[d_si], doc_offsets[d_si + 1]
        for w in range(1, width_hi + 1):
            # the key's position: before the start or after the end,
            # past a slot of w tokens for the slot kinds
            gap = w if slot_kind else 0
            if kind <= 1:
                q = si - 1 - gap
                if q < d_lo:
                    break
            else:
                q = ei + gap
                if q >= d_hi:
                    break
            cfw[n] = w
            kk = tokens[q]
            ck[n] = kk
            cd[n] = d_si
            csrc[n] = i
            n += 1
            # distinct documents per key (the embeddings come grouped by document)
            if key_last[kk] != d_si:
                key_last[kk] = d_si
                key_docs[kk] += 1
    return ck, cfw, cd, csrc, n


@njit(**NJIT)
def _new_slot_ends(tokens, spool, epool, oo, ck, cfw, csrc, n, kind, t, key_docs, key_ff, key_lf):
    """For a slot kind (0 or 3): the first and the last token of the new
    slot's fillers of each key at the threshold ``t``, in ``key_ff`` /
    ``key_lf`` (-2 once they differ).  When a key's fillers all begin (or
    all end) with one token, so do they in every extension, where the slot
    can be narrowed, and nothing grown from that child is maximal; found
    here in one pass, before any sort.  O(candidates)."""
    for j in range(n):
        kk = ck[j]
        if key_docs[kk] < t:
            continue
        if kind == 0:
            f0 = spool[oo + csrc[j]] - cfw[j]
        else:
            f0 = epool[oo + csrc[j]]
        f = tokens[f0]
        g = tokens[f0 + cfw[j] - 1]
        if key_ff[kk] == -1:
            key_ff[kk] = f
            key_lf[kk] = g
        else:
            if key_ff[kk] != f:
                key_ff[kk] = -2
            if key_lf[kk] != g:
                key_lf[kk] = -2


@njit(**NJIT)
def _kept(ck, n, slot_kind, t, df, key_docs, key_last, key_ff, key_lf):
    """The candidates kept: those whose key reaches the threshold ``t`` in
    distinct documents (and, for a slot kind, whose new slot cannot be
    narrowed: :func:`_new_slot_ends`), in their order; and whether some key
    at the threshold keeps the node's df (a child, made or narrowable, with
    df documents: the node is then not reported).  Resets the scratch of the
    candidates' keys.  Returns ``kept, keeps_df``.  O(candidates)."""
    kept = np.empty(n, np.int64)
    n_kept = 0
    keeps_df = False
    for j in range(n):
        kk = ck[j]
        if key_docs[kk] >= t:
            if key_docs[kk] == df:
                keeps_df = True  # a child (made or narrowable) keeps the df
            if slot_kind and (key_ff[kk] != -2 or key_lf[kk] != -2):
                continue
            kept[n_kept] = j
            n_kept += 1
    for j in range(n):
        kk = ck[j]
        key_docs[kk] = 0
        key_last[kk] = -1
        key_ff[kk] = -1
        key_lf[kk] = -1
    return kept[:n_kept], keeps_df


@njit(**NJIT)
def _by_key(ck, kept, key_last):
    """The kept candidates grouped by key, in the order of generation within
    a key (a stable bucket sort: the candidates come grouped by document,
    and so does each key's share of them); the keys in the order they first
    appear.  ``key_last`` (-1) is scratch, left as it came.  O(kept)."""
    n_kept = kept.shape[0]
    gkey = np.empty(n_kept, np.int64)
    gnext = np.zeros(n_kept + 1, np.int64)
    n_groups = 0
    for i in range(n_kept):
        kk = ck[kept[i]]
        if key_last[kk] < 0:
            key_last[kk] = n_groups
            gkey[n_groups] = kk
            n_groups += 1
        gnext[key_last[kk] + 1] += 1
    for g in range(n_groups):
        gnext[g + 1] += gnext[g]
    order = np.empty(n_kept, np.int64)
    for i in range(n_kept):
        g = key_last[ck[kept[i]]]
        order[gnext[g]] = kept[i]
        gnext[g] += 1
    for g in range(n_groups):
        key_last[gkey[g]] = -1
    return order


@njit(**NJIT)
def _key_run(ck, cd, order, lo):
    """The candidates ``order[lo:hi]`` of one key (one child) and their
    distinct documents: ``hi, distinct``.  O(hi - lo)."""
    key = ck[order[lo]]
    hi = lo
    distinct = 0
    while hi < order.shape[0] and ck[order[hi]] == key:
        if hi == lo or cd[order[hi]] != cd[order[hi - 1]]:
            distinct += 1
        hi += 1
    return hi, distinct


@njit(**NJIT)
def _child_pattern(ppool, po, pl, ptop, kind, key):
    """A child's pattern written at ``ptop``: the node's (``ppool[po:po +
    pl]``) with the key added as ``kind`` says (a slot and the key for the
    slot kinds).  Returns ``ppool`` (regrown).  O(pattern length)."""
    extra = 2 if kind == 0 or kind == 3 else 1
    ppool = _fit(ppool, ptop + pl + extra)
    if kind == 0:
        ppool[ptop] = key
        ppool[ptop + 1] = SLOT
        ppool[ptop + 2:ptop + 2 + pl] = ppool[po:po + pl]
    elif kind == 1:
        ppool[ptop] = key
        ppool[ptop + 1:ptop + 1 + pl] = ppool[po:po + pl]
    elif kind == 2:
        ppool[ptop:ptop + pl] = ppool[po:po + pl]
        ppool[ptop + pl] = key
    else:
        ppool[ptop:ptop + pl] = ppool[po:po + pl]
        ppool[ptop + pl] = SLOT
        ppool[ptop + pl + 1] = key
    return ppool


@njit(**NJIT)
def _child_embeddings(spool, epool, fspool, fwpool, oo, otop, order, lo, hi, csrc, cfw, kind, n_sl, ms):
    """A child's embeddings written at row ``otop``: each of the candidates
    ``order[lo:hi]`` is its source embedding (row ``oo`` + its ``csrc``)
    extended by the key (and a slot of its width for the slot kinds, whose
    filler is added: first for kind 0, last for kind 3).  Returns ``spool,
    epool, fspool, fwpool`` (regrown).  O((hi - lo) x slots)."""
    m = hi - lo
    spool = _fit(spool, otop + m)
    epool = _fit(epool, otop + m)
    fspool = _fit(fspool, (otop + m) * ms)
    fwpool = _fit(fwpool, (otop + m) * ms)
    slot_kind = kind == 0 or kind == 3
    shift = 1 if kind == 0 else 0
    for jj in range(m):
        r = order[lo + jj]
        row = otop + jj
        e_src = oo + csrc[r]
        wr = cfw[r]
        gap = wr if slot_kind else 0
        if kind <= 1:
            spool[row] = spool[e_src] - 1 - gap
            epool[row] = epool[e_src]
        else:
            spool[row] = spool[e_src]
            epool[row] = epool[e_src] + gap + 1
        src = e_src * ms
        dst = row * ms
        for c in range(n_sl):
            fspool[dst + shift + c] = fspool[src + c]
            fwpool[dst + shift + c] = fwpool[src + c]
        if kind == 0:
            fspool[dst] = spool[e_src] - wr
            fwpool[dst] = wr
        elif kind == 3:
            fspool[dst + n_sl] = epool[e_src]
            fwpool[dst + n_sl] = wr
    return spool, epool, fspool, fwpool


@njit(**NJIT)
def _push_child(nodes, top, pat_off, pat_len, occ_off, occ_len, child_df, consts, kind, first, adf, df, t):
    """Push a child of family ``kind`` grown at threshold ``t`` from a node
    (its ``first``, ``adf``, ``df``): a left child (kinds 0, 1) continues
    the left growth at ``t`` (its first left segment: 1 token after
    ``x *``, one more after ``x``); a right child (2, 3) the right growth,
    keeping the anchor's df, which its first slot (kind 3) fixes to the
    node's df.  O(1) amortised (:func:`_push_node`)."""
    if kind <= 1:
        return _push_node(nodes, top, pat_off, pat_len, occ_off, occ_len, child_df, consts, 1,
                          1 if kind == 0 else first + 1, -1, t)
    if kind == 2:
        return _push_node(nodes, top, pat_off, pat_len, occ_off, occ_len, child_df, consts, 0, 0, adf, 0)
    return _push_node(nodes, top, pat_off, pat_len, occ_off, occ_len, child_df, consts, 0, 0,
                      adf if adf >= 0 else df, 0)


@njit(**NJIT)
def _report(ppool, spool, epool, fspool, fwpool, po, pl, oo, ol, n_sl, ms, df, n_out, o_pat, o_s, o_e, o_fs,
            o_fw, o_tab):
    """Report a maximal node as template ``n_out``: its pattern, its distinct
    occurrences sorted by (start, end), the fillers of its embeddings (one
    row per embedding and slot) and its df, appended to the outputs.
    Returns ``o_pat, o_s, o_e, o_fs, o_fw, o_tab`` (regrown).
    O(embeddings x (slots + log embeddings))."""
    o_tab = _fit_rows(o_tab, n_out + 2)
    p = o_tab[n_out, TAB_PAT]
    o_pat = _fit(o_pat, p + pl)
    o_pat[p:p + pl] = ppool[po:po + pl]
    # distinct occurrences, sorted by (start, end)
    m0 = o_tab[n_out, TAB_OCC]
    o_s = _fit(o_s, m0 + ol)
    o_e = _fit(o_e, m0 + ol)
    by = _by_start_end(spool, epool, oo, ol)
    m = m0
    for i in by:
        if m > m0 and o_s[m - 1] == spool[i] and o_e[m - 1] == epool[i]:
            continue
        o_s[m] = spool[i]
        o_e[m] = epool[i]
        m += 1
    f = o_tab[n_out, TAB_FILL]
    o_fs = _fit(o_fs, f + ol * n_sl)
    o_fw = _fit(o_fw, f + ol * n_sl)
    for i in range(oo, oo + ol):
        for c in range(n_sl):
            o_fs[f] = fspool[i * ms + c]
            o_fw[f] = fwpool[i * ms + c]
            f += 1
    o_tab[n_out, TAB_DF] = df
    o_tab[n_out + 1, TAB_PAT] = p + pl
    o_tab[n_out + 1, TAB_OCC] = m
    o_tab[n_out + 1, TAB_FILL] = f
    return o_pat, o_s, o_e, o_fs, o_fw, o_tab


@njit(**NJIT)
def grow_seed(tokens, doc_of, doc_offsets, seed, a, sigma, min_len, w_max, max_slots, cohesion, max_work,
              key_docs, key_last, key_ff, key_lf):
    """Every maximal template whose anchor starts with the seed (an A-gram,
    ``seed`` its sorted start positions): right growth, left growth from
    each right node, the maximality check of each candidate
    (:mod:`engine.templates`, steps 2-4), depth first with an explicit stack.

    A node holds its *embeddings*: every way each of its occurrences
    matches, as (start, end) and the filler (start, width) of each slot.  A
    child's embeddings are its parent's extended by one step, so the
    fillers are never searched for again: the maximality check reads them,
    and a node whose fillers of one slot all begin (or all end) with one
    token is dropped with its subtree (so do they in every extension, where
    that slot can be narrowed: nothing below it is maximal).

    Embeddings, fillers and patterns live in pools used as stacks: the
    children of a node are written above it and a popped node drops
    whatever its later siblings left; the nodes themselves are rows of a
    table (``NODE_*`` columns).  A popped node goes through these steps:

    1. dropped when a slot is narrowable everywhere
       (:func:`_narrowable_everywhere`);
    2. its closed chains passed in place (:func:`_left_chain`,
       :func:`_right_chain`; :mod:`engine.templates`);
    3. for each family of children it grows (:func:`_family`): the
       candidates, with the distinct documents of each key
       (:func:`_candidates`), those of the keys at the threshold kept
       (:func:`_new_slot_ends`, :func:`_kept`) and grouped by key, in the
       order they were made (:func:`_by_key`: so grouped by document, which
       is all the counts need; a template's occurrences are sorted when it
       is reported); each key is a child pushed (:func:`_key_run`,
       :func:`_child_pattern`, :func:`_child_embeddings`,
       :func:`_push_child`);
    4. visited when it has a slot and L constants, unless a child keeps
       its df: checked (:func:`_maximal_core`, told the families counted
       in step 3) and reported when maximal (:func:`_report`).

    ``max_work`` (> 0) bounds the work (embeddings x (W + 1) plus pattern
    length, summed over the nodes, and for each token a closed chain adds,
    the embeddings plus one on the right, plus the pattern's length on the
    left, where it shifts): past it the growth stops, ``truncated``.

    ``key_docs`` (zeros), ``key_last``, ``key_ff`` and ``key_lf`` (-1), one
    entry per token id, are the caller's scratch (one set per thread), left
    as they came (``key_ff``/``key_lf``: the first and last filler token of
    a key's new slot, -2 once they differ): before
    the sort of a family of children, the distinct documents of each key
    are counted in them (the candidates come grouped by document), and only
    the candidates of keys that reach the threshold are sorted.  Most keys
    never do, so a node costs O(embeddings x W) plus a sort of the few
    children kept.  The counts also tell the maximality check which
    extensions it need not count again.

    Returns ``pat, pat_off, dfs, occ_s, occ_e, occ_off, fill_s, fill_w,
    fill_off, nodes, truncated``: the maximal templates' patterns (``SLOT``
    for a slot), df, distinct occurrences, the fillers of their embeddings
    (one row per embedding and slot, in pattern order), the nodes visited
    and whether the work bound stopped the growth.
    """
    ms = max(1, max_slots)  # filler columns per embedding
    nodes = np.empty((64, NODE_FIELDS), np.int64)
    # pools: patterns, then the embeddings' starts, ends and fillers (ms columns)
    ppool = np.empty(1024, np.int64)
    k = seed.shape[0]
    pos_t = seed.dtype  # positions in the seed's width (int32 when they fit)
    spool = np.empty(4 * k + 64, pos_t)
    epool = np.empty(4 * k + 64, pos_t)
    fspool = np.empty((4 * k + 64) * ms, pos_t)
    fwpool = np.empty((4 * k + 64) * ms, np.int8)
    # outputs
    o_pat = np.empty(256, np.int64)
    o_s = np.empty(256, np.int64)
    o_e = np.empty(256, np.int64)
    o_fs = np.empty(256, np.int64)
    o_fw = np.empty(256, np.int64)
    o_tab = np.zeros((17, TAB_FIELDS), np.int64)
    n_out = 0
    # candidate buffers of one family of children
    ck = np.empty(16, tokens.dtype)
    cfw = np.empty(16, np.int8)  # the candidate's slot width (its other
    # coordinates follow from its source embedding, the kind and the width)
    cd = np.empty(16, np.int32)  # the candidate's document
    csrc = np.empty(16, np.int32)  # the candidate's embedding, from the node's first

    # the root: the seed
    for i in range(a):
        ppool[i] = tokens[seed[0] + i]
    spool[:k] = seed
    epool[:k] = seed + a
    d0 = 1
    for i in range(1, k):
        if doc_of[seed[i]] != doc_of[seed[i - 1]]:
            d0 += 1
    nodes = _push_node(nodes, 0, 0, a, 0, k, d0, a, 0, 0, -1, 0)
    top = 1
    n_nodes = 0
    work = 0
    truncated = False
    while top > 0:
        if max_work > 0 and work > max_work:
            truncated = True
            break
        # pop a node
        top -= 1
        n_nodes += 1
        po, pl = nodes[top, NODE_PAT_OFF], nodes[top, NODE_PAT_LEN]
        oo, ol = nodes[top, NODE_OCC_OFF], nodes[top, NODE_OCC_LEN]
        df, consts, phase = nodes[top, NODE_DF], nodes[top, NODE_CONSTS], nodes[top, NODE_PHASE]
        first, adf, thr = nodes[top, NODE_FIRST], nodes[top, NODE_ADF], nodes[top, NODE_THR]
        work += ol * (w_max + 1) + pl
        n_sl = pl - consts
        otop = oo + ol  # pools above this node are free
        # a slot narrowable in every embedding: so in every extension
        if n_sl > 0 and _narrowable_everywhere(tokens, fspool, fwpool, oo, ol, ms, n_sl):
            continue
        # closures: one token before (after) every occurrence
        left_closed = _preceded_alike(tokens, doc_of, doc_offsets, spool, oo, ol)
        right_closed = phase == 0 and _followed_alike(tokens, doc_of, doc_offsets, spool, epool, oo, ol)
        if left_closed:
            if phase == 0:
                continue
            ppool, pl, consts, first, work, left_closed = _left_chain(tokens, doc_of, doc_offsets, ppool, spool,
                                                                      po, pl, oo, ol, consts, first, a, work)
            if left_closed:
                continue  # the chain reaches A tokens: nothing below is a template
        if right_closed:
            ppool, pl, consts, work = _right_chain(tokens, doc_of, doc_offsets, ppool, spool, epool, po, pl, oo,
                                                   ol, consts, work, max_work)
        if max_work > 0 and work > max_work:
            truncated = True
            break
        # past the chains neither side is closed (a chain ends open, or
        # the work bound stopped the growth above)
        ptop = po + pl
        same_df_child = False
        known = 0  # extension families counted here (none of them keeps df unless same_df_child)
        thr_here = sigma
        if phase == 0:
            here = _ceil_div(adf if adf >= 0 else df, cohesion)
            thr_here = sigma if here < sigma else here
        for kind in range(4):
            t, bit = _family(kind, phase, first, a, n_sl, max_slots, sigma, thr, thr_here, adf)
            if t < 0:
                continue
            known |= bit
            slot_kind = kind == 0 or kind == 3
            ck, cfw, cd, csrc, n = _candidates(tokens, doc_of, doc_offsets, spool, epool, oo, ol, kind, w_max,
                                               ck, cfw, cd, csrc, key_docs, key_last)
            if n == 0:
                continue
            if slot_kind:
                _new_slot_ends(tokens, spool, epool, oo, ck, cfw, csrc, n, kind, t, key_docs, key_ff, key_lf)
            kept, keeps_df = _kept(ck, n, slot_kind, t, df, key_docs, key_last, key_ff, key_lf)
            if keeps_df:
                same_df_child = True
            if kept.shape[0] == 0:
                continue
            order = _by_key(ck, kept, key_last)
            extra = 2 if slot_kind else 1
            lo = 0
            while lo < order.shape[0]:
                # one key: a child (its key reached the threshold), pushed
                # with its pattern and embeddings above the node
                hi, distinct = _key_run(ck, cd, order, lo)
                ppool = _child_pattern(ppool, po, pl, ptop, kind, ck[order[lo]])
                spool, epool, fspool, fwpool = _child_embeddings(spool, epool, fspool, fwpool, oo, otop, order, lo,
                                                                 hi, csrc, cfw, kind, n_sl, ms)
                nodes = _push_child(nodes, top, ptop, pl + extra, otop, hi - lo, distinct, consts + 1, kind, first,
                                    adf, df, t)
                top += 1
                ptop += pl + extra
                otop += hi - lo
                lo = hi
        # visit: a candidate with a slot and L constants, unless a child
        # found above keeps its df (an extension of the maximality rule)
        if n_sl > 0 and consts >= min_len and not same_df_child:
            work += ol * (n_sl + 4)
            if _maximal_core(tokens, doc_of, doc_offsets, spool, epool, fspool, fwpool, oo, ol, ms, n_sl, df,
                             w_max, max_slots, known, key_docs, key_last) == 1:
                o_pat, o_s, o_e, o_fs, o_fw, o_tab = _report(ppool, spool, epool, fspool, fwpool, po, pl, oo, ol,
                                                             n_sl, ms, df, n_out, o_pat, o_s, o_e, o_fs, o_fw, o_tab)
                n_out += 1
    n_pat, n_occ, n_fill = o_tab[n_out, TAB_PAT], o_tab[n_out, TAB_OCC], o_tab[n_out, TAB_FILL]
    return (o_pat[:n_pat], o_tab[:n_out + 1, TAB_PAT].copy(), o_tab[:n_out, TAB_DF].copy(), o_s[:n_occ],
            o_e[:n_occ], o_tab[:n_out + 1, TAB_OCC].copy(), o_fs[:n_fill], o_fw[:n_fill],
            o_tab[:n_out + 1, TAB_FILL].copy(), n_nodes, truncated)


@njit(**NJIT)
def _inside(starts, ends, reach, doc_of, a_lo, a_hi, b_lo, b_hi, a_df):
    """In every document of template a (occurrences ``a_lo .. a_hi - 1``),
    some occurrence lies inside an occurrence of b (``b_lo .. b_hi - 1``).
    Both sorted by start; ``reach[i]`` is the largest end of ``b_lo .. i``.
    Stops at the first document of a where none does."""
    docs = 0
    cur = -1        # the document being looked at
    held = True     # whether one of its occurrences is inside
    for k in range(a_lo, a_hi):
        d = doc_of[starts[k]]
        if d != cur:
            if not held:
                return False
            cur = d
            held = False
        elif held:
            continue
        # the last occurrence of b starting at or before a's start
        lo, hi = b_lo, b_hi
        while lo < hi:
            mid = (lo + hi) // 2
            if starts[mid] <= starts[k]:
                lo = mid + 1
            else:
                hi = mid
        if lo > b_lo and reach[lo - 1] >= ends[k]:
            docs += 1
            held = True
    return held and docs == a_df


@njit(**NJIT)
def subsumed(starts, ends, t_off, dfs, doc_of):
    """Which templates are subsumed (:mod:`engine.templates`, step 5).

    Template i's occurrences are ``starts/ends[t_off[i]:t_off[i + 1]]``,
    sorted by start.  Its candidates are the templates with an occurrence
    around one of its occurrences in its first document (found among all
    the occurrences sorted by start: a template that holds i holds one of
    those); i is dropped when a candidate j has df_j >= df_i and holds it
    (:func:`_inside`), unless the two hold each other with the same df.
    O(candidates x occurrences x log occurrences) per template.
    """
    n_t = dfs.shape[0]
    n = starts.shape[0]
    drop = np.zeros(n_t, np.bool_)
    if n_t < 2:
        return drop
    tid = np.empty(n, np.int64)
    reach = np.empty(n, np.int64)
    for i in range(n_t):
        r = -1
        for k in range(t_off[i], t_off[i + 1]):
            tid[k] = i
            if ends[k] > r:
                r = ends[k]
            reach[k] = r
    s_sorted, order = radix_sort_pairs(starts.astype(np.uint64), np.arange(n))
    s_sorted = s_sorted.astype(np.int64)
    e_reach = np.empty(n, np.int64)  # the largest end of the occurrences sorted before, included
    r = -1
    for p in range(n):
        if ends[order[p]] > r:
            r = ends[order[p]]
        e_reach[p] = r
    longest = 0
    for k in range(n):
        if ends[k] - starts[k] > longest:
            longest = ends[k] - starts[k]
    seen = np.full(n_t, -1, np.int64)
    for i in range(n_t):
        d_first = doc_of[starts[t_off[i]]]
        c = t_off[i]
        # every occurrence of i in its first document: the one held may be any
        while c < t_off[i + 1] and doc_of[starts[c]] == d_first and not drop[i]:
            s0 = starts[c]
            e0 = ends[c]
            c += 1
            lo = np.searchsorted(s_sorted, s0 - longest)
            hi = np.searchsorted(s_sorted, s0, side="right")
            for p in range(hi - 1, lo - 1, -1):
                if e_reach[p] < e0:
                    break  # no occurrence sorted at or before p reaches e0
                k = order[p]
                j = tid[k]
                if j == i or ends[k] < e0 or seen[j] == i:
                    continue
                seen[j] = i
                if dfs[j] < dfs[i]:
                    continue
                if not _inside(starts, ends, reach, doc_of, t_off[i], t_off[i + 1], t_off[j], t_off[j + 1],
                               dfs[i]):
                    continue
                if dfs[j] > dfs[i] or not _inside(starts, ends, reach, doc_of, t_off[j], t_off[j + 1], t_off[i],
                                                   t_off[i + 1], dfs[j]):
                    drop[i] = True
                    break
    return drop


@njit(**NJIT)
def _filler_before(tokens, s1, w1, c1, s2, w2, c2):
    """Filler 1 (start, width, count) ranks before filler 2: more
    occurrences, then the smaller token tuple (a prefix first)."""
    if c1 != c2:
        return c1 > c2
    for k in range(min(w1, w2)):
        if tokens[s1 + k] != tokens[s2 + k]:
            return tokens[s1 + k] < tokens[s2 + k]
    return w1 < w2


@njit(**NJIT)
def top_fillers(tokens, fill_s, fill_w, fill_off, n_slots, keep):
    """The ``keep`` most frequent fillers of each slot of each template.

    Template i's rows are ``fill_off[i] .. fill_off[i + 1] - 1``, one per
    embedding and slot (slot-minor, ``n_slots[i]`` slots).  The distinct
    fillers of a slot are counted in an open-addressing table keyed by their
    tokens (exact: a hash only picks the bucket), then the best ``keep`` are
    kept in order (count descending, then token tuple).  O(rows x W).

    Returns ``tpl, slot, start, width, count``: one row per kept filler, by
    template, slot and rank.
    """
    out = np.empty((64, 5), np.int64)  # rows of (template, slot, start, width, count)
    m = 0
    table = np.full(16, -1, np.int64)   # bucket -> row of the filler's first occurrence
    counts = np.zeros(16, np.int64)
    used = np.empty(16, np.int64)
    top_r = np.empty(keep, np.int64)
    top_c = np.empty(keep, np.int64)
    for i in range(n_slots.shape[0]):
        k = n_slots[i]
        lo = fill_off[i]
        n_emb = (fill_off[i + 1] - lo) // max(1, k)
        size = 16
        while size < 2 * n_emb:
            size *= 2
        if size > table.shape[0]:
            table = np.full(size, -1, np.int64)
            counts = np.zeros(size, np.int64)
            used = np.empty(size, np.int64)
        mask = size - 1
        for j in range(k):
            n_used = 0
            for e in range(n_emb):
                r = lo + e * k + j
                a = fill_s[r]
                w = fill_w[r]
                h = FNV_OFFSET ^ np.uint64(w)
                for t in range(w):
                    h = (h ^ np.uint64(tokens[a + t])) * FNV_PRIME
                b = np.int64(mix64(h) & np.uint64(mask))
                while True:
                    q = table[b]
                    if q < 0:
                        table[b] = r
                        counts[b] = 1
                        used[n_used] = b
                        n_used += 1
                        break
                    if fill_w[q] == w:
                        same = True
                        for t in range(w):
                            if tokens[fill_s[q] + t] != tokens[a + t]:
                                same = False
                                break
                        if same:
                            counts[b] += 1
                            break
                    b = (b + 1) & mask
            # the best keep, by insertion into a short sorted list
            n_top = 0
            for u in range(n_used):
                b = used[u]
                r, c = table[b], counts[b]
                table[b] = -1
                counts[b] = 0
                if n_top == keep and not _filler_before(tokens, fill_s[r], fill_w[r], c, fill_s[top_r[n_top - 1]],
                                                        fill_w[top_r[n_top - 1]], top_c[n_top - 1]):
                    continue
                p = n_top if n_top < keep else keep - 1
                while p > 0 and _filler_before(tokens, fill_s[r], fill_w[r], c, fill_s[top_r[p - 1]],
                                               fill_w[top_r[p - 1]], top_c[p - 1]):
                    if p < keep:
                        top_r[p] = top_r[p - 1]
                        top_c[p] = top_c[p - 1]
                    p -= 1
                top_r[p] = r
                top_c[p] = c
                if n_top < keep:
                    n_top += 1
            if m + n_top > out.shape[0]:
                grown = np.empty((2 * (m + n_top), 5), np.int64)
                grown[:m] = out[:m]
                out = grown
            for p in range(n_top):
                out[m, 0] = i
                out[m, 1] = j
                out[m, 2] = fill_s[top_r[p]]
                out[m, 3] = fill_w[top_r[p]]
                out[m, 4] = top_c[p]
                m += 1
    return out[:m, 0].copy(), out[:m, 1].copy(), out[:m, 2].copy(), out[:m, 3].copy(), out[:m, 4].copy()
