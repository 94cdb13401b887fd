"""Phrases: the maximal repeats of the active run, the index eaters, a phrase's contexts and decisions.

A phrase is always chosen by its id (a row of the table, the picker, or
``?phrase=`` in the URL), never by its label: long phrases share their first
120 characters.  The table, the chart and the detail are fragments, so a click
reruns only its own part.
"""

import numpy as np
import polars as pl
import streamlit as st

from engine import views
from pages import boot, conn, render, state, widgets

DECISION_FILTER = ("all", "undecided", "noise", "keep", "unsure")

s = boot.setup()
sid, run_id = boot.need_run(s)
st.title("Repeated phrases")
info = conn.snapshot_info(s.path, sid)


@st.cache_data(show_spinner=False, max_entries=128)
def phrase_table(db, run_id, search, site, min_sites, limit):
    return views.phrase_table(conn._store(db), run_id, search, site, min_sites, limit)


@st.cache_data(show_spinner=False, max_entries=128)
def occurrences(db, run_id, sid, phrase_id, limit):
    return views.phrase_occurrences(conn._store(db), run_id, sid, phrase_id, limit)


@st.cache_data(show_spinner=False, max_entries=128)
def phrase_sites(db, run_id, sid, phrase_id):
    return views.phrase_sites(conn._store(db), run_id, sid, phrase_id)


@st.cache_data(show_spinner=False, max_entries=256)
def phrase_row(db, run_id, phrase_id):
    return views.phrase_row(conn._store(db), run_id, phrase_id)


@st.cache_data(show_spinner=False, max_entries=256)
def windows(db, sid, docs: tuple, starts: tuple, ends: tuple, width: int):
    return views.text_windows(conn._store(db), sid, docs, starts, ends, width)


def char_spans(token_starts, length: int):
    """(doc_index, char_start, char_end) of phrase occurrences given by their
    global token positions."""
    arrays = s.arrays(sid)
    a = np.asarray(token_starts, np.int64)
    docs = np.searchsorted(arrays.doc_offsets, a, side="right") - 1
    return (tuple(docs.tolist()), tuple(arrays.span_start[a].tolist()),
            tuple(arrays.span_end[a + length - 1].tolist()))


def as_written(first_pos: int, length: int) -> str:
    """The phrase as its first occurrence reads in the original text (case, punctuation)."""
    w = windows(s.path, sid, *char_spans([first_pos], length), 0)
    return w["mid"][0] if w.height else ""


f1, f2, f3, f4 = st.columns([2, 1, 1, 1])
f1.text_input("Search phrase text", key="phrases.search", on_change=state.bind("phrases.search", "q", ""))
sites = [""] + conn.site_list(s.path, sid)
if state.get("site") not in sites:
    state.put("site", None)
f2.selectbox("Occurs on site", sites, key="phrases.site", on_change=state.bind("phrases.site", "site", ""),
             format_func=lambda x: x or "(any site)")
min_sites = f3.number_input("Minimum number of sites", 1, 1000, 1, key="phrases.min_sites",
                            help="1 site: a template; many sites: a banner or legal notice")
show = f4.selectbox("Decision", DECISION_FILTER, key="phrases.decision")
state.share()

decisions = conn.decisions_map(s, sid)
table = phrase_table(s.path, run_id, (state.get("q") or "").strip(), state.get("site") or "", int(min_sites), 500)
table = table.with_columns(
    (pl.col("length") * pl.col("occurrences") / max(info["tokens"], 1)).alias("share"),
    pl.col("phrase").replace_strict(decisions, default=None, return_dtype=pl.String).alias("decision"))
if show == "undecided":
    table = table.filter(pl.col("decision").is_null())
elif show != "all":
    table = table.filter(pl.col("decision") == show)
ids = table["phrase_id"].to_list()


@st.fragment
def table_view():
    st.caption(f"{table.height} phrases shown (top 500 by Ψ = length × df); tick rows to open one or "
               "to decide several at once")
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
                for text in texts:
                    s.set_decision(text, label, "", scope=scope_value())
                st.rerun()


def scope_value() -> str:
    return widgets.scope("phrases", sid)


table_view()


@st.fragment
def eaters():
    if not table.height:
        return
    log_x = st.toggle("log scale", key="phrases.log")
    top = table.head(20).with_row_index("rank", 1).with_columns(
        (pl.col("rank").cast(pl.String) + ". " + pl.col("phrase").str.slice(0, 55)).alias("label"))
    chart = render.hbar(top.select("label", "psi", "phrase", "df", "length"), "psi", "label",
                        "Index eaters: top phrases by Ψ = length × df", x_title="Ψ", log=log_x,
                        tooltip=["phrase", "psi", "df", "length"], height=520)
    st.altair_chart(chart, width="stretch", key="phrases.eaters")


eaters()

# -- phrase detail ---------------------------------------------------------
row = widgets.opened(lambda i: phrase_row(s.path, run_id, i), ids, "phrase", "phrase")
pid = int(row["phrase_id"])
state.share()
labels = dict(zip(ids, table["phrase"].to_list()))
labels.setdefault(pid, row["phrase"])
widgets.detail_picker("Phrase detail", ids, labels, pid, "phrases", "phrase")

st.subheader(f"«{render.md(row['phrase'][:200])}»")
st.caption(f"length {row['length']} · df {row['df']:,} · {row['occurrences']:,} occurrences · "
           f"{row['sites']} sites · Ψ {row['psi']:,}")
written = as_written(int(row["first_pos"]), int(row["length"]))
st.markdown("As written in the original text: `" + " ".join(written[:300].replace("`", "'").split()) + "`")

current = decisions.get(row["phrase"])
widgets.decision_row(s, row["phrase"], current, "phrases", sid)
st.write(f"Decision: **{current or 'undecided'}**")


@st.fragment
def contexts():
    occ = occurrences(s.path, run_id, sid, pid, 30)
    with st.expander("Keyword in context (original text)", expanded=True):
        arrays = s.arrays(sid)
        starts = arrays.doc_offsets[occ["doc_index"].to_numpy()] + occ["token_pos"].to_numpy()
        w = windows(s.path, sid, *char_spans(starts, int(row["length"])), 90)
        st.html(render.kwic_html(occ.to_dicts(), w["left"], w["mid"], w["right"]))
    left, right = st.columns(2)
    left.markdown("**Sites**")
    left.dataframe(phrase_sites(s.path, run_id, sid, pid), hide_index=True, width="stretch")
    right.markdown("**Documents** (first 30)")
    right.dataframe(occ.select("doc_id", "site", "url", "token_pos"), hide_index=True, width="stretch")
    widgets.document_opener(right, occ["doc_id"].unique(maintain_order=True).to_list(), "phrases")


contexts()
