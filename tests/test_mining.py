"""Exactness of BloomSpan against the brute-force definitions (tests/naive.py)."""
import json
import os
import random

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import naive
from engine.planner import mine_tokens
from tests.support import mine_token_lists, planted_corpus

HERE = os.path.dirname(os.path.abspath(__file__))
MINING = [json.loads(line) for line in open(os.path.join(HERE, "contract", "mining.jsonl"), encoding="utf-8")]

EXAMPLE = [
    "новый ноутбук acer swift доставка бесплатно при заказе от 3000 рублей",
    "чехол для iphone 15 доставка бесплатно при заказе от 3000 рублей",
    "доставка бесплатно при заказе от 3000 рублей наушники sony",
    "наушники sony wh 1000 доставка бесплатно",
]


def toks(texts):
    return [naive.tokenize(t)[0] for t in texts]


@pytest.mark.parametrize("case", MINING, ids=[c["name"] for c in MINING])
@pytest.mark.parametrize("workers", [1, 2])
@pytest.mark.parametrize("memory", [None, 1, 200], ids=["in-memory", "out-of-core-1B", "out-of-core-200B"])
def test_contract_vectors(case, workers, memory):
    answer, covered, *_ = mine_token_lists(toks(case["documents"]), case["sigma"], case["min_len"], workers,
                                           memory)
    assert {" ".join(p): df for p, (df, _) in answer.items()} == {p: df for p, df in case["phrases"]}
    assert covered == case["covered_tokens_per_document"]


def test_article_example():
    answer, covered, *_ = mine_token_lists(toks(EXAMPLE), 3, 2)
    assert answer == {tuple("доставка бесплатно при заказе от 3000 рублей".split()): (3, 3)}
    assert covered == [7, 7, 7, 2]


def test_masked_seed_trap():
    """The article's 'skip a seed whose occurrences are already marked' rule drops «p q m»."""
    docs = [["x", "p", "q", "m"], ["z", "p", "q", "m"], ["x", "p", "q"], ["z", "p", "q"]]
    docs += [["x", "p", f"w{i}"] for i in range(1, 7)] + [["z", "p", f"v{i}"] for i in range(1, 7)]
    answer, covered, *_ = mine_token_lists(docs, 2, 2)
    assert set(answer) == {("x", "p", "q"), ("z", "p", "q"), ("p", "q", "m")}
    assert answer[("p", "q", "m")] == (2, 2)


def test_planted_phrases():
    docs, phrases = planted_corpus()
    answer, covered, *_ = mine_token_lists(docs, 3, 3)
    assert {" ".join(p): df for p, (df, _) in answer.items()} == phrases
    assert sum(covered) == sum(len(p.split()) * k for p, k in phrases.items())


corpora = st.lists(
    st.lists(st.sampled_from("abc"), max_size=14), min_size=1, max_size=8)


@settings(max_examples=400, deadline=None)
@given(corpora, st.integers(1, 4), st.integers(2, 4), st.sampled_from([1, 2]),
       st.sampled_from([None, None, 1, 16, 100]))
def test_matches_brute_force(docs, sigma, min_len, workers, memory):
    """Both paths: in memory, and out of core under a tiny budget (chunks of
    one document or a few, groups of one first token or a few)."""
    answer, covered, res, flat, off = mine_token_lists(docs, sigma, min_len, workers, memory)
    exp_answer, exp_covered, masks = naive.mine(docs, sigma, min_len)
    assert answer == exp_answer
    assert covered == exp_covered
    # spans: their union is the mask; each is an occurrence of a frequent
    # phrase of length >= L that cannot grow to the right there, none is inside
    # another, and the phrase id names that phrase
    pd = naive.phrase_docs(docs)
    mask = [[False] * len(d) for d in docs]
    spans = []
    for p, m, node in zip(res.rng_pos.tolist(), res.rng_len.tolist(), res.rng_node.tolist()):
        d = int(np.searchsorted(off, p, side="right") - 1)
        s = p - int(off[d])
        phrase = tuple(docs[d][s:s + m])
        assert m >= min_len and s + m <= len(docs[d])
        assert len(pd[phrase]) >= sigma
        if s + m < len(docs[d]):
            assert len(pd[tuple(docs[d][s:s + m + 1])]) < sigma
        r = int(res.node_rep[node])
        assert int(res.node_len[node]) == m and flat[r:r + m].tolist() == flat[p:p + m].tolist()
        spans.append((d, s, s + m))
        for k in range(s, s + m):
            mask[d][k] = True
    assert mask == masks
    for a in spans:
        assert not any(b != a and b[0] == a[0] and b[1] <= a[1] and a[2] <= b[2] for b in spans)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.lists(st.sampled_from("ab"), max_size=12), min_size=1, max_size=7),
       st.integers(1, 3), st.integers(2, 4))
