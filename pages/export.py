"""Decisions and export: the stop-phrase list, a cleaned snapshot, before/after figures."""
import os

import numpy as np
import polars as pl
import streamlit as st

from engine.api import clean
from engine.api import DEFAULT_MAX_SLOT
from engine.clean import decision_cut, stoplist_frames
from engine.errors import BoilerscopeError
from pages import boot, conn, progress, render

s = boot.setup()
sid, run_id = boot.need_run(s)
st.title("Decisions and export")
summary = conn.run_summary(s.path, run_id)
L = int(summary["min_len"])
max_slot = int((summary.get("summary", {}).get("templates") or {}).get("max_slot") or DEFAULT_MAX_SLOT)

scope = st.radio("Decisions of", ["this project (all snapshots)", "this snapshot"], horizontal=True,
                 key="export.scope", help="A decision made for one snapshot wins over the project's there.")
dec = s.decisions(sid)  # the decisions in force on this snapshot
if scope == "this snapshot":
    dec = dec.filter(pl.col("scope") == sid)
arrays = s.arrays(sid)
vocab_ids = {t: i for i, t in enumerate(s.vocabulary(sid))}


@st.cache_data(show_spinner=False, max_entries=32)
def tokens_cut(db: str, sid: str, L: int, noise: tuple, keep: tuple, max_slot: int) -> list[int]:
    """Tokens of this snapshot each noise phrase or template cuts on its own (keep still wins)."""
    tokens, offsets = np.asarray(arrays.tokens), np.asarray(arrays.doc_offsets)
    return [int(decision_cut(tokens, offsets, L, [p], list(keep), vocab_ids, max_slot).sum()) for p in noise]


st.subheader(f"Stop-phrase list ({dec.height} decisions)")
if dec.height:
    noise_t = tuple(dec.filter(pl.col("decision") == "noise")["phrase"].to_list())
    keep_t = tuple(dec.filter(pl.col("decision") == "keep")["phrase"].to_list())
    cuts = dict(zip(noise_t, tokens_cut(s.path, sid, L, noise_t, keep_t, max_slot)))
    shown = dec.with_columns(
        pl.when(pl.col("scope") == "*").then(pl.lit("all snapshots")).otherwise(pl.lit("this snapshot"))
        .alias("applies to"),
        pl.col("phrase").replace_strict(cuts, default=None, return_dtype=pl.Int64).alias("tokens cut"))
    st.dataframe(shown.select("phrase", "decision", "applies to", "tokens cut", "note", "updated"),
                 hide_index=True, width="stretch",
                 column_config={"tokens cut": st.column_config.NumberColumn(format="localized")})
    csv_bytes, json_bytes = stoplist_frames(dec)
    a, b = st.columns(2)
    a.download_button("Download CSV", csv_bytes, "stoplist.csv", "text/csv", key="export.csv")
    b.download_button("Download JSON", json_bytes, "stoplist.json", "application/json", key="export.json")
    rows = dec.select("phrase", "scope").rows()
    drop = st.selectbox("Remove a decision", [None] + rows, key="export.drop",
                        format_func=lambda r: "(choose)" if r is None else
                        f"{r[0][:110]} ({'all snapshots' if r[1] == '*' else 'this snapshot'})")
    if drop and st.button("Remove", key="export.remove"):
        s.set_decision(drop[0], None, scope=drop[1])
        st.rerun()
else:
    st.info("No decisions yet: mark phrases as noise / keep / unsure on the Phrases page.")

noise = dec.filter(pl.col("decision") == "noise")["phrase"].to_list()
keep = dec.filter(pl.col("decision") == "keep")["phrase"].to_list()
st.subheader("Cleaned snapshot")
st.caption(f"A token is cut when it lies in an occurrence of an L-gram (L = {L}, from run {run_id}) that occurs "
           "inside a phrase marked noise and inside no phrase marked keep, or in an occurrence of a template marked "
           f"noise (slots of 1 to {max_slot} tokens) outside the L-grams of kept phrases; nothing inside an "
           "occurrence of a kept template is cut. "
           f"Same rule as `boilerscope clean SOURCE --run {run_id} --stoplist stoplist.csv --out cleaned.parquet`.")
if st.button("Build cleaned snapshot", type="primary", key="export.build", disabled=not noise):
    out_dir = os.path.join(os.path.dirname(s.path), "exports")
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"cleaned-{sid}-run{run_id}.parquet")
    try:
        figures = progress.run_with_progress(
            lambda cb: clean(s.path, run=run_id, stoplist=(noise, keep), out=path, force=True, store=s),
            "Cleaning")
    except BoilerscopeError as exc:
        st.error(str(exc))
        st.stop()
    st.session_state["export.result"] = (path, figures)

res = st.session_state.get("export.result")
if res:
    path, figures = res
    st.success(f"Written {path}")
    with open(path, "rb") as fh:
        st.download_button("Download cleaned Parquet", fh.read(), os.path.basename(path),
                           "application/octet-stream", key="export.download")
    st.dataframe(figures, hide_index=True, width="stretch",
                 column_config={"cut_share": st.column_config.NumberColumn(format="percent"),
                                "mean_length_before": st.column_config.NumberColumn(format="%.1f"),
                                "mean_length_after": st.column_config.NumberColumn(format="%.1f"),
                                **{k: st.column_config.NumberColumn(format="localized")
                                   for k in ("documents", "tokens_before", "tokens_after")}})
    long = figures.unpivot(index="site", on=["mean_length_before", "mean_length_after"],
                           variable_name="when", value_name="mean document length")
    st.altair_chart(render.grouped_bars(
        long, "site", "mean document length", "when",
        "Mean document length before and after (the length BM25 normalises by)", x_title="site",
        colours={"mean_length_before": render.PRIMARY, "mean_length_after": "#8a8f98"}),
        width="stretch", key="export.fig")
