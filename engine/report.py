"""The repetition card: one self-contained HTML page about one run, to share.

``boilerscope report``, :meth:`engine.api.Boilerscope.report` and the Sites
page's download build it here: the share of repeated text with the
snapshot's counts, the run's parameters, per-site contamination histograms,
the top blocks (and templates) with their text.  Every figure is read
through :mod:`engine.views`.

The page opens from a file, without a server and without a network: it has
no script and no link to another host.  Its charts are inline SVG (a
plotly page would carry 4.7 MB of JavaScript for twenty-odd bar charts),
its style is inline, and a Content-Security-Policy forbids scripts and any
load.  Document text, site names and the snapshot's source are
untrusted: each is escaped with :func:`html.escape` where it is written.

:func:`write_report` writes the page atomically (a temporary file beside it,
renamed into place): a failure leaves no file, or the old one as it was.
"""
from __future__ import annotations

import html
import os
import re
from dataclasses import dataclass

import polars as pl

from . import views
from .constants import VERSION
from .errors import BoilerscopeError
from .files import atomic_file
from .store import Store

#: Bins of the contamination histograms (5 points of contamination each).
BINS = 20
#: Sites with a histogram of their own (the most covered tokens first) and rows of the site table.
TOP_SITES = 12
SITE_ROWS = 50
#: Blocks, phrases (a run without blocks) and templates listed.
TOP_BLOCKS = 20
TOP_TEMPLATES = 10
#: Characters of a text shown in a table cell; the rest opens in <details>.
PREVIEW_CHARS = 160
#: The most characters of one text the card holds (a template may run to tens of thousands).
FULL_CHARS = 10_000
#: What marks a file as a repetition card (a card may be replaced without ``force``).
GENERATOR = "boilerscope repetition card"


@dataclass(frozen=True)
class Report:
    """A built card: the run and snapshot it describes, its HTML, and the
    file it was written to (None when only built)."""

    run_id: int
    snapshot_id: str
    html: str
    path: str | None = None


# -- which run ------------------------------------------------------------------
def pick_run(store: Store, run_id: int | None = None, snapshot_id: str | None = None) -> dict:
    """The run a card describes (its row, ``summary`` parsed): ``run_id``
    (checked against ``snapshot_id`` when both are given), else the newest
    run of ``snapshot_id``, else the newest run of the store."""
    where = store.path
    if run_id is not None:
        info = views.run(store, int(run_id))
        if not info:
            raise BoilerscopeError(f"run {run_id} is not in {where}; 'boilerscope runs' lists them")
        if snapshot_id is not None and info["snapshot_id"] != snapshot_id:
            raise BoilerscopeError(f"run {run_id} is a run of snapshot {info['snapshot_id']}, not of "
                                   f"{snapshot_id}; drop {{snapshot}} or give another {{run}}", "snapshot", "run")
        return info
    if snapshot_id is not None:
        if not views.has_snapshot(store, snapshot_id):
            raise BoilerscopeError(f"snapshot {snapshot_id} is not in {where}; see 'boilerscope runs'")
        runs = views.runs(store, snapshot_id)
        if not runs.height:
            raise BoilerscopeError(f"snapshot {snapshot_id} has no run yet; mine it first "
                                   f"('boilerscope mine {where} --snapshot {snapshot_id}')")
    else:
        runs = views.runs(store, None)
        if not runs.height:
            raise BoilerscopeError(f"{where} holds no run yet; mine a snapshot first ('boilerscope mine {where}')")
    return views.run(store, int(runs["run_id"].max()))


# -- building -------------------------------------------------------------------
def build_report(store: Store, run_id: int | None = None, snapshot_id: str | None = None) -> str:
    """The card of a run (see :func:`pick_run`) as one HTML page."""
    return make_report(store, run_id, snapshot_id).html


