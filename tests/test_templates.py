"""Templates with slots (issue 9): the miner against the brute-force
definition (tests/naive.py: every pattern of the corpus enumerated)."""
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests import naive
from engine.errors import BoilerscopeError
from engine.templates import SLOT, check_max_slot, mine_templates
from tests.support import ROOT, assert_one_line_error, planted


def run(docs, sigma, min_len, max_slot, max_slots=4, out_of_core=None):
    vocab = {}
    ids = [[vocab.setdefault(t, len(vocab)) for t in d] for d in docs]
    inv = {v: k for k, v in vocab.items()}
    flat = np.array([t for d in ids for t in d], np.int32)
    off = np.zeros(len(docs) + 1, np.int64)
    off[1:] = np.cumsum([len(d) for d in ids])
    found = mine_templates(flat, off, sigma, min_len, max_slot, max_slots, out_of_core=out_of_core)
    out = {}
    for t in found:
        key = tuple(None if x == SLOT else inv[x] for x in t.pattern)
        assert key not in out, "a template reported twice"
        out[key] = t.df
        # every reported occurrence matches, and df counts their documents
        for s, e in zip(t.starts.tolist(), t.ends.tolist()):
            d = int(np.searchsorted(off, s, side="right") - 1)
            assert e - int(off[d]) in naive.pattern_matches(key, docs[d], s - int(off[d]), max_slot)
    return out


def test_the_minimal_template():
    docs = [["a", "b", "x", "c", "d"], ["a", "b", "y", "c", "d"], ["a", "b", "x", "c", "d", "e"],
            ["q", "a", "b", "z", "z", "c", "d"]]
    assert run(docs, 3, 4, 2) == naive.templates(docs, 3, 4, 2) == {("a", "b", None, "c", "d"): 4}
    # a slot wider than W is not matched; W = 1 loses the fourth document
    assert run(docs, 3, 4, 1) == naive.templates(docs, 3, 4, 1) == {("a", "b", None, "c", "d"): 3}
    # one filler everywhere: the slot is constant, a verbatim phrase, not a template
    same = [["a", "b", "x", "c", "d"]] * 3
    assert run(same, 3, 4, 2) == naive.templates(same, 3, 4, 2) == {}


def test_subsumed_by_a_template_around_a_later_occurrence():
    """`b * c a` is inside `b * a c a` in both documents, but in the first one
    only through its second occurrence (b [c] c a, inside b [c c] a c a): the
    candidates come from every occurrence in the first document, not the
    first occurrence alone (a case hypothesis found)."""
    docs = [["b", "b", "c", "c", "a", "c", "a"], ["b", "a", "a", "c", "a"]]
    assert run(docs, 1, 2, 2, 1) == naive.templates(docs, 1, 2, 2, 1) == {("b", None, "a", "c", "a"): 2}


def test_cohesion_rejects_a_banner_joined_to_a_common_word():
    banner = ["cookie", "policy", "terms"]
    docs = [banner + [f"w{i}", "the"] for i in range(2)] + [banner + [f"v{i}", "a"] for i in range(8)]
    # "banner * the" is in 2 of the banner's 10 documents: below a quarter
    assert run(docs, 2, 4, 2) == naive.templates(docs, 2, 4, 2) == {("cookie", "policy", "terms", None, "a"): 8}


@settings(max_examples=150, deadline=None)
@given(docs=st.lists(st.lists(st.sampled_from("abc"), min_size=0, max_size=7), min_size=1, max_size=6),
       sigma=st.integers(1, 3), min_len=st.integers(2, 5), max_slot=st.integers(1, 2),
       max_slots=st.sampled_from([1, 2, 4]))
def test_miner_equals_the_definition_on_small_alphabets(docs, sigma, min_len, max_slot, max_slots):
    assert (run(docs, sigma, min_len, max_slot, max_slots)
            == naive.templates(docs, sigma, min_len, max_slot, max_slots))


