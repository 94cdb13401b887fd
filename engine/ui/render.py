"""HTML and chart helpers; document text is untrusted and always escaped.

Charts are Vega-Lite (Altair): Streamlit's Vega chunk is a sixth of its plotly
one (0.8 MB against 4.7 MB of JavaScript), which a fresh browser parses in
about a second less.  Vega renders labels and tooltips as text, never as
markup, and every chart has the toolbar's "Download as PNG".
"""
from __future__ import annotations

import difflib
import html

import altair as alt
import numpy as np
import polars as pl

from ..constants import SLOT_TEXT

COLOURS = {"noise": "#f4a6a6", "keep": "#a8e6a1", "unsure": "#ffd27f", None: "#fff3a3"}
#: Template occurrences: their own colour when undecided, and a blue underline always.
TEMPLATE_COLOUR = "#bcdcfa"
TEMPLATE_EDGE = "#2b6cb5"
#: Templates longer than this (tokens) are shown small, in a scrolling box.
LONG_TEMPLATE_TOKENS = 60
#: The theme's primary colour (.streamlit/config.toml) and distinct colours per site.
PRIMARY = "#b5452b"
SITE_COLOURS = ["#b5452b", "#2b6cb5", "#3a8f4b", "#8a4fb0", "#c78a1e", "#1f8f8f", "#b0487a", "#5b6b7a",
                "#7a5b2b", "#4b5bd0"]


def highlight_html(text: str, spans: list[dict], decisions: dict[str, str]) -> str:
    """The text with covered spans marked; every piece of document text is
    escaped (document text is untrusted).  Overlapping spans are split into
    pieces, each explained by the longest span covering it.  A span with
    ``kind == "template"`` (a template occurrence) has its own colour when
    undecided and a blue underline."""
    text = text or ""
    bounds = sorted({0, len(text), *[s["char_start"] for s in spans], *[s["char_end"] for s in spans]})
    out = []
    for a, b in zip(bounds, bounds[1:]):
        piece = html.escape(text[a:b])
        cover = [s for s in spans if s["char_start"] <= a and b <= s["char_end"]]
        if not cover:
            out.append(piece)
            continue
        best = max(cover, key=lambda s: (s["char_end"] - s["char_start"], s["phrase"]))
        decision = span_decision(best, decisions)
        is_tpl = best.get("kind") == "template"
        title = html.escape(why(best, decision), quote=True)
        colour = TEMPLATE_COLOUR if is_tpl and decision is None else COLOURS.get(decision, COLOURS[None])
        edge = f";border-bottom:2px solid {TEMPLATE_EDGE}" if is_tpl else ""
        out.append(f'<mark class="bs-span bs-{decision or "undecided"}{" bs-template" if is_tpl else ""}" '
                   f'style="background:{colour}{edge}" title="{title}">{piece}</mark>')
    return _doc_box("".join(out))


def span_decision(span: dict, decisions: dict[str, str]) -> str | None:
    """The decision a span shows: its own phrase's or template's, else its
    block's (``block_decision``, when all the block's members agree): a
    decision on a block marks the spans of the phrases inside it that are
    not maximal too, and the cut rule cuts them."""
    own = decisions.get(span["phrase"])
    if own is not None:
        return own
    block = span.get("block_decision")
    return block if block in ("noise", "keep", "unsure") else None


def why(span: dict, decision: str | None) -> str:
    """Why a span is highlighted, in one line: its phrase or template, df and
    sites, its block (share of the index, documents, sites) and the decision."""
    kind = "template" if span.get("kind") == "template" else "phrase"
    text = str(span["phrase"])
    text = text if len(text) <= 160 else text[:157] + "…"
    parts = [f"{kind} «{text}»", f"df {span['df']:,}"]
    if span.get("sites") is not None:
        parts.append(f"{span['sites']:,} site{'s' if span['sites'] != 1 else ''}")
    if span.get("block_id") is not None:
        block = f"block {span['block_id']}"
        if span.get("block_share") is not None:
            block += (f": {span['block_share']:.2%} of the index, {span['block_documents']:,} documents, "
                      f"{span['block_sites']:,} site{'s' if span['block_sites'] != 1 else ''}")
        parts.append(block)
    parts.append(decision or "undecided")
    return " · ".join(parts)


