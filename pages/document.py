"""Document: the original text with the covered spans highlighted by decision."""
import numpy as np
import polars as pl
import streamlit as st

from engine import views
from engine.clean import cut_mask, cut_text, stop_grams
from pages import boot, conn, render, state

s = boot.setup()
sid, run_id = boot.need_run(s)
st.title("Document")
summary = conn.run_summary(s.path, run_id)
L = int(summary["min_len"])

mode = st.radio("Find by", ["doc_id", "URL or text search"], horizontal=True, key="document.mode")
doc_index = state.get("doc")
if mode == "doc_id":
    current_id = None
    if doc_index is not None:
        d = s.document(sid, int(doc_index))
        current_id = int(d["doc_id"]) if d else None
    if current_id is None:
        current_id = views.first_doc_id(s, sid)
    want = st.number_input("doc_id", value=current_id, step=1, key="document.doc_id")
    found = views.doc_index_of(s, sid, int(want))
    if found is None:
        st.error(f"No document with doc_id {want} in this snapshot.")
        st.stop()
    doc_index = int(found)
else:
    q = st.text_input("URL or words", key="document.search")
    if q:
        hits = views.search_documents(s, sid, q)
        if hits.height == 0:
            st.warning("No document matches.")
            st.stop()
        doc_index = st.selectbox("Matches", hits["doc_index"].to_list(), key="document.hit",
                                 format_func=lambda i: f"#{hits.filter(pl.col('doc_index') == i)['doc_id'][0]} "
                                 f"{hits.filter(pl.col('doc_index') == i)['url'][0] or ''}")
    elif doc_index is None:
        st.stop()
if doc_index != state.get("doc"):
    state.put("doc", int(doc_index))
    state.share()

doc = s.document(sid, int(doc_index))
covered = views.covered_tokens(s, run_id, doc_index)
n_tok = int(doc["n_tokens"])
a, b, d = st.columns(3)
a.metric("Tokens", f"{n_tok:,}")
b.metric("Covered tokens", f"{covered:,}")
d.metric("Contamination", f"{(covered / n_tok if n_tok else 0):.1%}")
st.caption(f"doc_id {doc['doc_id']} · {doc['site']} · {doc['url'] or ''}")

spans = views.document_spans(s, run_id, doc_index)
decisions = conn.decisions_map(s)
remove = st.toggle("Show the text with noise spans removed", key="document.clean")
text = doc["text"] or ""
if remove:
    noise = [p for p, v in decisions.items() if v == "noise"]
    keep = [p for p, v in decisions.items() if v == "keep"]
    arrays = s.arrays(sid)
    lo, hi = int(doc["token_start"]), int(doc["token_start"]) + n_tok
    vocab_ids = {t: i for i, t in enumerate(s.vocabulary(sid))}
    grams = stop_grams(noise, keep, vocab_ids, L)
    cut = cut_mask(np.asarray(arrays.tokens[lo:hi]), np.array([0, n_tok], np.int64), L, grams)
    st.caption(f"{int(cut.sum())} tokens cut by the noise decisions")
    st.html('<div class="bs-doc" style="white-space:pre-wrap;border:1px solid #ddd;padding:1em">'
            + __import__("html").escape(cut_text(text, arrays.span_start[lo:hi], arrays.span_end[lo:hi], cut)) + "</div>")
else:
    st.caption("Highlight colours: red = noise, green = keep, orange = unsure, yellow = undecided; hover a span for its phrase and df.")
    st.html(render.highlight_html(text, spans.to_dicts(), decisions))