def test_coverage_is_monotone(docs, sigma, min_len):
    base = mine_token_lists(docs, sigma, min_len)[1]
    higher_sigma = mine_token_lists(docs, sigma + 1, min_len)[1]
    longer = mine_token_lists(docs, sigma, min_len + 1)[1]
    assert all(h <= b for h, b in zip(higher_sigma, base))
    assert all(h <= b for h, b in zip(longer, base))


def test_edges_repeats_and_empty_documents():
    docs = [[], ["a"], ["a", "a", "a", "a"], ["a", "a", "a"], ["x", "a", "a"], []]
    for sigma in (1, 2, 3):
        for L in (2, 3):
            answer, covered, *_ = mine_token_lists(docs, sigma, L)
            exp, exp_cov, _ = naive.mine(docs, sigma, L)
            assert answer == exp and covered == exp_cov


def test_serial_and_threaded_are_equal():
    docs, _ = planted_corpus(n_docs=60, words=200, seed=3)
    rng = random.Random(1)
    template = "home products about contact privacy policy terms of use copyright".split()
    docs = [rng.choice([template, []]) + d + template[::-1] for d in docs]
    a1 = mine_token_lists(docs, 3, 3, workers=1)
    a2 = mine_token_lists(docs, 3, 3, workers=2)
    assert a1[0] == a2[0] and a1[1] == a2[1]
    for name in ("node_rep", "node_len", "node_df", "rng_pos", "rng_len", "rng_node", "occ_pos"):
        assert np.array_equal(getattr(a1[2], name), getattr(a2[2], name)), name


def test_filter_saturation_and_tiny_filter_stay_exact():
    """A 1 KiB filter collides constantly: false positives must be dropped, nothing lost."""
    rng = random.Random(5)
    docs = [[rng.choice("abcdefgh") for _ in range(30)] for _ in range(40)]
    vocab = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in d] for d in docs]
    flat = np.array([t for d in ids for t in d], np.int32)
    off = np.concatenate(([0], np.cumsum([len(d) for d in ids]))).astype(np.int64)
    small = mine_tokens(flat, off, len(vocab), 3, 3, workers=1, filter_bytes=1 << 10)
    big = mine_tokens(flat, off, len(vocab), 3, 3, workers=1, filter_bytes=1 << 22)
    assert np.array_equal(small.covered, big.covered)
    assert np.array_equal(small.node_rep[small.node_max == 1], big.node_rep[big.node_max == 1])
    exp, exp_cov, _ = naive.mine(docs, 3, 3)
    assert [int(c) for c in small.covered] == exp_cov
    assert int(small.node_max.sum()) == len(exp)


def test_parameters_are_checked():
    with pytest.raises(ValueError):
        mine_tokens(np.zeros(2, np.int32), np.array([0, 2]), 1, 0, 2)
    with pytest.raises(ValueError):
        mine_tokens(np.zeros(2, np.int32), np.array([0, 2]), 1, 2, 1)


