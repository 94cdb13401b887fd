"""Boilerplate blocks (engine/blocks.py): the engine against the literal
reading of the definition (tests/naive.py), the sum check, the cases the
definition was made for, and bad input."""
import random

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from engine.blocks import Blocks, TemplateOccurrences, find_blocks
from engine.errors import BoilerscopeError
from tests import naive


def flatten(docs):
    vocab = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in d] for d in docs]
    flat = np.array([t for d in ids for t in d], np.int32)
    off = np.zeros(len(docs) + 1, np.int64)
    off[1:] = np.cumsum([len(d) for d in ids])
    return flat, off


def occurrences(templates):
    if not templates:
        return None
    cols = list(zip(*templates))
    return TemplateOccurrences(*(np.array(c, np.int64) for c in cols))


def run(docs, sigma, L, templates=(), **kw) -> Blocks:
    flat, off = flatten(docs)
    return find_blocks(flat, off, sigma, L, occurrences(templates), **kw)


def partition(B: Blocks):
    """Block id -> set of (doc, position), as a list in block order."""
    out = [set() for _ in range(B.n_blocks)]
    for d, a, e, k in zip(B.piece_doc.tolist(), B.piece_start.tolist(), B.piece_end.tolist(),
                          B.piece_block.tolist()):
        out[k] |= {(d, p) for p in range(a, e)}
    return out


def covered_runs(covered, off):
    """The runs of a coverage mask cut at document ends, as (starts, ends)
    arrays: a run's covered ranges as find_blocks_in_ranges takes them."""
    edges = np.flatnonzero(np.diff(np.concatenate(([0], covered.astype(np.int8), [0]))))
    starts, ends = [], []
    for a, b in zip(edges[::2].tolist(), edges[1::2].tolist()):
        while a < b:
            e = min(b, int(off[int(np.searchsorted(off, a, side="right"))]))
            starts.append(a)
            ends.append(e)
            a = e
    return np.array(starts, np.int64), np.array(ends, np.int64)


def majority(blocks, ranges):
    """Oracle of block_of_groups: the block holding most tokens of the ranges, ties the smaller id."""
    count = {}
    of = {t: k for k, s in enumerate(blocks) for t in s}
    for d, a, e in ranges:
        for p in range(a, e):
            if (d, p) in of:
                count[of[(d, p)]] = count.get(of[(d, p)], 0) + 1
    return min(count, key=lambda k: (-count[k], k)) if count else -1


@st.composite
def corpora(draw):
    alpha = draw(st.integers(2, 4))
    docs = draw(st.lists(st.lists(st.integers(0, alpha - 1), max_size=18), min_size=3, max_size=15))
    sigma = draw(st.integers(1, 4))
    L = draw(st.integers(1, 4))
    templates = []
    if draw(st.booleans()):
        for tid in range(draw(st.integers(1, 3))):
            df = draw(st.integers(1, 8))
            for _ in range(draw(st.integers(1, 4))):
                d = draw(st.integers(0, len(docs) - 1))
                if docs[d]:
                    a = draw(st.integers(0, len(docs[d]) - 1))
                    e = draw(st.integers(a + 1, min(len(docs[d]), a + 8)))
                    templates.append((d, a, e, 3 * tid + 1, df))
    return docs, sigma, L, templates


