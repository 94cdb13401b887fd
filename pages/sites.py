"""Sites: contamination by site, histograms binned in SQL, documents of a bar."""
import altair as alt
import polars as pl
import streamlit as st

from engine.ui import boot, data, nav, render, state

boot.setup()
sid, run_id = boot.need_run()
st.title("Contamination by site")
BINS = 20

# a site without repeated text shows an empty cell, not "None"
rank = (data.site_ranking(run_id, sid).join(data.site_top_blocks(run_id, sid), on="site", how="left")
        .with_columns(pl.col("top_blocks").fill_null("")))
summary = data.run(run_id).get("summary", {})
all_sites = rank["site"].to_list()
colour = {site: render.SITE_COLOURS[i % len(render.SITE_COLOURS)] for i, site in enumerate(sorted(all_sites))}

# -- overview: the answer in one screen (PNG-ready: every chart has a download)
st.subheader("Overview")
o1, o2, o3 = st.columns(3)
o1.metric("Repeated text", f"{100 * summary.get('coverage', 0):.1f}% of tokens")
o2.metric("Documents", f"{summary.get('documents', 0):,}")
o3.metric("Sites", f"{len(all_sites):,}")
# built on click (a deferred download), cached per run: the page does not wait for it
st.download_button("Download the repetition card (HTML)", lambda: data.repetition_card(run_id),
                   f"boilerscope-card-run-{run_id}.html", "text/html", key="sites.card", on_click="ignore",
                   help="One self-contained page to share: the share of repeated text, the run's parameters, "
                        "the sites' histograms, the top blocks and templates (no script, opens offline)")
st.caption("Each chart's toolbar (at its top right when the pointer is on it) saves it as an image or "
           "shows its data.")
# a chart's toolbar shows on hover just above its top edge: this empty line
# gives it room, so it covers neither the button nor the caption above
st.write("")
g1, g2 = st.columns(2)
# the eaters are blocks, by the tokens they cover (each counted once); a run
# mined before blocks existed falls back to its phrases by Ψ
blocks = data.block_table(run_id, sid, "", 10)
eaters = data.phrase_table(run_id, limit=10) if not blocks.height else None
if blocks.height:
    top = render.ranked_labels(blocks.with_columns(pl.col("text").str.replace_all(r"\s+", " ")), "text", 45)
    g1.altair_chart(render.hbar(top.select("label", "covered_tokens", "text", "documents", "sites"), "covered_tokens",
                                "label", "The ten biggest index eaters (blocks, by the tokens they cover)",
                                x_title="tokens covered (each counted once)",
                                tooltip=["text", "covered_tokens", "documents", "sites"]), width="stretch",
                    key="sites.eaters")
elif eaters.height:
    top = render.ranked_labels(eaters, "phrase", 45)
    g1.altair_chart(render.hbar(top.select("label", "psi", "phrase", "df"), "psi", "label",
                                "The ten biggest index eaters (Ψ = length × df)", x_title="Ψ",
                                tooltip=["phrase", "psi", "df"]), width="stretch", key="sites.eaters")
worst = rank.sort("coverage", descending=True).head(10).select("site", "coverage")
g2.altair_chart(render.hbar(worst, "coverage", "site", "The most contaminated sites (share of their tokens repeated)",
                            x_title="share of the site's tokens", percent=True, colours={x: colour[x] for x in worst["site"].to_list()},
                            tooltip=["site", alt.Tooltip("coverage:Q", format=".1%")]),
                width="stretch", key="sites.worst")

st.subheader("Site ranking")
st.caption("Tick a site to list its blocks (its repeated regions, by the tokens they cover there).")
event = st.dataframe(rank, hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row",
                     key="sites.rank",
                     column_config={**{k: st.column_config.NumberColumn(format="percent")
                                       for k in ("coverage", "median_contamination", "p90_contamination")},
                                    **{k: st.column_config.NumberColumn(format="localized")
                                       for k in ("documents", "tokens", "covered_tokens")},
                                    "top_blocks": st.column_config.TextColumn("top blocks there", width="large")})