@settings(max_examples=300, deadline=None)
@given(corpora, st.integers(2, 4), st.integers(2, 4))
def test_fhk_equals_bloomspan(docs, sigma, min_len):
    vocab = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in d] for d in docs]
    flat = np.array([t for d in ids for t in d], np.int32)
    off = np.concatenate(([0], np.cumsum([len(d) for d in ids]))).astype(np.int64)
    a = mine_tokens(flat, off, len(vocab), sigma, min_len, workers=1)
    b = mine_tokens(flat, off, len(vocab), sigma, min_len, algo="fhk")
    assert np.array_equal(a.covered, b.covered)
    assert np.array_equal(a.rng_pos, b.rng_pos) and np.array_equal(a.rng_len, b.rng_len)
    ma, mb = a.node_max == 1, b.node_max == 1
    for name in ("node_rep", "node_len", "node_df", "node_occ"):
        assert np.array_equal(getattr(a, name)[ma], getattr(b, name)[mb]), name
    assert np.array_equal(a.occ_pos, b.occ_pos)


def test_fhk_planted_and_example():
    docs, phrases = planted_corpus()
    vocab = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in d] for d in docs]
    flat = np.array([t for d in ids for t in d], np.int32)
    off = np.concatenate(([0], np.cumsum([len(d) for d in ids]))).astype(np.int64)
    res = mine_tokens(flat, off, len(vocab), 3, 3, algo="fhk")
    inv = {v: k for k, v in vocab.items()}
    got = {" ".join(inv[int(x)] for x in flat[r:r + m]): int(df)
           for r, m, df, mx in zip(res.node_rep, res.node_len, res.node_df, res.node_max) if mx}
    assert got == phrases


@settings(max_examples=40, deadline=None)
@given(corpora, st.integers(1, 3), st.integers(2, 3))
def test_sql_peer_coverage_equals_ours(docs, sigma, min_len):
    from bench.sqlpeer import sql_lgram_coverage
    _, covered, _, flat, off = mine_token_lists(docs, sigma, min_len)
    sql_cov, _ = sql_lgram_coverage(flat, off, sigma, min_len)
    assert sql_cov.tolist() == covered


def test_auto_picks_fhk_on_periodic_runs_only():
    from engine.shape import choose_algorithm
    rng = np.random.default_rng(0)
    docs = []
    for d in range(60):
        body = list(rng.integers(10, 5000, 300))
        if d % 2 == 0:
            body[100:100] = [1] * 400
        docs.append(body)
    flat = np.array([x for d in docs for x in d], np.int32)
    off = np.concatenate(([0], np.cumsum([len(d) for d in docs]))).astype(np.int64)
    algo, stats = choose_algorithm(flat, off, 20, 10)
    assert algo == "fhk" and stats["longest_run"] >= 400
    plain, _ = planted_corpus()
    vocab = {}
    ids = np.array([vocab.setdefault(t, len(vocab)) for d in plain for t in d], np.int32)
    poff = np.concatenate(([0], np.cumsum([len(d) for d in plain]))).astype(np.int64)
    assert choose_algorithm(ids, poff, 3, 3)[0] == "bloomspan"
    assert choose_algorithm(flat, off, 1, 10)[0] == "bloomspan"  # fhk needs sigma >= 2


def ids_of(docs):
    vocab = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in d] for d in docs]
    flat = np.array([t for d in ids for t in d], np.int32)
    off = np.concatenate(([0], np.cumsum([len(d) for d in ids]))).astype(np.int64)
    return flat, off, max(len(vocab), 1)


def answer_of(res, flat, docs_vocab_inv=None):
    out = {}
    for i in np.flatnonzero(res.node_max):
        r, m = int(res.node_rep[i]), int(res.node_len[i])
        out[tuple(flat[r:r + m].tolist())] = (int(res.node_df[i]), int(res.node_occ[i]))
    return out


