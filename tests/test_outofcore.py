"""Mining out of core (engine/outofcore.py, engine/memory.py): the same answer
as in memory, checked against the brute-force oracle and the in-memory
arrays, on token arrays and on stores ingested from shards of uneven sizes
(memory-mapped, so the pages really are given back); the budget's syntax and
its errors on the command line."""
import dataclasses
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import naive
from engine.api import mine
from engine.planner import MiningPlan, mine_tokens
from engine.errors import BoilerscopeError
from engine.memory import IN_MEMORY_BYTES_PER_TOKEN, Pager, parse_size, plan
from engine.outofcore import doc_chunks, first_token_groups
from engine.result import OUTPUT_FIELDS
from tests.support import assert_one_line_error, cut, documents, planted_corpus, write_parquet

corpora = st.lists(st.lists(st.integers(0, 3), max_size=16), min_size=1, max_size=10)


def arrays(docs):
    flat = np.array([t for d in docs for t in d], np.int32)
    off = np.zeros(len(docs) + 1, np.int64)
    off[1:] = np.cumsum([len(d) for d in docs])
    return flat, off


def assert_same(a, b):
    for name, _, _ in OUTPUT_FIELDS:
        assert np.array_equal(getattr(a, name), getattr(b, name)), name
    assert np.array_equal(a.covered, b.covered)


def out_of_core(flat, off, memory, excerpt: bool) -> MiningPlan:
    """The plan of ``memory`` bytes, its growth on an excerpt of the tokens
    (``excerpt``) or on the token array."""
    mem = dataclasses.replace(plan(flat.shape[0], memory), excerpt_bytes=1 << 30 if excerpt else 0)
    return MiningPlan("bloomspan", "bloomspan", memory=mem)


@settings(max_examples=300, deadline=None)
@given(corpora, st.integers(2, 4), st.integers(2, 4), st.sampled_from([1, 2]), st.integers(1, 400), st.booleans())
def test_out_of_core_gives_the_in_memory_arrays(docs, sigma, min_len, workers, memory, excerpt):
    flat, off = arrays(docs)
    inside = mine_tokens(flat, off, 4, sigma, min_len, workers=workers)
    outside = mine_tokens(flat, off, 4, sigma, min_len, workers=workers, buffer_start=2,
                          plan=out_of_core(flat, off, memory, excerpt))
    mem = outside.stats["memory"]
    assert mem["out_of_core"] or flat.shape[0] * IN_MEMORY_BYTES_PER_TOKEN <= memory
    assert not mem["out_of_core"] or mem["excerpt"] == excerpt
    assert_same(inside, outside)
    for key in ("seeds", "seed_occurrences", "positions_after_bigram_filter", "positions_after_lgram_filter",
                "false_positive_occurrences", "seeds_pruned_left", "words_frequent"):
        assert inside.stats.get(key) == outside.stats.get(key), key
    # and the definition itself
    exp_answer, exp_covered, _ = naive.mine([[str(t) for t in d] for d in docs], sigma, min_len)
    assert [int(c) for c in outside.covered] == exp_covered
    assert int(outside.node_max.sum()) == len(exp_answer)


def test_planted_phrases_many_chunks_and_groups():
    docs, phrases = planted_corpus()
    vocab = {}
    ids = [[vocab.setdefault(w, len(vocab)) for w in d] for d in docs]
    flat, off = arrays(ids)
    inside = mine_tokens(flat, off, len(vocab), 3, 3, workers=2)
    for excerpt in (False, True):
        outside = mine_tokens(flat, off, len(vocab), 3, 3, workers=2, plan=out_of_core(flat, off, 512, excerpt))
        mem = outside.stats["memory"]
        assert mem["out_of_core"] and mem["chunks"] > 5 and mem["groups"] > 1, mem
        assert mem["excerpt"] == excerpt and 0 < mem["excerpt_tokens"] < flat.shape[0], mem
        assert mem["excerpt_size_bytes"] >= 4 * mem["excerpt_tokens"], mem
        assert_same(inside, outside)
        assert int(outside.node_max.sum()) == len(phrases)