ticked = list(event.selection.rows) if event is not None and hasattr(event, "selection") else []
if ticked and ticked[0] < rank.height and rank["site"][ticked[0]] != state.get("site"):
    state.put("site", rank["site"][ticked[0]])
    st.rerun()
site = state.get("site") if state.get("site") in all_sites else None
if site:
    site_blocks = data.block_table(run_id, sid, site, 200)
    st.markdown(f"**Blocks on {render.md(site)}** ({site_blocks.height}, by the tokens they cover there)")
    st.dataframe(site_blocks.with_columns(pl.col("text").str.slice(0, 160)), hide_index=True, width="stretch",
                 key="sites.blocks", height=250,
                 column_config={"text": st.column_config.TextColumn("text (as written)", width="large"),
                                "covered_tokens": st.column_config.NumberColumn("covered tokens", format="localized"),
                                "share": st.column_config.NumberColumn("share of the site", format="percent")})
    if site_blocks.height and st.button("Triage this site's blocks", key="sites.to_blocks",
                                        help="the Blocks page, narrowed to this site"):
        state.put("block", int(site_blocks["block_id"][0]))
        nav.switch("blocks", query_params=state.url_params())

# the sites compared: from the URL (?sites=a&sites=b), else the Phrases page's site, else the first two
chosen = [x for x in (state.get("sites") or []) if x in all_sites]
if state.get("sites") is None:
    chosen = [state.get("site")] if state.get("site") in all_sites else all_sites[:2]
st.session_state["sites.pick"] = chosen
st.multiselect("Sites side by side (none: the whole corpus)", all_sites, key="sites.pick",
               on_change=lambda: (state.put("sites", list(st.session_state["sites.pick"])), state.put("bar", None)))
state.put("sites", chosen)
log_y = st.toggle("log scale (documents)", key="sites.log", on_change=state.bind("sites.log", "log", False))


@st.fragment
def histogram_view():
    hist = data.contamination_histogram(run_id, sid, tuple(chosen), BINS).with_columns(
        pl.format("{}–{}%", pl.col("bin") * (100 // BINS), (pl.col("bin") + 1) * (100 // BINS)).alias("contamination"))
    pick = alt.selection_point(name="bar", fields=["site", "bin"], on="click")
    names = hist["site"].unique(maintain_order=True).to_list()
    chart = render.grouped_bars(
        hist.sort("bin", maintain_order=True), "contamination", "documents", "site",
        "Documents by contamination (click a bar to list them)",
        x_title="contamination (covered share of the document)", log=log_y,
        colours={n: colour.get(n, render.PRIMARY) for n in names}, pick=pick,
        tooltip=["site", "contamination", "documents"],
        x_order=[f"{b * (100 // BINS)}–{(b + 1) * (100 // BINS)}%" for b in range(BINS)])
    event = st.altair_chart(chart, width="stretch", on_select="rerun", selection_mode="bar", key="sites.hist")
    points = event.selection.get("bar") if event is not None and hasattr(event, "selection") else None
    if points:
        bar = [str(points[0]["site"]), int(points[0]["bin"])]
        if bar != state.get("bar"):
            state.put("bar", bar)
            st.rerun()


histogram_view()
state.share()

bar = state.get("bar")
if bar:
    site_name, b = bar
    docs = data.documents_in_bin(run_id, sid, site_name, int(b), BINS)
    st.subheader(f"{render.md(site_name)}: contamination {b / BINS:.0%}–{(b + 1) / BINS:.0%} "
                 f"({docs.height} documents shown)")
    st.dataframe(docs.drop("doc_index"), hide_index=True, width="stretch",
                 column_config={"contamination": st.column_config.NumberColumn(format="percent")})
    if docs.height:
        pick = st.selectbox("Open a document", docs["doc_id"].to_list(), key="sites.open",
                            format_func=lambda d: f"#{d}")
        if st.button("Open in Document view", key="sites.open_btn"):
            state.put("doc", int(pick))
            nav.switch("document", query_params=state.url_params())
