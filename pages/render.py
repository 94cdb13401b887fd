"""HTML and chart helpers; document text is untrusted and always escaped."""
from __future__ import annotations

import html

COLOURS = {"noise": "#f4a6a6", "keep": "#a8e6a1", "unsure": "#ffd27f", None: "#fff3a3"}


def highlight_html(text: str, spans: list[dict], decisions: dict[str, str]) -> str:
    """The text with covered spans marked; every piece of document text is
    escaped (document text is untrusted).  Overlapping spans are split into
    pieces, each explained by the longest span covering it."""
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
        decision = decisions.get(best["phrase"])
        title = html.escape(f"{best['phrase']}  (df {best['df']}, {decision or 'undecided'})", quote=True)
        out.append(f'<mark class="bs-span bs-{decision or "undecided"}" '
                   f'style="background:{COLOURS.get(decision, COLOURS[None])}" title="{title}">{piece}</mark>')
    body = "".join(out)
    return ('<div class="bs-doc" style="white-space:pre-wrap;font-family:ui-serif,Georgia,serif;'
            f'line-height:1.5;max-height:70vh;overflow:auto;border:1px solid #ddd;padding:1em">{body}</div>')


def fig_config(name: str) -> dict:
    """plotly toolbar with a PNG download named after the chart."""
    return {"displaylogo": False, "toImageButtonOptions": {"format": "png", "filename": name, "scale": 2}}
