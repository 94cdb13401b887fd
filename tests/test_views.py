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
