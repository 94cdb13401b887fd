"""Boilerplate-block kernels (:mod:`engine.blocks` holds the definition).

Every kernel is a pure function over numpy arrays.  Positions are global
token positions (``doc_offsets[d] + token``) unless a name says otherwise.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NJIT
from .hashing import POLY, mix64, poly_power


@njit(**NJIT)
def same_tokens(tokens, a, b, n):
    """True when the ``n`` tokens from ``a`` equal the ``n`` tokens from ``b``
    (a hash match is always checked with it: a hash is never trusted)."""
    for j in range(n):
        if tokens[a + j] != tokens[b + j]:
            return False
    return True


@njit(**NJIT)
def gram_hashes(tokens, doc_offsets, L, within, use_within):
    """A 64-bit hash of the L-gram starting at each position (a polynomial
    rolling hash, finalised by ``mix64``), and whether an L-gram starts there:
    it fits in its document and, when ``use_within``, all its tokens are True
    in ``within``.  O(tokens)."""
    n = tokens.shape[0]
    h = np.zeros(n, np.uint64)
    ok = np.zeros(n, np.bool_)
    top = poly_power(L)
    run = 0  # length of the current run of ``within`` tokens
    for d in range(doc_offsets.shape[0] - 1):
        a = doc_offsets[d]
        e = doc_offsets[d + 1]
        if e - a < L:
            continue
        x = np.uint64(0)
        for p in range(a, a + L - 1):
            x = x * POLY + np.uint64(tokens[p] + 1)
        run = 0
        if use_within:
            for p in range(a, a + L - 1):
                run = run + 1 if within[p] else 0
        for s in range(a, e - L + 1):
            q = s + L - 1
            x = x * POLY + np.uint64(tokens[q] + 1)
            if use_within:
                run = run + 1 if within[q] else 0
                good = run >= L
            else:
                good = True
            if good:
                h[s] = mix64(x)
                ok[s] = True
            x -= np.uint64(tokens[s] + 1) * top
    return h, ok


@njit(**NJIT)
def doc_count_filter(h, ok, doc_offsets, sigma, bits):
    """Clear ``ok`` at the L-grams that cannot have df >= sigma: per hash
    bucket (the low ``bits`` bits), the number of distinct documents holding
    any L-gram of the bucket bounds the df of each of them.  Exact: only
    L-grams with df < sigma are dropped.  One int64 per bucket packs the
    last document seen (high bits) and the count (low 31 bits)."""
    size = np.int64(1) << bits
    mask = np.uint64(size - 1)
    low = (np.int64(1) << 31) - 1  # the count field
    cell = np.full(size, -1 << 31, np.int64)  # document -1, count 0
    for d in range(doc_offsets.shape[0] - 1):
        dd = np.int64(d)
        for s in range(doc_offsets[d], doc_offsets[d + 1]):
            if ok[s]:
                k = np.int64(h[s] & mask)
                c = cell[k]
                if (c >> 31) != dd:
                    cell[k] = (dd << 31) | ((c & low) + 1)
    kept = 0
    for s in range(h.shape[0]):
        if ok[s]:
            if (cell[np.int64(h[s] & mask)] & low) < sigma:
                ok[s] = False
            else:
                kept += 1
    return kept


@njit(**NJIT)
def _lookup(tokens, s, x, L, table, mask, gpos, ghash, glast, ng):
    """The group of the L-gram at ``s`` (hash ``x``) in the open-addressing
    ``table``, a new one (``ng``) when its text is not there yet; returns
    (group, groups now)."""
    k = np.int64(x & mask)
    while True:
        g = table[k]
        if g == -1:
            g = ng
            table[k] = g
            gpos[g] = s
            ghash[g] = x
            glast[g] = -1
            return g, ng + 1
        if ghash[g] == x and same_tokens(tokens, gpos[g], s, L):
            return g, ng
        k = (k + 1) & np.int64(mask)


@njit(**NJIT)
def group_grams_from(tokens, doc_offsets, within, L, shift, part, d_begin, at, base, table, gpos, ghash,
                     glast, gdf, ng):
    """Group the L-grams wholly inside ``within`` by their text, exactly (an
    open-addressing table keyed by the hash, as :func:`gram_hashes` hashes,
    every match verified token by token against the group's first
    occurrence: a hash is never trusted), those whose hash is in part ``part`` of the hash
    range (its top bits, ``hash >> shift``; ``shift`` 64: one part), from
    document ``d_begin`` on: each one's group id, ``base`` added, written to
    ``at`` at its position; the groups' first occurrence, hash, last
    document and df in ``gpos``, ``ghash``, ``glast``, ``gdf`` (``ng`` of
    them so far), the open-addressing ``table`` at most half full.

    Returns ``(d, ng)``: ``d`` is the number of documents when all are done,
    else the document before which the group arrays or the table need room
    for its L-grams (the caller grows them and calls again from ``d``).
    Equal texts have equal hashes, so a text's occurrences all fall in one
    part, and the parts' groups are the groups of all the L-grams."""
    mask = np.uint64(table.shape[0] - 1)
    cap = gpos.shape[0]
    top = poly_power(L)
    n_docs = doc_offsets.shape[0] - 1
    for d in range(d_begin, n_docs):
        a = doc_offsets[d]
        e = doc_offsets[d + 1]
        if e - a < L:
            continue
        if ng + (e - a) > cap or 2 * (ng + (e - a)) > table.shape[0]:
            return d, ng
        x = np.uint64(0)
        run = 0
        for p in range(a, a + L - 1):
            x = x * POLY + np.uint64(tokens[p] + 1)
            run = run + 1 if within[p] else 0
        prev = -1  # the group of position s - 1 (-1: none)
        for s in range(a, e - L + 1):
            q = s + L - 1
            x = x * POLY + np.uint64(tokens[q] + 1)
            run = run + 1 if within[q] else 0
            y = mix64(x)
            x -= np.uint64(tokens[s] + 1) * top
            if run < L or (shift < 64 and np.int64(y >> np.uint64(shift)) != part):
                prev = -1
                continue
            g = -1
            # repeated text is read along a run, so the L-gram at s is most
            # often the one after the previous position's group's first
            # occurrence (checked exactly: the previous L-gram's equality
            # gives the first L-1 tokens, the last is compared)
            if prev >= 0:
                c = gpos[prev] + 1
                if c < s and at[c] >= base and tokens[c + L - 1] == tokens[s + L - 1]:
                    g = at[c] - base
            if g < 0:
                g, ng = _lookup(tokens, s, y, L, table, mask, gpos, ghash, glast, ng)
            if glast[g] != d:
                glast[g] = d
                gdf[g] += 1
            at[s] = g + base
            prev = g
    return n_docs, ng