@st.composite
def out_of_core_sizes(draw):
    """Tiny budgets: chunks of a few tokens, parts of a few a-gram
    positions (up to 2^12 parts), counters of 64 bytes (false positives)."""
    from engine.templates import OutOfCore
    return OutOfCore(chunk_tokens=draw(st.integers(1, 12)), part_entries=draw(st.integers(1, 6)),
                     filter_bytes=draw(st.sampled_from([0, 64])))


@settings(max_examples=150, deadline=None)
@given(docs=st.lists(st.lists(st.sampled_from("abc"), min_size=0, max_size=7), min_size=1, max_size=6),
       sigma=st.integers(1, 3), min_len=st.integers(2, 5), max_slot=st.integers(1, 2),
       max_slots=st.sampled_from([1, 2, 4]), ooc=out_of_core_sizes())
def test_out_of_core_miner_equals_the_definition(docs, sigma, min_len, max_slot, max_slots, ooc):
    """The out-of-core path (:class:`engine.templates.OutOfCore`: the
    documents' array in a scratch file, the filters by chunks, the seeds by
    parts of the hash range) against the brute force, and the in-memory
    answer template for template: patterns, df, occurrences, fillers."""
    assert (run(docs, sigma, min_len, max_slot, max_slots, out_of_core=ooc)
            == naive.templates(docs, sigma, min_len, max_slot, max_slots))


@settings(max_examples=60, deadline=None)
@given(data=st.data(), sigma=st.integers(2, 4), ooc=out_of_core_sizes(), workers=st.sampled_from([1, 2]))
def test_out_of_core_templates_are_the_in_memory_ones(data, sigma, ooc, workers):
    n = data.draw(st.integers(2, 9))
    docs = []
    for _ in range(n):
        doc = data.draw(st.lists(st.sampled_from("xyz"), max_size=4))
        doc += ["p", "q"] + data.draw(st.lists(st.sampled_from("uvw"), min_size=1, max_size=2))
        doc += ["r", "s"] + data.draw(st.lists(st.sampled_from("uvwxyz"), max_size=5))
        docs.append(doc)
    vocab = {}
    flat = np.array([vocab.setdefault(t, len(vocab)) for d in docs for t in d], np.int32)
    off = np.concatenate([[0], np.cumsum([len(d) for d in docs])]).astype(np.int64)
    mem_stats, ooc_stats = {}, {}
    want = mine_templates(flat, off, sigma, 4, 2, stats=mem_stats, workers=workers)
    got = mine_templates(flat, off, sigma, 4, 2, stats=ooc_stats, workers=workers, out_of_core=ooc)
    assert [(t.pattern, t.df, t.starts.tolist(), t.ends.tolist(), t.filler_rows.tolist()) for t in got] == \
        [(t.pattern, t.df, t.starts.tolist(), t.ends.tolist(), t.filler_rows.tolist()) for t in want]
    assert (ooc_stats["seeds"], ooc_stats["nodes"]) == (mem_stats["seeds"], mem_stats["nodes"])


@settings(max_examples=60, deadline=None)
@given(data=st.data(), sigma=st.integers(2, 4), max_slot=st.integers(1, 3))
def test_planted_templates_equal_the_definition(data, sigma, max_slot):
    """Documents built from a template with random fillers, among noise."""
    n = data.draw(st.integers(2, 7))
    docs = []
    for _ in range(n):
        doc = data.draw(st.lists(st.sampled_from("xyz"), max_size=3))
        doc += ["p", "q"] + data.draw(st.lists(st.sampled_from("uvw"), min_size=1, max_size=max_slot))
        doc += ["r"] + data.draw(st.lists(st.sampled_from("uvw"), min_size=1, max_size=2)) + ["s", "t"]
        doc += data.draw(st.lists(st.sampled_from("xyz"), max_size=2))
        docs.append(doc)
    assert run(docs, sigma, 4, max_slot) == naive.templates(docs, sigma, 4, max_slot)


