"""BloomSpan kernels: word filter, counting filter, seed grouping, growth.

See :mod:`engine.bloomspan` for the method, the proofs of the pruning rules
and the complexity.  Everything here works on the token array directly:
``tokens`` (int32 token ids, documents concatenated) and ``doc_offsets``
(int64, ``len = docs + 1``).  Occurrence lists are pairs of arrays
(position, document), always in increasing position order; documents are
int32, positions int32 or, past 2^31 - 2 tokens, int64 (the kernels take
either: scratch copies of positions take the input's dtype).

No kernel reallocates an array inside a hot loop (a reassigned array costs
reference counting on every iteration): buffers that may need to grow are
checked before the loop, and a kernel that runs out of room returns a status
so that its wrapper grows the buffer and calls again.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NJIT
from .hashing import FNV_OFFSET as _FNV_OFFSET
from .hashing import FNV_PRIME as _FNV_PRIME
from .maximal import left_maximal
from .prefetch import prefetch

#: How many positions ahead the counting filters prefetch their counter (a
#: cache miss takes about as long as this many positions' work).
AHEAD = 16


@njit(**NJIT)
def word_df(tokens, doc_offsets, vocab_size):
    """Exact document frequency of every token id (step 1: word filter)."""
    df = np.zeros(vocab_size, np.int64)
    last = np.full(vocab_size, -1, np.int64)
    for d in range(doc_offsets.shape[0] - 1):
        for p in range(doc_offsets[d], doc_offsets[d + 1]):
            w = tokens[p]
            if last[w] != d:
                last[w] = d
                df[w] += 1
    return df


@njit(**NJIT)
def fnv_pair(a, b):
    """FNV-1a (64 bit) over the two token ids taken as 32-bit words, then a
    xor-shift so that the low bits used as the counter index depend on every
    bit of both ids."""
    h = (_FNV_OFFSET ^ np.uint64(np.uint32(a))) * _FNV_PRIME
    h = (h ^ np.uint64(np.uint32(b))) * _FNV_PRIME
    h ^= h >> np.uint64(29)
    return h


@njit(**NJIT)
def bloom_count(tokens, doc_offsets, d_begin, d_end, frequent_word, counters):
    """Step 2: count every bigram occurrence of documents ``[d_begin, d_end)``
    into saturating byte counters (size a power of two).

    Only bigrams of two frequent words are counted.  Occurrences are an upper
    bound of the bigram's document frequency, so a frequent bigram always
    reaches ``min(sigma, 255)``.
    """
    mask = np.uint64(counters.shape[0] - 1)
    for d in range(d_begin, d_end):
        e = doc_offsets[d + 1]
        for p in range(doc_offsets[d], e - 1):
            q = p + AHEAD
            if q < e - 1:
                prefetch(counters, np.int64(fnv_pair(tokens[q], tokens[q + 1]) & mask))
            a = tokens[p]
            b = tokens[p + 1]
            if frequent_word[a] and frequent_word[b]:
                h = np.int64(fnv_pair(a, b) & mask)
                c = counters[h]
                if c < 255:
                    counters[h] = c + 1


@njit(**NJIT)
def merge_counters(dst, src):
    """Saturating sum of two counter arrays, into ``dst``."""
    for i in range(dst.shape[0]):
        s = np.int64(dst[i]) + np.int64(src[i])
        dst[i] = 255 if s > 255 else s


@njit(**NJIT)
def mark_runs(tokens, doc_offsets, d_begin, d_end, frequent_word, counters, threshold,
              min_len, keep):
    """Step 3a: keep[p] = 1 when the L-1 bigrams starting at p .. p+L-2 all
    pass the word filter and the counting filter (every bigram inside a
    frequent L-gram is frequent, so every start of a frequent L-gram is kept).
    Documents ``[d_begin, d_end)``; returns the number kept."""
    mask = np.uint64(counters.shape[0] - 1)
    kept = 0
    need = min_len - 1
    for d in range(d_begin, d_end):
        s = doc_offsets[d]
        e = doc_offsets[d + 1]
        if e > s:
            keep[e - 1] = 0
        run = 0
        for p in range(e - 2, s - 1, -1):
            q = p - AHEAD
            if q >= s:
                prefetch(counters, np.int64(fnv_pair(tokens[q], tokens[q + 1]) & mask))
            a = tokens[p]
            b = tokens[p + 1]
            if (frequent_word[a] and frequent_word[b]
                    and counters[np.int64(fnv_pair(a, b) & mask)] >= threshold):
                run += 1
            else:
                run = 0
            if run >= need:
                keep[p] = 1
                kept += 1
            else:
                keep[p] = 0
    return kept


@njit(**NJIT)
def _window_mix(h):
    h ^= h >> np.uint64(31)
    h *= np.uint64(0x9E3779B97F4A7C15)
    h ^= h >> np.uint64(29)
    return h


_ROLL = _FNV_PRIME


@njit(**NJIT)
def _roll_power(min_len):
    pw = np.uint64(1)
    for _ in range(min_len - 1):
        pw *= _ROLL
    return pw


@njit(**NJIT)
def lgram_filter(tokens, doc_offsets, d_begin, d_end, keep, min_len, counters, threshold,
                 first_count, counting):
    """Steps 3b and 3c, one scan each: the L-gram of every kept position of
    documents ``[d_begin, d_end)``.

    ``counting`` true (3b): count it into saturating byte counters
    (occurrences, an upper bound of df: no frequent L-gram is lost).
    ``counting`` false (3c): drop the position when its counter is below
    ``threshold``, count the survivors per first token; returns how many.

    The window hash is a polynomial rolling hash (mod 2^64) of the L ids,
    updated in O(1) per position, then mixed."""
    mask = np.uint64(counters.shape[0] - 1)
    pw = _roll_power(min_len)
    kept = 0
    for d in range(d_begin, d_end):
        s = doc_offsets[d]
        e = doc_offsets[d + 1]
        if e - s < min_len:
            if not counting:
                for p in range(s, e):
                    keep[p] = 0
            continue
        h = np.uint64(0)
        for k in range(min_len):
            h = h * _ROLL + np.uint64(np.uint32(tokens[s + k]))
        # the same hash AHEAD positions on, to prefetch that window's counter
        last = e - min_len
        ha = np.uint64(0)
        if s + AHEAD <= last:
            for k in range(min_len):
                ha = ha * _ROLL + np.uint64(np.uint32(tokens[s + AHEAD + k]))
        for p in range(s, last + 1):
            if p > s:
                h = (h - np.uint64(np.uint32(tokens[p - 1])) * pw) * _ROLL + np.uint64(
                    np.uint32(tokens[p + min_len - 1]))
            qa = p + AHEAD
            if qa <= last:
                if p > s:
                    ha = (ha - np.uint64(np.uint32(tokens[qa - 1])) * pw) * _ROLL + np.uint64(
                        np.uint32(tokens[qa + min_len - 1]))
                if keep[qa]:
                    prefetch(counters, np.int64(_window_mix(ha) & mask))
            if keep[p]:
                i = np.int64(_window_mix(h) & mask)
                if counting:
                    c = counters[i]
                    if c < 255:
                        counters[i] = c + 1
                elif counters[i] >= threshold:
                    first_count[tokens[p]] += 1
                    kept += 1
                else:
                    keep[p] = 0
        if not counting:
            for p in range(e - min_len + 1, e):
                keep[p] = 0
    return kept


@njit(**NJIT)
def count_first(tokens, doc_offsets, d_begin, d_end, keep, first_count):
    """Kept positions per first token (when there is no L-gram filter, L = 2)."""
    kept = 0
    for p in range(doc_offsets[d_begin], doc_offsets[d_end]):
        if keep[p]:
            first_count[tokens[p]] += 1
            kept += 1
    return kept


@njit(**NJIT)
def bucket_by_first(tokens, doc_offsets, d_begin, d_end, keep, fill, pos, doc, nxt, prv,
                    a_begin, a_end, pos_base, doc_base, win_off, win_real, win_t):
    """Step 3d: counting sort of the kept positions of documents
    ``[d_begin, d_end)`` by first token, for first tokens in
    ``[a_begin, a_end)`` (all of them: ``0, vocab_size``).

    ``fill`` holds where this slice's entries of each bucket start (the
    bucket start plus the counts of the slices before it), so slices run in
    parallel into one array and positions stay increasing inside each bucket;
    ``nxt`` and ``prv`` keep the second token and the left neighbour (-1 at a
    document start) so that step 4 reads them sequentially.  ``pos_base`` and
    ``doc_base`` are added to the positions and documents written, so that a
    chunk of the corpus (its own token view and offsets from 0) writes the
    corpus' positions (the out-of-core path).  With windows (``win_off`` not
    empty: each document's first window, and each window's first corpus
    position and excerpt index, see :mod:`engine.kernels.excerpt`) the
    positions written are the excerpt's, the windows of a document walked
    once as its positions increase.
    """
    excerpt = win_off.shape[0] > 0
    for d in range(d_begin, d_end):
        s = doc_offsets[d]
        j = 0
        j_end = 0
        if excerpt:
            j = win_off[doc_base + d]
            j_end = win_off[doc_base + d + 1]
        for p in range(s, doc_offsets[d + 1]):
            if keep[p]:
                a = tokens[p]
                if a < a_begin or a >= a_end:
                    continue
                k = fill[a]
                if excerpt:
                    while j + 1 < j_end and win_real[j + 1] <= p + pos_base:
                        j += 1
                    pos[k] = p + pos_base - win_real[j] + win_t[j]
                else:
                    pos[k] = p + pos_base
                doc[k] = d + doc_base
                nxt[k] = tokens[p + 1]
                prv[k] = tokens[p - 1] if p > s else -1
                fill[a] = k + 1


@njit(**NJIT)
def split_seeds(pos, doc, nxt, prv, first_start, a_begin, a_end, sigma, vocab_size):
    """Step 4: exact bigram groups of the buckets ``[a_begin, a_end)``; drop
    the counting filter's false positives.

    Each first-token bucket is regrouped in place by its second token (a
    stable counting sort through per-token scratch arrays); the groups of at
    least ``sigma`` distinct documents are kept at the front of the bucket.
    Buckets are independent, so disjoint bucket ranges run in parallel.

    A seed whose occurrences all share one left neighbour (none at a document
    start) is dropped here: that is the left-neighbour prune of step 7, read
    from ``prv`` sequentially instead of from the token array at random.

    Returns
    -------
    (seed_lo, seed_hi, seed_df, seed_a, seed_b, kept_occ, false_positive_occ,
     pruned_seeds, pruned_occ)
    """
    cnt = np.zeros(vocab_size, np.int64)
    dfc = np.zeros(vocab_size, np.int64)
    lastd = np.full(vocab_size, -1, np.int64)
    start = np.zeros(vocab_size, np.int64)
    touched = np.empty(vocab_size, np.int32)
    max_bucket = 0
    n_seed_cap = 16
    for a in range(a_begin, a_end):
        sz = first_start[a + 1] - first_start[a]
        if sz > max_bucket:
            max_bucket = sz
        n_seed_cap += sz // max(sigma, 1) + 1
    tpos = np.empty(max_bucket, pos.dtype)
    tdoc = np.empty(max_bucket, np.int32)
    lft = np.zeros(vocab_size, np.int64)
    pruned = 0
    pruned_occ = 0
    seed_lo = np.empty(n_seed_cap, np.int64)
    seed_hi = np.empty(n_seed_cap, np.int64)
    seed_df = np.empty(n_seed_cap, np.int64)
    seed_a = np.empty(n_seed_cap, np.int32)
    seed_b = np.empty(n_seed_cap, np.int32)
    n_seeds = 0
    dropped = 0
    kept_total = 0
    for a in range(a_begin, a_end):
        lo = first_start[a]
        hi = first_start[a + 1]
        if hi == lo:
            continue
        nt = 0
        for i in range(lo, hi):
            w = nxt[i]
            if cnt[w] == 0:
                touched[nt] = w
                nt += 1
            cnt[w] += 1
            if lastd[w] != doc[i]:
                lastd[w] = doc[i]
                dfc[w] += 1
        # left neighbour of each group: -2 unseen, -1 not uniform, else the token
        for j in range(nt):
            lft[touched[j]] = -2
        for i in range(lo, hi):
            w = nxt[i]
            if dfc[w] >= sigma:
                v = prv[i]
                if lft[w] == -2:
                    lft[w] = v if v >= 0 else -1
                elif lft[w] != v:
                    lft[w] = -1
        kept = 0
        for j in range(nt):
            w = touched[j]
            if dfc[w] >= sigma and lft[w] == -1:
                start[w] = kept
                kept += cnt[w]
            else:
                start[w] = -1
                if dfc[w] >= sigma:
                    pruned += 1
                    pruned_occ += cnt[w]
                else:
                    dropped += cnt[w]
        if kept > 0:
            for i in range(lo, hi):
                k = start[nxt[i]]
                if k >= 0:
                    tpos[k] = pos[i]
                    tdoc[k] = doc[i]
                    start[nxt[i]] = k + 1
            for k in range(kept):
                pos[lo + k] = tpos[k]
                doc[lo + k] = tdoc[k]
            for j in range(nt):
                w = touched[j]
                if start[w] >= 0:
                    seed_hi[n_seeds] = lo + start[w]
                    seed_lo[n_seeds] = lo + start[w] - cnt[w]
                    seed_df[n_seeds] = dfc[w]
                    seed_a[n_seeds] = a
                    seed_b[n_seeds] = w
                    n_seeds += 1
            kept_total += kept
        for j in range(nt):
            w = touched[j]
            cnt[w] = 0
            dfc[w] = 0
            lastd[w] = -1
    return (seed_lo[:n_seeds], seed_hi[:n_seeds], seed_df[:n_seeds],
            seed_a[:n_seeds], seed_b[:n_seeds], kept_total, dropped, pruned, pruned_occ)


@njit(**NJIT)
def _uniform_left(tokens, doc_offsets, bpos, bdoc, a, b):
    """True when every occurrence in ``[a, b)`` has the same left token
    (and none starts its document)."""
    p = bpos[a]
    if p == doc_offsets[bdoc[a]]:
        return False
    w = tokens[p - 1]
    for i in range(a + 1, b):
        p = bpos[i]
        if p == doc_offsets[bdoc[i]] or tokens[p - 1] != w:
            return False
    return True


@njit(**NJIT)
def grow(tokens, doc_offsets, seed_pos, seed_doc, seed_lo, seed_hi, seed_df,
         order, sigma, min_len, cnt, dfc, lastd, touched, child_lo, keys,
         bpos, bdoc, st_lo, st_hi, st_len, st_df, st_chk,
         node_rep, node_len, node_df, node_occ, node_max,
         occ_pos, occ_doc, occ_node, rng_pos, rng_len, rng_node, counts):
    """Steps 5-8: depth-first right growth of the seeds ``order``.

    ``tokens`` may be the out-of-core path's excerpt (:mod:`engine.outofcore`):
    a negative id there is a gap, read as the end of the document (and never
    equal to another token).  Every buffer is owned by the calling thread.  ``counts`` holds
    ``[seeds done, nodes, occurrences, ranges]`` on entry and on exit.  The
    kernel stops before a seed that could overflow a buffer and returns
    ``(status, need)``: status 0 = all seeds done, 1 = grow the work buffers
    (``bpos``, ``bdoc``, stack) to ``need``, 2 = grow the outputs.  The
    wrapper then calls again; the seed is grown from scratch.

    Outputs, per node reported (a frequent phrase of length >= ``min_len``
    that is maximal, or at which some occurrence stops growing): its first
    occurrence, length, df, number of occurrences and whether it is maximal;
    the occurrences of maximal nodes; and one covered range per occurrence
    that stops growing at a node of length >= ``min_len``.
    """
    n_done = counts[0]
    n_nodes = counts[1]
    n_occ = counts[2]
    n_rng = counts[3]
    cap = bpos.shape[0]
    scap = st_lo.shape[0]
    for oi in range(n_done, order.shape[0]):
        si = order[oi]
        lo = seed_lo[si]
        k = seed_hi[si] - lo
        # worst case for this seed: each output receives at most k entries
        # per node on the path and per node reported
        if (n_nodes + k + 1 > node_rep.shape[0] or n_occ + k > occ_pos.shape[0]
                or n_rng + k > rng_pos.shape[0]):
            counts[0] = oi
            counts[1] = n_nodes
            counts[2] = n_occ
            counts[3] = n_rng
            return 2, k
        if 2 * k > cap:
            counts[0] = oi
            counts[1] = n_nodes
            counts[2] = n_occ
            counts[3] = n_rng
            return 1, 2 * k
        for i in range(k):
            bpos[i] = seed_pos[lo + i]
            bdoc[i] = seed_doc[lo + i]
        sp = 0
        st_lo[0] = 0
        st_hi[0] = k
        st_len[0] = 2
        st_df[0] = seed_df[si]
        st_chk[0] = 0  # split_seeds already dropped the left-uniform seeds
        sp = 1
        overflow = 0
        while sp > 0:
            sp -= 1
            a = st_lo[sp]
            b = st_hi[sp]
            m = st_len[sp]
            df = st_df[sp]
            if st_chk[sp] and _uniform_left(tokens, doc_offsets, bpos, bdoc, a, b):
                # left-neighbour prune: every occurrence extends to the left
                # by the same token, so this subtree is a shifted copy of part
                # of that longer phrase's subtree (proof in engine.bloomspan)
                continue
            top = b
            # chain skip: extend by the longest common extension of all the
            # occurrences (read along each occurrence, cache-friendly); at each
            # skipped step every occurrence continues with the same token, so
            # the node keeps its occurrences and its df
            # (the room left in every document bounds the extension first, so
            # an occurrence at its document's end stops the reads at once: on
            # a run of one token this keeps a node O(occurrences), not
            # O(occurrences x run length))
            ref = bpos[a]
            lim = doc_offsets[bdoc[a] + 1] - (ref + m)
            for i in range(a + 1, b):
                room = doc_offsets[bdoc[i] + 1] - (bpos[i] + m)
                if room < lim:
                    lim = room
            for i in range(a + 1, b):
                if lim <= 0:
                    break
                p = bpos[i]
                k = 0
                while k < lim:
                    t = tokens[ref + m + k]
                    if t < 0 or tokens[p + m + k] != t:
                        break  # (a negative id is an excerpt's gap)
                    k += 1
                lim = k
            if lim > 0 and b - a > 1:
                m += lim
            while True:
                nt = 0
                for i in range(a, b):
                    q = bpos[i] + m
                    d = bdoc[i]
                    w = tokens[q] if q < doc_offsets[d + 1] else -1
                    if w >= 0:
                        keys[i - a] = w
                        if cnt[w] == 0:
                            touched[nt] = w
                            nt += 1
                        cnt[w] += 1
                        if lastd[w] != d:
                            lastd[w] = d
                            dfc[w] += 1
                    else:
                        keys[i - a] = -1
                nf = 0
                total_f = 0
                for j in range(nt):
                    w = touched[j]
                    if dfc[w] >= sigma:
                        nf += 1
                        total_f += cnt[w]
                if nf == 1 and total_f == b - a:
                    # a chain: every occurrence continues with the same token
                    for j in range(nt):
                        w = touched[j]
                        cnt[w] = 0
                        dfc[w] = 0
                        lastd[w] = -1
                    m += 1
                    continue
                break
            node = -1
            if m >= min_len and (nf == 0 or total_f < b - a):
                node = n_nodes
                n_nodes += 1
                node_rep[node] = bpos[a]
                node_len[node] = m
                node_df[node] = df
                node_occ[node] = b - a
                node_max[node] = 0
            if nf == 0:
                for j in range(nt):
                    w = touched[j]
                    cnt[w] = 0
                    dfc[w] = 0
                    lastd[w] = -1
                if node >= 0:
                    for i in range(a, b):
                        rng_pos[n_rng] = bpos[i]
                        rng_len[n_rng] = m
                        rng_node[n_rng] = node
                        n_rng += 1
                    if left_maximal(tokens, doc_offsets, bpos, bdoc, a, b,
                                    sigma, cnt, dfc, lastd, touched):
                        node_max[node] = 1
                        for i in range(a, b):
                            occ_pos[n_occ] = bpos[i]
                            occ_doc[n_occ] = bdoc[i]
                            occ_node[n_occ] = node
                            n_occ += 1
                continue
            # scatter the occurrences of the frequent children above the top
            if top + total_f > cap or sp + nf > scap:
                overflow = 1
                for j in range(nt):
                    w = touched[j]
                    cnt[w] = 0
                    dfc[w] = 0
                    lastd[w] = -1
                break
            off = top
            for j in range(nt):
                w = touched[j]
                if dfc[w] >= sigma:
                    child_lo[j] = off
                    off += cnt[w]
                    cnt[w] = child_lo[j]
                else:
                    cnt[w] = -1
            for i in range(a, b):
                w = keys[i - a]
                if w >= 0 and cnt[w] >= 0:
                    dst = cnt[w]
                    bpos[dst] = bpos[i]
                    bdoc[dst] = bdoc[i]
                    cnt[w] = dst + 1
                elif node >= 0:
                    rng_pos[n_rng] = bpos[i]
                    rng_len[n_rng] = m
                    rng_node[n_rng] = node
                    n_rng += 1
            # the node's own slice [a, b) is dead now: move the children down
            # onto it, so the buffer holds O(largest seed) entries along any
            # path (without this a run of k copies of one token, where every
            # level keeps all but one occurrence, needs k^2/2 entries)
            shift = 0
            if b - a >= 64:
                shift = top - a
                for i in range(top, off):
                    bpos[i - shift] = bpos[i]
                    bdoc[i - shift] = bdoc[i]
            for j in range(nt):
                w = touched[j]
                if dfc[w] >= sigma:
                    st_lo[sp] = child_lo[j] - shift
                    st_hi[sp] = cnt[w] - shift
                    st_len[sp] = m + 1
                    st_df[sp] = dfc[w]
                    st_chk[sp] = 1
                    sp += 1
                cnt[w] = 0
                dfc[w] = 0
                lastd[w] = -1
        if overflow:
            # counts[1:] still hold the output sizes at this seed's start, so
            # its partial output is dropped; grow and grow this seed again
            counts[0] = oi
            return 1, 2 * cap
        counts[1] = n_nodes
        counts[2] = n_occ
        counts[3] = n_rng
        counts[0] = oi + 1
        n_done = oi + 1
    counts[0] = order.shape[0]
    counts[1] = n_nodes
    counts[2] = n_occ
    counts[3] = n_rng
    return 0, 0