@settings(max_examples=300, deadline=None)
@given(corpora(), st.randoms(use_true_random=False))
def test_blocks_equal_the_definition(case, rnd):
    docs, sigma, L, templates = case
    want = naive.blocks(docs, sigma, L, templates)
    B = run(docs, sigma, L, templates)
    got = partition(B)
    # the partition, canonically, and the numbering
    assert {frozenset(s) for s in got} == {frozenset(s) for s in want["blocks"]}
    assert got == want["blocks"]
    spans = list(zip(B.piece_doc.tolist(), B.piece_start.tolist(), B.piece_end.tolist(), B.piece_block.tolist()))
    assert spans == want["spans"]
    assert B.covered_tokens.tolist() == [len(s) for s in want["blocks"]]
    assert B.documents.tolist() == want["documents"]
    assert list(zip(B.rep_doc.tolist(), B.rep_start.tolist(), B.rep_end.tolist())) == want["reps"]
    # every covered token in exactly one block
    assert int(B.covered_tokens.sum()) == len(want["covered"])
    # lookups: ranges one by one, and grouped
    ranges = []
    for _ in range(6):
        d = rnd.randrange(len(docs))
        a = rnd.randint(0, len(docs[d]))
        ranges.append((d, a, rnd.randint(a, len(docs[d]))))
    d, a, e = (np.array(c, np.int64) for c in zip(*ranges))
    assert B.block_of_ranges(d, a, e).tolist() == [majority(want["blocks"], [r]) for r in ranges]
    group = [rnd.randrange(3) for _ in ranges]
    assert B.block_of_groups(np.array(group), d, a, e, 4).tolist() == [
        majority(want["blocks"], [r for r, g in zip(ranges, group) if g == k]) for k in range(4)]


@settings(max_examples=100, deadline=None)
@given(corpora())
def test_blocks_cover_exactly_the_runs_coverage(case):
    """Sum check: without templates, the blocks partition the coverage mask of
    the mining definition (naive.mine); ``within`` changes nothing."""
    docs, sigma, L, _ = case
    _, counts, masks = naive.mine(docs, sigma, L)
    B = run(docs, sigma, L)
    assert int(B.covered_tokens.sum()) == sum(counts)
    assert (B.token_blocks() >= 0).tolist() == [x for m in masks for x in m]
    flat, off = flatten(docs)
    W = find_blocks(flat, off, sigma, L, within=np.array([x for m in masks for x in m], np.bool_))
    assert partition(W) == partition(B)


# ----------------------------------------------------------------------------- the cases of the issue
class Corpus:
    """Documents built from named regions; unique filler tokens elsewhere."""

    def __init__(self, seed=0):
        self.r = random.Random(seed)
        self.next = 10**6
        self.docs, self.tags = [], []

    def words(self, n):
        self.next += n
        return list(range(self.next - n, self.next))

    def doc(self, *parts):
        toks, tags = [], []
        for p in parts:
            if isinstance(p, int):
                toks += self.words(p)
                tags += [None] * p
            else:
                name, words = p
                toks += words
                tags += [name] * len(words)
        self.docs.append(toks)
        self.tags.append(tags)

    def blocks(self, sigma=20, L=10, templates=()):
        B = run(self.docs, sigma, L, templates)
        tb = B.token_blocks()
        tags = np.array([t or "" for d in self.tags for t in d])
        where = {name: set(tb[tags == name].tolist()) for name in set(tags.tolist()) if name}
        return B, where


def test_sidebar_variants_with_short_titles_are_one_block():
    """Titles of 1-3 tokens in front of a sidebar: covered (their L-grams run
    into the sidebar, df 30), cut off by rule 3 (30 <= 90 / 2), joined back
    by rule 5: one block."""
    c = Corpus()
    sidebar = c.words(40)
    titles = [c.words(k) for k in (1, 2, 3)]
    for i in range(90):
        c.doc(20, ("title", titles[i % 3]), ("sidebar", sidebar), 20)
    B, where = c.blocks()
    assert B.n_blocks == 1 and where == {"title": {0}, "sidebar": {0}}
    assert int(B.covered_tokens[0]) == 90 * 40 + 30 * 6
    assert B.rep_end[0] - B.rep_start[0] == 43  # tie on count: the longest variant


def footer_and_banner(adjacent):
    """A site footer (100 docs of site A) and a banner (1,000 docs); the
    footer directly followed by the banner in ``adjacent`` documents."""
    c = Corpus(1)
    footer, banner = c.words(30), c.words(30)
    for d in range(100):
        c.doc(40, ("footer", footer), ("banner", banner) if d < adjacent else 5, 5)
    for d in range(1000 - adjacent):
        c.doc(40, ("banner", banner), 5)
    for d in range(50):
        c.doc(40)
    return c


