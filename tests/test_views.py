"""Dashboard queries (engine/views.py) checked against plain Python on the stored text."""
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from engine import views
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
    from test_templates import planted

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