def ranked_labels(frame: pl.DataFrame, column: str, width: int) -> pl.DataFrame:
    """``frame`` with a ``label`` column: the row's rank and the first
    ``width`` characters of ``column`` ("3. pandas 1 5 3 documentation ..."),
    so two rows that start alike keep a bar each in a chart keyed by label."""
    return frame.with_row_index("rank", 1).with_columns(
        (pl.col("rank").cast(pl.String) + ". " + pl.col(column).str.slice(0, width)).alias("label"))


def hbar(frame: pl.DataFrame, x: str, y: str, title: str, *, x_title: str | None = None, log: bool = False,
         percent: bool = False,
         colours: dict[str, str] | None = None, tooltip: list[str] | None = None, height: int = 380) -> alt.Chart:
    """A horizontal bar chart, bars in the frame's order (top row first).

    ``colours`` maps the values of ``y`` to their colour (sites keep one
    colour on every chart); otherwise bars take the theme's primary colour.
    """
    frame = frame.with_row_index("_order")
    colour = (alt.Color(f"{y}:N", scale=alt.Scale(domain=list(colours), range=list(colours.values())),
                        legend=None) if colours else alt.value(PRIMARY))
    axis = alt.Axis(format="%") if percent else alt.Axis()
    scale = alt.Scale(type="symlog") if log else alt.Scale()
    # every bar keeps its label (Vega hides overlapping ones: the chart grows instead)
    height = max(height, 22 * frame.height)
    return (alt.Chart(frame.to_pandas(), title=title, height=height)
            .mark_bar()
            .encode(x=alt.X(f"{x}:Q", axis=axis, scale=scale, title=x_title or _title(x)),
                    y=alt.Y(f"{y}:N", sort=alt.EncodingSortField("_order"), title=None,
                            axis=alt.Axis(labelLimit=320, labelOverlap=False)),
                    color=colour, tooltip=tooltip or [y, x]))


def _title(column: str) -> str:
    """A column's name as an axis or legend title ("covered_tokens" -> "covered tokens")."""
    return column.replace("_", " ")


def grouped_bars(frame: pl.DataFrame, x: str, y: str, group: str, title: str, *, x_title: str,
                 colours: dict[str, str], log: bool = False, pick: alt.Parameter | None = None,
                 tooltip: list | None = None, x_order: list | None = None, height: int = 420) -> alt.Chart:
    """Vertical bars of ``y`` per ``x`` category (in the frame's order), side by
    side per ``group`` value, each group in its colour; with ``pick``, a
    click selects a bar (its fields come back to the script).  ``x_order``
    fixes the categories shown (empty ones too)."""
    order = x_order or frame[x].unique(maintain_order=True).to_list()
    chart = (alt.Chart(frame.to_pandas(), title=title, height=height)
             .mark_bar()
             .encode(x=alt.X(f"{x}:N", sort=order, scale=alt.Scale(domain=order), title=x_title,
                             axis=alt.Axis(labelAngle=-45 if len(order) > 10 else 0, labelOverlap=False)),
                     xOffset=alt.XOffset(f"{group}:N"),
                     y=alt.Y(f"{y}:Q", scale=alt.Scale(type="symlog") if log else alt.Scale(), title=_title(y)),
                     color=alt.Color(f"{group}:N", scale=alt.Scale(domain=list(colours),
                                                                   range=list(colours.values())),
                                     legend=alt.Legend(orient="top", title=None, labelLimit=300)),
                     tooltip=tooltip or [group, x, y]))
    if pick is not None:
        chart = chart.add_params(pick).encode(
            opacity=alt.condition(pick, alt.value(1.0), alt.value(0.45)))
    return chart


_MD_SPECIAL = set("\\`*_{}[]()#+-.!|<>~$:=\"'&%@^")


def md(text) -> str:
    """An untrusted value (site name, URL, phrase, note) as literal text inside
    Markdown (captions, headers, labels): every ASCII punctuation character is
    backslash-escaped, so ``[click](javascript:...)``, ``**``, ``:red[...]``
    and ``$...$`` show as typed and never become links, styles or formulas."""
    return "".join("\\" + ch if ch in _MD_SPECIAL else ch for ch in str(text)).replace("\n", " ")


def _doc_box(body: str) -> str:
    return ('<div class="bs-doc" style="white-space:pre-wrap;font-family:ui-serif,Georgia,serif;line-height:1.5;'
            f'max-height:70vh;overflow:auto;border:1px solid #ddd;padding:1em">{body}</div>')


def block_text_html(text: str) -> str:
    """A block's text as written, escaped, in the document box's normal
    font (a block may hold thousands of tokens: the box scrolls)."""
    return _doc_box(html.escape(text or ""))