@pytest.mark.parametrize("adjacent", [50, 100])
def test_footer_and_banner_are_two_blocks(adjacent):
    """Valley (adjacent in 50 of the 100 footer docs: the junction's L-grams
    have df 50 <= 1000 / 2) and step (always adjacent: df 100 <= 1000 / 2)."""
    c = footer_and_banner(adjacent)
    B, where = c.blocks()
    assert sum(1 for t in c.tags if "banner" in t) == 1000
    assert B.n_blocks == 2
    assert where == {"banner": {0}, "footer": {1}}
    assert B.covered_tokens.tolist() == [30000, 3000] and B.documents.tolist() == [1000, 100]


def test_a_slotted_templates_constant_pieces_are_one_block():
    """Constants A and B around a slot of 1-3 varying tokens: two blocks from
    the L-grams alone (the slot is uncovered), one block with the template's
    occurrences (never cut inside, keyed by the template id)."""
    c = Corpus(2)
    A, Bw = c.words(12), c.words(12)
    occ = []
    for d in range(40):
        slot = c.r.randint(1, 3)
        c.doc(10, ("A", A), ("slot", c.words(slot)), ("B", Bw), 10)
        occ.append((d, 10, 10 + 24 + slot, 7, 40))
    B, where = c.blocks()
    assert B.n_blocks == 2 and where == {"A": {0}, "B": {1}, "slot": {-1}}
    B, where = c.blocks(templates=occ)
    assert B.n_blocks == 1 and where == {"A": {0}, "B": {0}, "slot": {0}}
    assert B.block_of_groups(np.zeros(40, np.int64), *(np.array(x) for x in list(zip(*occ))[:3])).tolist() == [0]


def test_a_template_inside_a_sidebar_does_not_pull_in_its_occurrences_elsewhere():
    """Site A's sidebar (100 documents) ends with an occurrence of a short
    template (df 110: the 100 A documents and 10 of site B, where it stands
    alone).  In A the template is not cut from the sidebar (the junction's
    df 100 > 110 / 2).  Definition v2 keyed every piece holding the template
    by its id, so B's template lines joined A's sidebar block; now a template
    keys only the pieces it fills at least half of: B's lines are a block of
    their own, A's sidebar another."""
    c = Corpus(3)
    side_a = c.words(30)
    page, of = c.words(2), c.words(2)
    occ = []
    for d in range(110):
        filler = c.words(1)
        if d < 100:
            c.doc(5, ("A", side_a), ("tpl A", page + filler + of), 5)
            occ.append((d, 35, 40, 3, 110))
        else:
            c.doc(5, ("tpl B", page + filler + of), 5)
            occ.append((d, 5, 10, 3, 110))
    B, where = c.blocks(templates=occ)
    assert where["tpl A"] == where["A"] and len(where["A"]) == 1
    assert len(where["tpl B"]) == 1 and not (where["tpl B"] & where["A"])
    assert int(B.covered_tokens.sum()) == 100 * 35 + 10 * 5


def test_a_template_filling_a_region_with_its_own_grams_stays_one_block():
    """A slotted template whose constant parts are longer than L (so its
    pieces hold L-grams too) and that fills them: one block, its id linking
    the variants whatever the slot holds."""
    c = Corpus(4)
    head, tail = c.words(11), c.words(11)
    occ = []
    for d in range(40):
        slot = c.words(c.r.randint(1, 3))
        c.doc(8, ("head", head), ("slot", slot), ("tail", tail), 8)
        occ.append((d, 8, 8 + 22 + len(slot), 5, 40))
    B, where = c.blocks(templates=occ)
    assert B.n_blocks == 1 and where == {"head": {0}, "slot": {0}, "tail": {0}}