@pytest.mark.parametrize("bad", [0, 17, -1, "x", None])
def test_max_slot_range(bad):
    with pytest.raises(BoilerscopeError):
        check_max_slot(bad)
    assert check_max_slot(1) == 1 and check_max_slot(16) == 16


def test_mine_templates_writes_the_contract_files(cli, tmp_path):
    import json

    import polars as pl
    texts = planted(tmp_path / "p.parquet")
    status, out, err = cli("mine", tmp_path / "p.parquet", "--sigma", 20, "--min-len", 10, "--templates",
                           "--out", "res", "--quiet")
    assert status == 0, err
    tpl = pl.read_parquet(tmp_path / "res" / "templates.parquet")
    assert tpl.columns == ["template_id", "template", "df", "occurrences", "slots", "constant_tokens", "sites",
                           "fillers", "block_id"]
    # every template is in a block; the blocks hold the run's covered tokens (phrases and templates)
    blocks = pl.read_parquet(tmp_path / "res" / "blocks.parquet")
    assert tpl["block_id"].null_count() == 0 and tpl["block_id"].max() < blocks.height
    summary = json.loads((tmp_path / "res" / "summary.json").read_text())
    assert blocks["covered_tokens"].sum() == summary["covered_tokens"] == summary["templates"][
        "covered_tokens_with_templates"]
    planted_text = "posted by * on * march * leave a comment share on facebook twitter"
    row = tpl.filter(pl.col("template") == planted_text)
    assert row.height == 1 and row["df"][0] == 60 and row["slots"][0] == 3 and row["sites"][0] == 3
    assert sorted(row["fillers"][0][0]) == sorted(["anna smith", "bob", "carol de la cruz", "dan", "eve jones"])
    occ = pl.read_parquet(tmp_path / "res" / "template_occurrences.parquet")
    assert occ.columns == ["template_id", "doc_id", "start", "end"]
    toks = [naive.tokenize(t)[0] for t in texts]
    for r in occ.iter_rows(named=True):
        pattern = tuple(None if x == "*" else x for x in tpl["template"][r["template_id"]].split(" "))
        assert r["end"] in naive.pattern_matches(pattern, toks[r["doc_id"]], r["start"], 4)
    spans = pl.read_parquet(tmp_path / "res" / "spans.parquet")
    assert spans.columns == ["doc_id", "start", "end", "char_start", "char_end", "kind"]
    assert set(spans["kind"]) <= {"phrase", "template"}
    # the template's verbatim pieces are shorter than L: only the templates cover them
    summary = json.loads((tmp_path / "res" / "summary.json").read_text())
    t = summary["templates"]
    assert t["coverage_without_templates"] < t["coverage_with_templates"] == summary["coverage"]
    assert t["covered_tokens_with_templates"] == int((spans["end"] - spans["start"]).sum())
    docs = pl.read_parquet(tmp_path / "res" / "documents.parquet")
    assert docs["covered_tokens"].sum() == t["covered_tokens_with_templates"]
    # a later run without --templates replaces the template files too
    assert cli("mine", tmp_path / "p.parquet", "--sigma", 20, "--out", "res", "--quiet")[0] == 0
    assert not (tmp_path / "res" / "templates.parquet").exists()


@pytest.mark.parametrize("bad", ["0", "17", "x"])
def test_max_slot_out_of_range_exits_2(cli, tmp_path, bad):
    planted(tmp_path / "p.parquet", docs=5)
    assert_one_line_error(*cli("mine", tmp_path / "p.parquet", "--templates", "--max-slot", bad, "--quiet"),
                          "max-slot")


@settings(max_examples=200, deadline=None)
@given(docs=st.lists(st.lists(st.sampled_from("abc"), min_size=1, max_size=8), min_size=1, max_size=5),
       data=st.data(), max_slot=st.integers(1, 3), max_slots=st.integers(1, 3))
