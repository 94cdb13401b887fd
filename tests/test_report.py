"""The repetition card (``boilerscope report``, engine/report.py): one
self-contained HTML page, its figures read back from the store, untrusted
text escaped, and one line with status 2 (and no file) for every bad input."""
import html
import os
import random
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.api import connect, ingest, mine
from engine.errors import BoilerscopeError
from engine.store import Store
from tests.support import assert_one_line_error, leftovers, planted

XSS = "<script>alert(1)</script>"


def xss_corpus(path, docs=40, seed=3):
    """Three sites whose pages share a header holding markup, a footer, and
    a random body (so header and footer are two blocks)."""
    rng = random.Random(seed)
    words = [f"w{i}" for i in range(400)]
    texts = [f'Welcome to the "shop" {XSS} & co. — all the deals of the week here now. '
             + " ".join(rng.choice(words) for _ in range(rng.randint(5, 40)))
             + " Footer: © 2024 shop & co., all rights reserved, terms apply" for _ in range(docs)]
    urls = [f"https://s{i % 3}.example/p{i}" for i in range(docs)]
    pq.write_table(pa.table({"text": texts, "url": urls}), path)
    return path


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    """A store with one snapshot and two runs (run 2: the newest)."""
    d = tmp_path_factory.mktemp("report")
    snap = xss_corpus(d / "shop.parquet")
    db = str(d / "shop.duckdb")
    mine(str(snap), sigma=20, min_len=5, db=db)
    mine(db, sigma=5, min_len=3)
    return db


def scripts_and_links(page: str) -> list[str]:
    """Every script element and every reference to another resource."""
    return (re.findall(r"<script\b", page, re.I) + re.findall(r"""\b(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""",
                                                              page, re.I)
            + re.findall(r"@import|url\(", page, re.I))


def figures(db, run_id):
    """The share of repeated text and the top block, read from the store itself."""
    with Store(db, read_only=True) as st:
        covered = st.scalar("SELECT sum(covered_tokens) FROM run_documents WHERE run_id = ?", [run_id])
        tokens = st.scalar("SELECT s.tokens FROM snapshots s JOIN runs r ON r.snapshot_id = s.snapshot_id"
                           " WHERE r.run_id = ?", [run_id])
        top = st.scalar("SELECT text FROM run_blocks WHERE run_id = ? ORDER BY covered_tokens DESC, block_id"
                        " LIMIT 1", [run_id])
        row = st.run(run_id)
    return int(covered) / int(tokens), top, row


def test_report_writes_one_self_contained_page(cli, store, tmp_path):
    status, out, err = cli("report", store, "--run", 1, "--out", "card.html")
    assert status == 0, err
    assert "run 1" in out and err == ""
    page = (tmp_path / "card.html").read_text(encoding="utf-8")
    # one page, nothing to fetch, no script: it opens from the file, offline
    assert page.startswith("<!DOCTYPE html>") and page.count("<html") == 1 and page.rstrip().endswith("</html>")
    assert scripts_and_links(page) == []
    assert "default-src 'none'" in page  # and a browser would refuse any script or load anyway
    share, top, row = figures(store, 1)
    assert f"{100 * share:.2f}%" in page
    assert f"run {row['run_id']}" in page and row["snapshot_id"] in page
    # the parameters: sigma, L, algo, templates, created
    assert "20 documents" in page and "5 tokens" in page and "auto" in page and "not mined" in page
    assert row["created"].strftime("%Y-%m-%d %H:%M:%S") in page
    # counts: documents, tokens, sites
    assert ">40<" in page and ">3<" in page
    # the top block's text, escaped (never as markup)
    assert XSS in top and html.escape(top.strip()) in page
    assert XSS not in page and html.escape(XSS) in page
    # one histogram per site and one for the corpus; the site table
    assert page.count("<svg") == 4 and "s0.example" in page
    assert leftovers(tmp_path) == []


def test_the_newest_run_by_default_and_the_store_as_db(cli, store, tmp_path):
    status, out, err = cli("report", "--db", store, "--out", "newest.html")
    assert status == 0, err
    page = (tmp_path / "newest.html").read_text(encoding="utf-8")
    share, top, _ = figures(store, 2)
    assert "run 2" in out and f"{100 * share:.2f}%" in page and "3 tokens" in page
    # the API gives the same page (the card is a function of the store and the run)
    with connect(store, read_only=True) as bs:
        card = bs.report()
    assert card.run_id == 2 and card.html == page and card.path is None
    # an earlier card is replaced without --force
    assert cli("report", store, "--run", 1, "--out", "newest.html")[0] == 0
    assert "run 1" in (tmp_path / "newest.html").read_text(encoding="utf-8")


def test_untrusted_text_is_escaped_everywhere(tmp_path):
    """Markup in the text, the site names and the source file's name comes out as text."""
    texts = [f"intro {XSS} <img src=x onerror=alert(2)> the same words in every page {i}" for i in range(12)]
    sites = ['<b onmouseover="alert(3)">evil</b>', "x&y.example"] * 6
    path = tmp_path / 'snap<i>&"x.parquet'
    pq.write_table(pa.table({"text": texts, "site": sites}), path)
    db = str(tmp_path / "evil.duckdb")
    run = mine(str(path), sigma=3, min_len=3, db=db)
    with connect(db, read_only=True) as bs:
        page = bs.report(run.run_id).html
    for raw in (XSS, "<img", "<b ", "<i>", 'x&y', '"x.parquet'):
        assert raw not in page, raw
    for escaped in (html.escape(XSS), "&lt;img src=x onerror=alert(2)&gt;",
                    html.escape('<b onmouseover="alert(3)">evil</b>'), "x&amp;y.example", "snap&lt;i&gt;&amp;&quot;x"):
        assert escaped in page, escaped
    assert scripts_and_links(page) == []