def test_a_common_phrase_inside_a_rarer_footer_is_cut_out():
    """A phrase of df 1,000 inside a footer of df 100: both junctions are
    steps (df 100 <= 1000 / 2), so the phrase is a block of its own and the
    footer's two halves are two blocks (nothing links them: their L-grams
    differ).  This is the price of cutting steps."""
    c = Corpus(3)
    left, phrase, right = c.words(20), c.words(15), c.words(20)
    for d in range(1000):
        if d < 100:
            c.doc(30, ("left", left), ("phrase", phrase), ("right", right), 5)
        else:
            c.doc(30, ("phrase", phrase), 5)
    B, where = c.blocks()
    assert B.n_blocks == 3
    assert where == {"phrase": {0}, "left": {1}, "right": {2}}
    assert B.covered_tokens.tolist() == [15000, 2000, 2000]


def test_progress_and_an_empty_corpus():
    seen = []
    B = run([[1, 2, 3], [1, 2, 3]], 2, 2, progress=lambda stage, f: seen.append((stage, f)))
    assert B.n_blocks == 1 and seen[0] == ("blocks", 0.0) and seen[-1] == ("blocks", 1.0)
    B = find_blocks(np.zeros(0, np.int32), np.zeros(1, np.int64), 1, 1)
    assert B.n_blocks == 0 and B.piece_doc.shape == (0,)
    assert B.block_of_ranges(np.zeros(0), np.zeros(0), np.zeros(0)).shape == (0,)


def test_bad_input_is_one_clear_error():
    tok, off = np.array([1, 2, 3], np.int32), np.array([0, 3], np.int64)
    bad = [
        (tok.astype(np.int64), off, 1, 1, None),
        (tok, off.astype(np.int32), 1, 1, None),
        (tok, np.array([0, 2], np.int64), 1, 1, None),
        (tok, np.array([0, 2, 1, 3], np.int64), 1, 1, None),
        (np.array([-1, 2, 3], np.int32), off, 1, 1, None),
        (tok, off, 0, 1, None),
        (tok, off, 1, 0, None),
        (tok, off, 1.5, 1, None),
        (tok, off, True, 1, None),
        (tok, off, 1, 1, "templates"),
        (tok, off, 1, 1, occurrences([(1, 0, 1, 0, 1)])),  # no document 1
        (tok, off, 1, 1, occurrences([(0, 2, 2, 0, 1)])),  # empty
        (tok, off, 1, 1, occurrences([(0, 0, 4, 0, 1)])),  # past the end
        (tok, off, 1, 1, occurrences([(0, 0, 1, 0, 0)])),  # df 0
        (tok, off, 1, 1, occurrences([(0, 0, 1, 0, 2), (0, 1, 2, 0, 3)])),  # two df
        (tok, off, 1, 1, occurrences([(0, 0, 1, 10**9, 2), (0, 1, 2, 10**9, 3)])),  # two df, sparse ids
    ]
    for args in bad:
        with pytest.raises(BoilerscopeError):
            find_blocks(*args)
    with pytest.raises(BoilerscopeError):
        find_blocks(tok, off, 1, 1, within=np.ones(2, np.bool_))
    B = find_blocks(tok, off, 1, 1)
    with pytest.raises(BoilerscopeError):
        B.block_of_ranges(np.array([0]), np.array([2]), np.array([1]))
    with pytest.raises(BoilerscopeError):
        B.block_of_ranges(np.array([1]), np.array([0]), np.array([1]))
    with pytest.raises(BoilerscopeError):
        B.block_of_groups(np.array([-1]), np.array([0]), np.array([0]), np.array([1]))