def make_report(store: Store, run_id: int | None = None, snapshot_id: str | None = None) -> Report:
    """The card of a run (see :func:`pick_run`), with the run and snapshot it describes."""
    info = pick_run(store, run_id, snapshot_id)
    rid, sid = int(info["run_id"]), info["snapshot_id"]
    summary = info.get("summary") or {}
    snap = views.snapshot_info(store, sid)
    tokens = _int(snap.get("tokens", summary.get("tokens")))
    covered = _int(info.get("covered_tokens", summary.get("covered_tokens")))
    ranking = views.site_ranking(store, rid, sid)
    top_sites = tuple(ranking["site"].head(TOP_SITES).to_list())
    hist = views.contamination_histogram(store, rid, sid, (), BINS)
    if top_sites:
        hist = pl.concat([hist, views.contamination_histogram(store, rid, sid, top_sites, BINS)])
    # a run mined before blocks existed has none (nor, in a store never opened since, their table)
    blocks = (views.block_table(store, rid, sid, "", TOP_BLOCKS) if summary.get("blocks") is not None
              else pl.DataFrame())
    phrases = views.phrase_table(store, rid, limit=TOP_BLOCKS) if not blocks.height else None
    tpl = summary.get("templates") or {}
    templates = views.template_table(store, rid, limit=TOP_TEMPLATES) if tpl else None

    title = f"Repetition card: run {rid} of snapshot {sid}"
    body = [
        _header(snap, rid, sid),
        _headline(covered, tokens, snap, summary, info, tpl),
        _parameters(info, summary, snap, tpl),
        _sites(ranking, hist, top_sites),
        _blocks(blocks) if blocks.height else _phrases(phrases),
    ]
    if templates is not None:
        body.append(_templates(templates, tokens))
    body.append(_footer())
    page = (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f"<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            f"style-src 'unsafe-inline'; img-src data:\">\n"
            f'<meta name="generator" content="{GENERATOR} {_e(VERSION)}">\n'
            f"<title>{_e(title)}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n"
            + "\n".join(body) + "\n</main>\n</body>\n</html>\n")
    return Report(rid, sid, page)


# -- writing --------------------------------------------------------------------
def check_out(out: str, force: bool = False) -> str:
    """The card's path, checked: a .html file in an existing folder, not a
    folder, and (unless ``force``) new or an earlier card."""
    out = os.fspath(out)
    if not out.lower().endswith(".html"):
        raise BoilerscopeError(f"{out}: the card is an HTML page; give a .html file as {{out}}", "out")
    folder = os.path.dirname(os.path.abspath(out))
    if not os.path.isdir(folder):
        raise BoilerscopeError(f"{out}: folder {folder} does not exist; create it or pick another {{out}}", "out")
    if os.path.isdir(out):
        raise BoilerscopeError(f"{out} is a folder; give a .html file as {{out}}", "out")
    if os.path.exists(out) and not force and not is_card(out):
        raise BoilerscopeError(f"{out} already exists and is not a repetition card; give another {{out}} "
                               "or add {force} to replace it", "out", "force")
    return out


def is_card(path: str) -> bool:
    """Whether ``path`` is a repetition card (its head names the generator)."""
    try:
        with open(path, "rb") as fh:
            return f'name="generator" content="{GENERATOR}'.encode() in fh.read(4096)
    except OSError:
        return False