def test_a_templates_run_lists_its_templates(tmp_path):
    planted(tmp_path / "t.parquet")
    db = str(tmp_path / "t.duckdb")
    run = mine(str(tmp_path / "t.parquet"), sigma=10, min_len=4, db=db, templates=True, max_slot=3)
    assert run.summary.templates["templates"] > 0
    with connect(db, read_only=True) as bs:
        page = bs.report(run.run_id).html
    assert "Top templates" in page and "max slot 3 tokens" in page
    assert f"mined: {run.summary.templates['templates']} templates" in page
    assert "posted by" in page


def test_long_text_is_cut_with_the_whole_in_details(tmp_path):
    """A block longer than the preview: the cell shows its start, <details> the text as written."""
    rng = random.Random(1)
    nav = "\n".join(f"Menu item {k}: the section about topic {k}" for k in range(12))
    texts = [nav + "\n" + " ".join(f"u{rng.randrange(10**6)}" for _ in range(20)) for _ in range(10)]
    pq.write_table(pa.table({"text": texts}), tmp_path / "nav.parquet")
    db = str(tmp_path / "nav.duckdb")
    run = mine(str(tmp_path / "nav.parquet"), sigma=5, min_len=5, db=db)
    with connect(db, read_only=True) as bs:
        page = bs.report(run.run_id).html
    assert "<details>" in page and f'<pre class="full">{html.escape(nav)}' in page
    assert "Menu item 0: the section about topic 0 Menu item 1" in page  # the one-line preview


BAD = {
    "store missing": (["nope.duckdb"], "store not found"),
    "no run mined yet": (["fresh.duckdb"], "no run"),
    "unknown run id": (["{db}", "--run", "99"], "run 99"),
    "unknown snapshot": (["{db}", "--snapshot", "abc"], "snapshot abc"),
    "run of another snapshot": (["{db}", "--run", "1", "--snapshot", "{other}"], "not of"),
    "out folder missing": (["{db}", "--out", "no/such/folder/card.html"], "does not exist"),
    "out not .html": (["{db}", "--out", "card.txt"], ".html"),
    "out is another file": (["{db}", "--out", "mine.html"], "--force"),
    "two stores": (["{db}", "--db", "other.duckdb"], "two stores"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_input_one_line_status_2_no_file(cli, store, tmp_path, case):
    args, words = BAD[case]
    # a store with a snapshot and no run; another snapshot in it for the snapshot mismatch
    fresh = tmp_path / "fresh.duckdb"
    other = ingest(str(xss_corpus(tmp_path / "other.parquet", docs=5, seed=9)), db=str(fresh))[0]
    (tmp_path / "mine.html").write_text("<p>my own page</p>")
    before = sorted(os.listdir(tmp_path))
    args = [a.replace("{db}", store).replace("{other}", other) for a in args]
    out = [] if "--out" in args else ["--out", "card.html"]
    status, stdout, err = cli("report", *args, *out)
    assert_one_line_error(status, stdout, err, words)
    assert sorted(os.listdir(tmp_path)) == before  # no card, no temporary file
    assert (tmp_path / "mine.html").read_text() == "<p>my own page</p>"
    assert leftovers(tmp_path) == []


def test_a_failed_write_leaves_the_old_card(store, tmp_path, monkeypatch):
    """The page goes to a temporary file beside the card, renamed when whole:
    a failure while writing leaves the earlier card as it was, and nothing else."""
    import engine.report as report
    with connect(store, read_only=True) as bs:
        bs.report(1, out=str(tmp_path / "card.html"))
        before = (tmp_path / "card.html").read_bytes()
        good = report.make_report

        def half(st, run_id=None, snapshot_id=None):  # a page that cannot be encoded half-way through
            r = good(st, run_id, snapshot_id)
            return report.Report(r.run_id, r.snapshot_id, r.html[:5000] + "\ud800" + r.html[5000:])

        monkeypatch.setattr(report, "make_report", half)
        with pytest.raises(BoilerscopeError, match="cannot write the repetition card"):
            report.write_report(bs.store, 2, out=str(tmp_path / "card.html"))
    assert (tmp_path / "card.html").read_bytes() == before
    assert sorted(os.listdir(tmp_path)) == ["card.html"] and leftovers(tmp_path) == []


def test_a_run_mined_before_blocks_shows_its_phrases(tmp_path):
    """A run stored before blocks existed (no blocks in its summary, no block rows): its top phrases by Ψ."""
    db = str(tmp_path / "old.duckdb")
    run = mine(str(xss_corpus(tmp_path / "old.parquet")), sigma=20, min_len=5, db=db)
    with Store(db) as st:
        st.query("UPDATE runs SET summary = json_remove(summary, '$.blocks') WHERE run_id = ?", [run.run_id])
        st.query("DELETE FROM run_blocks WHERE run_id = ?", [run.run_id])
    with connect(db, read_only=True) as bs:
        page = bs.report(run.run_id).html
    assert "Top phrases" in page and "before blocks existed" in page and "Top blocks" not in page
    assert run.phrases["phrase"][0] in page