def test_numba_maximality_check_equals_the_exact_one(docs, data, max_slot, max_slots):
    """The kernel's check (counts of first and last filler tokens, no
    prefixes) agrees with the definition (tests/naive.py) on any pattern cut
    from the corpus."""
    from engine.kernels import templates as KT
    from engine.templates import Corpus
    vocab = {t: i for i, t in enumerate("abc")}
    flat = np.array([vocab[t] for d in docs for t in d], np.int64)
    off = np.zeros(len(docs) + 1, np.int64)
    off[1:] = np.cumsum([len(d) for d in docs])
    d = data.draw(st.integers(0, len(docs) - 1))
    doc = docs[d]
    s0 = data.draw(st.integers(0, len(doc) - 1))
    pattern, p = [vocab[doc[s0]]], s0 + 1
    while p < len(doc) and data.draw(st.booleans()):
        w = data.draw(st.integers(0, max_slot))
        if p + w >= len(doc):
            break
        pattern += ([SLOT] if w else []) + [vocab[doc[p + w]]]
        p += w + 1
    key = tuple(None if x == SLOT else "abc"[x] for x in pattern)
    starts, ends = [], []
    for i, dd in enumerate(docs):
        for s in range(len(dd)):
            for e in sorted(naive.pattern_matches(key, dd, s, max_slot)):
                starts.append(int(off[i]) + s)
                ends.append(int(off[i]) + e)
    starts, ends = np.array(starts, np.int64), np.array(ends, np.int64)
    c = Corpus(flat, off)
    df = c.df(starts)
    scratch = np.zeros(3, np.int64), np.full(3, -1, np.int64)
    fast = KT.maximal_check(c.tokens, c.doc_of, c.doc_offsets, np.array(pattern, np.int64),
                            starts, ends, df, max_slot, max_slots, *scratch)
    assert naive.pattern_df(key, docs, max_slot) == df
    exact = naive.maximal(key, df, docs, list("abc"), max_slot, max_slots)
    assert fast == int(exact)
    assert (scratch[0] == 0).all() and (scratch[1] == -1).all()  # the scratch is left as it came


def test_clean_cuts_a_noise_template_with_the_runs_slot_width(cli, tmp_path):
    import polars as pl
    texts = planted(tmp_path / "p.parquet")
    status, _, err = cli("mine", tmp_path / "p.parquet", "--db", "x.duckdb", "--sigma", 20, "--min-len", 10,
                         "--templates", "--max-slot", 3, "--quiet")
    assert status == 0, err
    tpl = "posted by * on * march * leave a comment share on facebook twitter"
    (tmp_path / "stop.csv").write_text(f"phrase,decision,note\n{tpl},noise,\n", encoding="utf-8")
    status, _, err = cli("clean", "x.duckdb", "--run", 1, "--stoplist", "stop.csv", "--out", "clean.parquet")
    assert status == 0, err
    cleaned = pl.read_parquet(tmp_path / "clean.parquet").sort("doc_id")["text"].to_list()
    for before, after in zip(texts, cleaned):
        # the run mined with slots of at most 3 tokens: «carol de la cruz» (4) keeps its line
        if "carol de la cruz" in before:
            assert after == before
        else:
            assert "Posted by" not in after and "Twitter" not in after
            assert before.split(" Posted by")[0] in after and len(after) < len(before)