def test_chunks_and_groups_cover_everything_once():
    off = np.array([0, 0, 5, 6, 30, 31, 31, 40], np.int64)
    for size in (1, 3, 6, 24, 100):
        ranges = doc_chunks(off, size)
        assert [d for a, b in ranges for d in range(a, b)] == list(range(7))
        for a, b in ranges:  # within the size, unless one document is larger
            assert b - a == 1 or off[b] - off[a] <= size
    first_start = np.cumsum([0, 3, 0, 0, 9, 1, 1, 1, 0, 2])
    for cap in (1, 2, 3, 5, 50):
        groups = first_token_groups(first_start, cap)
        covered = [a for lo, hi in groups for a in range(lo, hi) if first_start[a + 1] > first_start[a]]
        assert covered == [a for a in range(9) if first_start[a + 1] > first_start[a]]
        for lo, hi in groups:
            assert hi - lo == 1 or first_start[hi] - first_start[lo] <= cap


def test_sizes_and_plans():
    assert parse_size("8GB") == 8 * 10**9
    assert parse_size("512 MB") == 512 * 10**6
    assert parse_size("1.5GiB") == 3 * 2**29
    assert parse_size("1000") == 1000 and parse_size(77) == 77
    for bad in ("", "8 parsecs", "-1GB", "0", "GB", "1e9"):
        with pytest.raises(BoilerscopeError):
            parse_size(bad)
    assert not plan(10**6, "1GB").out_of_core
    p = plan(10**9, "8GB")
    assert p.out_of_core and p.chunk_tokens <= 64 << 20 and p.group_entries == 8 * 10**9 // 64


