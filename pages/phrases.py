"""Phrases: the maximal repeats of the active run, the index eaters, a phrase's contexts and decisions."""
import html

import plotly.express as px
import polars as pl
import streamlit as st

from engine import views
from pages import boot, conn, render, state

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


f1, f2, f3 = st.columns([2, 1, 1])
search = f1.text_input("Search phrase text", key="phrases.search")
sites = [""] + conn.site_list(s.path, sid)
site = f2.selectbox("Occurs on site", sites, index=sites.index(state.get("site")) if state.get("site") in sites else 0,
                    key="phrases.site", format_func=lambda x: x or "(any site)")
min_sites = f3.number_input("Minimum number of sites", 1, 1000, 1, key="phrases.min_sites",
                            help="1 site: a template; many sites: a banner or legal notice")
if site != (state.get("site") or ""):
    state.put("site", site or None)
    state.share()

table = phrase_table(s.path, run_id, search.strip(), site, int(min_sites), 500)
table = table.with_columns((pl.col("length") * pl.col("occurrences") / max(info["tokens"], 1)).alias("share"))
st.caption(f"{table.height} phrases shown (top 500 by Ψ = length × df)")
event = st.dataframe(
    table.select("phrase", "length", "df", "occurrences", "sites", "psi", "share"),
    hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row", key="phrases.table",
    column_config={"share": st.column_config.ProgressColumn("share of tokens", format="percent",
                                                            min_value=0.0, max_value=max(float(table["share"].max() or 0), 1e-9)),
                   "psi": st.column_config.NumberColumn("Ψ")})
rows = event.selection.rows if event is not None and hasattr(event, "selection") else []
if rows:
    state.put("phrase", str(table["phrase_id"][rows[0]]))
    state.share()

if table.height:
    top = table.head(20).with_row_index("rank", 1).with_columns(
        (pl.col("rank").cast(pl.String) + ". " + pl.col("phrase").str.slice(0, 55)).alias("label"))
    fig = px.bar(top.to_pandas(), x="psi", y="label", orientation="h", hover_data=["phrase", "df", "length"],
                 title="Index eaters: top phrases by Ψ = length × df", labels={"psi": "Ψ", "label": ""})
    fig.update_layout(yaxis={"autorange": "reversed"}, height=520, margin={"l": 10, "r": 10})
    st.plotly_chart(fig, width="stretch", config=render.fig_config("index-eaters"), key="phrases.eaters")

# -- phrase detail ---------------------------------------------------------
pid = state.get("phrase")
ids = table["phrase_id"].to_list()
if pid is None or int(pid) not in ids:
    if not ids:
        st.stop()
    pid = ids[0]
pid = int(pid)
labels = dict(zip(ids, table["phrase"].to_list()))
pid = st.selectbox("Phrase detail", ids, index=ids.index(pid), key="phrases.detail",
                   format_func=lambda i: labels[i][:120])
if str(pid) != state.get("phrase"):
    state.put("phrase", str(pid))
    state.share()
row = table.filter(pl.col("phrase_id") == pid).row(0, named=True)
st.subheader(f"«{row['phrase'][:200]}»")
st.caption(f"length {row['length']} · df {row['df']} · {row['occurrences']} occurrences · {row['sites']} sites · Ψ {row['psi']}")

decisions = conn.decisions_map(s)
current = decisions.get(row["phrase"])
d1, d2, d3, d4, d5 = st.columns([1, 1, 1, 1, 3])
note = d5.text_input("Note (optional)", key="phrases.note")
for col, label in ((d1, "noise"), (d2, "keep"), (d3, "unsure")):
    if col.button(label, key=f"phrases.decide.{label}", type="primary" if current == label else "secondary"):
        s.set_decision(row["phrase"], label, note)
        st.rerun()
if d4.button("clear", key="phrases.decide.clear"):
    s.set_decision(row["phrase"], None)
    st.rerun()
st.write(f"Decision: **{current or 'undecided'}**")

arrays = s.arrays(sid)
occ = occurrences(s.path, run_id, sid, pid, 30)
st.markdown("**Keyword in context** (original text)")
snippets = []
for o in occ.iter_rows(named=True):
    doc = s.document(sid, o["doc_index"])
    base = int(doc["token_start"])
    a = base + o["token_pos"]
    b = a + row["length"] - 1
    cs, ce = int(arrays.span_start[a]), int(arrays.span_end[b])
    text = doc["text"] or ""
    left = text[max(0, cs - 90):cs]
    mid = text[cs:ce]
    right = text[ce:ce + 90]
    mid_short = mid if len(mid) <= 300 else mid[:140] + " … " + mid[-140:]
    snippets.append(
        f'<div style="font-family:ui-monospace,monospace;font-size:0.85em;margin:2px 0">'
        f'<span style="color:#888">[{html.escape(o["site"])} #{o["doc_id"]}]</span> '
        f'…{html.escape(left)}<mark>{html.escape(mid_short)}</mark>{html.escape(right)}…</div>')
st.html("".join(snippets) or "<i>no occurrences</i>")

left, right = st.columns(2)
left.markdown("**Sites**")
left.dataframe(phrase_sites(s.path, run_id, sid, pid), hide_index=True, width="stretch")
right.markdown("**Documents** (first 30)")
right.dataframe(occ.select("doc_id", "site", "url", "token_pos"), hide_index=True, width="stretch")
docs = occ["doc_index"].unique(maintain_order=True).to_list()
if docs:
    pick = right.selectbox("Open a document", docs, key="phrases.open",
                           format_func=lambda d: f"#{occ.filter(pl.col('doc_index') == d)['doc_id'][0]}")
    if right.button("Open in Document view", key="phrases.open_btn"):
        state.put("doc", int(pick))
        state.share()
        st.switch_page("pages/document.py", query_params={k: str(state.get(k)) for k in state.STATE if state.get(k) is not None})