def marked_ranges(text: str, ranges, open_tag: str, close_tag: str) -> str:
    """The text (escaped) with each character range [start, end) wrapped in
    the tags; ranges are sorted and do not overlap."""
    text = text or ""
    out, last = [], 0
    for a, b in ranges:
        a, b = max(int(a), last), int(b)
        if b <= a:
            continue
        out.append(html.escape(text[last:a]))
        out.append(f"{open_tag}{html.escape(text[a:b])}{close_tag}")
        last = b
    out.append(html.escape(text[last:]))
    return "".join(out)


def cut_html(text: str, ranges) -> str:
    """The text with each cut character range struck through (escaped): what
    the noise-removed export drops, in place."""
    return _doc_box(marked_ranges(text, ranges, '<del class="bs-cut" style="color:#a33;background:#fde8e8">',
                                  "</del>"))


def diff_html(left: dict, right: dict) -> tuple[str, str, float]:
    """Two documents (text, tokens, span_start, span_end) side by side: the
    HTML of each with the tokens that differ highlighted, and the token
    similarity (difflib's ratio)."""
    sm = difflib.SequenceMatcher(a=np.asarray(left["tokens"]).tolist(), b=np.asarray(right["tokens"]).tolist(),
                                 autojunk=False)
    ops = [op for op in sm.get_opcodes() if op[0] != "equal"]

    def side(doc, pairs):
        ss, se = doc["span_start"], doc["span_end"]
        ranges = [(int(ss[i]), int(se[j - 1])) for i, j in pairs if i < j]
        body = marked_ranges(doc["text"], ranges, '<mark style="background:#f4a6a6">', "</mark>")
        return ('<div style="white-space:pre-wrap;font-size:0.85em;border:1px solid #ddd;padding:0.6em;'
                'max-height:60vh;overflow:auto">' + body + "</div>")

    return side(left, [(o[1], o[2]) for o in ops]), side(right, [(o[3], o[4]) for o in ops]), sm.ratio()


def template_html(template: str) -> str:
    """A template as HTML, each slot a numbered chip (escaped)."""
    out, k = [], 0
    for tok in template.split(" "):
        if tok == SLOT_TEXT:
            k += 1
            out.append(f'<span class="bs-slot" style="background:{TEMPLATE_EDGE};color:white;'
                       f'border-radius:4px;padding:0 .4em;margin:0 .1em">slot {k}</span>')
        else:
            out.append(html.escape(tok))
    # a short template reads large; a long one (a 4,815-token sidebar) at the
    # text's size, in a box that scrolls instead of a page thousands of pixels high
    size = "1.25em" if len(out) <= LONG_TEMPLATE_TOKENS else "0.9em"
    box = "" if len(out) <= LONG_TEMPLATE_TOKENS else "max-height:40vh;overflow:auto;border:1px solid #ddd;padding:.6em;"
    return (f'<div class="bs-template-text" style="font-size:{size};{box}font-family:ui-serif,Georgia,serif">'
            + " ".join(out) + "</div>")


def span_context_html(text: str, start: int, end: int, width: int = 80) -> str:
    """One span of a document with ``width`` characters around it (escaped)."""
    text = text or ""
    return (f'<div style="font-family:ui-monospace,monospace;font-size:0.85em">…'
            f'{html.escape(text[max(0, start - width):start])}<mark>{html.escape(text[start:end][:400])}</mark>'
            f'{html.escape(text[end:end + width])}…</div>')


def kwic_html(rows: list[dict], lefts, mids, rights, mark: str = "<mark>") -> str:
    """Keyword-in-context lines, escaped: ``[site #doc_id] …left[mid]right…``
    (``rows`` hold site and doc_id; ``mark`` is the opening tag of the mid part,
    a long mid shows its two ends)."""
    lines = []
    for o, left, mid, right in zip(rows, lefts, mids, rights):
        mid = mid or ""
        mid_short = mid if len(mid) <= 300 else mid[:140] + " … " + mid[-140:]
        lines.append(
            f'<div style="font-family:ui-monospace,monospace;font-size:0.85em;margin:2px 0">'
            f'<span style="color:#888">[{html.escape(str(o["site"]))} #{o["doc_id"]}]</span> '
            f'…{html.escape(left or "")}{mark}{html.escape(mid_short)}</mark>{html.escape(right or "")}…</div>')
    return "".join(lines) or "<i>no occurrences</i>"