@settings(max_examples=300, deadline=None)
@given(corpora, st.integers(2, 4), st.integers(2, 4), st.integers(1, 6), st.sampled_from([1, 2]))
def test_many_chunks_and_tiny_buffers_match_brute_force(docs, sigma, min_len, chunks, workers):
    """The multi-chunk merge and every buffer regrowth path (work buffer,
    stack, outputs: all start at 2 entries) against the oracle, and equal to
    the default run array by array."""
    flat, off, V = ids_of(docs)
    res = mine_tokens(flat, off, V, sigma, min_len, workers=workers, chunks=chunks, buffer_start=2)
    base = mine_tokens(flat, off, V, sigma, min_len, workers=1)
    exp, exp_cov, _ = naive.mine(docs, sigma, min_len)
    inv = {}
    for d, ids in zip(docs, [flat[off[i]:off[i + 1]].tolist() for i in range(len(docs))]):
        inv.update(zip(ids, d))
    assert {tuple(inv[t] for t in p): v for p, v in answer_of(res, flat).items()} == exp
    assert res.covered.tolist() == exp_cov
    for name in ("node_rep", "node_len", "node_df", "node_occ", "node_max", "occ_pos", "occ_doc", "occ_node",
                 "rng_pos", "rng_len", "rng_node"):
        assert np.array_equal(getattr(res, name), getattr(base, name)), name


def test_saturated_counters_never_wrap():
    """Counters saturate at 255: a bigram seen 300 times in too few documents
    passes the filter and is dropped by the exact seeds; a frequent bigram
    seen 256 times (0 mod 256) is never lost; a 64-byte filter makes every
    bigram collide; one and two workers (the saturating merge)."""
    rng = __import__("random").Random(11)
    docs = [["x", "w"] * 150, ["x", "w"] * 150]                      # 300 each, df 2 < sigma 3
    docs += [["y", "z"] * 86, ["y", "z"] * 85, ["y", "z"] * 85]      # 256 in all, df 3
    docs += [[rng.choice("abcdefghij") for _ in range(60)] for _ in range(6)]
    docs += [["p", "q", "r", "s"] + d for d in (["x", "w"], ["y"], ["z", "y"])]
    flat, off, V = ids_of(docs)
    exp, exp_cov, _ = naive.mine(docs, 3, 2)
    assert ("y", "z", "y") in {p[:3] for p in exp}  # the frequent repeated bigram is in the answer
    for workers in (1, 2):
        res = mine_tokens(flat, off, V, 3, 2, workers=workers, filter_bytes=64)
        assert res.stats["false_positive_occurrences"] > 0
        inv = {}
        for d, i in zip(docs, [flat[off[k]:off[k + 1]].tolist() for k in range(len(docs))]):
            inv.update(zip(i, d))
        assert {tuple(inv[t] for t in p): v for p, v in answer_of(res, flat).items()} == exp
        assert res.covered.tolist() == exp_cov


def test_warm_up_compiles_what_a_store_run_uses():
    """A store's arrays are memory-mapped read-only, and numba compiles
    read-only arrays apart: the warm-up must compile that kind, or the first
    run of a process compiles inside "grow" (7 s seen in the dashboard)."""
    from engine.kernels import bloomspan as K
    from engine.planner import warm_up
    warm_up()
    assert any("readonly array(int32" in str(sig[0]) for sig in K.grow.signatures), K.grow.signatures


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 40).flatmap(lambda n: st.tuples(
    st.just(n), st.lists(st.tuples(st.integers(0, n), st.integers(0, n)), max_size=12))))
def test_ranges_mask_is_the_union_of_its_ranges(case):
    """The coverage mask of ranges [start, end), in order of start or not,
    overlapping, nested or empty, against a plain loop."""
    from engine.coverage import ranges_mask
    n, ranges = case
    ranges = [(min(a, b), max(a, b)) for a, b in ranges]
    want = [any(a <= p < b for a, b in ranges) for p in range(n)]
    for rs in (ranges, sorted(ranges)):
        got = ranges_mask(n, np.array([a for a, _ in rs], np.int64), np.array([b for _, b in rs], np.int64))
        assert got.dtype == np.bool_ and got.tolist() == want