@settings(max_examples=150, deadline=None)
@given(corpora(), st.randoms(use_true_random=False))
def test_doc_key_numbers_blocks_as_the_same_corpus_in_that_order(case, rnd):
    """The documents read in another order, with their keys (the engines pass
    doc_ids): the same blocks, the same numbering, the same representatives."""
    docs, sigma, L, _ = case
    perm = list(range(len(docs)))
    rnd.shuffle(perm)  # shuffled[i] = docs[perm[i]]
    want = run(docs, sigma, L)
    flat, off = flatten([docs[p] for p in perm])
    got = find_blocks(flat, off, sigma, L, doc_key=np.array(perm, np.int64))
    back = [{(perm[d], p) for d, p in s} for s in partition(got)]
    assert back == partition(want)
    reps = lambda B, m: [(m[d], a, e) for d, a, e in zip(B.rep_doc.tolist(), B.rep_start.tolist(),  # noqa: E731
                                                        B.rep_end.tolist())]
    assert reps(got, perm) == reps(want, list(range(len(docs))))
    assert got.covered_tokens.tolist() == want.covered_tokens.tolist()
    with pytest.raises(BoilerscopeError, match="doc_key"):
        find_blocks(flat, off, sigma, L, doc_key=np.zeros(len(docs), np.int64) if len(docs) > 1 else np.zeros(2))


@settings(max_examples=200, deadline=None)
@given(corpora(), st.data())
def test_blocks_on_the_covered_tokens_only_are_the_same(case, data):
    """find_blocks_in_coverage (the runs' path: pseudo-documents of the
    covered runs joined by separators) gives find_blocks' answer, mapped back;
    so does find_blocks_in_ranges, given the coverage as ranges that overlap,
    touch or nest (as a run's covered ranges do)."""
    from engine.blocks import find_blocks_in_coverage, find_blocks_in_ranges
    docs, sigma, L, _ = case
    flat, off = flatten(docs)
    want = find_blocks(flat, off, sigma, L)
    covered = want.token_blocks() >= 0
    key = np.arange(len(docs))[::-1].copy()
    edges = np.flatnonzero(np.diff(np.concatenate(([0], covered.astype(np.int8), [0]))))
    starts, ends = [], []
    for a, b in zip(edges[::2].tolist(), edges[1::2].tolist()):  # each covered run, cut at document ends
        for d in range(int(np.searchsorted(off, a, side="right")) - 1, len(docs)):
            lo, hi = max(a, int(off[d])), min(b, int(off[d + 1]))
            if lo >= b:
                break
            p = lo
            while p < hi:  # ranges from p: one reaching at least the next start
                e = data.draw(st.integers(p + 1, hi))
                starts.append(p)
                ends.append(e)
                if data.draw(st.booleans()) and e - p > 1:  # a nested one
                    starts.append(p + 1)
                    ends.append(e)
                p = data.draw(st.integers(p + 1, e))
    want = find_blocks(flat, off, sigma, L, doc_key=key)
    got = find_blocks_in_coverage(flat, off, sigma, L, covered, doc_key=key)
    order = np.argsort(np.array(starts, np.int64), kind="stable")
    r_start, r_end = np.array(starts, np.int64)[order], np.array(ends, np.int64)[order]
    by_ranges = find_blocks_in_ranges(flat, off, sigma, L, r_start, r_end, doc_key=key)
    # many chunks of documents and many parts of the hash range
    small = find_blocks_in_ranges(flat, off, sigma, L, r_start, r_end, doc_key=key,
                                  chunk_tokens=data.draw(st.integers(1, 12)), part_groups=data.draw(st.integers(1, 6)))
    for blocks in (got, by_ranges, small):
        assert partition(blocks) == partition(want)
        for name in ("piece_doc", "piece_start", "piece_end", "piece_block", "covered_tokens", "documents",
                     "rep_doc", "rep_start", "rep_end"):
            assert getattr(blocks, name).tolist() == getattr(want, name).tolist(), name


