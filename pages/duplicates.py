"""Duplicates: near-duplicate clusters, raw or with the boilerplate removed, and a side-by-side diff."""
import streamlit as st

from engine.errors import BoilerscopeError
from engine.neardup import DESCRIPTIONS, SCHEMES, DedupConfig
from engine.ui import actions, boot, data, render, state

DEFAULTS = DedupConfig()

boot.setup()
sid = boot.need_snapshot()
st.title("Near-duplicate documents")
st.caption("Clusters of documents sharing at least `threshold` sketch elements (frequent closed itemsets), "
           "on the raw text or with a run's boilerplate removed: templates make different pages look alike.")

mode = st.radio("Text", ["boilerplate removed", "raw"], horizontal=True, key="duplicates.mode")
raw = mode == "raw"
with st.expander("Detection parameters"):
    a, b, d, e, f = st.columns(5)
    method = a.selectbox("Method", list(DESCRIPTIONS), index=DESCRIPTIONS.index(DEFAULTS.method),
                         key="duplicates.method")
    sketch = b.selectbox("Sketch", list(SCHEMES), index=SCHEMES.index(DEFAULTS.sketch),
                         key="duplicates.sketch")
    shingle = d.number_input("Shingle (tokens)", 1, 20, DEFAULTS.shingle, key="duplicates.shingle")
    size = e.number_input("Sketch size", 8, 256, DEFAULTS.sketch_size, key="duplicates.sketch_size")
    threshold = f.number_input("Threshold", 1, 256, DEFAULTS.threshold, key="duplicates.threshold",
                               help="the least sketch elements two documents share (at most the sketch size)")

run_id = state.get("run")
pending = actions.pending("detect", sid)  # this tab's detection, or one running on this snapshot
try:
    if st.button("Detect", type="primary", key="duplicates.run"):
        cfg = DedupConfig(method=method, sketch=sketch, shingle=int(shingle), sketch_size=int(size),
                          threshold=min(int(threshold), int(size)))
        st.session_state["duplicates.id"] = actions.detect(sid, run_id, raw, cfg).dedup_id
    elif pending is not None:
        st.session_state["duplicates.id"] = actions.follow(pending, "detect").dedup_id
except BoilerscopeError as exc:
    st.error(str(exc))
    st.stop()

history = data.dedups(sid, raw, run_id)
if history.height == 0:
    st.info("No detection yet for this view: press Detect.")
    st.stop()
ids = history["dedup_id"].to_list()
chosen = st.session_state.get("duplicates.id")
dedup_id = chosen if chosen in ids else ids[-1]
summary = data.dedup_summary(sid, dedup_id)
cfg = summary["config"]
m1, m2, m3, m4 = st.columns(4)
m1.metric("Similar pairs", f"{summary['similar_pairs']:,}")
m2.metric("Exact groups", f"{summary['exact_groups']:,}")
m3.metric("FCI clusters", f"{summary['clusters'].get('fci', 0):,}")
m4.metric("Components", f"{summary['clusters'].get('components', 0):,}")
st.caption(f"Detection {dedup_id}: {cfg.get('method')}, {cfg.get('sketch')} sketches, "
           f"shingles of {cfg.get('shingle')} tokens, sketch size {cfg.get('sketch_size')}, "
           f"threshold {cfg.get('threshold')}"
           + ("" if raw else f", boilerplate of run {summary.get('run_id')} removed"))

definition = st.selectbox("Cluster definition", ["fci", "components", "cliques", "exact"], key="duplicates.def")
sizes = data.cluster_sizes(dedup_id, definition)
if sizes.height == 0:
    st.info("No cluster of this kind.")
    st.stop()
st.dataframe(sizes, hide_index=True, width="stretch", height=220)
clusters = sizes["cluster_id"].to_list()
counts = dict(zip(clusters, sizes["documents"].to_list()))
st.session_state["duplicates.cluster"] = state.get("cluster") if state.get("cluster") in counts else clusters[0]
cluster = st.selectbox("Cluster", clusters, key="duplicates.cluster",
                       format_func=lambda x: f"#{x} ({counts[x]} documents)",
                       on_change=lambda: state.put("cluster", int(st.session_state["duplicates.cluster"])))
state.put("cluster", int(cluster))
state.share()
docs = data.cluster_documents(sid, dedup_id, cluster)
st.dataframe(docs.drop("doc_index"), hide_index=True, width="stretch")

if docs.height >= 2:
    options = docs["doc_index"].to_list()
    label = {r["doc_index"]: f"#{r['doc_id']} {r['url'] or ''}" for r in docs.iter_rows(named=True)}
    left_pick = st.selectbox("Left", options, index=0, key="duplicates.left", format_func=label.get)
    right_pick = st.selectbox("Right", options, index=1, key="duplicates.right", format_func=label.get)
    left_html, right_html, ratio = render.diff_html(data.document_tokens(sid, left_pick),
                                                    data.document_tokens(sid, right_pick))
    st.caption(f"Token similarity {ratio:.1%}; differences highlighted.")
    cl, cr = st.columns(2)
    with cl:
        st.html(left_html)
    with cr:
        st.html(right_html)
