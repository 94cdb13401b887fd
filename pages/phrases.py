"""Phrases: the maximal repeats of the active run, the index eaters, a phrase's contexts and decisions.

By default the page lists blocks (the repeated regions, each counted once,
``docs/blocks.md``) and the phrases of the block picked; "all phrases" lists
every maximal phrase by Ψ.

A phrase is always chosen by its id (a row of the table, the picker, or
``?phrase=`` in the URL), never by its label: long phrases share their first
120 characters.  The table, the chart and the detail are fragments, so a click
reruns only its own part.
"""

import polars as pl
import streamlit as st

from engine.ui import actions, boot, data, render, state, widgets

DECISION_FILTER = ("all", "undecided", "noise", "keep", "unsure")
VIEWS = {"blocks": "by block (each region once)", "phrases": "all phrases (by Ψ)"}

boot.setup()
sid, run_id = boot.need_run()
st.title("Repeated phrases")
info = data.snapshot_info(sid)

f1, f2, f3, f4 = st.columns([2, 1, 1, 1])
f1.text_input("Search phrase text", key="phrases.search", on_change=state.bind("phrases.search", "q", ""))
sites = [""] + data.site_list(sid)
if state.get("site") not in sites:
    state.put("site", None)
f2.selectbox("Occurs on site", sites, key="phrases.site", on_change=state.bind("phrases.site", "site", ""),
             format_func=lambda x: x or "(any site)")
if state.get("decided") not in DECISION_FILTER:
    state.put("decided", None)
if not 1 <= (state.get("minsites") or 1) <= 1000:  # a URL's value out of the box's range
    state.put("minsites", None)
min_sites = f3.number_input("Minimum number of sites", 1, 1000, key="phrases.min_sites",
                            on_change=state.bind("phrases.min_sites", "minsites", 1, int),
                            help="1 site: a template; many sites: a banner or legal notice")
show = f4.selectbox("Decision", DECISION_FILTER, key="phrases.decision",
                    on_change=state.bind("phrases.decision", "decided", "all"))
state.share()

if state.get("view") not in VIEWS:
    state.put("view", None)
view = st.segmented_control("List", list(VIEWS), key="phrases.view", format_func=VIEWS.get,
                            on_change=state.bind("phrases.view", "view", "blocks")) or "blocks"
state.share()

block = None
if view == "blocks":
    blocks = data.block_table(run_id, sid, state.get("site") or "", 500)
    had_blocks = blocks.height > 0
    if (state.get("q") or "").strip() or int(min_sites) > 1 or state.get("decided"):
        # the blocks holding a phrase that passes the filters
        passing = data.decided(data.phrase_table(run_id, (state.get("q") or "").strip(), state.get("site") or "",
                                                 int(min_sites), 100_000), "phrase", sid, show)
        blocks = blocks.filter(pl.col("block_id").is_in(passing["block_id"].drop_nulls().unique().to_list()))
    if blocks.height:
        block_ids = blocks["block_id"].to_list()
        if state.get("block") not in block_ids:
            state.put("block", block_ids[0])
        block = state.get("block")

        @st.fragment
        def block_view():
            st.caption(f"{blocks.height} blocks by the tokens they cover, each token once (share: of "
                       f"{'the site' if state.get('site') else 'the index'}'s tokens); tick one to list its "
                       "phrases below, open it on the Blocks page to decide it whole")
            event = st.dataframe(
                blocks.with_columns(pl.col("text").str.slice(0, 140)), hide_index=True, width="stretch",
                on_select="rerun", selection_mode="single-row", key="phrases.blocks", height=250,
                column_config={
                    "block_id": st.column_config.NumberColumn("block", width="small"),
                    "text": st.column_config.TextColumn("text (as written)", width="large"),
                    "covered_tokens": st.column_config.NumberColumn("covered tokens", format="localized"),
                    "share": st.column_config.ProgressColumn(
                        "share of tokens", format="percent", min_value=0.0,
                        max_value=max(float(blocks["share"].max() or 0), 1e-9))})
            widgets.open_selected(event, block_ids, "block")
        block_view()
    elif had_blocks:
        st.info("No block holds a phrase that passes the filters.")
        st.stop()
    else:
        st.caption("This run has no blocks (mined before blocks existed): all its phrases are listed.")

decisions = data.decisions_map(sid)
table = data.phrase_table(run_id, (state.get("q") or "").strip(), state.get("site") or "", int(min_sites), 500,
                          block=block)