@njit(**NJIT)
def rehash(table, ghash, ng):
    """Put groups ``0 .. ng - 1`` (their hashes ``ghash``) into the empty
    open-addressing ``table`` (a larger one, when the old one is half full)."""
    mask = np.uint64(table.shape[0] - 1)
    for g in range(ng):
        k = np.int64(ghash[g] & mask)
        while table[k] != -1:
            k = (k + 1) & np.int64(mask)
        table[k] = g


@njit(**NJIT)
def windows_at(at, gdf, sigma, lo, hi):
    """The windows of positions ``[lo, hi)`` from the groups written by
    :func:`group_grams_from`: the positions whose group has df >= sigma,
    that df, and the group as the key."""
    n = 0
    for s in range(lo, hi):
        g = at[s]
        if g >= 0 and gdf[g] >= sigma:
            n += 1
    ws = np.empty(n, np.int64)
    wdf = np.empty(n, np.int64)
    wk = np.empty(n, np.int64)
    j = 0
    for s in range(lo, hi):
        g = at[s]
        if g >= 0 and gdf[g] >= sigma:
            ws[j] = s
            wdf[j] = gdf[g]
            wk[j] = g
            j += 1
    return ws, wdf, wk


@njit(**NJIT)
def levels(n, L, w_start, w_df, t_start, t_end, t_df):
    """Per position: the level m (largest df of a window holding it, 0 when
    uncovered); per boundary t (between t-1 and t): the strength b (largest df
    of a window holding both); per position: the smallest end of a window
    starting there or later (``minend``, to test whether a span holds a whole
    window).

    L-gram windows: b(t) is the largest df of a window starting in
    [t-L+1, t-1], a sliding maximum of width L-1 (van Herk / Gil-Werman:
    prefix and suffix maxima per block of L-1 positions, O(n)), and
    m(t) = max(b(t), df of the window starting at t).  Template windows:
    :func:`_template_levels`, O(w log w) for w of them plus the positions
    they cover (not their summed lengths: overlapping occurrences of
    webdocs' templates sum to 1.3G tokens over 16M covered)."""
    x = np.zeros(n, np.int32)
    minend = np.full(n + 1, n + 1, np.int64)
    for i in range(w_start.shape[0]):
        x[w_start[i]] = w_df[i]
        minend[w_start[i]] = w_start[i] + L
    b = np.zeros(n + 1, np.int32)
    m = np.empty(n, np.int32)
    w = L - 1
    if w > 0 and n > 0:
        suf = np.empty(n, np.int32)  # max of x from i to the end of i's block of w
        last = n - 1
        blk_end = (last // w) * w  # the last block starts here
        for i in range(n - 1, -1, -1):
            if i == last or i + 1 == blk_end:
                suf[i] = x[i]
                if i + 1 == blk_end:
                    blk_end -= w
            else:
                suf[i] = max(suf[i + 1], x[i])
        pre = np.int32(0)  # max of x from the start of t-1's block to t-1
        k = 0  # position of t-1 in its block
        for t in range(1, n + 1):
            if k == 0:
                pre = x[t - 1]
            elif x[t - 1] > pre:
                pre = x[t - 1]
            k += 1
            if k == w:
                k = 0
            v = pre
            if t - w >= 0 and suf[t - w] > v:
                v = suf[t - w]
            b[t] = v
    for p in range(n):
        m[p] = x[p] if x[p] > b[p] else b[p]
    _template_levels(m, b, minend, t_start, t_end, t_df)
    for p in range(n - 1, -1, -1):
        if minend[p + 1] < minend[p]:
            minend[p] = minend[p + 1]
    return m, b, minend


@njit(**NJIT)
def _template_levels(m, b, minend, t_start, t_end, t_df):
    """The template windows' part of :func:`levels` (windows by start): m(p)
    is raised to the largest df of a window holding p, b(t) to the largest
    df of a window holding t-1 and t (start < t < end), in one sweep over
    the positions the windows cover with a max-heap of the open windows by
    df; a window is removed when it reaches the top after its end (lazy
    deletion)."""
    w = t_start.shape[0]
    hdf = np.empty(w, np.int32)
    hend = np.empty(w, np.int64)
    size = 0
    i = 0
    t = 0
    while i < w or size > 0:
        if size == 0 and t < t_start[i]:
            t = t_start[i]  # nothing open: jump to the next window
        # b(t): the open windows started before t and ending after t
        while size > 0 and hend[0] <= t:
            size = _heap_pop(hdf, hend, size)
        if size > 0 and hdf[0] > b[t]:
            b[t] = hdf[0]
        while i < w and t_start[i] == t:
            if t_end[i] < minend[t]:
                minend[t] = t_end[i]
            if t_end[i] > t:
                size = _heap_push(hdf, hend, size, np.int32(t_df[i]), t_end[i])
            i += 1
        if size > 0 and hdf[0] > m[t]:
            m[t] = hdf[0]
        t += 1


@njit(**NJIT)
def _heap_push(hdf, hend, size, v, e):
    j = size
    while j > 0:
        up = (j - 1) >> 1
        if hdf[up] >= v:
            break
        hdf[j] = hdf[up]
        hend[j] = hend[up]
        j = up
    hdf[j] = v
    hend[j] = e
    return size + 1


@njit(**NJIT)
def _heap_pop(hdf, hend, size):
    size -= 1
    v = hdf[size]
    e = hend[size]
    j = 0
    while True:
        c = 2 * j + 1
        if c >= size:
            break
        if c + 1 < size and hdf[c + 1] > hdf[c]:
            c += 1
        if hdf[c] <= v:
            break
        hdf[j] = hdf[c]
        hend[j] = hend[c]
        j = c
    if size > 0:
        hdf[j] = v
        hend[j] = e
    return size


@njit(**NJIT)
def pieces(doc_offsets, m, b, minend):
    """Rules 3 and 5: cut the runs of covered tokens, then join keyless pieces.

    A boundary t inside a run is cut when 2 b(t) <= max(m(t-1), m(t)).  Then, in rounds until every piece of the run has a key
    (a window wholly inside, ``minend[start] <= end``), every keyless piece
    drops the boundary it shares with a neighbour in the run, the one with
    the larger b (the left one on ties); all drops of a round at once.

    Returns the start and end (global, end exclusive) of every piece, in
    position order, and the number of rounds of the longest join."""
    n = m.shape[0]
    cap = 16
    ps = np.empty(cap, np.int64)
    pe = np.empty(cap, np.int64)
    npc = 0
    cuts = np.empty(n + 1, np.int64)
    keep = np.empty(n + 1, np.bool_)
    most = 0
    for d in range(doc_offsets.shape[0] - 1):
        p = doc_offsets[d]
        end = doc_offsets[d + 1]
        while p < end:
            if m[p] == 0:
                p += 1
                continue
            lo = p
            while p < end and m[p] > 0:
                p += 1
            hi = p
            k = 0
            cuts[k] = lo
            k += 1
            for t in range(lo + 1, hi):
                left = m[t - 1]
                right = m[t]
                top = left if left > right else right
                if 2 * np.int64(b[t]) <= top:
                    cuts[k] = t
                    k += 1
            cuts[k] = hi  # cuts[0] and cuts[k] are the run's ends
            rounds = 0
            while True:
                for i in range(k + 1):
                    keep[i] = True
                changed = False
                for i in range(k):  # piece i is [cuts[i], cuts[i + 1])
                    if minend[cuts[i]] <= cuts[i + 1]:
                        continue
                    has_l = i > 0
                    has_r = i + 1 < k
                    if has_l and (not has_r or b[cuts[i]] >= b[cuts[i + 1]]):
                        keep[i] = False
                    else:
                        keep[i + 1] = False
                    changed = True
                if not changed:
                    break
                rounds += 1
                j = 0
                for i in range(k + 1):
                    if keep[i]:
                        cuts[j] = cuts[i]
                        j += 1
                k = j - 1
            if rounds > most:
                most = rounds
            if npc + k > cap:
                while npc + k > cap:
                    cap *= 2
                ps2 = np.empty(cap, np.int64)
                pe2 = np.empty(cap, np.int64)
                ps2[:npc] = ps[:npc]
                pe2[:npc] = pe[:npc]
                ps = ps2
                pe = pe2
            for i in range(k):
                ps[npc] = cuts[i]
                pe[npc] = cuts[i + 1]
                npc += 1
    return ps[:npc].copy(), pe[:npc].copy(), most


@njit(**NJIT)
def find_root(parent, x):
    while parent[x] != x:
        parent[x] = parent[parent[x]]
        x = parent[x]
    return x


@njit(**NJIT)
def _piece_of(ps, pe, j, a, e):
    """From piece ``j`` on, the piece holding the whole window [a, e) (-1:
    none), and the piece index to resume from (windows come by start)."""
    npc = ps.shape[0]
    while j < npc and pe[j] <= a:
        j += 1
    if j == npc or a < ps[j] or e > pe[j]:
        return -1, j
    return j, j


@njit(**NJIT)
def _union(parent, first, key, j):
    f = first[key]
    if f == -1:
        first[key] = j
        return
    r1 = find_root(parent, f)
    r2 = find_root(parent, j)
    if r1 != r2:
        if r1 < r2:
            parent[r2] = r1
        else:
            parent[r1] = r2


@njit(**NJIT)
def link_windows(ps, pe, base, w_start, w_end, w_key, L, first, parent, keyed):
    """The L-gram part of :func:`link_pieces` for pieces ``base + j`` (``ps``,
    ``pe`` by start) and windows by start, on a union-find (``parent``, and
    ``first``: each key's first piece) that earlier calls may have filled:
    the pieces of a corpus linked a chunk of documents at a time.  Marks
    ``keyed[j]`` for each piece holding a window."""
    npc = ps.shape[0]
    j = 0
    for i in range(w_start.shape[0]):
        a = w_start[i]
        k, j = _piece_of(ps, pe, j, a, w_end[i] if w_end.shape[0] else a + L)
        if j == npc:
            break
        if k >= 0:
            keyed[k] = True
            _union(parent, first, w_key[i], base + k)


@njit(**NJIT)
def roots(parent):
    """Every element's root, in place."""
    for i in range(parent.shape[0]):
        parent[i] = find_root(parent, i)


@njit(**NJIT)
def link_templates(ps, pe, base, t_start, t_end, t_key, t_base, first, parent, keyed):
    """The template part of :func:`link_pieces` for pieces ``base + j``
    (``ps``, ``pe`` by start; ``keyed`` marks those holding an L-gram window,
    from :func:`link_windows`) and template windows by start, on the same
    union-find: a template window keys (``t_base + t_key``) the piece it lies
    wholly inside and fills at least half of, and every piece it lies inside
    that has no other key.  Marks ``keyed`` for the pieces it filled."""
    npc = ps.shape[0]
    for fallback in (False, True):  # the filling templates, then any template of a piece without a key
        j = 0
        for i in range(t_start.shape[0]):
            k, j = _piece_of(ps, pe, j, t_start[i], t_end[i])
            if j == npc:
                break
            if k < 0:
                continue
            fills = 2 * (t_end[i] - t_start[i]) >= pe[k] - ps[k]
            if (fills and not fallback) or (fallback and not keyed[k]):
                _union(parent, first, t_base + t_key[i], base + k)
        if not fallback:
            j = 0
            for i in range(t_start.shape[0]):
                k, j = _piece_of(ps, pe, j, t_start[i], t_end[i])
                if j == npc:
                    break
                if k >= 0 and 2 * (t_end[i] - t_start[i]) >= pe[k] - ps[k]:
                    keyed[k] = True


@njit(**NJIT)
def link_pieces(ps, pe, w_start, w_end, w_key, n_keys, L, t_start, t_end, t_key, t_base):
    """Rule 6: union-find over pieces, two pieces joined when they share a
    key.  The L-gram windows (``w_start``, ends ``w_end`` or, when ``w_end``
    is empty, ``w_start + L``; keys ``w_key``) key the pieces they lie wholly
    inside; the template windows (``t_start``, ``t_end``, keys ``t_base +
    t_key``) key the pieces they lie wholly inside and fill at least half of,
    and every piece they lie inside that has no other key.  Each stream sorted
    by start.  Returns each piece's root."""
    npc = ps.shape[0]
    parent = np.arange(npc)
    first = np.full(n_keys, -1, np.int64)
    keyed = np.zeros(npc, np.bool_)
    link_windows(ps, pe, 0, w_start, w_end, w_key, L, first, parent, keyed)
    link_templates(ps, pe, 0, t_start, t_end, t_key, t_base, first, parent, keyed)
    roots(parent)
    return parent


@njit(**NJIT)
def edge_roots(n, u, v):
    """Connected components of nodes 0..n-1 joined by the edges (u[i], v[i]):
    each node's root, the smallest node of its component (a union-find)."""
    parent = np.arange(n)
    for i in range(u.shape[0]):
        r1 = find_root(parent, u[i])
        r2 = find_root(parent, v[i])
        if r1 < r2:
            parent[r2] = r1
        elif r2 < r1:
            parent[r1] = r2
    roots(parent)
    return parent


@njit(**NJIT)
def merge_spans(ps, pe, pdoc, pblock):
    """Adjacent pieces of one block in one document become one span."""
    npc = ps.shape[0]
    ss = np.empty(npc, np.int64)
    se = np.empty(npc, np.int64)
    sd = np.empty(npc, np.int64)
    sb = np.empty(npc, np.int64)
    k = 0
    for i in range(npc):
        if k > 0 and se[k - 1] == ps[i] and sd[k - 1] == pdoc[i] and sb[k - 1] == pblock[i]:
            se[k - 1] = pe[i]
        else:
            ss[k] = ps[i]
            se[k] = pe[i]
            sd[k] = pdoc[i]
            sb[k] = pblock[i]
            k += 1
    return ss[:k].copy(), se[:k].copy(), sd[:k].copy(), sb[:k].copy()


@njit(**NJIT)
def block_stats(tokens, ss, se, sd, sb, n_blocks):
    """Per block: distinct documents and the representative span (the most
    frequent span text; ties: the longest, then the first).  Spans are in
    position order.  Texts are grouped by hash and verified token by token."""
    ns = ss.shape[0]
    docs = np.zeros(n_blocks, np.int64)
    lastd = np.full(n_blocks, -1, np.int64)
    size = 1
    while size < 2 * ns + 2:
        size *= 2
    mask = np.uint64(size - 1)
    table = np.full(size, -1, np.int64)
    grep = np.empty(ns, np.int64)  # first span of each text group
    ghash = np.empty(ns, np.uint64)
    gcount = np.zeros(ns, np.int64)
    ng = 0
    for i in range(ns):
        blk = sb[i]
        if lastd[blk] != sd[i]:
            lastd[blk] = sd[i]
            docs[blk] += 1
        x = np.uint64(se[i] - ss[i]) * POLY + np.uint64(blk)
        for p in range(ss[i], se[i]):
            x = x * POLY + np.uint64(tokens[p] + 1)
        x = mix64(x)
        k = np.int64(x & mask)
        while True:
            g = table[k]
            if g == -1:
                g = ng
                ng += 1
                table[k] = g
                grep[g] = i
                ghash[g] = x
                break
            if ghash[g] == x:
                r = grep[g]
                n = se[i] - ss[i]
                if sb[r] == blk and se[r] - ss[r] == n and same_tokens(tokens, ss[r], ss[i], n):
                    break
            k = (k + 1) & np.int64(mask)
        gcount[g] += 1
    best = np.full(n_blocks, -1, np.int64)
    for g in range(ng):  # groups in order of first span: the first wins ties
        r = grep[g]
        blk = sb[r]
        c = best[blk]
        if c == -1:
            best[blk] = g
            continue
        rc = grep[c]
        if gcount[g] > gcount[c] or (gcount[g] == gcount[c] and se[r] - ss[r] > se[rc] - ss[rc]):
            best[blk] = g
    rep = np.empty(n_blocks, np.int64)
    for blk in range(n_blocks):
        rep[blk] = grep[best[blk]]
    return docs, rep


@njit(**NJIT)
def block_of_groups(ss, se, sb, n_blocks, order, group_lo, group_hi, r_start, r_end):
    """For each group of ranges (``order[group_lo[g]:group_hi[g]]`` index the
    ranges ``[r_start, r_end)``, global): the block holding most of their
    tokens, ties to the smaller id; -1 when no token is covered.  Spans
    sorted by start, disjoint."""
    ng = group_lo.shape[0]
    out = np.full(ng, -1, np.int64)
    count = np.zeros(n_blocks, np.int64)
    touched = np.empty(n_blocks, np.int64)
    ns = ss.shape[0]
    for g in range(ng):
        nt = 0
        for q in range(group_lo[g], group_hi[g]):
            r = order[q]
            a = r_start[r]
            e = r_end[r]
            # first span ending after a
            lo = 0
            hi = ns
            while lo < hi:
                mid = (lo + hi) // 2
                if se[mid] <= a:
                    lo = mid + 1
                else:
                    hi = mid
            i = lo
            while i < ns and ss[i] < e:
                x = ss[i] if ss[i] > a else a
                y = se[i] if se[i] < e else e
                if y > x:
                    blk = sb[i]
                    if count[blk] == 0:
                        touched[nt] = blk
                        nt += 1
                    count[blk] += y - x
                i += 1
        bestb = -1
        bestc = 0
        for j in range(nt):
            blk = touched[j]
            c = count[blk]
            if c > bestc or (c == bestc and blk < bestb):
                bestb = blk
                bestc = c
            count[blk] = 0
        out[g] = bestb
    return out


@njit(**NJIT)
def compact_ranges(tokens, doc_offsets, starts, ends):
    """:func:`compact_coverage` of the mask of the ranges ``[starts, ends)``
    (global positions, by increasing start, none across a document end),
    without the mask: it reads only the covered tokens.  Same four arrays,
    and True; False (and empty arrays) for ranges that cross a document end.
    O(ranges + covered tokens + documents)."""
    n_docs = doc_offsets.shape[0] - 1
    none32 = np.empty(0, np.int32)
    none64 = np.empty(0, np.int64)
    size, _ = _compact_pass(tokens, doc_offsets, starts, ends, False, none32, none64, np.empty(0, np.bool_),
                            none64)
    if size < 0:
        return none32, np.zeros(n_docs + 1, np.int64), none64, np.empty(0, np.bool_), False
    compact = np.empty(size, np.int32)
    pos_in_doc = np.empty(size, np.int64)
    mask = np.empty(size, np.bool_)
    c_offsets = np.zeros(n_docs + 1, np.int64)
    _, top = _compact_pass(tokens, doc_offsets, starts, ends, True, compact, pos_in_doc, mask, c_offsets)
    sep = top + 1 if top >= 0 else 0
    for j in range(size):
        if not mask[j]:
            compact[j] = sep
    return compact, c_offsets, pos_in_doc, mask, True


@njit(**NJIT)
def compact_positions(doc_offsets, c_offsets, pos_in_doc, q):
    """The compact positions (:func:`compact_ranges`) of the global positions
    ``q`` (sorted, each a covered token): one walk over both, O(len(q) +
    covered tokens).  -1 for a position that is not covered."""
    out = np.empty(q.shape[0], np.int64)
    d = 0
    j = 0
    for i in range(q.shape[0]):
        p = q[i]
        while doc_offsets[d + 1] <= p:
            d += 1
        if j < c_offsets[d]:
            j = c_offsets[d]
        rel = p - doc_offsets[d]
        # covered tokens come by position within a document (-1: a separator)
        while j < c_offsets[d + 1] and (pos_in_doc[j] < rel):
            j += 1
        out[i] = j if j < c_offsets[d + 1] and pos_in_doc[j] == rel else -1
    return out


@njit(**NJIT)
def _compact_pass(tokens, doc_offsets, starts, ends, fill, compact, pos_in_doc, mask, c_offsets):
    """One walk of :func:`compact_ranges`: the ranges merged per document
    (one separator, set later, between two runs of a document).  ``fill``
    false: returns (size, -1), size -1 for a range across a document end;
    true: writes the arrays and returns (size, the largest covered id)."""
    n_docs = doc_offsets.shape[0] - 1
    k = 0
    d = 0
    cur_doc = -1
    cur_end = -1
    top = -1
    for i in range(starts.shape[0]):
        s = starts[i]
        e = ends[i]
        while doc_offsets[d + 1] <= s:
            if fill:
                c_offsets[d + 1] = k
            d += 1
        if e > doc_offsets[d + 1]:
            return -1, -1
        if d == cur_doc and s <= cur_end:
            a = cur_end
        else:
            if d == cur_doc:
                if fill:
                    compact[k] = -1  # the separator
                    pos_in_doc[k] = -1
                    mask[k] = False
                k += 1
            a = s
            cur_doc = d
        if e > a:
            if fill:
                base = doc_offsets[d]
                for p in range(a, e):
                    t = tokens[p]
                    compact[k + p - a] = t
                    if t > top:
                        top = t
                    pos_in_doc[k + p - a] = p - base
                    mask[k + p - a] = True
            k += e - a
            cur_end = e
    if fill:
        while d < n_docs:
            c_offsets[d + 1] = k
            d += 1
    return k, top


@njit(**NJIT)
def compact_coverage(tokens, doc_offsets, covered):
    """The covered tokens of each document as a pseudo-document: its runs of
    covered tokens in order, a separator token (one id above every covered
    token's) between two runs.  Returns (compact tokens, their doc offsets,
    each compact position's position in its document (-1: a separator),
    the mask of compact positions that are covered tokens).  One pass, O(n)."""
    n_docs = doc_offsets.shape[0] - 1
    size = 0
    top = -1
    for d in range(n_docs):
        prev = False
        seen = False
        for p in range(doc_offsets[d], doc_offsets[d + 1]):
            if covered[p]:
                if not prev and seen:
                    size += 1
                size += 1
                seen = True
                if tokens[p] > top:
                    top = tokens[p]
            prev = covered[p]
    sep = top + 1 if top >= 0 else 0
    compact = np.empty(size, np.int32)
    pos_in_doc = np.empty(size, np.int64)
    mask = np.empty(size, np.bool_)
    c_offsets = np.zeros(n_docs + 1, np.int64)
    k = 0
    for d in range(n_docs):
        s = doc_offsets[d]
        prev = False
        seen = False
        for p in range(s, doc_offsets[d + 1]):
            if covered[p]:
                if not prev and seen:
                    compact[k] = sep
                    pos_in_doc[k] = -1
                    mask[k] = False
                    k += 1
                compact[k] = tokens[p]
                pos_in_doc[k] = p - s
                mask[k] = True
                k += 1
                seen = True
            prev = covered[p]
        c_offsets[d + 1] = k
    return compact, c_offsets, pos_in_doc, mask
