"""Document: the original text with the covered spans highlighted by decision.

The document is named by its doc_id (in the URL too); the noise-removed view
shows each cut struck through, and the covered spans can be walked one by one.
"""
import polars as pl
import streamlit as st

from engine.ui import boot, data, nav, render, state

boot.setup()
sid, run_id = boot.need_run()
st.title("Document")
L, max_slot = data.cut_parameters(run_id)
has_templates = bool(data.run(run_id).get("summary", {}).get("templates"))

mode = st.radio("Find by", ["doc_id", "URL or text search"], horizontal=True, key="document.mode")
doc_id = state.get("doc")
doc_index = data.doc_index_of(sid, doc_id) if doc_id is not None else None
if doc_index is None:
    doc_id = data.first_doc_id(sid)
    doc_index = data.doc_index_of(sid, doc_id)
    state.put("doc", int(doc_id))
n_docs = int(data.snapshot_info(sid).get("documents") or 0)


def _open(value) -> None:
    """The doc_id box or a previous/next button: open that document (an
    unknown doc_id is reported, the shown document stays)."""
    if value is None:
        return
    if data.doc_index_of(sid, int(value)) is None:
        st.session_state["document.missing"] = int(value)
    else:
        state.put("doc", int(value))


def _step(delta: int) -> None:
    row = data.document(sid, int(doc_index) + delta)
    if row is not None:
        _open(row["doc_id"])


if mode == "doc_id":
    # the box shows the open document; typing another (Enter or +/-) opens it
    if st.session_state.get("document.doc_id") != int(doc_id):
        st.session_state["document.doc_id"] = int(doc_id)
    box, prev_doc, next_doc = st.columns([3, 1, 1], vertical_alignment="bottom")
    box.number_input("doc_id", step=1, key="document.doc_id",
                     on_change=lambda: _open(st.session_state["document.doc_id"]))
    prev_doc.button("◀ previous document", key="document.prev_doc", disabled=doc_index == 0,
                    on_click=_step, args=(-1,), width="stretch")
    next_doc.button("next document ▶", key="document.next_doc", disabled=doc_index >= n_docs - 1,
                    on_click=_step, args=(1,), width="stretch")
    missing = st.session_state.pop("document.missing", None)
    if missing is not None:
        st.error(f"No document with doc_id {missing} in this snapshot; showing doc_id {doc_id}.")
else:
    q = st.text_input("URL or words", key="document.search")
    if q:
        hits = data.search_documents(sid, q)
        if hits.height == 0:
            st.warning("No document matches.")
            st.stop()
        urls = dict(zip(hits["doc_id"].to_list(), hits["url"].to_list()))
        doc_id = st.selectbox("Matches", hits["doc_id"].to_list(), key="document.hit",
                              format_func=lambda i: f"#{i} {urls[i] or ''}")
        doc_index = data.doc_index_of(sid, doc_id)
if doc_id != state.get("doc"):
    state.put("doc", int(doc_id))
state.share()

doc = data.document(sid, int(doc_index))
covered = data.covered_tokens(run_id, doc_index)
n_tok = int(doc["n_tokens"])
a, b, d = st.columns(3)
a.metric("Tokens", f"{n_tok:,}")
b.metric("Covered tokens", f"{covered:,}")
d.metric("Contamination", f"{(covered / n_tok if n_tok else 0):.1%}")
st.caption(f"doc_id {doc['doc_id']} · {render.md(doc['site'])} · {render.md(doc['url'] or '')}")

spans = data.document_spans(run_id, doc_index).with_columns(pl.lit("phrase").alias("kind"))
if has_templates:
    spans = pl.concat([spans, data.document_template_spans(run_id, doc_index)
                       .with_columns(pl.lit("template").alias("kind"))], how="vertical_relaxed").sort("char_start")
decisions = data.decisions_map(sid)
# a span shows its own decision, else its block's (a block decided as a whole marks the phrases inside it)
blocks_here = tuple(sorted({int(b) for b in spans["block_id"].drop_nulls().to_list()}))
block_state = data.block_decisions(run_id, sid, blocks_here) if blocks_here else {}
spans = spans.with_columns(pl.col("block_id").replace_strict(block_state, default=None, return_dtype=pl.String)
                           .alias("block_decision"))
remove = st.toggle("Show the text with noise spans removed", key="document.clean",
                   on_change=state.bind("document.clean", "clean", False))
text = doc["text"] or ""
if remove:
    cut = data.document_cut(sid, doc_index, L, [p for p, v in decisions.items() if v == "noise"],
                            [p for p, v in decisions.items() if v == "keep"], max_slot)
    st.caption(f"{cut['tokens']} tokens cut by the noise decisions (struck through; the export "
               "leaves one space for each cut)")
    st.html(render.cut_html(text, cut["ranges"]))
else:
    records = spans.to_dicts()
    if records:
        nav1, nav2, nav3 = st.columns([1, 1, 4])
        k = min(int(st.session_state.get("document.span", 0)), len(records) - 1)
        if nav1.button("◀ previous span", key="document.prev", disabled=k == 0):
            k -= 1
        if nav2.button("next span ▶", key="document.next", disabled=k >= len(records) - 1):
            k += 1
        st.session_state["document.span"] = k
        cur = records[k]
        nav3.caption(f"span {k + 1} of {len(records)}: "
                     f"{render.md(render.why(cur, render.span_decision(cur, decisions)))}")
        st.html(render.span_context_html(text, cur["char_start"], cur["char_end"], 80))
        if cur.get("block_id") is not None and st.button(
                f"Open block {cur['block_id']}: its other occurrences, sites and decision", key="document.block"):
            state.put("block", int(cur["block_id"]))
            nav.switch("blocks", query_params=state.url_params())
    st.caption("Highlight colours: red = noise, green = keep, orange = unsure, yellow = undecided phrase, "
               "blue = undecided template (templates are underlined in blue whatever their decision); hover a "
               "span for why it is highlighted (its phrase or template, df, sites, block).")
    st.html(render.highlight_html(text, records, decisions))