def write_report(store: Store, run_id: int | None = None, snapshot_id: str | None = None, *, out: str,
                 force: bool = False) -> Report:
    """Build the card and write it to ``out`` (see :func:`check_out`)
    atomically: nothing is written unless the whole page is."""
    out = check_out(out, force)
    report = make_report(store, run_id, snapshot_id)
    with atomic_file(out, "the repetition card") as tmp:
        with open(tmp, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(report.html)
    return Report(report.run_id, report.snapshot_id, report.html, out)


# -- the parts ------------------------------------------------------------------
def _e(value) -> str:
    """Escaped text (for element content and attribute values alike)."""
    return html.escape("" if value is None else str(value), quote=True)


def _int(value) -> int:
    return int(value or 0)


def _n(value) -> str:
    return f"{_int(value):,}"


def _pct(share: float | None, digits: int = 2) -> str:
    share = float(share or 0.0)
    if 0 < share < 10 ** -(digits + 2):
        return f"<{10 ** -digits:.{digits}f}%"
    return f"{100 * share:.{digits}f}%"


def _text_cell(text: str | None) -> str:
    """A text in a cell: a one-line preview of at most PREVIEW_CHARS; a longer
    text opens in <details> (as written, at most FULL_CHARS).  Escaped."""
    text = text or ""
    flat = re.sub(r"\s+", " ", text).strip()
    if len(flat) <= PREVIEW_CHARS and text.count("\n") < 4:
        return f'<span class="txt">{_e(text.strip())}</span>'
    preview = flat[:PREVIEW_CHARS].rstrip() + "…" if len(flat) > PREVIEW_CHARS else flat
    full = text[:FULL_CHARS]
    more = (f'<p class="note">… {len(text) - FULL_CHARS:,} more characters (see the dashboard)</p>'
            if len(text) > FULL_CHARS else "")
    return (f'<details><summary class="txt">{_e(preview)}</summary>'
            f'<pre class="full">{_e(full)}</pre>{more}</details>')


def _header(snap: dict, rid: int, sid: str) -> str:
    source = snap.get("source") or ""
    name = os.path.basename(source.rstrip("/")) or source
    of = f" ({_e(name)})" if name else ""
    return (f'<header><p class="kicker">Boilerscope · repetition card</p>'
            f"<h1>Snapshot <code>{_e(sid)}</code>{of} · run {rid}</h1>"
            f"<p>How much of this index is repeated text, what it is and where: every maximal phrase "
            f"that occurs verbatim in at least sigma documents, with at least L tokens.</p></header>")


def _stat(label: str, value: str) -> str:
    return f'<div class="stat"><div class="v">{value}</div><div class="l">{_e(label)}</div></div>'


def _headline(covered: int, tokens: int, snap: dict, summary: dict, info: dict, tpl: dict) -> str:
    share = covered / tokens if tokens else 0.0
    documents = snap.get("documents", summary.get("documents"))
    blocks = summary.get("blocks")
    stats = [_stat("documents", _n(documents)), _stat("tokens", _n(tokens)),
             _stat("sites", _n(snap.get("sites")) if snap.get("sites") is not None else "–"),
             _stat("maximal phrases", _n(info.get("phrases", summary.get("phrases")))),
             _stat("blocks", _n(blocks) if blocks is not None else "–")]
    if tpl:
        stats.append(_stat("templates", _n(tpl.get("templates"))))
    return (f'<section class="headline"><div class="share"><div class="big">{_pct(share)}</div>'
            f"<div>of the tokens are repeated text<br><small>{_n(covered)} of {_n(tokens)} tokens covered"
            f"</small></div></div><div class=\"stats\">{''.join(stats)}</div></section>")


def _parameters(info: dict, summary: dict, snap: dict, tpl: dict) -> str:
    sigma, given = info.get("sigma", summary.get("sigma")), summary.get("sigma_given")
    sigma_text = f"{_n(sigma)} documents" + (f" (asked: {_e(given)})" if given and str(given) != str(sigma) else "")
    algo, used = info.get("algo", summary.get("algo")), summary.get("algo_used")
    algo_text = _e(algo) + (f" ({_e(used)} used)" if used and used != algo else "")
    templates = (f"mined: {_n(tpl.get('templates'))} templates, max slot {_n(tpl.get('max_slot'))} tokens"
                 if tpl else "not mined")
    created = info.get("created")
    created_text = created.strftime("%Y-%m-%d %H:%M:%S") if hasattr(created, "strftime") else _e(created or "–")
    seconds = (summary.get("seconds") or {}).get("total")
    engine = summary.get("engine") or "local"
    if summary.get("master"):
        engine += f" ({summary['master']})"
    rows = [("sigma (least documents)", sigma_text), ("L, min_len (least tokens)", f"{_n(info.get('min_len'))} tokens"),
            ("algo", algo_text), ("templates", templates), ("run created", created_text),
            ("mining time", f"{seconds:.2f} s" if isinstance(seconds, (int, float)) else "–"),
            ("engine", _e(engine)), ("mined with", f"boilerscope {_e(summary.get('version') or '?')}"),
            ("snapshot source", f"<code>{_e(snap.get('source') or '–')}</code>")]
    cells = "".join(f"<tr><th>{_e(k)}</th><td>{v}</td></tr>" for k, v in rows)
    return f'<section><h2>Parameters</h2><table class="params">{cells}</table></section>'


def _histogram_svg(counts: list[int], label: str) -> str:
    """Documents per contamination bin as inline SVG bars (a <title> per bar)."""
    w, h, left, bottom, top = 300, 120, 36, 18, 10
    inner_w, inner_h = w - left - 6, h - bottom - top
    bw = inner_w / BINS
    peak = max(counts) or 1
    step = 100 // BINS
    parts = [f'<svg viewBox="0 0 {w} {h}" role="img" aria-label="{_e(label)}">',
             f'<line x1="{left}" y1="{h - bottom}" x2="{w - 6}" y2="{h - bottom}" class="axis"/>']
    for i, c in enumerate(counts):
        bh = inner_h * c / peak
        if c and bh < 1:
            bh = 1.0
        x = left + i * bw
        parts.append(f'<rect x="{x + 0.5:.1f}" y="{h - bottom - bh:.1f}" width="{bw - 1:.1f}" height="{bh:.1f}">'
                     f"<title>{i * step}–{(i + 1) * step}% covered: {c:,} documents</title></rect>")
    for frac, anchor in ((0, "start"), (0.5, "middle"), (1, "end")):
        parts.append(f'<text x="{left + frac * inner_w:.1f}" y="{h - 4}" text-anchor="{anchor}">'
                     f"{int(frac * 100)}%</text>")
    parts.append(f'<text x="{left - 4}" y="{top + 4}" text-anchor="end">{peak:,}</text>'
                 f'<text x="{left - 4}" y="{h - bottom}" text-anchor="end">0</text></svg>')
    return "".join(parts)


def _sites(ranking: pl.DataFrame, hist: pl.DataFrame, top_sites: tuple) -> str:
    counts: dict[str, list[int]] = {}
    for site, b, n in hist.select("site", "bin", "documents").iter_rows():
        counts.setdefault(site, [0] * BINS)[int(b)] += int(n)
    rows = {r["site"]: r for r in ranking.iter_rows(named=True)}
    cards = []
    for site in ("(all sites)", *top_sites):
        c = counts.get(site, [0] * BINS)
        if site == "(all sites)":
            cov = sum(_int(r["covered_tokens"]) for r in rows.values())
            tok = sum(_int(r["tokens"]) for r in rows.values())
            caption = f"<b>All sites</b> · {_pct(cov / tok if tok else 0, 1)} covered · {_n(sum(c))} documents"
        else:
            r = rows[site]
            caption = (f"<b>{_e(site)}</b> · {_pct(r['coverage'], 1)} covered · {_n(r['documents'])} documents · "
                       f"median {_pct(r['median_contamination'], 0)}")
        label = f"Documents of {site} by the share of their tokens covered"
        cards.append(f'<figure class="hist">{_histogram_svg(c, label)}<figcaption>{caption}</figcaption></figure>')
    more = ranking.height - SITE_ROWS
    table_rows = []
    for i, r in enumerate(ranking.head(SITE_ROWS).iter_rows(named=True), 1):
        cov = float(r["coverage"] or 0.0)
        table_rows.append(
            f"<tr><td class=\"num\">{i}</td><td>{_e(r['site'])}</td><td class=\"num\">{_n(r['documents'])}</td>"
            f"<td class=\"num\">{_n(r['tokens'])}</td><td class=\"num\">{_n(r['covered_tokens'])}</td>"
            f"<td class=\"num\">{_pct(cov, 1)}</td><td><span class=\"bar\"><span style=\"width:"
            f"{100 * min(cov, 1.0):.1f}%\"></span></span></td><td class=\"num\">{_pct(r['median_contamination'], 1)}</td>"
            f"<td class=\"num\">{_pct(r['p90_contamination'], 1)}</td></tr>")
    note = f'<p class="note">{more:,} more sites not shown.</p>' if more > 0 else ""
    return ("<section><h2>Contamination by site</h2>"
            "<p>Documents by the share of their tokens that are repeated text (0–100%, bins of 5 points): "
            f"the corpus, then the {len(top_sites)} sites with the most covered tokens. Hover a bar for its count.</p>"
            f'<div class="grid">{"".join(cards)}</div>'
            '<table><thead><tr><th class="num">#</th><th>site</th><th class="num">documents</th>'
            '<th class="num">tokens</th><th class="num">covered tokens</th><th class="num">coverage</th><th></th>'
            '<th class="num">median doc.</th><th class="num">p90 doc.</th></tr></thead>'
            f"<tbody>{''.join(table_rows)}</tbody></table>{note}</section>")


def _ranked_table(title: str, intro: str, head: list[tuple[str, bool]], frame: pl.DataFrame, cells) -> str:
    """A section with a ranked table: ``head`` (label, numeric) and one row
    per record of ``frame``, ``cells(record)`` giving its cells (HTML, each
    escaped by its maker) after the rank."""
    th = "".join(f'<th class="num">{h}</th>' if num else f"<th>{h}</th>" for h, num in [("#", True), *head])
    rows = "".join("<tr>" + f'<td class="num">{i}</td>' + "".join(cells(r)) + "</tr>"
                   for i, r in enumerate(frame.iter_rows(named=True), 1))
    return f"<section><h2>{title}</h2><p>{intro}</p><table><thead><tr>{th}</tr></thead><tbody>{rows}</tbody></table></section>"


def _blocks(blocks: pl.DataFrame) -> str:
    return _ranked_table(
        "Top blocks", "The repeated regions (a sidebar with all its variants is one block) by the tokens they "
        "cover, each token counted once; the text as written in one of its documents (click a long one to "
        "read it all).",
        [("text", False), ("covered tokens", True), ("share of tokens", True), ("documents", True), ("sites", True)],
        blocks, lambda r: (f"<td>{_text_cell(r['text'])}</td>", f'<td class="num">{_n(r["covered_tokens"])}</td>',
                           f'<td class="num">{_pct(r["share"])}</td>', f'<td class="num">{_n(r["documents"])}</td>',
                           f'<td class="num">{_n(r["sites"])}</td>'))


def _phrases(phrases: pl.DataFrame | None) -> str:
    if phrases is None or not phrases.height:
        return "<section><h2>Top blocks</h2><p>No repeated text at these parameters.</p></section>"
    return _ranked_table(
        "Top phrases", "This run was mined before blocks existed: its maximal phrases by Ψ = length × df (mine "
        "it again for blocks).",
        [("phrase", False), ("length", True), ("documents", True), ("sites", True), ("Ψ", True)],
        phrases, lambda r: (f"<td>{_text_cell(r['phrase'])}</td>", f'<td class="num">{_n(r["length"])}</td>',
                            f'<td class="num">{_n(r["df"])}</td>', f'<td class="num">{_n(r["sites"])}</td>',
                            f'<td class="num">{_n(r["psi"])}</td>'))


def _templates(templates: pl.DataFrame, tokens: int) -> str:
    if not templates.height:
        return "<section><h2>Top templates</h2><p>The run mined templates and found none.</p></section>"
    rows = "".join(
        f"<tr><td class=\"num\">{i}</td><td>{_text_cell(r['template'])}</td><td class=\"num\">{_n(r['slots'])}</td>"
        f"<td class=\"num\">{_n(r['tokens'])}</td><td class=\"num\">{_pct(_int(r['tokens']) / tokens if tokens else 0)}"
        f"</td><td class=\"num\">{_n(r['df'])}</td><td class=\"num\">{_n(r['occurrences'])}</td>"
        f"<td class=\"num\">{_n(r['sites'])}</td></tr>"
        for i, r in enumerate(templates.iter_rows(named=True), 1))
    return ("<section><h2>Top templates</h2><p>Repeated text with variable slots (each <code>*</code> stands "
            "for 1 to max slot tokens), by the tokens of their occurrences (templates overlap, so these do "
            "not add up).</p>"
            '<table><thead><tr><th class="num">#</th><th>template</th><th class="num">slots</th>'
            '<th class="num">tokens</th><th class="num">share of tokens</th><th class="num">documents</th>'
            '<th class="num">occurrences</th><th class="num">sites</th></tr></thead>'
            f"<tbody>{rows}</tbody></table></section>")


def _footer() -> str:
    return (f"<footer>Made with Boilerscope {_e(VERSION)}. A token is covered when it lies inside an "
            "occurrence of a phrase of at least L tokens found in at least sigma documents; a document's "
            "contamination is its covered tokens over its tokens. This page is self-contained: no script, "
            "nothing loaded from anywhere.</footer>")


#: The page's style (accent: the dashboard theme's primary colour).
STYLE = """
*{box-sizing:border-box}
body{margin:0;font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1f2328;background:#fff}
main{max-width:1100px;margin:0 auto;padding:24px 20px 40px}
h1{font-size:1.5em;margin:.1em 0 .3em}h2{font-size:1.2em;margin:1.6em 0 .4em;border-bottom:1px solid #d8dee4}
code{font:0.9em ui-monospace,SFMono-Regular,Menlo,monospace;background:#f6f8fa;padding:0 .25em;border-radius:3px;
word-break:break-all}
.kicker{color:#b5452b;font-weight:600;margin:0;text-transform:uppercase;letter-spacing:.05em;font-size:.8em}
.headline{display:flex;flex-wrap:wrap;gap:24px;align-items:center;background:#f6f8fa;border-radius:8px;
padding:16px 20px;margin:12px 0}
.share{display:flex;gap:14px;align-items:center}.big{font-size:2.8em;font-weight:700;color:#b5452b}
.stats{display:flex;flex-wrap:wrap;gap:18px}.stat .v{font-size:1.3em;font-weight:600}.stat .l{color:#656d76}
table{border-collapse:collapse;width:100%;margin:8px 0}
th,td{text-align:left;padding:4px 8px;border-bottom:1px solid #d8dee4;vertical-align:top}
th{font-weight:600;background:#f6f8fa}.num{text-align:right;white-space:nowrap}
.params{width:auto}.params th{background:none;color:#656d76;font-weight:normal}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(300px,1fr));gap:12px}
figure.hist{margin:0;border:1px solid #d8dee4;border-radius:6px;padding:8px}
figure.hist svg{width:100%;height:auto;display:block}figure.hist rect{fill:#b5452b}
figure.hist rect:hover{fill:#7d2c19}figure.hist text{font-size:10px;fill:#656d76}
.axis{stroke:#656d76;stroke-width:1}figcaption{font-size:.85em;color:#656d76;overflow-wrap:anywhere}
.bar{display:inline-block;width:60px;height:8px;background:#d8dee4;vertical-align:middle}
.bar span{display:block;height:100%;background:#b5452b}
.txt{overflow-wrap:anywhere;white-space:pre-wrap}summary{cursor:pointer}
pre.full{white-space:pre-wrap;overflow-wrap:anywhere;max-height:24em;overflow:auto;background:#f6f8fa;
padding:8px;margin:6px 0;font:0.85em/1.4 ui-monospace,SFMono-Regular,Menlo,monospace}
.note{color:#656d76;font-size:.85em}footer{margin-top:2em;color:#656d76;font-size:.85em}
"""
