"""Decisions and export: the stop-phrase list, a cleaned snapshot, before/after figures."""
import os

import polars as pl
import streamlit as st

from engine.constants import ALL_SNAPSHOTS
from engine.errors import BoilerscopeError
from engine.ui import actions, boot, data, render

boot.setup()
sid, run_id = boot.need_run()
st.title("Decisions and export")
L, max_slot = data.cut_parameters(run_id)

scope = st.radio("Decisions of", ["this project (all snapshots)", "this snapshot"], horizontal=True,
                 key="export.scope", help="A decision made for one snapshot wins over the project's there.")
dec = data.decisions(sid)  # the decisions in force on this snapshot
if scope == "this snapshot":
    dec = dec.filter(pl.col("scope") == sid)

st.subheader(f"Stop-phrase list ({dec.height} decisions)")
if dec.height:
    noise_t = tuple(dec.filter(pl.col("decision") == "noise")["phrase"].to_list())
    keep_t = tuple(dec.filter(pl.col("decision") == "keep")["phrase"].to_list())
    cuts = data.tokens_cut(sid, L, noise_t, keep_t, max_slot)
    shown = dec.with_columns(
        pl.when(pl.col("scope") == ALL_SNAPSHOTS).then(pl.lit("all snapshots")).otherwise(pl.lit("this snapshot"))
        .alias("applies to"),
        pl.col("phrase").replace_strict(cuts, default=None, return_dtype=pl.Int64).alias("tokens cut"))
    st.dataframe(shown.select("phrase", "decision", "applies to", "tokens cut", "note", "updated"),
                 hide_index=True, width="stretch",
                 column_config={"tokens cut": st.column_config.NumberColumn(format="localized")})
    csv_bytes, json_bytes = data.stoplist_files(dec)
    a, b = st.columns(2)
    a.download_button("Download CSV", csv_bytes, "stoplist.csv", "text/csv", key="export.csv")
    b.download_button("Download JSON", json_bytes, "stoplist.json", "application/json", key="export.json")
    rows = dec.select("phrase", "scope").rows()
    drop = st.selectbox("Remove a decision", [None] + rows, key="export.drop",
                        format_func=lambda r: "(choose)" if r is None else
                        f"{r[0][:110]} ({'all snapshots' if r[1] == ALL_SNAPSHOTS else 'this snapshot'})")
    if drop and st.button("Remove", key="export.remove"):
        actions.decide(drop[0], None, scope=drop[1])
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
# this tab's cleaned snapshot being built (after a rerun, or a visit to another page); not
# another tab's: its decisions may differ
pending = actions.pending("clean", sid, attach=False)
try:
    if st.button("Build cleaned snapshot", type="primary", key="export.build", disabled=not noise):
        st.session_state["export.result"] = actions.export_cleaned(sid, run_id, noise, keep)
    elif pending is not None:
        st.session_state["export.result"] = actions.follow(pending, "clean")
except BoilerscopeError as exc:
    st.error(str(exc))
    st.stop()

res = st.session_state.get("export.result")
if res and res[0] != actions.cleaned_path(sid, run_id, noise, keep):
    res = None  # built from other decisions (one was changed since): build it again
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
