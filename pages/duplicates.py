"""Duplicates: near-duplicate clusters, raw or with the boilerplate removed, and a side-by-side diff."""
import difflib
import html
import json

import numpy as np
import polars as pl
import streamlit as st

from engine import views
from engine.api import dedup
from engine.errors import BoilerscopeError
from engine.neardup import DESCRIPTIONS, SCHEMES, DedupConfig
from pages import boot, progress, state

DEFAULTS = DedupConfig()

s = boot.setup()
sid = state.get("snapshot")
if sid is None:
    st.info("No snapshot yet: load one on the Load page.")
    st.stop()
st.title("Near-duplicate documents")
st.caption("Clusters of documents sharing at least t sketch elements (frequent closed itemsets), "
           "on the raw text or with a run's boilerplate removed: templates make different pages look alike.")

mode = st.radio("Text", ["boilerplate removed", "raw"], horizontal=True, key="dup.mode")
raw = mode == "raw"
with st.expander("Detection parameters"):
    a, b, d, e, f = st.columns(5)
    method = a.selectbox("Description", list(DESCRIPTIONS), index=DESCRIPTIONS.index(DEFAULTS.description),
                         key="dup.method")
    scheme = b.selectbox("Sketch", list(SCHEMES), index=SCHEMES.index(DEFAULTS.scheme), key="dup.scheme")
    w = d.number_input("Shingle w", 1, 20, DEFAULTS.w, key="dup.w")
    n = e.number_input("Sketch size n", 8, 256, DEFAULTS.n, key="dup.n")
    t = f.number_input("Threshold t", 1, 256, DEFAULTS.t, key="dup.t")

history = s.dedups(sid).filter(pl.col("raw") == raw)
run_id = state.get("run")
if not raw and run_id is not None:
    history = history.filter(pl.col("run_id") == run_id)
if st.button("Detect", type="primary", key="dup.run"):
    cfg = DedupConfig(description=method, scheme=scheme, w=int(w), n=int(n), t=min(int(t), int(n)))
    try:
        summary = progress.run_with_progress(
            lambda cb: dedup(s.path, run=None if raw else run_id, raw=raw, config=cfg, store=s, snapshot=sid,
                             progress=cb), "Detecting near-duplicates")
    except BoilerscopeError as exc:
        st.error(str(exc))
        st.stop()
    st.session_state["dup.id"] = summary["dedup_id"]
    history = s.dedups(sid).filter(pl.col("raw") == raw)

if history.height == 0:
    st.info("No detection yet for this view: press Detect.")
    st.stop()
ids = history["dedup_id"].to_list()
chosen = st.session_state.get("dup.id")
dedup_id = chosen if chosen in ids else ids[-1]
summary = json.loads(history.filter(pl.col("dedup_id") == dedup_id)["summary"][0])
m1, m2, m3, m4 = st.columns(4)
m1.metric("Similar pairs", f"{summary['similar_pairs']:,}")
m2.metric("Exact groups", f"{summary['exact_groups']:,}")
m3.metric("FCI clusters", f"{summary['clusters'].get('fci', 0):,}")
m4.metric("Components", f"{summary['clusters'].get('components', 0):,}")
st.caption(f"Detection {dedup_id}: {summary['config']['description']}, {summary['config']['scheme']} sketches, "
           f"n {summary['config']['n']}, t {summary['config']['t']}"
           + ("" if raw else f", boilerplate of run {summary.get('run_id')} removed"))

definition = st.selectbox("Cluster definition", ["fci", "components", "cliques", "exact"], key="dup.def")
sizes = views.cluster_sizes(s, dedup_id, definition)
if sizes.height == 0:
    st.info("No cluster of this kind.")
    st.stop()
st.dataframe(sizes, hide_index=True, width="stretch", height=220)
clusters = sizes["cluster_id"].to_list()
counts = dict(zip(clusters, sizes["documents"].to_list()))
st.session_state["dup.cluster"] = state.get("cluster") if state.get("cluster") in counts else clusters[0]
cluster = st.selectbox("Cluster", clusters, key="dup.cluster", format_func=lambda x: f"#{x} ({counts[x]} documents)",
                       on_change=lambda: state.put("cluster", int(st.session_state["dup.cluster"])))
state.put("cluster", int(cluster))
state.share()
docs = views.cluster_documents(s, sid, dedup_id, cluster)
st.dataframe(docs.drop("doc_index"), hide_index=True, width="stretch")

if docs.height >= 2:
    options = docs["doc_index"].to_list()
    label = {r["doc_index"]: f"#{r['doc_id']} {r['url'] or ''}" for r in docs.iter_rows(named=True)}
    left_pick = st.selectbox("Left", options, index=0, key="dup.left", format_func=label.get)
    right_pick = st.selectbox("Right", options, index=1, key="dup.right", format_func=label.get)
    arrays = s.arrays(sid)

    def tokens_of(idx):
        doc = s.document(sid, int(idx))
        lo, hi = int(doc["token_start"]), int(doc["token_start"]) + int(doc["n_tokens"])
        return doc["text"] or "", np.asarray(arrays.tokens[lo:hi]), arrays.span_start[lo:hi], arrays.span_end[lo:hi]

    lt, ltok, lss, lse = tokens_of(left_pick)
    rt, rtok, rss, rse = tokens_of(right_pick)
    sm = difflib.SequenceMatcher(a=ltok.tolist(), b=rtok.tolist(), autojunk=False)

    def render(text, ss, se, ranges):
        out, last = [], 0
        for i, j in ranges:
            if i >= j:
                continue
            a, b = int(ss[i]), int(se[j - 1])
            out.append(html.escape(text[last:a]))
            out.append(f'<mark style="background:#f4a6a6">{html.escape(text[a:b])}</mark>')
            last = b
        out.append(html.escape(text[last:]))
        return ('<div style="white-space:pre-wrap;font-size:0.85em;border:1px solid #ddd;padding:0.6em;'
                'max-height:60vh;overflow:auto">' + "".join(out) + "</div>")

    ops = [op for op in sm.get_opcodes() if op[0] != "equal"]
    st.caption(f"Token similarity {sm.ratio():.1%}; differences highlighted.")
    cl, cr = st.columns(2)
    with cl:
        st.html(render(lt, lss, lse, [(o[1], o[2]) for o in ops]))
    with cr:
        st.html(render(rt, rss, rse, [(o[3], o[4]) for o in ops]))