def test_threads_give_the_serial_answer(monkeypatch):
    """The seeds grown by several threads (small batches, so they interleave)
    give exactly the single-thread answer, on real text."""
    import os

    import pyarrow.parquet as pq

    import engine.templates as T
    from engine.tokenizer import tokenize_arrow
    texts = pq.read_table(os.path.join(ROOT, "data", "demo.parquet"), columns=["text"]).column("text").slice(0, 400)
    tk = tokenize_arrow(texts, workers=1)
    tokens, off = np.asarray(tk.tokens), np.asarray(tk.doc_offsets)
    serial_stats, threaded_stats = {}, {}
    serial = mine_templates(tokens, off, 5, 8, stats=serial_stats, workers=1)
    monkeypatch.setattr(T, "SEED_BATCH", 3)
    threaded = mine_templates(tokens, off, 5, 8, stats=threaded_stats, workers=3)
    assert len(serial) > 5
    assert [(t.pattern, t.df, t.starts.tolist(), t.ends.tolist()) for t in serial] == \
        [(t.pattern, t.df, t.starts.tolist(), t.ends.tolist()) for t in threaded]
    assert serial_stats["nodes"] == threaded_stats["nodes"] and threaded_stats["workers"] == 3
    # positions in int64 (as past 2^31 tokens) give the int32 answer, fillers included
    monkeypatch.setattr(T, "MAX_TOKENS_32", 0)
    wide = mine_templates(tokens, off, 5, 8, workers=2)
    assert [(t.pattern, t.df, t.starts.tolist(), t.ends.tolist(), t.filler_rows.tolist()) for t in serial] == \
        [(t.pattern, t.df, t.starts.tolist(), t.ends.tolist(), t.filler_rows.tolist()) for t in wide]


@settings(max_examples=100, deadline=None)
@given(templates=st.lists(st.tuples(st.integers(1, 3), st.lists(st.tuples(st.integers(0, 7), st.integers(1, 3)),
                                                             min_size=3, max_size=60)), min_size=1, max_size=4),
       keep=st.integers(1, 4))
