"""Decisions and export: the stop-phrase list, a cleaned snapshot, before/after figures."""
import os

import plotly.express as px
import polars as pl
import streamlit as st

from engine.api import clean
from engine.clean import stoplist_frames
from engine.errors import BoilerscopeError
from pages import boot, conn, progress, render

s = boot.setup()
sid, run_id = boot.need_run(s)
st.title("Decisions and export")
summary = conn.run_summary(s.path, run_id)
L = int(summary["min_len"])

dec = s.decisions()
st.subheader(f"Stop-phrase list ({dec.height} decisions)")
if dec.height:
    st.dataframe(dec, hide_index=True, width="stretch")
    csv_bytes, json_bytes = stoplist_frames(dec)
    a, b = st.columns(2)
    a.download_button("Download CSV", csv_bytes, "stoplist.csv", "text/csv", key="export.csv")
    b.download_button("Download JSON", json_bytes, "stoplist.json", "application/json", key="export.json")
    drop = st.selectbox("Remove a decision", [""] + dec["phrase"].to_list(), key="export.drop",
                        format_func=lambda p: p[:120] or "(choose)")
    if drop and st.button("Remove", key="export.remove"):
        s.set_decision(drop, None)
        st.rerun()
else:
    st.info("No decisions yet: mark phrases as noise / keep / unsure on the Phrases page.")

noise = dec.filter(pl.col("decision") == "noise")["phrase"].to_list()
keep = dec.filter(pl.col("decision") == "keep")["phrase"].to_list()
st.subheader("Cleaned snapshot")
st.caption(f"A token is cut when it lies in an occurrence of an L-gram (L = {L}, from run {run_id}) that occurs "
           "inside a phrase marked noise and inside no phrase marked keep. "
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
                 column_config={"cut_share": st.column_config.NumberColumn(format="percent")})
    long = figures.unpivot(index="site", on=["mean_length_before", "mean_length_after"],
                           variable_name="when", value_name="mean document length")
    fig = px.bar(long.to_pandas(), x="site", y="mean document length", color="when", barmode="group",
                 title="Mean document length before and after (the length BM25 normalises by)")
    st.plotly_chart(fig, width="stretch", config=render.fig_config("before-after"), key="export.fig")
