"""Kernels of the template miner (:mod:`engine.templates`): the maximality
check of one candidate on its own occurrences."""
from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NJIT

SLOT = -1
_P = np.uint64(1099511628211)
_G = np.uint64(0x9E3779B97F4A7C15)


@njit(**NJIT)
def _mix(h, x):
    return h * _P + (np.uint64(x) + _G)


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
def _key_run(keys, docs, lo):
    """The run of keys equal to ``keys[lo]`` (keys/docs sorted by (key,
    doc)): its end and its number of distinct docs."""
    hi = lo
    distinct = 0
    while hi < keys.shape[0] and keys[hi] == keys[lo]:
        if hi == lo or docs[hi] != docs[hi - 1]:
            distinct += 1
        hi += 1
    return hi, distinct


@njit(**NJIT)
def _widest_key_run(keys, docs, df):
    """Index of the first element of a run of equal keys with at least df
    distinct docs (keys/docs sorted by (key, doc)), else -1."""
    n = keys.shape[0]
    lo = 0
    while lo < n:
        hi, distinct = _key_run(keys, docs, lo)
        if distinct >= df:
            return lo
        lo = hi
    return -1


@njit(**NJIT)
def _sort_pairs(keys, docs):
    o = np.argsort(docs, kind="mergesort")
    keys, docs = keys[o], docs[o]
    o = np.argsort(keys, kind="mergesort")
    return keys[o], docs[o]


@njit(**NJIT)
def side_extension(tokens, doc_of, doc_start, doc_end, starts, ends, df, w_max, slot_ok):
    """True when a token, or a slot of 1..w_max tokens and a token, before or
    after the occurrences is in df documents (an exact count: the key is the
    token id itself); a slot only when ``slot_ok`` (the pattern has fewer
    slots than allowed)."""
    w_hi = w_max if slot_ok else 0
    n = starts.shape[0]
    for side in range(2):
        keys = np.empty(n * (w_hi + 1), np.int64)
        docs = np.empty(n * (w_hi + 1), np.int64)
        k = 0
        for o in range(n):
            s = starts[o]
            for w in range(w_hi + 1):
                if side == 0:
                    q = s - 1 - w
                    ok = q >= doc_start[s]
                else:
                    q = ends[o] + w
                    ok = q < doc_end[s]
                if ok:
                    keys[k] = tokens[q] * 2 + (1 if w > 0 else 0)
                    docs[k] = doc_of[s]
                    k += 1
        sk, sd = _sort_pairs(keys[:k], docs[:k])
        if _widest_key_run(sk, sd, df) >= 0:
            return True
    return False


@njit(**NJIT)
def filler_keys(tokens, doc_of, starts, occ, slot, fstart, fwidth):
    """Hash keys of the prefixes and suffixes of the fillers (the whole
    filler is both), with the document of each: ``keys, docs, kind, row,
    length`` (kind 1: a prefix of ``length`` tokens, 2: a suffix)."""
    total = 0
    for r in range(fwidth.shape[0]):
        total += 2 * fwidth[r]
    keys = np.empty(total, np.uint64)
    docs = np.empty(total, np.int64)
    kind = np.empty(total, np.int64)
    row = np.empty(total, np.int64)
    length = np.empty(total, np.int64)
    k = 0
    for r in range(fwidth.shape[0]):
        d = doc_of[starts[occ[r]]]
        a = fstart[r]
        w = fwidth[r]
        for kd in range(1, 3):
            for ln in range(1, w + 1):
                b = a if kd < 2 else a + w - ln
                h = _mix(_mix(_mix(np.uint64(0), slot[r]), kd), ln)
                for t in range(ln):
                    h = _mix(h, tokens[b + t])
                keys[k] = h
                docs[k] = d
                kind[k] = kd
                row[k] = r
                length[k] = ln
                k += 1
    return keys, docs, kind, row, length