def test_uneven_shards_in_a_store_out_of_core(tmp_path):
    """Shards of uneven sizes, ingested into a store (memory-mapped arrays),
    mined in memory and out of core: the same files, equal to the oracle."""
    docs = documents(400, seed=11)
    (tmp_path / "shards").mkdir()
    for i, part in enumerate(cut(docs, [1, 230, 9, 0, 77])):
        if part:
            write_parquet(tmp_path / "shards" / f"part-{i}.parquet", part, row_group=13)
    inside = mine(str(tmp_path / "shards"), 4, 3, db=str(tmp_path / "a.duckdb"), out=str(tmp_path / "a"))
    outside = mine(str(tmp_path / "shards"), 4, 3, db=str(tmp_path / "b.duckdb"), out=str(tmp_path / "b"),
                   memory="2KB")
    mem = outside.summary.memory
    assert mem["out_of_core"] and mem["mapped"] and mem["chunks"] > 10 and mem["releases"] > 10, mem
    assert not inside.summary.memory["out_of_core"]
    for name in ("phrases.parquet", "documents.parquet", "sites.parquet"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    tokens = [naive.tokenize(d["text"])[0] for d in docs]
    answer, covered, _ = naive.mine(tokens, 4, 3)
    assert outside.phrases.height == len(answer)
    assert outside.documents.sort("doc_id")["covered_tokens"].to_list() == covered
    summary = json.loads((tmp_path / "b" / "summary.json").read_text())
    assert summary["memory"]["budget_bytes"] == 2000 and summary["algo_used"] == "bloomspan"


def test_templates_out_of_core_in_a_store_give_the_same_files(tmp_path):
    """``--templates`` under a budget that holds nothing of the corpus'
    size: the template miner by parts of the hash range with its documents'
    array in a scratch file, the frames from the phrases' ranges, the blocks
    in ranges with the template windows; every result file is the in-memory
    run's, byte for byte."""
    docs = documents(300, seed=5)
    write_parquet(tmp_path / "s.parquet", docs)
    inside = mine(str(tmp_path / "s.parquet"), 3, 4, db=str(tmp_path / "a.duckdb"), out=str(tmp_path / "a"),
                  templates=True)
    outside = mine(str(tmp_path / "s.parquet"), 3, 4, db=str(tmp_path / "b.duckdb"), out=str(tmp_path / "b"),
                   templates=True, memory="2KB")
    t_in, t_out = inside.summary.templates, outside.summary.templates
    assert not t_in["out_of_core"] and t_out["out_of_core"] and t_out["parts"] > 1, t_out
    assert t_in["templates"] > 0 and t_in["templates"] == t_out["templates"]
    names = sorted(p.name for p in (tmp_path / "a").iterdir() if p.suffix == ".parquet")
    assert "templates.parquet" in names and "block_spans.parquet" in names
    for name in names:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_pager_gives_back_the_pages_of_a_mapped_file(tmp_path):
    from engine.memory import resident_bytes
    path = tmp_path / "a.npy"
    np.save(path, np.arange(16 << 20, dtype=np.int32))  # 64 MiB
    arr = np.load(path, mmap_mode="r")
    pager = Pager(np.ascontiguousarray(arr[5:]))
    assert pager.mapped and not Pager(np.zeros(3)).mapped
    before = resident_bytes()
    assert int(arr.sum()) > 0
    touched = resident_bytes()
    pager.release()
    assert touched - before > 48 << 20
    assert resident_bytes() < touched - (48 << 20)
    assert int(arr[-1]) == (16 << 20) - 1  # the file is still there


def test_memory_on_the_command_line(cli, tmp_path, monkeypatch):
    write_parquet(tmp_path / "s.parquet", documents(60, seed=2))
    status, out, err = cli("mine", "s.parquet", "--sigma", 3, "--memory", "1KB", "--out", "r", "--quiet")
    assert status == 0, err
    assert json.loads((tmp_path / "r" / "summary.json").read_text())["memory"]["out_of_core"]
    for bad in ("lots", "0"):
        assert_one_line_error(*cli("mine", "s.parquet", "--memory", bad, "--quiet"), "--memory")
    assert_one_line_error(*cli("mine", "s.parquet", "--algo", "fhk", "--memory", "1KB", "--quiet"),
                          "fhk", "--memory")
    monkeypatch.setenv("BOILERSCOPE_MEMORY", "plenty")
    assert_one_line_error(*cli("mine", "s.parquet", "--quiet"), "BOILERSCOPE_MEMORY")
    monkeypatch.setenv("BOILERSCOPE_MEMORY", "1KB")
    status, out, err = cli("mine", "s.parquet", "--sigma", 3, "--db", "e.duckdb", "--out", "e", "--quiet")
    assert status == 0, err
    assert json.loads((tmp_path / "e" / "summary.json").read_text())["memory"]["budget_bytes"] == 1000


@settings(max_examples=150, deadline=None)
@given(corpora, st.integers(1, 4), st.integers(2, 4), st.sampled_from([1, 2]), st.sampled_from([None, 1, 64]))
def test_wide_positions_give_the_same_answer(monkeypatch_session, docs, sigma, min_len, workers, memory):
    """Past 2^31 - 2 tokens positions are int64 (a 3B-token run): the same
    answer in memory, out of core and at sigma 1, forced here on small
    corpora by lowering the threshold; every position array is int64."""
    import engine.result as R
    flat, off = arrays(docs)
    narrow = mine_tokens(flat, off, 4, sigma, min_len, workers=workers, memory=memory)
    monkeypatch_session.setattr(R, "WIDE_POSITIONS_FROM", 0)
    try:
        wide = mine_tokens(flat, off, 4, sigma, min_len, workers=workers, memory=memory, buffer_start=2)
    finally:
        monkeypatch_session.undo()
    assert narrow.occ_pos.dtype == np.int32 and narrow.rng_pos.dtype == np.int32
    assert wide.occ_pos.dtype == np.int64 and wide.rng_pos.dtype == np.int64
    assert_same(narrow, wide)
    exp_answer, exp_covered, _ = naive.mine([[str(t) for t in d] for d in docs], sigma, min_len)
    assert [int(c) for c in wide.covered] == exp_covered
    assert int(wide.node_max.sum()) == len(exp_answer)


@pytest.fixture(scope="module")
def monkeypatch_session():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def test_snapshots_past_32_bit_positions(tmp_path, monkeypatch):
    """A snapshot past the 32-bit limit (lowered here): auto mines it with
    BloomSpan and int64 positions, same files; --algo fhk is refused in one
    message."""
    import engine.planner as planner
    import engine.result as R
    write_parquet(tmp_path / "s.parquet", documents(60, seed=3))
    narrow = mine(str(tmp_path / "s.parquet"), 3, 3, db=str(tmp_path / "a.duckdb"), out=str(tmp_path / "a"))
    monkeypatch.setattr(planner, "MAX_TOKENS_32", 10)
    monkeypatch.setattr(R, "WIDE_POSITIONS_FROM", 11)
    with pytest.raises(BoilerscopeError, match="algo fhk holds at most 2\\^31 - 2 tokens.*use algo bloomspan"):
        mine(str(tmp_path / "s.parquet"), 3, 3, db=str(tmp_path / "b.duckdb"), algo="fhk")
    wide = mine(str(tmp_path / "s.parquet"), 3, 3, db=str(tmp_path / "b.duckdb"), out=str(tmp_path / "b"))
    assert wide.summary.algo_used == "bloomspan" and wide.summary.algo_choice == {"wide_positions": True}
    assert narrow.summary.tokens > 11 and narrow.summary.phrases > 0
    for name in ("phrases.parquet", "documents.parquet", "sites.parquet"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def python_excerpt(flat, off, keep, min_len):
    """The excerpt by its definition (engine.kernels.excerpt): per document,
    the windows [max(u - 1, s), min(v + L, e)) of its runs of kept positions,
    merged when they overlap or touch, -1 between two of them."""
    ex, doc, wins = [], [0], []
    for d in range(len(off) - 1):
        s, e = int(off[d]), int(off[d + 1])
        spans = []
        p = s
        while p < e:
            if keep[p]:
                u = p
                while p < e and keep[p]:
                    p += 1
                a, b = max(u - 1, s), min(p + min_len, e)
                if spans and a <= spans[-1][1]:
                    spans[-1][1] = b
                else:
                    spans.append([a, b])
            else:
                p += 1
        for i, (a, b) in enumerate(spans):
            if i:
                ex.append(-1)
            wins.append((a, len(ex)))
            ex.extend(int(t) for t in flat[a:b])
        doc.append(len(ex))
    return ex, doc, wins


@settings(max_examples=200, deadline=None)
@given(corpora, st.integers(2, 4), st.data())
def test_the_excerpt_is_its_definition(docs, min_len, data):
    from engine.kernels.bloomspan import bucket_by_first
    from engine.kernels.excerpt import translate, windows
    from engine.outofcore import Excerpt
    flat, off = arrays(docs)
    keep = np.array(data.draw(st.lists(st.integers(0, 1), min_size=flat.shape[0], max_size=flat.shape[0])),
                    np.uint8)
    n_docs = off.shape[0] - 1
    ex_len, ex_nwin = np.zeros(n_docs, np.int64), np.zeros(n_docs, np.int64)
    none = np.zeros(0, np.int64)
    windows(keep, off, 0, n_docs, min_len, False, flat, ex_len, ex_nwin, flat[:0], none, none, none, none, 0, 0)
    excerpt = Excerpt(ex_len, ex_nwin)
    half = n_docs // 2  # two parts, as two workers fill them
    excerpt.fill(flat, keep, off, [(0, half), (half, n_docs)], min_len, 0, 0)
    ex, doc, wins = python_excerpt(flat, off, keep, min_len)
    assert excerpt.tokens.tolist() == ex and excerpt.doc.tolist() == doc
    assert list(zip(excerpt.win_real.tolist(), excerpt.win_t.tolist())) == wins
    # the bucketing writes the excerpt's positions: those translate gives
    kept = np.flatnonzero(keep).astype(np.int64)
    keep_b = keep.copy()
    keep_b[off[1:][np.diff(off) > 0] - 1] = 0  # (a kept start has a next token, as the filters ensure)
    first = np.bincount(flat[keep_b.astype(bool)], minlength=4).astype(np.int64)
    starts = np.concatenate(([0], np.cumsum(first)[:-1])).astype(np.int64)
    n_b = int(first.sum())
    got = {}
    for windows_of in ((excerpt.win_off, excerpt.win_real, excerpt.win_t), (none, none, none)):
        pos, bdoc, nxt, prv = (np.empty(n_b, t) for t in (np.int64, np.int32, np.int32, np.int32))
        bucket_by_first(flat, off, 0, n_docs, keep_b, starts.copy(), pos, bdoc, nxt, prv, 0, 4, 0, 0, *windows_of)
        got[len(windows_of[0]) > 0] = pos
    moved = got[False].copy()
    translate(moved, excerpt.win_real, excerpt.win_t, 0, moved.shape[0])
    assert got[True].tolist() == moved.tolist()
    # every kept position there and back, in order and shuffled
    for order in (kept, data.draw(st.permutations(kept.tolist()))):
        pos = np.array(order, np.int64)
        translate(pos, excerpt.win_real, excerpt.win_t, 0, pos.shape[0])
        assert all(ex[t] == flat[p] for t, p in zip(pos.tolist(), order))
        for t, p in zip(pos.tolist(), order):  # the left neighbour, and no other document start
            d = int(np.searchsorted(off, p, side="right")) - 1
            assert (p == off[d]) == (t == doc[d]) and (p == off[d] or ex[t - 1] == flat[p - 1])
        excerpt.to_corpus(pos, 2)
        assert pos.tolist() == list(order)