@settings(max_examples=50, deadline=None)
@given(corpora())
def test_the_chunked_blocks_with_int64_ids_are_the_same(case):
    """The grouping's int64 ids (past 2^31 - 2 covered tokens), forced on
    small corpora: the blocks of the int32 ids."""
    import engine.blocks as B
    docs, sigma, L, _ = case
    flat, off = flatten(docs)
    want = find_blocks(flat, off, sigma, L)
    args = (flat, off, sigma, L, *covered_runs(want.token_blocks() >= 0, off))
    narrow = B.find_blocks_in_ranges(*args, chunk_tokens=5)
    saved, B.WIDE_IDS_FROM = B.WIDE_IDS_FROM, 0  # (hypothesis runs this many times: no function fixture)
    try:
        wide = B.find_blocks_in_ranges(*args, chunk_tokens=5)
    finally:
        B.WIDE_IDS_FROM = saved
    assert partition(wide) == partition(narrow) == partition(want)
    assert wide.covered_tokens.tolist() == narrow.covered_tokens.tolist()


@settings(max_examples=200, deadline=None)
@given(corpora(), st.data())
def test_blocks_in_ranges_with_templates_are_the_same(case, data):
    """The out-of-core path with templates: find_blocks_in_ranges given the
    phrases' coverage as ranges and the template occurrences (the covered
    tokens are their union; the template windows enter each chunk) gives
    find_blocks' answer with the same templates, in any chunking."""
    from engine.blocks import find_blocks_in_ranges
    docs, sigma, L, templates = case
    assume(templates)
    flat, off = flatten(docs)
    occ = occurrences(templates)
    key = np.arange(len(docs))[::-1].copy()
    want = find_blocks(flat, off, sigma, L, occ, doc_key=key)
    args = (flat, off, sigma, L, *covered_runs(find_blocks(flat, off, sigma, L).token_blocks() >= 0, off))
    for chunk in (None, data.draw(st.integers(1, 12))):
        got = find_blocks_in_ranges(*args, doc_key=key, templates=occ, chunk_tokens=chunk,
                                    part_groups=data.draw(st.integers(1, 6)))
        assert partition(got) == partition(want)
        for name in ("piece_doc", "piece_start", "piece_end", "piece_block", "covered_tokens", "documents",
                     "rep_doc", "rep_start", "rep_end"):
            assert getattr(got, name).tolist() == getattr(want, name).tolist(), name


def test_ranges_out_of_order_empty_or_across_documents_are_one_clear_error():
    from engine.blocks import find_blocks_in_ranges
    flat, off = flatten([[1, 2, 3, 4], [1, 2, 3, 4], [5, 6]])
    for starts, ends in (([4, 0], [6, 2]), ([1], [1]), ([2], [6]), ([8], [11])):
        with pytest.raises(BoilerscopeError, match="ranges must be non-empty, by increasing start, inside one"):
            find_blocks_in_ranges(flat, off, 2, 2, np.array(starts, np.int64), np.array(ends, np.int64))


@settings(max_examples=100, deadline=None)
@given(corpora())
def test_sparse_template_ids_give_the_dense_ids_blocks(case):
    """Template ids far apart (checked by sorting) or dense (by counting): the same blocks."""
    docs, sigma, L, templates = case
    assume(templates)
    sparse = [(d, a, e, tid * 10**9 + 7, df) for d, a, e, tid, df in templates]
    assert partition(run(docs, sigma, L, sparse)) == partition(run(docs, sigma, L, templates))


def test_windows_by_start_then_end_past_the_packed_key():
    """The template windows' order: a radix sort of (start, length) packed in
    64 bits, and numpy's lexsort when they do not fit; both the stable
    (start, end) order."""
    import engine.blocks as B
    rng = np.random.default_rng(3)
    for top in (1 << 20, 1 << 61):  # packed; too large to pack with lengths up to 2^10
        gs = rng.integers(0, top, 500).astype(np.int64)
        gs[:100] = gs[0]
        ge = gs + rng.integers(1, 1 << 10, 500)
        assert B.order_by_start_end(gs, ge).tolist() == np.lexsort((ge, gs)).tolist()