@njit(**NJIT)
def _same_tokens(tokens, kind, row, length, fstart, fwidth, slot, members):
    """True when every member has the same slot, kind, length and tokens."""
    r0 = row[members[0]]
    for i in range(1, members.shape[0]):
        r = row[members[i]]
        if kind[members[i]] != kind[members[0]] or length[members[i]] != length[members[0]]:
            return False
        if slot[r] != slot[r0]:
            return False
        ln = length[members[0]]
        a0 = fstart[r0] if kind[members[0]] < 2 else fstart[r0] + fwidth[r0] - ln
        a = fstart[r] if kind[members[i]] < 2 else fstart[r] + fwidth[r] - ln
        for t in range(ln):
            if tokens[a + t] != tokens[a0 + t]:
                return False
    return True


@njit(**NJIT)
def maximal_check(tokens, doc_of, doc_start, doc_end, pattern, starts, ends, df, w_max, max_slots, limit):
    """1 when the candidate is maximal (no single-step extension keeps df and
    no slot can be narrowed; :mod:`engine.templates`), 0 when it is not, -1
    when a 64-bit hash collision makes the fast check unsure (the caller
    then decides in exact Python), -2 when its matchings pass ``limit``
    rows (> 0; undecided)."""
    n_slots = 0
    for i in range(pattern.shape[0]):
        if pattern[i] == SLOT:
            n_slots += 1
    if side_extension(tokens, doc_of, doc_start, doc_end, starts, ends, df, w_max, n_slots < max_slots):
        return 0
    occ, slot, fstart, fwidth, complete = matchings(tokens, pattern, starts, ends, w_max, limit)
    if not complete:
        return -2
    keys, docs, kind, row, length = filler_keys(tokens, doc_of, starts, occ, slot, fstart, fwidth)
    o = np.argsort(docs, kind="mergesort")
    o = o[np.argsort(keys[o], kind="mergesort")]
    sk = keys[o]
    sd = docs[o]
    n = sk.shape[0]
    lo = 0
    unsure = False
    while lo < n:
        hi, distinct = _key_run(sk, sd, lo)
        if distinct >= df:
            # a filler in every document (slot made constant) or a common
            # prefix/suffix (slot narrowed): verify it token by token
            if _same_tokens(tokens, kind, row, length, fstart, fwidth, slot, o[lo:hi]):
                return 0
            unsure = True
        lo = hi
    return -1 if unsure else 1


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
def grow_seed(tokens, doc_of, doc_start, doc_end, seed, a, sigma, min_len, w_max, max_slots, cohesion, max_work,
              key_docs, key_last):
    """Every maximal template whose anchor starts with the seed (an A-gram,
    ``seed`` its sorted start positions): right growth, left growth from
    each right node, the maximality check of each candidate
    (:mod:`engine.templates`, steps 2-4), depth first with an explicit stack.

    Occurrence sets and patterns live in pools used as stacks: the children
    of a node are written above it and a popped node drops whatever its later
    siblings left.  A group of children is one key (the token added) after a
    sort by (key, start, end); it is kept when its distinct documents reach
    the threshold and, for a slot just added, unless the fillers of its
    elements all begin (or all end) with one token (then they do in every
    extension too, where the slot can be narrowed: nothing grown from it is
    maximal).  Closed chains are passed through (:mod:`engine.templates`).

    ``max_work`` (> 0) bounds the work (occurrences x (W + 1) plus pattern
    length, summed over the nodes): past it the growth stops, ``truncated``.

    ``key_docs`` (zeros) and ``key_last`` (-1), one entry per token id, are
    the caller's scratch (one pair per thread), left as they came: before
    the sort of a family of children, the distinct documents of each key
    are counted in them (the candidates come grouped by document), and only
    the candidates of keys that reach the threshold are sorted.  Most keys
    never do, so a node costs O(occurrences x W) plus a sort of the few
    children kept.

    Returns ``pat, pat_off, dfs, flags, occ_s, occ_e, occ_off, nodes,
    truncated``: the templates' patterns (``SLOT`` for a slot), df, flag (1
    maximal, -1 the check was unsure and the caller decides), occurrences,
    the nodes visited and whether the work bound stopped the growth.
    """
    # node stack
    cap = 64
    n_pat_off = np.empty(cap, np.int64)
    n_pat_len = np.empty(cap, np.int64)
    n_occ_off = np.empty(cap, np.int64)
    n_occ_len = np.empty(cap, np.int64)
    n_df = np.empty(cap, np.int64)
    n_consts = np.empty(cap, np.int64)
    n_phase = np.empty(cap, np.int64)   # 0: right growth, 1: left growth
    n_first = np.empty(cap, np.int64)   # left phase: length of a first left segment, else 0
    n_adf = np.empty(cap, np.int64)     # right phase: the anchor's df once closed, else -1
    n_thr = np.empty(cap, np.int64)     # left phase: threshold
    ppool = np.empty(1024, np.int64)
    spool = np.empty(4 * seed.shape[0] + 64, np.int64)
    epool = np.empty(4 * seed.shape[0] + 64, np.int64)
    # outputs
    o_pat = np.empty(256, np.int64)
    o_pat_off = np.zeros(17, np.int64)
    o_df = np.empty(16, np.int64)
    o_flag = np.empty(16, np.int64)
    o_s = np.empty(256, np.int64)
    o_e = np.empty(256, np.int64)
    o_occ_off = np.zeros(17, np.int64)
    n_out = 0
    # candidate buffers of one expansion
    ck = np.empty(16, np.int64)
    cs = np.empty(16, np.int64)
    ce = np.empty(16, np.int64)
    cfs = np.empty(16, np.int64)
    cfw = np.empty(16, np.int64)

    # the root: the seed
    for i in range(a):
        ppool[i] = tokens[seed[0] + i]
    k = seed.shape[0]
    spool[:k] = seed
    epool[:k] = seed + a
    d0 = 1
    for i in range(1, k):
        if doc_of[seed[i]] != doc_of[seed[i - 1]]:
            d0 += 1
    n_pat_off[0] = 0
    n_pat_len[0] = a
    n_occ_off[0] = 0
    n_occ_len[0] = k
    n_df[0] = d0
    n_consts[0] = a
    n_phase[0] = 0
    n_first[0] = 0
    n_adf[0] = -1
    n_thr[0] = 0
    top = 1
    n_nodes = 0
    work = 0
    truncated = False
    while top > 0:
        if max_work > 0 and work > max_work:
            truncated = True
            break
        top -= 1
        n_nodes += 1
        work += n_occ_len[top] * (w_max + 1) + n_pat_len[top]
        po, pl = n_pat_off[top], n_pat_len[top]
        oo, ol = n_occ_off[top], n_occ_len[top]
        df, consts, phase = n_df[top], n_consts[top], n_phase[top]
        first, adf, thr = n_first[top], n_adf[top], n_thr[top]
        ptop = po + pl          # pools above this node are free
        otop = oo + ol
        s = spool[oo:oo + ol]
        e = epool[oo:oo + ol]
        # closures: one token before (after) every occurrence
        left_closed = True
        right_closed = phase == 0
        for i in range(ol):
            si, ei = s[i], e[i]
            if left_closed and (si - 1 < doc_start[si] or tokens[si - 1] != tokens[s[0] - 1]):
                left_closed = False
            if right_closed and (ei >= doc_end[si] or tokens[ei] != tokens[e[0]]):
                right_closed = False
            if not (left_closed or right_closed):
                break
        if left_closed and phase == 0:
            continue
        # expansions: (kind, threshold) per family of children
        #   kind 0: x * P (left)   1: x P (left)   2: P x (right)   3: P * x (right)
        same_df_child = False
        thr_here = sigma
        if phase == 0:
            here = _ceil_div(adf if adf >= 0 else df, cohesion)
            thr_here = sigma if here < sigma else here
        for kind in range(4):
            if phase == 1 and kind >= 2:
                continue
            if (left_closed and kind != 1) or (right_closed and kind != 2):
                continue
            if (kind == 0 or kind == 3) and pl - consts >= max_slots:
                continue
            if kind == 1 and not (phase == 1 and first > 0 and first + 1 < a):
                continue
            if kind == 0:
                t = thr if phase == 1 else thr_here
            elif kind == 1:
                t = thr
            elif kind == 2:
                t = sigma if adf < 0 else thr_here
            else:
                t = thr_here
            width_hi = w_max if (kind == 0 or kind == 3) else 1
            # gather the candidates
            need = ol * width_hi
            ck = _fit(ck, need)
            cs = _fit(cs, need)
            ce = _fit(ce, need)
            cfs = _fit(cfs, need)
            cfw = _fit(cfw, need)
            n = 0
            for i in range(ol):
                si, ei = s[i], e[i]
                for w in range(1, width_hi + 1):
                    if kind == 0:
                        q = si - 1 - w
                        if q < doc_start[si]:
                            break
                        ck[n] = tokens[q]
                        cs[n] = q
                        ce[n] = ei
                        cfs[n] = q + 1
                        cfw[n] = w
                    elif kind == 1:
                        q = si - 1
                        if q < doc_start[si]:
                            break
                        ck[n] = tokens[q]
                        cs[n] = q
                        ce[n] = ei
                    elif kind == 2:
                        q = ei
                        if q >= doc_end[si]:
                            break
                        ck[n] = tokens[q]
                        cs[n] = si
                        ce[n] = q + 1
                    else:
                        q = ei + w
                        if q >= doc_end[si]:
                            break
                        ck[n] = tokens[q]
                        cs[n] = si
                        ce[n] = q + 1
                        cfs[n] = ei
                        cfw[n] = w
                    n += 1
            if n == 0:
                continue
            # distinct documents per key, then the candidates of the keys at the threshold
            for j in range(n):
                kk = ck[j]
                dj = doc_of[cs[j]]
                if key_last[kk] != dj:
                    key_last[kk] = dj
                    key_docs[kk] += 1
            kept = np.empty(n, np.int64)
            n_kept = 0
            for j in range(n):
                if key_docs[ck[j]] >= t:
                    kept[n_kept] = j
                    n_kept += 1
            for j in range(n):
                key_docs[ck[j]] = 0
                key_last[ck[j]] = -1
            if n_kept == 0:
                continue
            kept = kept[:n_kept]
            # by (key, start, end): one sort of packed keys when they fit 63
            # bits (candidates equal in all three are interchangeable: only
            # their (start, end) is kept, once), else three stable sorts
            mk = 0
            ms = 0
            mw = 0
            for j in kept:
                if ck[j] > mk:
                    mk = ck[j]
                if cs[j] > ms:
                    ms = cs[j]
                if ce[j] - cs[j] > mw:
                    mw = ce[j] - cs[j]
            bw = _bits(mw)
            bs = _bits(ms)
            if _bits(mk) + bs + bw <= 63:
                packed = np.empty(n_kept, np.int64)
                for i in range(n_kept):
                    j = kept[i]
                    packed[i] = (ck[j] << (bs + bw)) | (cs[j] << bw) | (ce[j] - cs[j])
                order = kept[np.argsort(packed)]
            else:
                order = kept[np.argsort(ce[kept], kind="mergesort")]
                order = order[np.argsort(cs[order], kind="mergesort")]
                order = order[np.argsort(ck[order], kind="mergesort")]
            n = n_kept
            lo = 0
            while lo < n:
                key = ck[order[lo]]
                hi = lo
                distinct = 0
                while hi < n and ck[order[hi]] == key:
                    if hi == lo or doc_of[cs[order[hi]]] != doc_of[cs[order[hi - 1]]]:
                        distinct += 1
                    hi += 1
                g_lo, g_hi = lo, hi
                lo = hi
                if distinct == df:
                    same_df_child = True
                if distinct < t:
                    continue
                if kind == 0 or kind == 3:
                    # the new slot's fillers all begin (or all end) with one
                    # token: so do they in every extension, where the slot
                    # can then be narrowed; nothing grown from it is maximal
                    r0 = order[g_lo]
                    same_first = True
                    same_last = True
                    for j in range(g_lo + 1, g_hi):
                        r = order[j]
                        if tokens[cfs[r]] != tokens[cfs[r0]]:
                            same_first = False
                        if tokens[cfs[r] + cfw[r] - 1] != tokens[cfs[r0] + cfw[r0] - 1]:
                            same_last = False
                        if not (same_first or same_last):
                            break
                    if same_first or same_last:
                        continue
                # push the child: pattern, then its distinct (start, end) pairs
                extra = 2 if (kind == 0 or kind == 3) else 1
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
                spool = _fit(spool, otop + g_hi - g_lo)
                epool = _fit(epool, otop + g_hi - g_lo)
                s = spool[oo:oo + ol]
                e = epool[oo:oo + ol]
                m = 0
                for j in range(g_lo, g_hi):
                    r = order[j]
                    if m > 0 and spool[otop + m - 1] == cs[r] and epool[otop + m - 1] == ce[r]:
                        continue
                    spool[otop + m] = cs[r]
                    epool[otop + m] = ce[r]
                    m += 1
                if top + 1 > n_pat_off.shape[0]:
                    n_pat_off = _fit(n_pat_off, top + 1)
                    n_pat_len = _fit(n_pat_len, top + 1)
                    n_occ_off = _fit(n_occ_off, top + 1)
                    n_occ_len = _fit(n_occ_len, top + 1)
                    n_df = _fit(n_df, top + 1)
                    n_consts = _fit(n_consts, top + 1)
                    n_phase = _fit(n_phase, top + 1)
                    n_first = _fit(n_first, top + 1)
                    n_adf = _fit(n_adf, top + 1)
                    n_thr = _fit(n_thr, top + 1)
                n_pat_off[top] = ptop
                n_pat_len[top] = pl + extra
                n_occ_off[top] = otop
                n_occ_len[top] = m
                n_df[top] = distinct
                n_consts[top] = consts + 1
                if kind <= 1:
                    n_phase[top] = 1
                    n_first[top] = 1 if kind == 0 else first + 1
                    n_adf[top] = -1
                    n_thr[top] = t
                else:
                    n_phase[top] = 0
                    n_first[top] = 0
                    if kind == 2:
                        n_adf[top] = adf
                    else:
                        n_adf[top] = adf if adf >= 0 else df
                    n_thr[top] = 0
                top += 1
                ptop += pl + extra
                otop += m
        # visit: a candidate with a slot and L constants, unless a child
        # found above keeps its df (an extension of the maximality rule)
        if consts < pl and consts >= min_len and not (left_closed or right_closed or same_df_child):
            pat = ppool[po:po + pl].copy()
            s = spool[oo:oo + ol]
            e = epool[oo:oo + ol]
            v = maximal_check(tokens, doc_of, doc_start, doc_end, pat, s, e, df, w_max, max_slots,
                              max_work - work if max_work > 0 else 0)
            work += ol * (pl - consts)
            if v == -2:
                truncated = True
                break
            if v != 0:
                o_pat = _fit(o_pat, o_pat_off[n_out] + pl)
                o_pat[o_pat_off[n_out]:o_pat_off[n_out] + pl] = pat
                o_s = _fit(o_s, o_occ_off[n_out] + ol)
                o_e = _fit(o_e, o_occ_off[n_out] + ol)
                o_s[o_occ_off[n_out]:o_occ_off[n_out] + ol] = s
                o_e[o_occ_off[n_out]:o_occ_off[n_out] + ol] = e
                o_df = _fit(o_df, n_out + 1)
                o_flag = _fit(o_flag, n_out + 1)
                o_pat_off = _fit(o_pat_off, n_out + 2)
                o_occ_off = _fit(o_occ_off, n_out + 2)
                o_df[n_out] = df
                o_flag[n_out] = v
                o_pat_off[n_out + 1] = o_pat_off[n_out] + pl
                o_occ_off[n_out + 1] = o_occ_off[n_out] + ol
                n_out += 1
    return (o_pat[:o_pat_off[n_out]], o_pat_off[:n_out + 1], o_df[:n_out], o_flag[:n_out],
            o_s[:o_occ_off[n_out]], o_e[:o_occ_off[n_out]], o_occ_off[:n_out + 1], n_nodes, truncated)
