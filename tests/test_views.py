"""Dashboard queries (engine/views.py) checked against plain Python on the stored text."""
import os

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from engine import views
from tests import naive
from engine.api import ingest
from engine.store import Store


def test_text_windows_cut_code_points_like_python(tmp_path):
    texts = ["Ünïcødé — «quoted» text with 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 and emoji 🙂🙂 then more words here",
             "short", "", "ascii only text for the window test of keyword in context"]
    path = tmp_path / "s.parquet"
    pq.write_table(pa.table({"doc_id": list(range(len(texts))), "text": texts}), path)
    store = Store(str(tmp_path / "s.duckdb"))
    try:
        sid, _ = ingest(str(path), store=store)
        arrays = store.arrays(sid)
        rng = np.random.default_rng(0)
        docs, starts, ends = [], [], []
        for _ in range(40):
            t = int(rng.integers(0, arrays.tokens.shape[0]))
            n = int(rng.integers(1, 4))
            d = int(np.searchsorted(arrays.doc_offsets, t, side="right") - 1)
            n = min(n, int(arrays.doc_offsets[d + 1]) - t)
            docs.append(d)
            starts.append(int(arrays.span_start[t]))
            ends.append(int(arrays.span_end[t + n - 1]))
        for width in (0, 5, 90):
            w = views.text_windows(store, sid, docs, starts, ends, width)
            assert w["i"].to_list() == list(range(len(docs)))
            for i, (d, a, b) in enumerate(zip(docs, starts, ends)):
                text = texts[d]
                assert w["mid"][i] == text[a:b]
                assert (w["left"][i] or "") == text[max(0, a - width):a]
                assert (w["right"][i] or "") == text[b:b + width]
        assert views.text_windows(store, sid, [], [], []).height == 0
    finally:
        store.close()


def test_template_views_agree_with_the_run_files(tmp_path):
    """The Templates page's queries give what templates.parquet and
    template_occurrences.parquet say; find_run tells template runs apart."""
    import polars as pl

    from engine.api import mine
    from tests.support import planted

    texts = planted(tmp_path / "p.parquet")
    store = Store(str(tmp_path / "s.duckdb"))
    try:
        sid, _ = ingest(str(tmp_path / "p.parquet"), store=store)
        plain = mine(str(tmp_path / "p.parquet"), 20, 10, store=store, snapshot=sid).run_id
        run = mine(str(tmp_path / "p.parquet"), 20, 10, store=store, snapshot=sid, templates=True,
                   out=str(tmp_path / "res")).run_id
        assert store.find_run(sid, 20, 10, "auto", 0) == plain
        assert store.find_run(sid, 20, 10, "auto", 4) == run
        assert store.find_run(sid, 20, 10, "auto", 5) is None
        assert store.runs(sid)["templates"].to_list()[1] >= 1 and store.runs(sid)["templates"][0] is None
        files = pl.read_parquet(tmp_path / "res" / "templates.parquet")
        occ = pl.read_parquet(tmp_path / "res" / "template_occurrences.parquet")
        table = views.template_table(store, run, "", 500)
        assert sorted(table["template"].to_list()) == sorted(files["template"].to_list())
        tokens = occ.group_by("template_id").agg((pl.col("end") - pl.col("start")).sum().alias("n"))
        joined = files.join(tokens, on="template_id")
        want = dict(zip(joined["template"].to_list(), joined["n"].to_list()))
        assert dict(zip(table["template"].to_list(), table["tokens"].to_list())) == want
        assert table["tokens"].to_list() == sorted(table["tokens"].to_list(), reverse=True)
        assert views.template_table(store, run, "LEAVE A COMMENT", 500).height >= 1
        tid = int(table["template_id"][0])
        row = views.template_row(store, run, tid)
        # the same most frequent filler of the first slot as the file's examples
        file_fillers = files.filter(pl.col("template_id") == tid)["fillers"].to_list()[0]
        assert row["fillers"][0][0][0] == file_fillers[0][0]
        o = views.template_occurrences(store, run, sid, tid, 1000)
        mine_occ = occ.filter(pl.col("template_id") == tid).sort("doc_id", "start")
        assert o.select("doc_id", pl.col("token_start").alias("start"), pl.col("token_end").alias("end")).sort(
            "doc_id", "start").rows() == mine_occ.select("doc_id", "start", "end").rows()
        # character offsets: the occurrence's text, as written
        w = views.text_windows(store, sid, o["doc_index"].to_list(), o["char_start"].to_list(),
                               o["char_end"].to_list(), 0)
        assert all(m.lower().startswith(row["template"].split(" ")[0]) for m in w["mid"])
        assert views.template_sites(store, run, sid, tid)["documents"].sum() == row["df"]
        d0 = int(o["doc_index"][0])
        spans = views.document_template_spans(store, run, d0)
        assert spans.columns == views.document_spans(store, run, d0).columns
        assert texts[d0][spans["char_start"][0]:spans["char_end"][0]].lower().startswith("posted")
    finally:
        store.close()


