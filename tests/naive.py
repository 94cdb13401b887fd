"""Brute-force oracles: the definitions, written as plainly as possible.

Nothing here imports the engine.  Used by the tests only, on small inputs.
"""
from __future__ import annotations

from collections import defaultdict

import regex

TOKEN_RE = regex.compile(r"[\p{L}\p{M}\p{N}]+")


def tokenize(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """Tokens (lowercased with str.lower) and their code-point spans."""
    toks, spans = [], []
    for m in TOKEN_RE.finditer(text):
        toks.append(m.group().lower())
        spans.append((m.start(), m.end()))
    return toks, spans


def phrase_docs(docs: list[list[str]]) -> dict[tuple, set[int]]:
    """Every phrase (tuple of tokens, length >= 1) -> set of documents."""
    out: dict[tuple, set[int]] = defaultdict(set)
    for d, toks in enumerate(docs):
        n = len(toks)
        for i in range(n):
            for j in range(i + 1, n + 1):
                out[tuple(toks[i:j])].add(d)
    return out


def mine(docs: list[list[str]], sigma: int, min_len: int):
    """Maximal frequent phrases (phrase tuple -> (df, occurrences)) and the
    covered-token count of each document."""
    pd = phrase_docs(docs)
    frequent = {p for p, s in pd.items() if len(s) >= sigma}
    vocab = {t for toks in docs for t in toks}
    answer = {}
    for p in frequent:
        if len(p) < min_len:
            continue
        ext = any((w,) + p in frequent or p + (w,) in frequent for w in vocab)
        if not ext:
            occ = sum(
                1
                for toks in docs
                for i in range(len(toks) - len(p) + 1)
                if tuple(toks[i:i + len(p)]) == p
            )
            answer[p] = (len(pd[p]), occ)
    masks = window_masks(docs, min_len, frequent)
    return answer, [sum(m) for m in masks], masks


def window_masks(docs: list[list[str]], min_len: int, grams) -> list[list[bool]]:
    """Per document: True at every token inside an occurrence of an L-gram of ``grams``."""
    masks = []
    for toks in docs:
        mask = [False] * len(toks)
        for i in range(len(toks) - min_len + 1):
            if tuple(toks[i:i + min_len]) in grams:
                for k in range(i, i + min_len):
                    mask[k] = True
        masks.append(mask)
    return masks


def cut_mask(docs: list[list[str]], min_len: int, noise: list[list[str]], keep: list[list[str]]):
    """The cut rule: a token is cut when it lies in an occurrence of an L-gram
    that occurs inside some noise phrase and inside no keep phrase."""
    def grams(phrases):
        return {tuple(p[i:i + min_len]) for p in phrases for i in range(len(p) - min_len + 1)}

    return window_masks(docs, min_len, grams(noise) - grams(keep))


def cut_text(text: str, spans: list[tuple[int, int]], mask: list[bool]) -> str:
    """Each maximal run of cut tokens loses its characters, from the first
    character of its first token to the last of its last, for one space."""
    out, last, i = [], 0, 0
    while i < len(mask):
        if not mask[i]:
            i += 1
            continue
        j = i
        while j + 1 < len(mask) and mask[j + 1]:
            j += 1
        out.append(text[last:spans[i][0]])
        out.append(" ")
        last = spans[j][1]
        i = j + 1
    out.append(text[last:])
    return "".join(out)


# -- templates (issue 9) ----------------------------------------------------
SLOT = None  # a slot in a pattern tuple: 1 to W tokens


def pattern_matches(pattern: tuple, doc: list, start: int, max_slot: int) -> set[int]:
    """Every end e such that doc[start:e] matches the pattern."""
    ends = {start}
    for item in pattern:
        nxt = set()
        for e in ends:
            if item is SLOT:
                nxt.update(e + w for w in range(1, max_slot + 1) if e + w <= len(doc))
            elif e < len(doc) and doc[e] == item:
                nxt.add(e + 1)
        ends = nxt
    return ends


def pattern_fillers(pattern: tuple, doc: list, start: int, max_slot: int) -> list[tuple]:
    """Every way doc[start:...] matches the pattern: (end, fillers), the
    fillers as token tuples, one per slot."""
    out = []

    def rec(i, p, fills):
        if i == len(pattern):
            out.append((p, tuple(fills)))
            return
        item = pattern[i]
        if item is SLOT:
            for w in range(1, max_slot + 1):
                if p + w <= len(doc):
                    rec(i + 1, p + w, fills + [tuple(doc[p:p + w])])
        elif p < len(doc) and doc[p] == item:
            rec(i + 1, p + 1, fills)

    rec(0, start, [])
    return out


def decision_cut(docs: list[list[str]], min_len: int, noise: list[str], keep: list[str], max_slot: int):
    """The whole cut rule of engine.clean, decisions as texts (``*`` a slot):
    (phrase cut minus keep-template occurrences) united with (noise-template
    occurrences minus keep-template occurrences minus keep-phrase L-gram
    occurrences)."""
    def parse(text):
        return tuple(SLOT if t == "*" else t for t in text.split(" "))

    def phrases(texts):
        return [t.split(" ") for t in texts if "*" not in t.split(" ")]

    def occurrence_masks(texts):
        patterns = [parse(t) for t in texts if "*" in t.split(" ")]
        masks = []
        for d in docs:
            m = [False] * len(d)
            for p in patterns:
                for s in range(len(d)):
                    for e in pattern_matches(p, d, s, max_slot):
                        for k in range(s, e):
                            m[k] = True
            masks.append(m)
        return masks

    base = cut_mask(docs, min_len, phrases(noise), phrases(keep))
    kept_t = occurrence_masks(keep)
    noise_t = occurrence_masks(noise)
    kept_g = cut_mask(docs, min_len, phrases(keep), [])
    return [[(b and not kt) or (nt and not kt and not kg) for b, kt, nt, kg in zip(*rows)]
            for rows in zip(base, kept_t, noise_t, kept_g)]


def pattern_df(pattern: tuple, docs: list[list], max_slot: int) -> int:
    return sum(any(pattern_matches(pattern, d, s, max_slot) for s in range(len(d))) for d in docs)


def segments(pattern: tuple) -> list[tuple]:
    out, cur = [], []
    for item in pattern:
        if item is SLOT:
            out.append(tuple(cur))
            cur = []
        else:
            cur.append(item)
    out.append(tuple(cur))
    return out


def extensions(pattern: tuple, vocab: list, max_slot: int):
    """The single-step extensions of the maximality rule: a token at either
    end, a slot and a token at either end, a slot made constant (1..W
    tokens).  Each occurs only where the pattern occurs."""
    def words(k):
        out = [()]
        for _ in range(k):
            out = [w + (x,) for w in out for x in vocab]
        return out
    for x in vocab:
        yield (x,) + pattern
        yield pattern + (x,)
        yield (x, SLOT) + pattern
        yield pattern + (SLOT, x)
    for i, item in enumerate(pattern):
        if item is not SLOT:
            continue
        for k in range(1, max_slot + 1):
            for f in words(k):
                yield pattern[:i] + f + pattern[i + 1:]


COHESION = 4  #: a template's df is at least 1/COHESION of its anchor's df


def maximal(p: tuple, df: int, docs: list[list], vocab: list, max_slot: int, max_slots: int) -> bool:
    """No single-step extension (see :func:`extensions`) with at most
    max_slots slots has df documents, and no slot can be narrowed: no tokens
    f (the whole filler included) begin (or end) a filler of that slot in
    every document."""
    if any(pattern_df(q, docs, max_slot) >= df for q in extensions(p, vocab, max_slot)
           if sum(1 for x in q if x is SLOT) <= max_slots):
        return False
    narrowed = {}
    for i, d in enumerate(docs):
        for st in range(len(d)):
            for _, fills in pattern_fillers(p, d, st, max_slot):
                for j, f in enumerate(fills):
                    for m in range(1, len(f) + 1):
                        narrowed.setdefault((j, "start", f[:m]), set()).add(i)
                        narrowed.setdefault((j, "end", f[-m:]), set()).add(i)
    return not any(len(v) >= df for v in narrowed.values())


def templates(docs: list[list], sigma: int, min_len: int, max_slot: int, max_slots: int = 4) -> dict[tuple, int]:
    """The maximal frequent templates, by the definitions (docs/templates.md):
    {pattern tuple (None for a slot): df}.

    A template has at least one slot; its anchor is its leftmost constant
    segment of at least A = max(2, ceil(L/2)) tokens; 1 to max_slots slots;
    df >= sigma, df >=
    a quarter of the anchor's df (as a phrase), at least L constant tokens; no
    single-step extension (see :func:`extensions`) with at most max_slots
    slots has the same df (an
    extension occurs only where the pattern does, so never in more documents);
    and no slot can be narrowed: no tokens f (the whole filler included)
    begin (or end) a filler of that slot in every document.
    Last, a template is *subsumed*, not reported, when in each of its
    documents one of its occurrences lies inside an occurrence of another
    such template with more documents (or as many, and not the other way
    round).
    """
    anchor_len = max(2, -(-min_len // 2))
    vocab = sorted({t for d in docs for t in d})
    found = set()
    for d in docs:
        n = len(d)

        def grow(pos, cur):
            found.add(cur)
            if pos >= n:
                return
            grow(pos + 1, cur + (d[pos],))
            for w in range(1, max_slot + 1):
                if pos + w < n:
                    grow(pos + w + 1, cur + (SLOT, d[pos + w]))

        for s in range(n):
            grow(s + 1, (d[s],))
    out = {}
    for p in found:
        segs = segments(p)
        if len(segs) < 2 or len(segs) - 1 > max_slots or sum(map(len, segs)) < min_len:
            continue
        anchor = next((c for c in segs if len(c) >= anchor_len), None)
        if anchor is None:
            continue
        df = pattern_df(p, docs, max_slot)
        if df < sigma or COHESION * df < pattern_df(anchor, docs, max_slot):
            continue
        if maximal(p, df, docs, vocab, max_slot, max_slots):
            out[p] = df
    # subsumed: in each of its documents, an occurrence inside an occurrence
    # of another reported template that has more documents, or as many and
    # not the other way round
    occ = {p: {(i, st, e) for i, d in enumerate(docs) for st in range(len(d))
               for e in pattern_matches(p, d, st, max_slot)} for p in out}

    def inside(a, b):
        # in every document of a, some occurrence of a inside one of b
        docs_a = {i for i, _, _ in occ[a]}
        return all(any(any(i == j and s2 <= s1 and e1 <= e2 for j, s2, e2 in occ[b])
                       for i2, s1, e1 in occ[a] if i2 == i) for i in docs_a)

    return {p: df for p, df in out.items()
            if not any(q != p and inside(p, q) and (out[q] > df or (out[q] == df and not inside(q, p)))
                       for q in out)}


def labelled_runs(phrase: list[bool], ranges: list[tuple[int, int]], doc_lengths: list[int]):
    """Per position: 1 under a phrase, else 2 under a range, else 0; then
    the runs of one non-zero kind inside one document, as (start, end, kind)."""
    kinds = [1 if p else (2 if any(s <= i < e for s, e in ranges) else 0) for i, p in enumerate(phrase)]
    runs, at = [], 0
    for length in doc_lengths:
        i = at
        while i < at + length:
            j = i
            while j < at + length and kinds[j] == kinds[i]:
                j += 1
            if kinds[i]:
                runs.append((i, j, kinds[i]))
            i = j
        at += length
    return kinds, runs


def blocks(docs: list[list], sigma: int, min_len: int, templates=()):
    """Boilerplate blocks (engine/blocks.py, definition v3), literally.

    ``templates``: (doc, start, end, template_id, df) occurrences.  Returns a
    dict: ``blocks`` (list of sets of (doc, position), in block order),
    ``spans`` (doc, start, end, block) maximal stretches of one block,
    ``documents`` and ``reps`` ((doc, start, end)) per block, ``covered``."""
    L = min_len
    # 1. windows: (doc, start, end, key, df)
    gram_docs = defaultdict(set)
    for d, toks in enumerate(docs):
        for s in range(len(toks) - L + 1):
            gram_docs[tuple(toks[s:s + L])].add(d)
    windows = []
    for d, toks in enumerate(docs):
        for s in range(len(toks) - L + 1):
            g = tuple(toks[s:s + L])
            if len(gram_docs[g]) >= sigma:
                windows.append((d, s, s + L, ("gram", g), len(gram_docs[g])))
    tpl = [(d, a, e, ("template", tid), df) for d, a, e, tid, df in templates]
    windows += tpl
    covered = {(d, p) for d, a, e, _, _ in windows for p in range(a, e)}

    # 2. level of a token, strength of a junction
    def m(d, t):
        return max(df for dd, a, e, _, df in windows if dd == d and a <= t < e)

    def b(d, t):
        return max([df for dd, a, e, _, df in windows if dd == d and a <= t - 1 and t < e], default=0)

    def keys(d, lo, hi):
        """The keys of a piece (rule 6): the texts of the L-gram windows
        wholly inside it, the ids of the template windows wholly inside it
        that fill at least half of it; a piece with none of these is keyed by
        all the template windows inside it."""
        inside = [(k, e - a) for dd, a, e, k, _ in windows if dd == d and lo <= a and e <= hi]
        strong = {k for k, n in inside if k[0] == "gram" or 2 * n >= hi - lo}
        return strong or {k for k, _ in inside}

    def holds_window(d, lo, hi):
        return any(dd == d and lo <= a and e <= hi for dd, a, e, _, _ in windows)

    # 3-5. runs, cuts, keyless pieces joining a neighbour (simultaneous rounds)
    pieces = []  # (doc, start, end)
    for d, toks in enumerate(docs):
        p = 0
        while p < len(toks):
            if (d, p) not in covered:
                p += 1
                continue
            lo = p
            while p < len(toks) and (d, p) in covered:
                p += 1
            hi = p
            cuts = [t for t in range(lo + 1, hi)
                    if 2 * b(d, t) <= max(m(d, t - 1), m(d, t))]
            while True:
                edges = [lo] + cuts + [hi]
                drop = set()
                for i in range(len(edges) - 1):
                    if holds_window(d, edges[i], edges[i + 1]):
                        continue
                    left = edges[i] if i > 0 else None
                    right = edges[i + 1] if i + 1 < len(edges) - 1 else None
                    assert left is not None or right is not None, "a keyless run"
                    if left is not None and (right is None or b(d, left) >= b(d, right)):
                        drop.add(left)
                    else:
                        drop.add(right)
                if not drop:
                    break
                cuts = [t for t in cuts if t not in drop]
            pieces += [(d, edges[i], edges[i + 1]) for i in range(len(edges) - 1)]

    # 6. components of pieces sharing a key
    pkeys = [keys(*pc) for pc in pieces]
    groups = [[{i}, set(pkeys[i])] for i in range(len(pieces))]
    merged = True
    while merged:
        merged = False
        for i in range(len(groups)):
            for j in range(i + 1, len(groups)):
                if groups[i][1] & groups[j][1]:
                    groups[i][0] |= groups[j][0]
                    groups[i][1] |= groups[j][1]
                    del groups[j]
                    merged = True
                    break
            if merged:
                break
    found = [{(pieces[i][0], p) for i in g for p in range(pieces[i][1], pieces[i][2])} for g, _ in groups]
    found.sort(key=lambda s: (-len(s), min(s)))
    block_of = {t: k for k, s in enumerate(found) for t in s}
    spans = []
    for d, toks in enumerate(docs):
        p = 0
        while p < len(toks):
            if (d, p) not in block_of:
                p += 1
                continue
            a = p
            while p < len(toks) and block_of.get((d, p)) == block_of[(d, a)]:
                p += 1
            spans.append((d, a, p, block_of[(d, a)]))
    reps = []
    for k in range(len(found)):
        mine_ = [(d, a, e) for d, a, e, kk in spans if kk == k]
        count = defaultdict(int)
        for d, a, e in mine_:
            count[tuple(docs[d][a:e])] += 1
        best = max(mine_, key=lambda x: (count[tuple(docs[x[0]][x[1]:x[2]])], x[2] - x[1],
                                         (-x[0], -x[1])))
        reps.append(best)
    return dict(blocks=found, spans=spans, documents=[len({d for d, _ in s}) for s in found], reps=reps,
                covered=covered)


def block_files(docs, sigma, L, phrases):
    """:func:`blocks` as the result files hold them: block_spans rows,
    per block (covered tokens, documents, representative text), and each
    phrase's block (most tokens of its occurrences, ties the smaller id)."""
    want = blocks(docs, sigma, L)
    spans = sorted((k, d, a, e) for d, a, e, k in want["spans"])
    per_block = [(len(s), n, " ".join(docs[d][a:e])) for s, n, (d, a, e) in
                 zip(want["blocks"], want["documents"], want["reps"])]
    of = {t: k for k, s in enumerate(want["blocks"]) for t in s}
    blocks_of = {}
    for phrase in phrases:
        p = phrase.split(" ")
        count = {}
        for d, toks in enumerate(docs):
            for a in range(len(toks) - len(p) + 1):
                if toks[a:a + len(p)] == p:
                    for t in range(a, a + len(p)):
                        count[of[(d, t)]] = count.get(of[(d, t)], 0) + 1
        blocks_of[phrase] = min(count, key=lambda k: (-count[k], k))
    return spans, per_block, blocks_of