def test_top_fillers_are_the_most_frequent_by_count_then_filler(templates, keep):
    """The kernel's filler counts (an open-addressing table, a short sorted
    list) equal a Counter per template and slot, ties broken by the filler
    tuple (a prefix first)."""
    from collections import Counter

    from engine.kernels import templates as KT
    tokens = np.array([5, 1, 5, 2, 0, 1, 5, 2, 9, 9, 9], np.int64)
    n_slots, rows = [], []
    for k, fill in templates:
        n_slots.append(k)
        rows.append(fill[:len(fill) // k * k])
    off = np.zeros(len(rows) + 1, np.int64)
    off[1:] = np.cumsum([len(r) for r in rows])
    flat = [x for r in rows for x in r]
    got = KT.top_fillers(tokens, np.array([a for a, _ in flat], np.int64), np.array([w for _, w in flat], np.int64),
                         off, np.array(n_slots, np.int64), keep)
    got_rows = list(zip(*(x.tolist() for x in got)))
    want = []
    for i, (k, r) in enumerate(zip(n_slots, rows)):
        for j in range(k):
            c = Counter(tuple(tokens[a:a + w].tolist()) for a, w in r[j::k])
            for f, n in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:keep]:
                want.append((i, j, f, n))
    assert [(t, j, tuple(tokens[a:a + w].tolist()), n) for t, j, a, w, n in got_rows] == want


@settings(max_examples=25, deadline=None)
@given(data=st.data(), sigma=st.integers(2, 3), min_len=st.integers(4, 9))
def test_long_constant_runs_equal_the_definition(data, sigma, min_len):
    """Long constant runs around a slot: the growth passes closed chains
    (one token after every occurrence) in place, several tokens at a time."""
    n = data.draw(st.integers(2, 6))
    docs = []
    for _ in range(n):
        doc = data.draw(st.lists(st.sampled_from("xy"), max_size=2))
        doc += list("abcdef")[data.draw(st.integers(0, 2)):]
        doc += [data.draw(st.sampled_from("uvw"))]
        doc += list("ghij")[:data.draw(st.integers(2, 4))]
        doc += data.draw(st.lists(st.sampled_from("xy"), max_size=2))
        docs.append(doc)
    assert run(docs, sigma, min_len, 1) == naive.templates(docs, sigma, min_len, 1)


@settings(max_examples=40, deadline=None)
@given(data=st.data(), sigma=st.integers(2, 3), min_len=st.integers(6, 9))
def test_constant_runs_left_of_a_slot_equal_the_definition(data, sigma, min_len):
    """A constant run before a slot before the anchor: the left growth
    passes its closed chains (one token before every occurrence) in place,
    until the left segment would reach A tokens."""
    n = data.draw(st.integers(2, 4))
    docs = []
    for _ in range(n):
        doc = data.draw(st.lists(st.sampled_from("xy"), max_size=1))
        doc += list("klmn")[data.draw(st.sampled_from([0, 0, 0, 1, 2, 4])):]
        doc += data.draw(st.lists(st.sampled_from("uvw"), min_size=1, max_size=2))
        doc += list("abcdef")[:data.draw(st.integers(3, 6))]
        doc += data.draw(st.lists(st.sampled_from("xy"), max_size=1))
        docs.append(doc)
    assert run(docs, sigma, min_len, 2) == naive.templates(docs, sigma, min_len, 2)


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_covered_runs_equal_the_brute_force(data):
    """The spans of a --templates run: coverage by phrases or template
    occurrences, cut into runs of one kind inside each document."""
    from engine.coverage import covered_runs
    lengths = data.draw(st.lists(st.integers(0, 8), max_size=5))
    n = sum(lengths)
    phrase = data.draw(st.lists(st.booleans(), min_size=n, max_size=n))
    ranges = [] if n == 0 else data.draw(st.lists(
        st.integers(0, n - 1).flatmap(lambda s: st.tuples(st.just(s), st.integers(s + 1, n))), max_size=4))
    kinds, runs = naive.labelled_runs(phrase, ranges, lengths)
    off = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
    # the phrases as overlapping, touching or nested ranges inside their documents
    p_start, p_end = [], []
    for i, p in enumerate(phrase):
        if p and (i == 0 or not phrase[i - 1] or i in off.tolist()):
            j = i + 1
            while j < n and phrase[j] and j not in off.tolist():
                j += 1
            while i < j:
                e = data.draw(st.integers(i + 1, j))
                p_start.append(i)
                p_end.append(e)
                if data.draw(st.booleans()):
                    p_start.append(i)
                    p_end.append(data.draw(st.integers(i + 1, e)))
                i = data.draw(st.integers(i + 1, e))
    order = np.argsort(np.array(p_start, np.int64), kind="stable")
    if data.draw(st.booleans()):  # the phrases' ranges in any order (sorted by the wrapper)
        order = np.array(data.draw(st.permutations(list(range(len(p_start))))), np.int64)
    got = covered_runs(np.array(p_start, np.int64)[order], np.array(p_end, np.int64)[order],
                       np.array([s for s, _ in ranges], np.int64), np.array([e for _, e in ranges], np.int64), off)
    assert got[0].tolist() == [sum(k > 0 for k in kinds[a:b]) for a, b in zip(off[:-1], off[1:])]
    assert list(zip(got[1].tolist(), got[2].tolist(), got[3].tolist())) == runs


@settings(max_examples=100, deadline=None)
@given(keys=st.lists(st.integers(0, 2**64 - 1) | st.sampled_from([0, 7, 2**63, 2**64 - 1]), max_size=300))
def test_seed_sort_is_numpys_stable_sort(keys):
    """The seeds' radix sort and split against numpy's stable argsort."""
    from engine.kernels import templates as KT
    k = np.array(keys, np.uint64)
    v = np.arange(k.shape[0], dtype=np.int64)[::-1].copy()
    order = np.argsort(k, kind="stable")
    sk, sv = KT.radix_sort_pairs(k.copy(), v.copy())
    assert sk.tolist() == k[order].tolist() and sv.tolist() == v[order].tolist()
    top = k >= np.uint64(2**63)
    k0, v0, k1, v1 = KT.split_on_bit(k, v, 63)
    assert (k0.tolist(), v0.tolist(), k1.tolist(), v1.tolist()) == (
        k[~top].tolist(), v[~top].tolist(), k[top].tolist(), v[top].tolist())


def test_fillers_of_the_minimal_template_most_frequent_first():
    docs = [["a", "b", "x", "c", "d"], ["a", "b", "y", "c", "d"], ["a", "b", "x", "c", "d", "e"],
            ["q", "a", "b", "z", "z", "c", "d"]]
    vocab = {}
    flat = np.array([vocab.setdefault(t, len(vocab)) for d in docs for t in d], np.int32)
    off = np.concatenate([[0], np.cumsum([len(d) for d in docs])]).astype(np.int64)
    (t,) = mine_templates(flat, off, 3, 4, 2)
    inv = {v: k for k, v in vocab.items()}
    got = [[(tuple(inv[x] for x in f), n) for f, n in slot] for slot in t.fillers(flat)]
    # by count, then by filler (token ids: y before z)
    assert got == [[(("x",), 2), (("y",), 1), (("z", "z"), 1)]]


def test_a_long_sidebar_is_not_charged_per_token_of_its_pattern():
    """The work bound counts the passes a growth makes: a closed chain of
    2,000 tokens after a slot costs one pass over the embeddings per token,
    not the pattern's length per token (which charged 2M units here and
    stopped such seeds early, answering with fewer templates)."""
    sidebar = [f"s{i}" for i in range(2000)]
    docs = [["a", "b", "c", f"x{i % 2}"] + sidebar + [f"tail{i}"] for i in range(3)]
    vocab = {}
    flat = np.array([vocab.setdefault(t, len(vocab)) for d in docs for t in d], np.int32)
    off = np.concatenate([[0], np.cumsum([len(d) for d in docs])]).astype(np.int64)
    stats = {}
    bounded = mine_templates(flat, off, 3, 10, 2, max_work=100_000, stats=stats, workers=1)
    assert stats["truncated_seeds"] == 0
    unbounded = mine_templates(flat, off, 3, 10, 2, max_work=0, workers=1)
    assert [(t.pattern, t.df) for t in bounded] == [(t.pattern, t.df) for t in unbounded]
    assert [len(t.pattern) for t in bounded] == [2004]


def test_out_of_core_scratch_is_removed_and_a_full_disk_is_one_clear_error(tmp_path, monkeypatch):
    """The documents' scratch file lives in ``OutOfCore.scratch`` only while
    the miner runs: removed after it, also when it fails or is cancelled
    (the filters' scans report progress); no room for it is one clear
    error, before any growth."""
    from engine import templates as T
    docs = [["p", "q", "x", "r", "s", "t"], ["p", "q", "y", "r", "s", "t"], ["p", "q", "z", "r", "s", "t"]]
    vocab = {}
    flat = np.array([vocab.setdefault(t, len(vocab)) for d in docs for t in d], np.int32)
    off = np.array([0, 6, 12, 18], np.int64)
    ooc = T.OutOfCore(chunk_tokens=7, part_entries=1, scratch=str(tmp_path))
    assert [t.pattern for t in mine_templates(flat, off, 3, 4, 2, out_of_core=ooc)] == \
        [t.pattern for t in mine_templates(flat, off, 3, 4, 2)]
    assert list(tmp_path.iterdir()) == []

    def broken(*args):
        raise RuntimeError("a growth that fails")
    monkeypatch.setattr(T.KT, "grow_seed", broken)
    with pytest.raises(RuntimeError):
        mine_templates(flat, off, 3, 4, 2, out_of_core=ooc, workers=1)
    assert list(tmp_path.iterdir()) == []
    monkeypatch.undo()

    seen = []

    def cancel(stage, fraction):  # a cancelled run: its next progress report raises
        seen.append((stage, fraction))
        if stage == "template seeds" and fraction >= 0.5:
            raise KeyboardInterrupt
    with pytest.raises(KeyboardInterrupt):
        mine_templates(flat, off, 3, 4, 2, out_of_core=ooc, progress=cancel)
    assert seen and all(stage == "template seeds" for stage, _ in seen)
    assert list(tmp_path.iterdir()) == []

    def full(fd, offset, size):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(T.os, "posix_fallocate", full)
    with pytest.raises(BoilerscopeError, match="no room for the template miner's scratch file"):
        mine_templates(flat, off, 3, 4, 2, out_of_core=ooc)
    assert list(tmp_path.iterdir()) == []