def _phrase_store(tmp_path):
    """A store with one mined run over texts whose shared phrase is written
    in varying case, punctuation and non-ASCII text around it."""
    from engine.api import mine
    texts = [f"Ünïcødé 🙂 intro {i} — «Read our TERMS of service, and the Privacy policy!» then body {i} "
             f"ends here; read our terms of Service and the privacy POLICY again" for i in range(12)]
    path = tmp_path / "p.parquet"
    pq.write_table(pa.table({"doc_id": [100 + i for i in range(12)], "text": texts,
                             "site": ["a.example", "b.example"] * 6}), path)
    store = Store(str(tmp_path / "p.duckdb"))
    sid, _ = ingest(str(path), store=store)
    run = mine(str(path), 5, 4, store=store, snapshot=sid).run_id
    return store, sid, run, texts


def test_phrase_occurrences_have_character_offsets_into_the_text(tmp_path):
    """Verbatim phrase occurrences come with (char_start, char_end) like
    template occurrences: the span of the document's text from the first
    token's start to the last token's end, checked against the token arrays
    and against the text itself."""
    import regex

    def tokens_of(text):  # the tokenisation contract: lowercased runs of letters, marks and digits
        return [m.group().lower() for m in regex.finditer(r"[\p{L}\p{M}\p{N}]+", text)]

    store, sid, run, texts = _phrase_store(tmp_path)
    try:
        table = views.phrase_table(store, run, limit=50)
        assert table.height >= 1
        arrays = store.arrays(sid)
        checked, cased = 0, False
        for pid, length in zip(table["phrase_id"].to_list(), table["length"].to_list()):
            occ = views.phrase_occurrences(store, run, sid, pid, 1000)
            row = views.phrase_row(store, run, pid)
            assert occ.height == row["occurrences"]
            for r in occ.iter_rows(named=True):
                text = texts[r["doc_index"]]
                g = int(arrays.doc_offsets[r["doc_index"]]) + r["token_pos"]
                assert r["char_start"] == int(arrays.span_start[g])
                assert r["char_end"] == int(arrays.span_end[g + length - 1])
                # the characters tokenize back to the phrase
                written = text[r["char_start"]:r["char_end"]]
                assert " ".join(tokens_of(written)) == row["phrase"]
                assert tokens_of(written[:1]) and tokens_of(written[-1:])  # starts and ends on a token
                assert r["doc_id"] == 100 + r["doc_index"]
                checked += 1
            # the first occurrence as written, and its offsets
            first = texts[row["first_doc_index"]][row["first_char_start"]:row["first_char_end"]]
            assert row["written"] == first
            cased |= first != first.lower()
        assert checked > 12 and cased, "occurrences as written keep their case"
        # the text around each occurrence (keyword in context)
        pid = int(table["phrase_id"][0])
        occ = views.with_windows(store, sid, views.phrase_occurrences(store, run, sid, pid, 5), 7)
        for r in occ.iter_rows(named=True):
            text = texts[r["doc_index"]]
            assert r["mid"] == text[r["char_start"]:r["char_end"]]
            assert (r["left"] or "") == text[max(0, r["char_start"] - 7):r["char_start"]]
            assert (r["right"] or "") == text[r["char_end"]:r["char_end"] + 7]
        empty = views.phrase_occurrences(store, run, sid, 10**6, 5)
        assert empty.height == 0 and {"char_start", "char_end"} <= set(empty.columns)
    finally:
        store.close()


