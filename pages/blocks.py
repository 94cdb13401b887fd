"""Blocks: the repeated regions of the active run, ranked by the tokens they cover.

A block is one region an analyst reads as one thing (a sidebar with all its
title variants, a footer, a banner): its maximal phrases and templates,
every covered token counted once (``docs/blocks.md``).  One decision marks
every member; the table is the triage list, corpus-wide or for one site.
"""
import polars as pl
import streamlit as st

from engine.ui import actions, boot, data, render, state, widgets

boot.setup()
sid, run_id = boot.need_run()
st.title("Blocks")
st.caption("The repeated regions of the index, each counted once: a block's covered tokens are what "
           "removing it would save. One decision marks all its phrases and templates.")

sites = [""] + data.site_list(sid)
if state.get("site") not in sites:
    state.put("site", None)
st.selectbox("Site", sites, key="blocks.site", on_change=state.bind("blocks.site", "site", ""),
             format_func=lambda x: x or "(all sites)")
state.share()
site = state.get("site") or ""
table = data.block_table(run_id, sid, site, 500)
if not table.height and not data.block_table(run_id, sid, "", 1).height:
    st.info("This run has no blocks: it covers nothing, or it was mined before blocks existed "
            "(mine it again on the Mine page).")
    st.stop()
decisions = data.decisions_map(sid)
ids = table["block_id"].to_list()


@st.fragment
def table_view():
    where = f"on {site}" if site else "corpus-wide"
    st.caption(f"{table.height} blocks {where}, by the tokens they cover (share: of "
               f"{'the site' if site else 'the index'}'s tokens); tick a row to open it, tick several to "
               "decide them together")
    shown = table.with_columns(pl.col("text").str.slice(0, 160),
                               pl.col("block_id").replace_strict(block_state, default="").alias("decision"))
    event = st.dataframe(
        shown, hide_index=True, width="stretch", on_select="rerun", selection_mode="multi-row", key="blocks.table",
        column_config={
            "block_id": st.column_config.NumberColumn("block", width="small"),
            "text": st.column_config.TextColumn("text (as written)", width="large"),
            "covered_tokens": st.column_config.NumberColumn("covered tokens", format="localized"),
            "share": st.column_config.ProgressColumn("share of tokens", format="percent", min_value=0.0,
                                                     max_value=max(float(table["share"].max() or 0), 1e-9))})
    rows = list(event.selection.rows) if event is not None and hasattr(event, "selection") else []
    picked = [ids[r] for r in rows if r < len(ids)]
    if picked != st.session_state.get("blocks.ticked", []):
        st.session_state["blocks.ticked"] = picked
        if picked:
            state.put("block", picked[-1])  # the row ticked last opens
        st.rerun()


block_state = data.block_decisions(run_id, sid, tuple(ids))  # block -> noise / keep / unsure / mixed
table_view()

# -- block detail -------------------------------------------------------------
row = widgets.detail(lambda i: data.block_row(run_id, i), table, "text", "block", "blocks", "Block detail")
bid = int(row["block_id"])
m1, m2, m3, m4 = st.columns(4)
m1.metric("Covered tokens", f"{row['covered_tokens']:,}")
m2.metric("Share of the index", f"{row['share']:.2%}")
m3.metric("Documents", f"{row['documents']:,}")
m4.metric("Sites", f"{row['sites']:,}")
text = row["text"] or ""
with st.expander(f"The block as written ({len(text):,} characters)", expanded=len(text) <= 1500):
    st.html(render.block_text_html(text))

members = data.block_members(run_id, bid)
ticked = [b for b in st.session_state.get("blocks.ticked", []) if b in ids]
targets = ticked if len(ticked) > 1 else [bid]
texts = members["text"].to_list() if targets == [bid] else data.block_member_texts(run_id, tuple(targets))
states = {decisions.get(t) for t in texts}
current = states.pop() if len(states) == 1 else ("mixed" if texts else None)
what = f"block {bid}'s" if targets == [bid] else f"the {len(targets)} ticked blocks'"
st.write(f"Decision on {what} {len(texts)} phrases and templates: **{current or 'undecided'}**")
d1, d2, d3, d4, d5, d6 = st.columns([1, 1, 1, 1, 1, 3])
note = d6.text_input("Note (optional)", key="blocks.note")
for col, label, key in ((d1, "noise", "n"), (d2, "keep", "k"), (d3, "unsure", "u"), (d4, None, "x")):
    if col.button(label or "clear", key=f"blocks.decide.{label}", shortcut=key, disabled=not texts,
                  type="primary" if label and current == label else "secondary",
                  help=f"Mark every member {label} (key {key})" if label else f"Clear every member (key {key})"):
        actions.decide_all(texts, label, note, scope=widgets.scope("blocks", sid))
        st.rerun()
last = actions.can_undo()
if d5.button("undo", key="blocks.undo", shortcut="z", disabled=last is None,
             help=f"Take back the last decision ({last}; key z)" if last else "Nothing to undo"):
    actions.undo()
    st.rerun()
st.radio("Applies to", ["all snapshots", "this snapshot"], key="blocks.scope", horizontal=True,
         help="A decision for this snapshot wins over the project's (all snapshots of the store).")

left, right = st.columns(2)
left.markdown("**Members** (what a decision marks)")
left.dataframe(members.with_columns(pl.Series("decision", [decisions.get(t) or "" for t in members["text"]],
                                              dtype=pl.String)),
               hide_index=True, width="stretch")
left.markdown("**Sites**")
left.dataframe(data.block_sites(run_id, sid, bid), hide_index=True, width="stretch")
docs = data.block_documents(run_id, sid, bid)
right.markdown("**Documents** (most covered first, 30)")
right.dataframe(docs, hide_index=True, width="stretch")
widgets.document_opener(right, docs["doc_id"].to_list(), "blocks")
