"""Sites: contamination by site, histograms binned in SQL, documents of a bar."""
import plotly.graph_objects as go
import polars as pl
import streamlit as st

from engine import views
from pages import boot, conn, render, state

s = boot.setup()
sid, run_id = boot.need_run(s)
st.title("Contamination by site")
BINS = 20


@st.cache_data(show_spinner=False, max_entries=64)
def ranking(db, run_id, sid):
    return views.site_ranking(conn._store(db), run_id, sid)


@st.cache_data(show_spinner=False, max_entries=64)
def top_phrases(db, run_id, sid):
    return views.site_top_phrases(conn._store(db), run_id, sid)


@st.cache_data(show_spinner=False, max_entries=128)
def histogram(db, run_id, sid, sites: tuple):
    return views.contamination_histogram(conn._store(db), run_id, sid, sites, BINS)


def documents_in_bin(db, run_id, sid, site, b, limit=200):
    return views.documents_in_bin(conn._store(db), run_id, sid, site, b, BINS, limit)


rank = ranking(s.path, run_id, sid).join(top_phrases(s.path, run_id, sid), on="site", how="left")
st.subheader("Site ranking")
st.dataframe(rank, hide_index=True, width="stretch",
             column_config={k: st.column_config.NumberColumn(format="percent")
                            for k in ("coverage", "median_contamination", "p90_contamination")})

all_sites = rank["site"].to_list()
default = [state.get("site")] if state.get("site") in all_sites else all_sites[:2]
chosen = st.multiselect("Sites side by side (none: the whole corpus)", all_sites, default=default, key="sites.pick")
hist = histogram(s.path, run_id, sid, tuple(chosen))
fig = go.Figure()
for site_name, part in hist.group_by("site", maintain_order=True):
    name = site_name[0]
    fig.add_bar(x=[(b + 0.5) / BINS for b in part["bin"]], y=part["documents"].to_list(), name=name,
                customdata=[[name, b] for b in part["bin"]],
                hovertemplate="%{customdata[0]}<br>contamination %{x:.0%}: %{y} documents<extra></extra>")
fig.update_layout(barmode="group", title="Documents by contamination (click a bar to list them)",
                  xaxis={"title": "contamination (covered share of the document)", "tickformat": ".0%",
                         "range": [0, 1]}, yaxis={"title": "documents"}, height=420)
event = st.plotly_chart(fig, width="stretch", on_select="rerun", selection_mode="points",
                        config=render.fig_config("contamination-histogram"), key="sites.hist")
points = (event or {}).get("selection", {}).get("points", []) if isinstance(event, dict) else (
    event.selection.points if event is not None and hasattr(event, "selection") else [])
if points:
    p = points[0]
    data = p.get("customdata")
    if data:
        st.session_state["sites.bar"] = (str(data[0]), int(data[1]))

bar = st.session_state.get("sites.bar")
if bar:
    site_name, b = bar
    docs = documents_in_bin(s.path, run_id, sid, site_name, b)
    st.subheader(f"{site_name}: contamination {b / BINS:.0%}–{(b + 1) / BINS:.0%} ({docs.height} documents shown)")
    st.dataframe(docs.drop("doc_index"), hide_index=True, width="stretch",
                 column_config={"contamination": st.column_config.NumberColumn(format="percent")})
    if docs.height:
        pick = st.selectbox("Open a document", docs["doc_index"].to_list(), key="sites.open",
                            format_func=lambda d: f"#{docs.filter(pl.col('doc_index') == d)['doc_id'][0]}")
        if st.button("Open in Document view", key="sites.open_btn"):
            state.put("doc", int(pick))
            st.switch_page("pages/document.py",
                           query_params={k: str(state.get(k)) for k in state.STATE if state.get(k) is not None})