table = data.decided(table.with_columns((pl.col("length") * pl.col("occurrences") / max(info["tokens"], 1))
                                        .alias("share")), "phrase", sid, show)
ids = table["phrase_id"].to_list()
if (block is not None or (state.get("q") or "").strip()) and state.get("phrase") not in ids:
    state.put("phrase", None)  # a block or a search picked: its first phrase opens, not one from elsewhere


@st.fragment
def table_view():
    what = f"of block {block}" if block is not None else "(top 500 by Ψ = length × df)"
    st.caption(f"{table.height} phrases {what}; tick rows to open one or to decide several at once")
    event = st.dataframe(
        table.select("phrase_id", "phrase", "length", "df", "occurrences", "sites", "psi", "share", "decision"),
        hide_index=True, width="stretch", on_select="rerun", selection_mode="multi-row", key="phrases.table",
        column_config={
            "phrase_id": st.column_config.NumberColumn("id", width="small"),
            "share": st.column_config.ProgressColumn("share of tokens", format="percent", min_value=0.0,
                                                     max_value=max(float(table["share"].max() or 0), 1e-9)),
            "psi": st.column_config.NumberColumn("Ψ", format="localized"),
            "df": st.column_config.NumberColumn(format="localized"),
            "occurrences": st.column_config.NumberColumn(format="localized")})
    rows = list(event.selection.rows) if event is not None and hasattr(event, "selection") else []
    picked = [ids[r] for r in rows if r < len(ids)]
    if picked != st.session_state.get("phrases.ticked", []):
        st.session_state["phrases.ticked"] = picked
        if picked:
            # the row ticked last opens (a rerun of the whole page shows it)
            state.put("phrase", picked[-1])
            st.rerun()
    if len(picked) > 1:
        st.write(f"{len(picked)} phrases ticked:")
        cols = st.columns(5)
        for col, label in zip(cols, ("noise", "keep", "unsure", None)):
            if col.button(f"mark {label}" if label else "clear", key=f"phrases.bulk.{label}"):
                texts = table.filter(pl.col("phrase_id").is_in(picked))["phrase"].to_list()
                actions.decide_all(texts, label, "", scope=scope_value())  # one batch: one undo
                st.rerun()


def scope_value() -> str:
    return widgets.scope("phrases", sid)


table_view()


@st.fragment
def eaters():
    if not table.height:
        return
    log_x = st.toggle("log scale", key="phrases.log", on_change=state.bind("phrases.log", "log", False))
    state.share()  # a rerun of this fragment alone
    top = render.ranked_labels(table.head(20), "phrase", 55)
    chart = render.hbar(top.select("label", "psi", "phrase", "df", "length"), "psi", "label",
                        "Index eaters: top phrases by Ψ = length × df", x_title="Ψ", log=log_x,
                        tooltip=["phrase", "psi", "df", "length"], height=520)
    st.altair_chart(chart, width="stretch", key="phrases.eaters")


eaters()

# -- phrase detail ---------------------------------------------------------
row = widgets.detail(lambda i: data.phrase_row(run_id, i), table, "phrase", "phrase", "phrases", "Phrase detail")
pid = int(row["phrase_id"])

st.subheader(f"«{render.md(row['phrase'][:200])}»")
st.caption(f"length {row['length']} · df {row['df']:,} · {row['occurrences']:,} occurrences · "
           f"{row['sites']} sites · Ψ {row['psi']:,}")
st.markdown("As written in the original text: `" + " ".join(row["written"][:300].replace("`", "'").split()) + "`")

current = decisions.get(row["phrase"])
widgets.decision_row(row["phrase"], current, "phrases", sid)
st.write(f"Decision: **{current or 'undecided'}**")


@st.fragment
def contexts():
    occ = data.with_windows(sid, data.phrase_occurrences(run_id, sid, pid, 30), 90)
    with st.expander("Keyword in context (original text)", expanded=True):
        st.html(render.kwic_html(occ.to_dicts(), occ["left"], occ["mid"], occ["right"]))
    left, right = st.columns(2)
    left.markdown("**Sites**")
    left.dataframe(data.phrase_sites(run_id, sid, pid), hide_index=True, width="stretch")
    right.markdown("**Documents** (first 30)")
    right.dataframe(occ.select("doc_id", "site", "url", "token_pos"), hide_index=True, width="stretch")
    widgets.document_opener(right, occ["doc_id"].unique(maintain_order=True).to_list(), "phrases")


contexts()