def test_document_cut_and_tokens_follow_the_cut_rule(tmp_path):
    """The Document view's cut (character ranges) and the export's counts are
    engine.clean's rule on the token arrays, read in the read layer."""
    from engine.clean import decision_cut

    store, sid, run, texts = _phrase_store(tmp_path)
    try:
        top = views.phrase_table(store, run, limit=1)["phrase"][0]
        vocab = views.vocabulary_ids(store, sid)
        arrays = store.arrays(sid)
        want = decision_cut(arrays.tokens, arrays.doc_offsets, 4, [top], [], vocab, 4)
        assert views.tokens_cut(store, sid, 4, [top], [], 4) == [int(want.sum())]
        for d in range(len(texts)):
            cut = views.document_cut(store, sid, d, 4, [top], [], 4, vocab)
            lo, hi = int(arrays.doc_offsets[d]), int(arrays.doc_offsets[d + 1])
            assert cut["tokens"] == int(want[lo:hi].sum()) > 0
            covered = set()
            for a, b in cut["ranges"]:
                covered |= set(range(a, b))
            for t in range(lo, hi):
                inside = set(range(int(arrays.span_start[t]), int(arrays.span_end[t])))
                assert (inside <= covered) == bool(want[t]), (d, t)
            doc = views.document_tokens(store, sid, d)
            assert doc["text"] == texts[d] and doc["tokens"].tolist() == arrays.tokens[lo:hi].tolist()
        assert views.document_cut(store, sid, 0, 4, [], [], 4)["ranges"] == []
    finally:
        store.close()


def test_dedup_config_reads_old_and_new_names():
    old = {"description": "lexical", "scheme": "minhash", "w": 5, "n": 128, "t": 40}
    new = {"method": "shingles", "sketch": "bottom", "shingle": 3, "sketch_size": 64, "threshold": 32}
    assert views.dedup_config(old) == {"method": "lexical", "sketch": "minhash", "shingle": 5, "sketch_size": 128,
                                       "threshold": 40}
    assert views.dedup_config(new) == new
    assert views.dedup_config({**old, **new}) == new  # the current name wins
    assert views.dedup_config({}) == {}


def test_every_highlighted_span_names_the_block_it_lies_in(tmp_path):
    """A span of a phrase inside a longer one (not maximal: no block of its
    own, no sites stored) still names a block: the one holding its first
    token (blocks partition the covered tokens); sites only for maximal
    phrases."""
    import os
    from engine.api import mine
    from tests.support import ROOT
    demo = os.path.join(ROOT, "data", "demo.parquet")
    store = Store(str(tmp_path / "d.duckdb"))
    try:
        sid, _ = ingest(demo, store=store)
        run = mine(demo, 20, 10, store=store, snapshot=sid).run_id
        blocks = store.query("SELECT doc_index, token_start, token_end, block_id FROM run_block_spans"
                             " WHERE run_id = ?", [run])
        maximal = dict(store.query("SELECT phrase, maximal FROM run_phrases WHERE run_id = ?", [run]).rows())
        checked = inner = 0
        for d in sorted(set(blocks["doc_index"].to_list()))[:200]:
            here = blocks.filter(blocks["doc_index"] == d)
            for s in views.document_spans(store, run, d).iter_rows(named=True):
                want = [b for a, e, b in here.select("token_start", "token_end", "block_id").rows()
                        if a <= s["token_start"] < e]
                assert want and s["block_id"] == want[0] and s["block_share"] is not None
                assert (s["sites"] is None) == (not maximal[s["phrase"]])
                checked += 1
                inner += not maximal[s["phrase"]]
        assert checked > 10 and inner > 0, (checked, inner)  # the store has spans of inner phrases
    finally:
        store.close()


