"""Templates: the repeats with variable slots of the active run, their fillers, contexts and decisions.

A template (``posted by * on * leave a comment``) is mined by ``mine
--templates`` (engine.templates).  A template is chosen by its id (a row of the
table, the picker, or ``?template=`` in the URL).  Noise / keep decisions on a
template are stored under its text and used by the cut rule (engine.clean):
the Document view, the export and ``boilerscope clean`` cut its occurrences.
"""
import polars as pl
import streamlit as st

from engine.constants import DEFAULT_MAX_SLOT, MAX_SLOT_RANGE
from engine.errors import BoilerscopeError
from engine.ui import actions, boot, data, render, state, widgets

boot.setup()
sid, run_id = boot.need_run()
st.title("Templates with slots")
info = data.snapshot_info(sid)
summary = data.run(run_id)
tsum = summary.get("summary", {}).get("templates")

if not tsum:
    st.info(f"Run {run_id} (sigma {summary.get('sigma')}, L {summary.get('min_len')}) mined no templates. "
            "Mine them here with the same sigma and L, or tick «templates with slots» on the Mine page.")
    width = st.number_input("Most tokens a slot stands for (W)", *MAX_SLOT_RANGE, DEFAULT_MAX_SLOT,
                            key="templates.max_slot")
    if st.button("Mine templates", type="primary", key="templates.mine"):
        try:
            run = actions.mine(sid, int(summary["sigma"]), int(summary["min_len"]), summary["algo"], int(width))
        except BoilerscopeError as exc:
            st.error(str(exc))
            st.stop()
        state.set_run(run.run_id)
        state.share()
        st.rerun()
    st.stop()


a, b, c, d = st.columns(4)
a.metric("Templates", f"{tsum['templates']:,}")
b.metric("Coverage without templates", f"{100 * tsum['coverage_without_templates']:.1f}%")
c.metric("Coverage with templates", f"{100 * tsum['coverage_with_templates']:.1f}%",
         delta=f"{100 * (tsum['coverage_with_templates'] - tsum['coverage_without_templates']):+.1f} points",
         delta_color="off")
d.metric("Slot width (W)", tsum["max_slot"])
if tsum.get("truncated_seeds"):
    st.caption(f"{tsum['truncated_seeds']} of {tsum['seeds']:,} seeds stopped at the work bound "
               f"({tsum['max_work']:,} units): templates grown from them may be missing.")

f1, f2 = st.columns([3, 1])
f1.text_input("Search template text", key="templates.search", on_change=state.bind("templates.search", "tq", ""))
show = f2.selectbox("Decision", ("all", "undecided", "noise", "keep", "unsure"), key="templates.decision")
state.share()
decisions = data.decisions_map(sid)
table = data.template_table(run_id, (state.get("tq") or "").strip(), 500)
table = data.decided(table.with_columns((pl.col("tokens") / max(info["tokens"], 1)).alias("share")), "template",
                     sid, show)
ids = table["template_id"].to_list()


@st.fragment
def table_view():
    st.caption(f"{table.height} templates shown (top 500 by tokens covered); tick a row to open it")
    event = st.dataframe(
        table.select("template_id", "template", "constant_tokens", "slots", "df", "occurrences", "sites", "tokens",
                     "share", "decision"),
        hide_index=True, width="stretch", on_select="rerun", selection_mode="single-row", key="templates.table",
        column_config={
            "template_id": st.column_config.NumberColumn("id", width="small"),
            "constant_tokens": st.column_config.NumberColumn("constants"),
            "tokens": st.column_config.NumberColumn("tokens covered", format="localized"),
            "share": st.column_config.ProgressColumn("share of tokens", format="percent", min_value=0.0,
                                                     max_value=max(float(table["share"].max() or 0), 1e-9)),
            "df": st.column_config.NumberColumn(format="localized"),
            "occurrences": st.column_config.NumberColumn(format="localized")})
    widgets.open_selected(event, ids, "template")


table_view()

# -- template detail ---------------------------------------------------------
row = widgets.detail(lambda i: data.template_row(run_id, i), table, "template", "template", "templates",
                     "Template detail")
tid = int(row["template_id"])

st.html(render.template_html(row["template"]))
st.caption(f"{row['constant_tokens']} constant tokens · {row['slots']} slots of 1 to {row['max_slot']} tokens · "
           f"df {row['df']:,} · {row['occurrences']:,} occurrences · {row['sites']} sites")

current = decisions.get(row["template"])
widgets.decision_row(row["template"], current, "templates", sid)
st.write(f"Decision: **{current or 'undecided'}** (noise cuts every occurrence in the Document view, the export "
         "and `boilerscope clean`; keep protects them)")


@st.fragment
def fillers():
    slots = row["fillers"] or []
    if not slots:
        return
    st.markdown("**Fillers per slot** (the most frequent, by occurrences)")
    tabs = st.tabs([f"slot {k + 1}" for k in range(len(slots))])
    for k, (tab, pairs) in enumerate(zip(tabs, slots)):
        frame = pl.DataFrame({"filler": [p[0] for p in pairs], "occurrences": [int(p[1]) for p in pairs]},
                             schema={"filler": pl.String, "occurrences": pl.Int64})
        with tab:
            if not frame.height:
                st.write("no fillers stored")
                continue
            st.altair_chart(render.hbar(frame, "occurrences", "filler", f"Slot {k + 1}: fillers",
                                        x_title="occurrences", tooltip=["filler", "occurrences"],
                                        height=max(120, 22 * frame.height)),
                            width="stretch", key=f"templates.fillers.{k}")


fillers()


@st.fragment
def contexts():
    occ = data.with_windows(sid, data.template_occurrences(run_id, sid, tid, 30), 90)
    with st.expander("Keyword in context (original text)", expanded=True):
        st.html(render.kwic_html(occ.to_dicts(), occ["left"], occ["mid"], occ["right"],
                                 f'<mark class="bs-template" style="background:{render.TEMPLATE_COLOUR}">'))
    left, right = st.columns(2)
    left.markdown("**Sites**")
    left.dataframe(data.template_sites(run_id, sid, tid), hide_index=True, width="stretch")
    right.markdown("**Documents** (first 30 occurrences)")
    right.dataframe(occ.select("doc_id", "site", "url", "token_start", "token_end"), hide_index=True,
                    width="stretch")
    widgets.document_opener(right, occ["doc_id"].unique(maintain_order=True).to_list(), "templates")


contexts()
