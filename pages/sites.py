"""Sites: contamination by site, histograms binned in SQL, documents of a bar."""
import plotly.graph_objects as go
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


@st.cache_data(show_spinner=False, max_entries=64)
def top_eaters(db, run_id):
    return views.phrase_table(conn._store(db), run_id, limit=10)


def documents_in_bin(db, run_id, sid, site, b, limit=200):
    return views.documents_in_bin(conn._store(db), run_id, sid, site, b, BINS, limit)


rank = ranking(s.path, run_id, sid).join(top_phrases(s.path, run_id, sid), on="site", how="left")
summary = conn.run_summary(s.path, run_id).get("summary", {})
all_sites = rank["site"].to_list()
colour = {site: render.SITE_COLOURS[i % len(render.SITE_COLOURS)] for i, site in enumerate(sorted(all_sites))}

# -- overview: the answer in one screen (PNG-ready: every chart has a download)
st.subheader("Overview")
o1, o2, o3 = st.columns(3)
o1.metric("Repeated text", f"{100 * summary.get('coverage', 0):.1f}% of tokens")
o2.metric("Documents", f"{summary.get('documents', 0):,}")
o3.metric("Sites", f"{len(all_sites):,}")
g1, g2 = st.columns(2)
eaters = top_eaters(s.path, run_id)
if eaters.height:
    fig = go.Figure(go.Bar(x=eaters["psi"].to_list(), y=[p[:45] for p in eaters["phrase"].to_list()],
                           orientation="h", marker_color=render.PRIMARY,
                           hovertext=eaters["phrase"].to_list()))
    fig.update_layout(title="The ten biggest index eaters (Ψ = length × df)", yaxis={"autorange": "reversed"},
                      height=380, margin={"l": 10, "r": 10})
    g1.plotly_chart(fig, width="stretch", config=render.fig_config("index-eaters-top10"), key="sites.eaters")
worst = rank.sort("coverage", descending=True).head(10)
fig = go.Figure(go.Bar(x=worst["coverage"].to_list(), y=worst["site"].to_list(), orientation="h",
                       marker_color=[colour[x] for x in worst["site"].to_list()]))
fig.update_layout(title="The most contaminated sites (share of their tokens repeated)",
                  xaxis={"tickformat": ".0%"}, yaxis={"autorange": "reversed"}, height=380, margin={"l": 10, "r": 10})
g2.plotly_chart(fig, width="stretch", config=render.fig_config("contaminated-sites"), key="sites.worst")

st.subheader("Site ranking")
st.dataframe(rank, hide_index=True, width="stretch",
             column_config={**{k: st.column_config.NumberColumn(format="percent")
                               for k in ("coverage", "median_contamination", "p90_contamination")},
                            **{k: st.column_config.NumberColumn(format="localized")
                               for k in ("documents", "tokens", "covered_tokens")}})

# the sites compared: from the URL (?sites=a&sites=b), else the Phrases page's site, else the first two
chosen = [x for x in (state.get("sites") or []) if x in all_sites]
if state.get("sites") is None:
    chosen = [state.get("site")] if state.get("site") in all_sites else all_sites[:2]
st.session_state["sites.pick"] = chosen
st.multiselect("Sites side by side (none: the whole corpus)", all_sites, key="sites.pick",
               on_change=lambda: (state.put("sites", list(st.session_state["sites.pick"])), state.put("bar", None)))
state.put("sites", chosen)
log_y = st.toggle("log scale (documents)", key="sites.log")


@st.fragment
def histogram_view():
    hist = histogram(s.path, run_id, sid, tuple(chosen))
    fig = go.Figure()
    for site_name, part in hist.group_by("site", maintain_order=True):
        name = site_name[0]
        fig.add_bar(x=[(b + 0.5) / BINS for b in part["bin"]], y=part["documents"].to_list(), name=name,
                    marker_color=colour.get(name, render.PRIMARY),
                    customdata=[[name, b] for b in part["bin"]],
                    hovertemplate="%{customdata[0]}<br>contamination %{x:.0%}: %{y} documents<extra></extra>")
    fig.update_layout(barmode="group", title="Documents by contamination (click a bar to list them)",
                      xaxis={"title": "contamination (covered share of the document)", "tickformat": ".0%",
                             "range": [0, 1]},
                      yaxis={"title": "documents", "type": "log" if log_y else "linear"}, height=420)
    event = st.plotly_chart(fig, width="stretch", on_select="rerun", selection_mode="points",
                            config=render.fig_config("contamination-histogram"), key="sites.hist")
    points = event.selection.points if event is not None and hasattr(event, "selection") else []
    if points and points[0].get("customdata"):
        data = points[0]["customdata"]
        bar = [str(data[0]), int(data[1])]
        if bar != state.get("bar"):
            state.put("bar", bar)
            st.rerun()


histogram_view()
state.share()

bar = state.get("bar")
if bar:
    site_name, b = bar
    docs = documents_in_bin(s.path, run_id, sid, site_name, int(b))
    st.subheader(f"{render.md(site_name)}: contamination {b / BINS:.0%}–{(b + 1) / BINS:.0%} "
                 f"({docs.height} documents shown)")
    st.dataframe(docs.drop("doc_index"), hide_index=True, width="stretch",
                 column_config={"contamination": st.column_config.NumberColumn(format="percent")})
    if docs.height:
        pick = st.selectbox("Open a document", docs["doc_id"].to_list(), key="sites.open",
                            format_func=lambda d: f"#{d}")
        if st.button("Open in Document view", key="sites.open_btn"):
            state.put("doc", int(pick))
            st.switch_page("pages/document.py", query_params=state.url_params())