def test_text_of_a_snapshot_stored_in_rows_reads_alike(tmp_path):
    """The text is stored once, in text.parquet beside the arrays; a snapshot
    stored before holds it in its documents rows instead.  Both layouts give
    the same text to every reader (one document, the export, keyword in
    context, cut slices, search), and the new layout leaves the rows empty."""
    import duckdb

    from engine.store import TEXT_FILE, TEXT_MARK

    texts = ["Ünïcødé — «quoted» text 🙂 with ünïcødé words", None, "", "plain ascii text, twice: plain ascii text"]
    texts += [f"page {i} of the demo with some words {i * 7}" for i in range(600)]  # several row groups
    path = tmp_path / "s.parquet"
    pq.write_table(pa.table({"doc_id": list(range(len(texts))), "url": [f"https://x.org/{i}" for i in range(len(texts))],
                             "text": texts}), path)
    db = str(tmp_path / "s.duckdb")
    docs = [0, 1, 3, 250, 603]

    def reads(store, sid):
        arrays = store.arrays(sid)
        a = [int(arrays.doc_offsets[d]) for d in docs]
        n = [int(arrays.doc_offsets[d + 1]) - x for d, x in zip(docs, a)]
        starts = [int(arrays.span_start[x]) if k else 0 for x, k in zip(a, n)]
        ends = [int(arrays.span_end[x + k - 1]) if k else 0 for x, k in zip(a, n)]
        return (
            [store.document(sid, d)["text"] for d in docs],
            store.documents_text(sid)["text"].to_list(),
            views.text_windows(store, sid, docs, starts, ends, 4).to_dicts(),
            store.text_slices(sid, docs, starts, ends),
            views.search_documents(store, sid, "ünïcødé")["doc_index"].to_list(),
            views.search_documents(store, sid, "x.org/25")["doc_index"].to_list(),
        )

    store = Store(db)
    try:
        sid, _ = ingest(str(path), store=store)
        new = reads(store, sid)
        assert store.query("SELECT count(text) AS n FROM documents")["n"][0] == 0
        stored = pq.read_table(tmp_path / "s.duckdb.arrays" / sid / TEXT_FILE)
        assert stored.num_rows == len(texts) and stored.column("text").to_pylist() == [t or "" for t in texts]
    finally:
        store.close()
    assert new[0] == [texts[d] or "" for d in docs]
    assert new[1] == [t or "" for t in texts]
    assert [w["mid"] or "" for w in new[2]] == new[3]  # the same characters, two ways
    spans = [naive.tokenize(texts[d] or "")[1] for d in docs]  # first token's start to last token's end
    assert new[3] == [(texts[d] or "")[sp[0][0]:sp[-1][1]] if sp else "" for d, sp in zip(docs, spans)]
    assert new[4] == [0] and new[5] == [25] + list(range(250, 260))
    # the earlier layout: the text in the rows, no text file
    con = duckdb.connect(db)
    con.execute("CREATE TEMP TABLE t AS SELECT * FROM read_parquet(?)",
                [str(tmp_path / "s.duckdb.arrays" / sid / TEXT_FILE)])
    con.execute("UPDATE documents SET text = t.text FROM t WHERE documents.doc_index = t.doc_index")
    con.execute("DELETE FROM boilerscope_meta WHERE key = ?", [TEXT_MARK + sid])
    con.close()
    os.remove(tmp_path / "s.duckdb.arrays" / sid / TEXT_FILE)
    store = Store(db)
    try:
        assert reads(store, sid) == new
    finally:
        store.close()


def test_a_missing_or_damaged_text_file_is_one_clear_error(tmp_path):
    """A new snapshot's text lives in its text file: without it (or with a
    damaged one) every read says so, never shows empty text, and a run that
    needs the text (its blocks' texts) fails the same way."""
    import pytest

    from engine.errors import BoilerscopeError
    from engine.store import TEXT_FILE

    path = tmp_path / "s.parquet"
    pq.write_table(pa.table({"doc_id": list(range(30)), "text": ["shared words in every page here"] * 30}), path)
    db = str(tmp_path / "s.duckdb")
    with Store(db) as store:
        sid, _ = ingest(str(path), store=store)
    text_file = tmp_path / "s.duckdb.arrays" / sid / TEXT_FILE
    good = text_file.read_bytes()
    for damage in ("missing", "truncated"):
        if damage == "missing":
            os.remove(text_file)
        else:
            text_file.write_bytes(good[: len(good) // 2])
        with Store(db) as store:
            for read in (lambda: store.document(sid, 0), lambda: store.documents_text(sid),
                         lambda: store.text_slices(sid, [0], [0], [5]),
                         lambda: views.text_windows(store, sid, [0], [0], [5]),
                         lambda: views.search_documents(store, sid, "words")):
                with pytest.raises(BoilerscopeError, match=f"text of snapshot {sid} is missing or damaged"):
                    read()
        from engine.api import mine
        with pytest.raises(BoilerscopeError, match="missing or damaged"):
            mine(db, sigma=2, min_len=2, db=db)
