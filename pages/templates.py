"""Templates: the repeats with variable slots of the active run, their fillers, contexts and decisions.

A template (``posted by * on * leave a comment``) is mined by ``mine
--templates`` (engine.templates).  A template is chosen by its id (a row of the
table, the picker, or ``?template=`` in the URL).  Noise / keep decisions on a
template are stored under its text and used by the cut rule (engine.clean):
the Document view, the export and ``boilerscope clean`` cut its occurrences.
"""
import html

import polars as pl
import streamlit as st

from engine import views
from engine.api import DEFAULT_MAX_SLOT, mine
from engine.errors import BoilerscopeError
from pages import boot, conn, progress, render, state, widgets

s = boot.setup()
sid, run_id = boot.need_run(s)
st.title("Templates with slots")
info = conn.snapshot_info(s.path, sid)
summary = conn.run_summary(s.path, run_id)
tsum = summary.get("summary", {}).get("templates")

if not tsum:
    st.info(f"Run {run_id} (sigma {summary.get('sigma')}, L {summary.get('min_len')}) mined no templates. "
            "Mine them here with the same sigma and L, or tick «templates with slots» on the Mine page.")
    width = st.number_input("Most tokens a slot stands for (--max-slot)", 1, 16, DEFAULT_MAX_SLOT,
                            key="templates.max_slot")
    if st.button("Mine templates", type="primary", key="templates.mine"):
        try:
            run = progress.run_with_progress(
                lambda cb: mine(s.path, int(summary["sigma"]), int(summary["min_len"]), algo=summary["algo"],
                                store=s, snapshot=sid, progress=cb, templates=True, max_slot=int(width)),
                f"Mining templates, sigma {summary['sigma']}, L {summary['min_len']}")
        except BoilerscopeError as exc:
            st.error(str(exc))
            st.stop()
        state.set_run(run.run_id)
        state.share()
        st.rerun()
    st.stop()


@st.cache_data(show_spinner=False, max_entries=64)
def template_table(db, run_id, search, limit):
    return views.template_table(conn._store(db), run_id, search, limit)


@st.cache_data(show_spinner=False, max_entries=256)
def template_row(db, run_id, template_id):
    return views.template_row(conn._store(db), run_id, template_id)


@st.cache_data(show_spinner=False, max_entries=128)
def occurrences(db, run_id, sid, template_id, limit):
    return views.template_occurrences(conn._store(db), run_id, sid, template_id, limit)


@st.cache_data(show_spinner=False, max_entries=128)
def template_sites(db, run_id, sid, template_id):
    return views.template_sites(conn._store(db), run_id, sid, template_id)


@st.cache_data(show_spinner=False, max_entries=256)
def windows(db, sid, docs: tuple, starts: tuple, ends: tuple, width: int):
    return views.text_windows(conn._store(db), sid, docs, starts, ends, width)


a, b, c, d = st.columns(4)
a.metric("Templates", f"{tsum['templates']:,}")
b.metric("Coverage without templates", f"{100 * tsum['coverage_without_templates']:.1f}%")
c.metric("Coverage with templates", f"{100 * tsum['coverage_with_templates']:.1f}%",
         delta=f"{100 * (tsum['coverage_with_templates'] - tsum['coverage_without_templates']):+.1f} points",
         delta_color="off")
d.metric("Slot width (--max-slot)", tsum["max_slot"])
if tsum.get("truncated_seeds"):
    st.caption(f"{tsum['truncated_seeds']} of {tsum['seeds']:,} seeds stopped at the work bound "
               f"({tsum['max_work']:,} units): templates grown from them may be missing.")

f1, f2 = st.columns([3, 1])
f1.text_input("Search template text", key="templates.search", on_change=state.bind("templates.search", "tq", ""))
show = f2.selectbox("Decision", ("all", "undecided", "noise", "keep", "unsure"), key="templates.decision")
state.share()
decisions = conn.decisions_map(s, sid)
table = template_table(s.path, run_id, (state.get("tq") or "").strip(), 500).with_columns(
    (pl.col("tokens") / max(info["tokens"], 1)).alias("share"),
    pl.col("template").replace_strict(decisions, default=None, return_dtype=pl.String).alias("decision"))
if show == "undecided":
    table = table.filter(pl.col("decision").is_null())
elif show != "all":
    table = table.filter(pl.col("decision") == show)
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
    rows = list(event.selection.rows) if event is not None and hasattr(event, "selection") else []
    if rows and rows[0] < len(ids) and ids[rows[0]] != state.get("template"):
        state.put("template", ids[rows[0]])
        st.rerun()


table_view()

# -- template detail ---------------------------------------------------------
row = widgets.opened(lambda i: template_row(s.path, run_id, i), ids, "template", "template")
tid = int(row["template_id"])
state.share()
labels = dict(zip(ids, table["template"].to_list()))
labels.setdefault(tid, row["template"])
widgets.detail_picker("Template detail", ids, labels, tid, "templates", "template")

def marked(template: str) -> str:
    """The template as HTML, each slot a numbered chip (escaped)."""
    out, k = [], 0
    for tok in template.split(" "):
        if tok == "*":
            k += 1
            out.append(f'<span class="bs-slot" style="background:{render.TEMPLATE_EDGE};color:white;'
                       f'border-radius:4px;padding:0 .4em;margin:0 .1em">slot {k}</span>')
        else:
            out.append(html.escape(tok))
    return ('<div class="bs-template-text" style="font-size:1.25em;font-family:ui-serif,Georgia,serif">'
            + " ".join(out) + "</div>")


st.html(marked(row["template"]))
st.caption(f"{row['constant_tokens']} constant tokens · {row['slots']} slots of 1 to {row['max_slot']} tokens · "
           f"df {row['df']:,} · {row['occurrences']:,} occurrences · {row['sites']} sites")

current = decisions.get(row["template"])
widgets.decision_row(s, row["template"], current, "templates", sid)
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
    occ = occurrences(s.path, run_id, sid, tid, 30)
    with st.expander("Keyword in context (original text)", expanded=True):
        w = windows(s.path, sid, tuple(occ["doc_index"].to_list()), tuple(occ["char_start"].to_list()),
                    tuple(occ["char_end"].to_list()), 90)
        st.html(render.kwic_html(occ.to_dicts(), w["left"], w["mid"], w["right"],
                                 f'<mark class="bs-template" style="background:{render.TEMPLATE_COLOUR}">'))
    left, right = st.columns(2)
    left.markdown("**Sites**")
    left.dataframe(template_sites(s.path, run_id, sid, tid), hide_index=True, width="stretch")
    right.markdown("**Documents** (first 30 occurrences)")
    right.dataframe(occ.select("doc_id", "site", "url", "token_start", "token_end"), hide_index=True,
                    width="stretch")
    widgets.document_opener(right, occ["doc_id"].unique(maintain_order=True).to_list(), "templates")


contexts()
