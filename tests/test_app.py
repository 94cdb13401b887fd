"""Every dashboard page through Streamlit's AppTest, on a real DuckDB store."""
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from streamlit.testing.v1 import AppTest

from tests.support import ROOT

APP = os.path.join(ROOT, "app.py")


@pytest.fixture(scope="module")
def store_dir(tmp_path_factory):
    d = tmp_path_factory.mktemp("app")
    os.environ["BOILERSCOPE_DB"] = str(d / "app.duckdb")
    os.environ["BOILERSCOPE_ALLOWED_DIRS"] = str(d)
    # first start: the app ingests and mines the demo snapshot by itself
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()
    assert not at.exception
    yield d
    os.environ.pop("BOILERSCOPE_DB", None)
    os.environ.pop("BOILERSCOPE_ALLOWED_DIRS", None)


def app(page=None, state=None):
    at = AppTest.from_file(APP, default_timeout=180)
    if state is None:
        # the demo snapshot (later tests ingest other snapshots)
        demo = peek_db("SELECT snapshot_id FROM snapshots WHERE documents = 2500")
        state = {"bs.snapshot": demo["snapshot_id"][0], "bs.init": True} if demo.height else {}
    for k, v in state.items():
        at.session_state[k] = v
    at.run()
    assert not at.exception, at.exception
    if page:
        at.switch_page(page).run()
        assert not at.exception, at.exception
    return at


def peek_db(sql, params=()):
    from engine.ui.data import open_store as _store
    return _store(os.environ["BOILERSCOPE_DB"]).query(sql, params)


def evil_snapshot(store_dir) -> str:
    """A snapshot of hostile markup in the app's store (each test that needs
    it makes sure it is there: no test depends on another's order)."""
    from engine.api import ingest
    from engine.ui.data import open_store as _store
    texts = [f"<script>alert({i})</script> Copyright 2024 Evil Corp. All rights reserved. "
             f"<img src=x onerror=alert(1)> page {i} body" for i in range(25)]
    path = store_dir / "evil.parquet"
    pq.write_table(pa.table({"text": texts, "site": ["evil.example"] * 25}), path)
    return ingest(str(path), store=_store(str(store_dir / "app.duckdb")))[0]


def peek(store_dir, sql, params=()):
    """Read the store the app owns through the app's own cached connection."""
    from engine.ui.data import open_store as _store
    return _store(str(store_dir / "app.duckdb")).query(sql, params)


def test_first_start_mines_the_demo(store_dir):
    at = app()
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Maximal phrases"] != "0"
    assert metrics["Covered tokens"].endswith("%")
    runs = peek(store_dir, "SELECT run_id, sigma, min_len FROM runs")
    assert runs.rows()[0][1:] == (20, 10)
    assert at.query_params["run"] == [str(runs["run_id"][0])] or at.query_params["run"] == str(runs["run_id"][0])


def test_mine_page_sliders_run_and_reuse(store_dir):
    at = app()
    at.number_input(key="mine.sigma_n").set_value(30).run()
    assert at.select_slider(key="mine.sigma").value == 30
    options = at.select_slider(key="mine.sigma").options
    assert options[:3] == ["1", "2", "3"] and options[-1] == "2500"  # a log scale up to every document
    at.select_slider(key="mine.sigma").set_value(29).run()
    assert at.number_input(key="mine.sigma_n").value == 29
    at.number_input(key="mine.sigma_n").set_value(30).run()
    at.text_input(key="mine.share").set_value("2%").run()
    assert at.number_input(key="mine.sigma_n").value == 50
    at.number_input(key="mine.sigma_n").set_value(30).run()
    at.slider(key="mine.min_len").set_value(12).run()
    at.button(key="mine.run").click().run()
    assert not at.exception
    assert any("done" in s.value for s in at.success)
    runs = peek(store_dir, "SELECT sigma, min_len FROM runs ORDER BY run_id")
    assert (30, 12) in runs.rows()
    n = runs.height
    at.button(key="mine.run").click().run()
    assert any("Reused" in s.value for s in at.success)
    assert peek(store_dir, "SELECT count(*) AS n FROM runs")["n"][0] == n
    assert at.query_params["sigma"] in ("30", ["30"])


def test_load_page_refuses_paths_outside_and_bad_files(store_dir):
    at = app("pages/load.py")
    at.radio(key="load.source").set_value("Path").run()
    at.text_input(key="load.path").set_value("/etc/passwd").run()
    at.button(key="load.ingest_path").click().run()
    assert any("outside the allowed folders" in e.value for e in at.error)
    bad = store_dir / "broken.parquet"
    bad.write_bytes(b"PAR1 not really")
    at.text_input(key="load.path").set_value(str(bad)).run()
    at.button(key="load.ingest_path").click().run()
    assert not at.exception
    assert any("not a readable Parquet file" in e.value for e in at.error)


def test_load_page_bad_upload_and_good_path(store_dir):
    at = app("pages/load.py")
    at.radio(key="load.source").set_value("Upload").run()
    at.file_uploader(key="load.upload").set_value(("x.jsonl", b'{"text": "a"}\n{"text": ', "application/json")).run()
    at.button(key="load.ingest_upload").click().run()
    assert not at.exception
    assert any("JSONL" in e.value for e in at.error)
    texts = [f"<script>alert({i})</script> Copyright 2024 Evil Corp. All rights reserved. "
             f"<img src=x onerror=alert(1)> page {i} body" for i in range(25)]
    pq.write_table(pa.table({"text": texts, "site": ["evil.example"] * 25}), store_dir / "evil.parquet")
    at.radio(key="load.source").set_value("Path").run()
    at.text_input(key="load.path").set_value(str(store_dir / "evil.parquet")).run()
    at.button(key="load.ingest_path").click().run()
    assert not at.exception
    assert any("ingested" in s.value for s in at.success)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Documents"] == "25"
    # the Active snapshot box names the snapshot just ingested (it was stale)
    new = peek(store_dir, "SELECT snapshot_id FROM snapshots WHERE documents = 25")["snapshot_id"][0]
    assert at.selectbox(key="load.active").value == new == at.session_state["bs.snapshot"]


def test_phrases_page_decisions_persist(store_dir):
    at = app("pages/phrases.py")
    assert at.dataframe, "phrase table"
    pid = at.selectbox(key="phrases.detail").value
    phrase = peek(store_dir, "SELECT phrase FROM run_phrases WHERE run_id = ? AND phrase_id = ?",
                  [at.session_state["bs.run"], pid])["phrase"][0]
    at.text_input(key="phrases.note").set_value("site footer").run()
    at.button(key="phrases.decide.noise").click().run()
    assert not at.exception
    stored = peek(store_dir, "SELECT phrase, decision, note FROM decisions WHERE note = 'site footer'")
    assert stored.height == 1 and stored["decision"][0] == "noise"
    assert stored["phrase"][0] == phrase
    # a new session on the same view (as a shared link would open it)
    state = {k: at.session_state[k] for k in ("bs.snapshot", "bs.run", "bs.phrase")}
    at = app("pages/phrases.py", state={**state, "bs.init": True})
    assert any("Decision: **noise**" in m.value for m in at.markdown)
    assert any("<mark>" in h.value for h in at.html), "keyword-in-context snippets"
    at.text_input(key="phrases.search").set_value("zzzz-not-there").run()
    assert not at.exception


def test_sites_page_ranking_histogram_and_bar_documents(store_dir):
    at = app("pages/sites.py")
    assert at.dataframe
    # a click on a bar stores (site, bin); the page then lists that bar's documents
    at.multiselect(key="sites.pick").set_value([]).run()
    at.session_state["bs.bar"] = ["(all sites)", 0]
    at.run()
    assert not at.exception
    assert any("all sites" in h.value and "contamination 0%" in h.value for h in at.subheader)
    assert at.query_params["bar"] == ["(all sites)", "0"]


def test_document_page_highlights_and_escapes(store_dir):
    demo = peek(store_dir, "SELECT snapshot_id FROM snapshots WHERE documents = 2500")["snapshot_id"][0]
    run = peek(store_dir, "SELECT min(run_id) AS r FROM runs WHERE snapshot_id = ?", [demo])["r"][0]
    # a document with spans, named by its doc_id (never by its row in the store)
    doc = peek(store_dir, "SELECT d.doc_id FROM run_spans s JOIN documents d ON d.snapshot_id = ?"
               " AND d.doc_index = s.doc_index WHERE s.run_id = ? GROUP BY d.doc_id HAVING count(*) >= 2"
               " ORDER BY d.doc_id DESC LIMIT 1", [demo, run])["doc_id"][0]
    at = app("pages/document.py", state={"bs.snapshot": demo, "bs.run": int(run), "bs.doc": int(doc),
                                         "bs.init": True})
    assert any("<mark" in h.value for h in at.html)
    assert at.number_input(key="document.doc_id").value == doc
    assert at.query_params["doc"] in (str(doc), [str(doc)])
    at.button(key="document.next").click().run()
    assert any("span 2 of" in c.value for c in at.caption)
    # typing another doc_id opens it (the box snapped back to the open document)
    other = peek(store_dir, "SELECT min(doc_id) AS d FROM documents WHERE snapshot_id = ?", [demo])["d"][0]
    at.number_input(key="document.doc_id").set_value(int(other)).run()
    assert not at.exception and at.number_input(key="document.doc_id").value == other
    assert at.query_params["doc"] in (str(other), [str(other)])
    # previous / next document walk the snapshot's order; an unknown doc_id says so and keeps the document
    at.button(key="document.next_doc").click().run()
    second = peek(store_dir, "SELECT doc_id FROM documents WHERE snapshot_id = ? AND doc_index = 1", [demo])["doc_id"][0]
    assert at.number_input(key="document.doc_id").value == second
    at.button(key="document.prev_doc").click().run()
    assert at.number_input(key="document.doc_id").value == other and at.button(key="document.prev_doc").disabled
    at.number_input(key="document.doc_id").set_value(10**9).run()
    assert any("No document with doc_id 1000000000" in e.value for e in at.error)
    assert at.number_input(key="document.doc_id").value == other
    at.number_input(key="document.doc_id").set_value(int(doc)).run()
    # why is this span highlighted: its phrase, df, sites and block, in the hover title and the walker
    assert not at.exception, at.exception
    html = "".join(h.value for h in at.html)
    assert ('title="phrase «' in html or 'title="template «' in html) and " · block " in html
    assert "of the index" in html and " documents, " in html
    assert any("block " in c.value and "df " in c.value for c in at.caption)
    at.button(key="document.block").click().run()
    assert not at.exception and at.session_state["bs.block"] is not None
    assert any(m.label == "Covered tokens" for m in at.metric), "the Blocks page opened on the span's block"
    at.switch_page("pages/document.py").run()
    at.toggle(key="document.clean").set_value(True).run()
    assert not at.exception
    assert at.query_params["clean"] in ("1", ["1"])
    # the evil snapshot: repeated markup must show as text and run nothing
    sid = evil_snapshot(store_dir)
    at = app("pages/mine.py", state={"bs.snapshot": sid, "bs.run": None, "bs.init": True})
    at.number_input(key="mine.sigma_n").set_value(3).run()
    at.number_input(key="mine.min_len_n").set_value(3).run()
    at.button(key="mine.run").click().run()
    at.switch_page("pages/document.py").run()
    assert not at.exception
    html = "".join(h.value for h in at.html)
    assert "&lt;script&gt;alert(" in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    assert "<script" not in html and "<img" not in html
    assert "<mark" in html


def test_blocks_page_ranks_opens_and_decides_a_whole_block(store_dir):
    """The Blocks page lists the run's blocks by covered tokens, opens the
    biggest, and one decision marks every member phrase (then clears them);
    a site narrows the list to the blocks in that site's documents."""
    demo = peek(store_dir, "SELECT snapshot_id FROM snapshots WHERE documents = 2500")["snapshot_id"][0]
    run = int(peek(store_dir, "SELECT min(run_id) AS r FROM runs WHERE snapshot_id = ?", [demo])["r"][0])
    at = app("pages/blocks.py", state={"bs.snapshot": demo, "bs.run": run, "bs.init": True})
    shown = at.dataframe[0].value
    want = peek(store_dir, "SELECT block_id, covered_tokens FROM run_blocks WHERE run_id = ?"
                " ORDER BY covered_tokens DESC, block_id LIMIT 500", [run])
    assert shown["block_id"].tolist() == want["block_id"].to_list() and len(shown) > 1
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Covered tokens"] == f"{want['covered_tokens'][0]:,}"
    assert at.query_params["block"] in (str(want["block_id"][0]), [str(want["block_id"][0])])
    members = peek(store_dir, "SELECT phrase FROM run_phrases WHERE run_id = ? AND maximal AND block_id = ?",
                   [run, int(want["block_id"][0])])["phrase"].to_list()
    assert members
    before = peek(store_dir, "SELECT phrase, scope, decision, note FROM decisions ORDER BY ALL").rows()
    at.button(key="blocks.decide.noise").click().run()
    assert not at.exception
    marked = peek(store_dir, "SELECT phrase, decision FROM decisions")
    got = dict(zip(marked["phrase"].to_list(), marked["decision"].to_list()))
    assert all(got.get(m) == "noise" for m in members)
    assert any(f"Decision on block {want['block_id'][0]}'s" in md.value and "noise" in md.value
               for md in at.markdown)
    assert at.dataframe[0].value["decision"].tolist()[0] == "noise"  # the list says it too
    at.button(key="blocks.decide.None").click().run()
    left = peek(store_dir, "SELECT phrase FROM decisions")["phrase"].to_list()
    assert not set(members) & set(left)
    # undo takes the clearing back, then the marking
    at.button(key="blocks.undo").click().run()
    assert set(peek(store_dir, "SELECT phrase FROM decisions WHERE decision = 'noise'")["phrase"].to_list()) >= set(members)
    at.button(key="blocks.undo").click().run()
    assert peek(store_dir, "SELECT phrase, scope, decision, note FROM decisions ORDER BY ALL").rows() == before
    assert at.button(key="blocks.undo").disabled
    # one site: its blocks by the tokens they cover there
    site = peek(store_dir, "SELECT d.site FROM run_block_spans s JOIN documents d ON d.snapshot_id = ?"
                " AND d.doc_index = s.doc_index WHERE s.run_id = ? GROUP BY d.site"
                " ORDER BY count(*) DESC LIMIT 1", [demo, run])["site"][0]
    at.selectbox(key="blocks.site").set_value(site).run()
    assert not at.exception and at.query_params["site"] in (site, [site])
    per_site = at.dataframe[0].value
    assert (per_site["covered_tokens"].diff().dropna() <= 0).all() and len(per_site) >= 1
    assert not any("<script" in h.value for h in at.html)


def test_export_page_stoplist_and_cleaned_snapshot(store_dir):
    from engine.ui.data import open_store as _store
    demo = peek(store_dir, "SELECT snapshot_id FROM snapshots WHERE documents = 2500")["snapshot_id"][0]
    run = peek(store_dir, "SELECT min(run_id) AS r FROM runs WHERE snapshot_id = ?", [demo])["r"][0]
    top = peek(store_dir, "SELECT phrase FROM run_phrases WHERE run_id = ? AND maximal ORDER BY psi DESC LIMIT 1",
               [run])["phrase"][0]
    _store(str(store_dir / "app.duckdb")).set_decision(top, "noise", "export test")
    at = app("pages/export.py", state={"bs.snapshot": demo, "bs.run": int(run), "bs.init": True})
    assert at.get("download_button"), "stop-phrase list downloads"
    at.button(key="export.build").click().run()
    assert not at.exception
    assert any("Written" in s.value for s in at.success)
    exports = os.listdir(store_dir / "exports")
    assert any(n.endswith(".parquet") for n in exports)
    assert not any(n.endswith(".tmp") for n in exports)
    # a decision changed after the build: the old result is not shown as if it were this one's
    _store(str(store_dir / "app.duckdb")).set_decision(top, None)
    _store(str(store_dir / "app.duckdb")).set_decision(top, "keep", "export test")
    at.run()
    assert not at.exception and not any("Written" in s.value for s in at.success)
    _store(str(store_dir / "app.duckdb")).set_decision(top, None)


def test_duplicates_page_detects_and_compares(store_dir):
    at = app("pages/duplicates.py")
    at.radio(key="duplicates.mode").set_value("raw").run()
    at.button(key="duplicates.run").click().run()
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["Similar pairs"].replace(",", "")) > 0
    at.selectbox(key="duplicates.def").set_value("components").run()
    assert not at.exception
    assert any("Token similarity" in cap.value for cap in at.caption)
    stored = peek(store_dir, "SELECT count(*) AS n FROM dedup_runs WHERE raw")
    assert stored["n"][0] >= 1


def test_mine_page_on_a_snapshot_of_few_documents(store_dir):
    """Fewer documents than the default sigma 20 crashed the default page
    (StreamlitValueAboveMaxError); now every value is clamped into one range."""
    from engine.api import ingest
    from engine.ui.data import open_store as _store
    path = store_dir / "five.parquet"
    pq.write_table(pa.table({"text": [f"the same footer of five words page {i}" for i in range(5)]}), path)
    sid, _ = ingest(str(path), store=_store(os.environ["BOILERSCOPE_DB"]))
    at = app("pages/mine.py", state={"bs.snapshot": sid, "bs.run": None, "bs.init": True})
    assert at.select_slider(key="mine.sigma").value == 5 and at.number_input(key="mine.sigma_n").value == 5
    # sigma above the document count: clamped, with a message of its own (the
    # widget's bound drew an error icon over the value, the hint on top of it)
    at.number_input(key="mine.sigma_n").set_value(40).run()
    assert not at.exception and at.number_input(key="mine.sigma_n").value == 5
    assert at.number_input(key="mine.sigma_n").max is None
    assert any("40 is out of range (sigma counts documents: 1 to 5); set to 5." in w.value for w in at.warning)
    at.number_input(key="mine.sigma_n").set_value(0).run()  # below: the same (it drew an error icon too)
    assert not at.exception and at.number_input(key="mine.sigma_n").value == 1
    assert at.number_input(key="mine.sigma_n").min is None
    assert any("0 is out of range (sigma counts documents: 1 to 5); set to 1." in w.value for w in at.warning)
    at.number_input(key="mine.sigma_n").set_value(5).run()
    at.number_input(key="mine.min_len_n").set_value(5).run()
    at.button(key="mine.run").click().run()
    assert not at.exception
    assert any("done" in s.value for s in at.success)
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Maximal phrases"] == "1"


@pytest.mark.parametrize("params", [{"sigma": "1500"}, {"min_len": "150000"}, {"min_len": "-5"},
                                    {"sigma": "lots", "min_len": "x"}, {"sigma": "0"}])
def test_shared_urls_with_values_out_of_range(store_dir, params):
    at = AppTest.from_file(APP, default_timeout=180)
    for k, v in params.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, at.exception
    sigma, L = at.select_slider(key="mine.sigma"), at.slider(key="mine.min_len")
    assert str(sigma.value) in sigma.options and L.min <= L.value <= L.max
    assert at.number_input(key="mine.sigma_n").value == sigma.value


def test_load_page_path_checks(store_dir, tmp_path, monkeypatch):
    from engine.ui import boot as common
    from engine.errors import BoilerscopeError
    os.mkfifo(store_dir / "pipe.parquet")
    try:
        at = app("pages/load.py")
        at.radio(key="load.source").set_value("Path").run()
        for path, words in ((str(store_dir / "pipe.parquet"), "not a regular file"),
                            ("a\x00b.parquet", "NUL"), (str(store_dir / "none.parquet"), "not found")):
            at.text_input(key="load.path").set_value(path).run()
            at.button(key="load.ingest_path").click().run()
            assert not at.exception
            assert any(words in e.value for e in at.error), (path, [e.value for e in at.error])
    finally:
        os.remove(store_dir / "pipe.parquet")
    # a symlink in data/ that leads outside is neither listed nor read
    link = os.path.join(common.demo_folder(), "zz-outside-link.parquet")
    pq.write_table(pa.table({"text": ["a"]}), tmp_path / "outside.parquet")
    os.symlink(tmp_path / "outside.parquet", link)
    try:
        at = app("pages/load.py")
        assert "zz-outside-link.parquet" not in at.selectbox(key="load.demo").options
        with pytest.raises(BoilerscopeError, match="outside"):
            common.allowed_file(link)
    finally:
        os.remove(link)
    # BOILERSCOPE_ALLOWED_DIRS=/ allows everything (it refused everything)
    monkeypatch.setenv("BOILERSCOPE_ALLOWED_DIRS", "/")
    assert common.allowed_file(str(tmp_path / "outside.parquet")) == str((tmp_path / "outside.parquet").resolve())


def test_phrases_are_opened_and_decided_by_id(store_dir):
    """Long phrases share their first 120 characters: choosing by label opened
    the wrong one.  The picker, the URL and a decision all go by phrase id."""
    demo = peek(store_dir, "SELECT snapshot_id FROM snapshots WHERE documents = 2500")["snapshot_id"][0]
    run = int(peek(store_dir, "SELECT min(run_id) AS r FROM runs WHERE snapshot_id = ?", [demo])["r"][0])
    top = peek(store_dir, "SELECT phrase_id, phrase FROM run_phrases WHERE run_id = ? AND maximal"
               " ORDER BY psi DESC, length DESC, phrase LIMIT 5", [run])
    third = int(top["phrase_id"][2])
    # a shared URL naming the third phrase opens the third phrase
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update({"snapshot": demo, "run": str(run), "phrase": str(third), "view": "phrases"})
    at.run()
    at.switch_page("pages/phrases.py").run()
    assert not at.exception
    assert at.selectbox(key="phrases.detail").value == third
    assert at.query_params["phrase"] in (str(third), [str(third)])
    # the picker labels are unique even where the texts begin alike
    labels = at.selectbox(key="phrases.detail").options  # AppTest lists the shown labels
    assert len(set(labels)) == len(labels) and labels[2].startswith(f"#{third} · ")
    # picking another phrase opens it and a decision marks exactly its text
    fifth = int(top["phrase_id"][4])
    at.selectbox(key="phrases.detail").set_value(fifth).run()
    assert at.query_params["phrase"] in (str(fifth), [str(fifth)])
    at.text_input(key="phrases.note").set_value("by id").run()
    at.button(key="phrases.decide.unsure").click().run()
    stored = peek(store_dir, "SELECT phrase FROM decisions WHERE note = 'by id'")
    assert stored["phrase"].to_list() == [top["phrase"][4]]
    # the decision column and its filter
    at.selectbox(key="phrases.decision").set_value("unsure").run()
    assert not at.exception
    assert at.selectbox(key="phrases.detail").value == fifth


def test_decisions_are_scoped_and_untrusted_names_stay_text(store_dir):
    """A decision made for one snapshot does not follow into another; site
    names and URLs never render as Markdown (a link, a style)."""
    from engine.api import ingest, mine
    from engine.ui.data import open_store as _store
    store = _store(os.environ["BOILERSCOPE_DB"])
    texts = [f"Shop news {i}. Sign up for our newsletter and get ten percent off your first order today" for i in range(8)]
    path = store_dir / "hostile-names.parquet"
    pq.write_table(pa.table({"text": texts, "site": ["[click](javascript:alert(6))"] * 8,
                             "url": [f"**bold**{i}" for i in range(8)]}), path)
    sid, _ = ingest(str(path), store=store)
    run = mine(store.path, 3, 5, store=store, snapshot=sid).run_id
    phrase = peek(store_dir, "SELECT phrase FROM run_phrases WHERE run_id = ? AND maximal LIMIT 1", [run])["phrase"][0]
    at = app("pages/phrases.py", state={"bs.snapshot": sid, "bs.run": run, "bs.init": True})
    at.radio(key="phrases.scope").set_value("this snapshot").run()
    at.button(key="phrases.decide.noise").click().run()
    assert not at.exception
    scoped = peek(store_dir, "SELECT scope FROM decisions WHERE phrase = ?", [phrase])
    assert scoped["scope"].to_list() == [sid]
    # in force here, and listed with where it applies and the tokens it cuts
    at = app("pages/export.py", state={"bs.snapshot": sid, "bs.run": run, "bs.init": True})
    listed = at.dataframe[0].value
    row = listed[listed["phrase"] == phrase].iloc[0]
    assert row["applies to"] == "this snapshot" and row["tokens cut"] > 0
    # not in force on the demo snapshot
    demo = peek(store_dir, "SELECT snapshot_id FROM snapshots WHERE documents = 2500")["snapshot_id"][0]
    at = app("pages/export.py", state={"bs.snapshot": demo, "bs.init": True})
    assert all(phrase not in list(df.value.get("phrase", [])) for df in at.dataframe)
    # hostile names: shown escaped wherever Markdown is rendered
    doc = peek(store_dir, "SELECT min(doc_id) AS d FROM documents WHERE snapshot_id = ?", [sid])["d"][0]
    at = app("pages/document.py", state={"bs.snapshot": sid, "bs.run": run, "bs.doc": int(doc), "bs.init": True})
    caption = next(c.value for c in at.caption if c.value.startswith("doc_id"))
    assert "\\[click\\]\\(javascript\\:alert\\(6\\)\\)" in caption and "\\*\\*bold\\*\\*" in caption
    at = app("pages/sites.py", state={"bs.snapshot": sid, "bs.run": run, "bs.init": True,
                                      "bs.bar": ["[click](javascript:alert(6))", 19]})
    assert any("\\[click\\]" in h.value for h in at.subheader)
    assert not any("[click](javascript" in h.value for h in at.subheader)


def test_choices_do_not_follow_into_another_snapshot(store_dir):
    """phrase, doc, bar and cluster belong to a snapshot (or a run): switching
    snapshots on the Load page drops them, from the state and the URL."""
    demo = peek(store_dir, "SELECT snapshot_id FROM snapshots WHERE documents = 2500")["snapshot_id"][0]
    other = evil_snapshot(store_dir)
    at = app("pages/load.py", state={"bs.snapshot": demo, "bs.phrase": 3, "bs.doc": 5, "bs.bar": ["x", 1],
                                     "bs.cluster": 2, "bs.init": True})
    at.selectbox(key="load.active").set_value(other).run()
    assert not at.exception
    assert at.session_state["bs.snapshot"] == other
    for key in ("bs.phrase", "bs.doc", "bs.bar", "bs.cluster"):
        assert at.session_state[key] is None, key
    # the run is the new snapshot's own (its latest), never the old one's
    run = at.session_state["bs.run"]
    assert run is None or peek(store_dir, "SELECT snapshot_id FROM runs WHERE run_id = ?", [run])["snapshot_id"][0] == other
    assert "phrase" not in at.query_params and "doc" not in at.query_params


def test_load_page_lists_files_of_the_allowed_folders_without_a_restart(store_dir):
    at = app("pages/load.py")
    at.radio(key="load.source").set_value("Allowed folders").run()
    before = at.selectbox(key="load.pick").options if at.get("selectbox") else []
    new = store_dir / "sub" / "late-arrival.parquet"
    new.parent.mkdir(exist_ok=True)
    pq.write_table(pa.table({"text": [f"late page {i} with a shared footer line of words" for i in range(4)]}), new)
    at.run()
    options = at.selectbox(key="load.pick").options
    assert str(new) in options and str(new) not in before
    at.selectbox(key="load.pick").set_value(str(new)).run()
    at.button(key="load.ingest_pick").click().run()
    assert not at.exception
    assert any("ingested" in s.value for s in at.success)


def test_templates_page_fillers_contexts_and_decisions(store_dir):
    from engine.ui.data import open_store as _store
    demo = peek(store_dir, "SELECT snapshot_id FROM snapshots WHERE documents = 2500")["snapshot_id"][0]
    run = int(peek(store_dir, "SELECT min(run_id) AS r FROM runs WHERE snapshot_id = ?", [demo])["r"][0])
    # the demo's first run mined templates; open the one covering most tokens
    top = peek(store_dir, "SELECT t.template_id, t.template, t.slots FROM run_templates t JOIN"
               " (SELECT template_id, sum(token_end - token_start) AS n FROM run_template_occurrences"
               "  WHERE run_id = ? GROUP BY ALL) o USING (template_id) WHERE t.run_id = ?"
               " ORDER BY o.n DESC, t.df DESC, t.template LIMIT 1", [run, run]).row(0, named=True)
    at = app("pages/templates.py", state={"bs.snapshot": demo, "bs.run": run, "bs.init": True})
    assert at.dataframe, "template table"
    assert at.selectbox(key="templates.detail").value == top["template_id"]
    assert at.query_params["template"] in (str(top["template_id"]), [str(top["template_id"])])
    html_all = "".join(h.value for h in at.html)
    assert html_all.count("bs-slot") == top["slots"], "each slot marked"
    assert '<mark class="bs-template"' in html_all, "keyword in context of the occurrences"
    assert len(at.tabs) == top["slots"], "a filler chart per slot"
    metrics = {m.label: m.value for m in at.metric}
    assert float(metrics["Coverage with templates"].rstrip("%")) > float(metrics["Coverage without templates"]
                                                                         .rstrip("%"))
    at.button(key="templates.decide.noise").click().run()
    assert not at.exception
    stored = peek(store_dir, "SELECT decision FROM decisions WHERE phrase = ?", [top["template"]])
    assert stored["decision"].to_list() == ["noise"]
    # the Document view shows the template in its colour and cuts it with the noise removed
    doc = peek(store_dir, "SELECT d.doc_id FROM run_template_occurrences o JOIN documents d ON d.snapshot_id = ?"
               " AND d.doc_index = o.doc_index WHERE o.run_id = ? AND o.template_id = ? ORDER BY d.doc_id LIMIT 1",
               [demo, run, top["template_id"]])["doc_id"][0]
    at = app("pages/document.py", state={"bs.snapshot": demo, "bs.run": run, "bs.doc": int(doc), "bs.init": True})
    assert any("bs-template" in h.value and "bs-noise" in h.value for h in at.html)
    at.toggle(key="document.clean").set_value(True).run()
    assert any("bs-cut" in h.value for h in at.html)
    assert not any(c.value.startswith("0 tokens cut") for c in at.caption)
    # the export counts the tokens the template cuts
    at = app("pages/export.py", state={"bs.snapshot": demo, "bs.run": run, "bs.init": True})
    shown = at.dataframe[0].value
    row = shown[shown["phrase"] == top["template"]]
    assert len(row) == 1 and int(row["tokens cut"].iloc[0]) > 0
    _store(str(store_dir / "app.duckdb")).set_decision(top["template"], None)


def test_templates_page_mines_templates_for_a_run_without_them(store_dir):
    sid = evil_snapshot(store_dir)
    at = app("pages/mine.py", state={"bs.snapshot": sid, "bs.run": None, "bs.init": True})
    at.number_input(key="mine.sigma_n").set_value(3).run()
    at.number_input(key="mine.min_len_n").set_value(3).run()
    at.button(key="mine.run").click().run()
    at.switch_page("pages/templates.py").run()
    assert not at.exception
    assert any("mined no templates" in i.value for i in at.info)
    before = peek(store_dir, "SELECT count(*) AS n FROM runs WHERE snapshot_id = ?", [sid])["n"][0]
    at.button(key="templates.mine").click().run()
    assert not at.exception
    runs = peek(store_dir, "SELECT run_id, summary FROM runs WHERE snapshot_id = ? ORDER BY run_id", [sid])
    assert runs.height == before + 1 and '"templates"' in runs["summary"][-1]
    assert at.session_state["bs.run"] == runs["run_id"][-1]
    # «script alert * script copyright ... page * body»: the page number fills both slots of 25 documents;
    # the markup of the untrusted text stays text in the contexts
    assert at.dataframe and at.selectbox(key="templates.detail").value is not None
    html_all = "".join(h.value for h in at.html)
    assert "&lt;img src=x onerror=alert(1)&gt;" in html_all
    assert "<script" not in html_all and "<img" not in html_all


def test_duplicates_page_reads_detections_stored_with_the_old_parameter_names(store_dir):
    """Detections stored before DedupConfig took the command line's names keep
    description/scheme/w/n/t in their summary: the page reads both."""
    import polars as pl

    from engine.ui.data import open_store as _store
    demo = peek(store_dir, "SELECT snapshot_id FROM snapshots WHERE documents = 2500")["snapshot_id"][0]
    docs = peek(store_dir, "SELECT doc_id FROM documents WHERE snapshot_id = ? ORDER BY doc_id LIMIT 2", [demo])
    clusters = pl.DataFrame({"cluster_id": [1, 1], "doc_id": docs["doc_id"].to_list(),
                             "definition": ["fci", "fci"]}, schema={"cluster_id": pl.Int64, "doc_id": pl.Int64,
                                                                    "definition": pl.String})
    pairs = pl.DataFrame({"doc_a": [docs["doc_id"][0]], "doc_b": [docs["doc_id"][1]], "common": [40],
                          "jaccard": [0.7]}, schema={"doc_a": pl.Int64, "doc_b": pl.Int64, "common": pl.Int64,
                                                     "jaccard": pl.Float64})
    old = {"description": "lexical", "scheme": "minhash", "w": 5, "n": 96, "t": 41}
    _store(str(store_dir / "app.duckdb")).add_dedup(
        demo, None, True, old, clusters, pairs,
        {"config": old, "similar_pairs": 1, "exact_groups": 0, "clusters": {"fci": 1, "components": 1}})
    at = app("pages/duplicates.py", state={"bs.snapshot": demo, "bs.init": True})
    at.radio(key="duplicates.mode").set_value("raw").run()
    assert not at.exception
    caption = next(c.value for c in at.caption if c.value.startswith("Detection"))
    assert "lexical, minhash sketches, shingles of 5 tokens, sketch size 96, threshold 41" in caption


def test_every_page_script_is_in_the_navigation_and_nowhere_else():
    """pages/ holds the page scripts only (helpers live in engine/ui), each one
    named once in engine/ui/nav.py, which both entry scripts run."""
    from engine.ui import nav, paths
    scripts = {n[:-3] for n in os.listdir(os.path.join(ROOT, "pages")) if n.endswith(".py") and n != "__init__.py"}
    assert scripts == {p.script for p in nav.PAGES}
    assert len({p.url_path for p in nav.PAGES}) == len(nav.PAGES) and sum(p.default for p in nav.PAGES) == 1
    assert paths.pages_dir() == os.path.join(ROOT, "pages")
    for entry in (os.path.join(ROOT, "app.py"), os.path.join(ROOT, "engine", "ui", "app.py")):
        body = [ln for ln in open(entry, encoding="utf-8").read().split('"""')[-1].splitlines() if ln.strip()]
        assert body == ["from engine.ui import nav", "nav.run()"], entry


def test_the_launcher_uses_streamlit_public_command_line(monkeypatch, tmp_path):
    """`boilerscope dashboard` runs the packaged entry script, whose folder
    holds no pages/ (Streamlit's folder navigation never starts), with the
    shipped settings as options; no private Streamlit module anywhere."""
    from engine.ui import launch
    args = launch.command(8600, "127.0.0.1")
    assert args[:2] == ["run", launch.ENTRY] and os.path.isfile(launch.ENTRY)
    assert not os.path.exists(os.path.join(os.path.dirname(launch.ENTRY), "pages"))
    assert {"--server.headless=true", "--browser.gatherUsageStats=false", "--server.port=8600",
            "--server.address=127.0.0.1", "--theme.primaryColor=#b5452b"} <= set(args)
    # serve() hands the store to the server process by the environment (Streamlit's main stubbed)
    seen = {}
    monkeypatch.setenv("BOILERSCOPE_DB", "unchanged")  # both restored after the test
    monkeypatch.setattr(launch.sys, "argv", ["pytest"])
    monkeypatch.setattr(launch.stcli, "main", lambda: seen.setdefault("argv", list(launch.sys.argv)) and 0)
    launch.serve(str(tmp_path / "x.duckdb"), 8600, "127.0.0.1")
    assert os.environ["BOILERSCOPE_DB"] == str(tmp_path / "x.duckdb") and seen["argv"][1:] == args
    for folder in ("pages", os.path.join("engine", "ui")):
        for name in os.listdir(os.path.join(ROOT, folder)):
            if name.endswith(".py"):
                text = open(os.path.join(ROOT, folder, name), encoding="utf-8").read()
                assert "streamlit.runtime" not in text and "PagesManager" not in text, name


def test_a_job_is_the_engine_progress_callable_and_one_per_key():
    """A job takes the engine's progress(stage, fraction) calls; a second
    request for the same key attaches to it; a cancelled job raises at its
    next progress report."""
    import threading
    from engine.errors import BoilerscopeError
    from engine.ui.jobs import Cancelled, Jobs
    reg = Jobs()
    go, seen = threading.Event(), []

    def work(progress):
        progress("ingest", 0.25)
        seen.append(1)
        go.wait(10)
        progress("ingest", 7)
        return "ok"
    job, new = reg.start(("k", 1), "mine", "s", "Ingesting x", work)
    again, new2 = reg.start(("k", 1), "mine", "s", "Ingesting x", work)
    other, new3 = reg.start(("k", 2), "mine", "t", "Other", lambda p: "other")
    assert new and not new2 and again is job and new3 and other is not job
    assert reg.running("mine", "s") == [job] and reg.get(job.id) is job
    while not seen:
        threading.Event().wait(0.01)
    assert (job.stage, job.fraction) == ("ingest", 0.25) and job.text() == "Ingesting x: ingest 25%"
    go.set()
    assert job.result() == "ok" and job.fraction == 1.0 and reg.running("mine", "s") == []
    assert other.result() == "other"

    def forever(progress):
        while True:
            progress("mining", 0.5)
            threading.Event().wait(0.01)
    job, _ = reg.start(("k", 3), "mine", "s", "Mining", forever)
    job.cancel()
    with pytest.raises(Cancelled, match="cancelled before it stored its result"):
        job.result()
    failing, _ = reg.start(("k", 4), "mine", "s", "Mining", lambda p: 1 / 0)
    with pytest.raises(BoilerscopeError, match="Mining failed: division by zero"):
        failing.result()


def _blocked_mine(store_dir, sigma, min_len, then):
    """A mining job of the app's store for (sigma, L), as if started by
    another tab, that waits before it mines until a page follows it; then it
    is released (``then="release"``) or cancelled (``"cancel"``)."""
    import threading
    from engine import api
    from engine.ui import jobs
    from engine.ui.data import open_store
    db = str(store_dir / "app.duckdb")
    store = open_store(db)
    sid = peek_db("SELECT snapshot_id FROM snapshots WHERE documents = 2500")["snapshot_id"][0]  # app()'s
    gate = threading.Event()

    def work(progress):
        while not gate.is_set():
            progress("waiting", 0.1)
            gate.wait(0.05)
        return api.mine(db, sigma, min_len, store=store, snapshot=sid, progress=progress)
    job, new = jobs.registry().start(("mine", db, sid, sigma, min_len, "auto", 0), "mine", sid,
                                     f"Mining sigma {sigma}, L {min_len}", work)
    assert new
    drawn, calls = job.text, []

    def followed():  # the page's bar draws the job (the sidebar's line comes first): let it go on
        calls.append(1)
        if len(calls) == 2:
            (gate.set if then == "release" else job.cancel)()
        return drawn()
    job.text = followed
    return job


def test_a_page_opened_mid_mine_follows_the_running_job_and_stores_one_run(store_dir):
    """Reloading (or a second tab) while a run is mined shows that job; when
    it ends the page opens its run; one job, one stored run."""
    app()  # the demo
    job = _blocked_mine(store_dir, 33, 11, "release")
    at = app()  # a new session: the page follows the job to its end
    assert not at.exception
    assert any("done" in s.value for s in at.success)
    runs = peek(store_dir, "SELECT run_id FROM runs WHERE sigma = 33 AND min_len = 11")
    assert runs.height == 1 and at.query_params["run"] in (str(runs["run_id"][0]), [str(runs["run_id"][0])])
    assert job.result().run_id == runs["run_id"][0]


def test_a_finished_job_of_the_session_is_shown_once_after_a_visit_elsewhere(store_dir):
    """A session that left the Mine page mid-job finds its job again (its id
    in the session), shows the run once and opens it."""
    app()
    job = _blocked_mine(store_dir, 35, 11, "release")
    job.text()
    job.text()  # released without a page: it ends while the session is elsewhere
    run = job.result()
    at = app(state={"bs.snapshot": peek(store_dir, "SELECT snapshot_id FROM snapshots WHERE documents = 2500")
                    ["snapshot_id"][0], "bs.init": True, "mine.job": job.id})
    assert not at.exception
    assert any(f"Run {run.run_id} done." in s.value for s in at.success)
    assert at.query_params["run"] in (str(run.run_id), [str(run.run_id)])
    at.run()
    assert not any("done." in s.value for s in at.success)  # once


def test_a_cancelled_job_says_so_and_stores_nothing(store_dir):
    app()
    job = _blocked_mine(store_dir, 34, 12, "cancel")
    at = app()
    assert not at.exception
    assert any("cancelled before it stored its result" in e.value for e in at.error), [e.value for e in at.error]
    with pytest.raises(KeyError):  # drawn while it ran, gone once it ended: nothing left to cancel
        at.button(key=f"jobs.cancel.{job.id}")
    assert any(h.value.startswith("Run history") for h in at.subheader)  # the page goes on after a cancel
    assert peek(store_dir, "SELECT count(*) AS n FROM runs WHERE sigma = 34")["n"][0] == 0


def test_a_run_asked_for_before_it_exists_is_found_once_mined(store_dir):
    """A shared link may name a run that is still being mined elsewhere: the
    read layer must not keep the miss, or the link never opens that run."""
    from engine.api import mine
    from engine.ui import data
    s = data.store()
    demo = peek_db("SELECT snapshot_id FROM snapshots WHERE documents = 2500")["snapshot_id"][0]
    later = int(peek_db("SELECT max(run_id) AS m FROM runs")["m"][0]) + 1
    assert data.run(later) == {}
    assert mine(s.path, 33, 10, store=s, snapshot=demo).run_id == later
    assert data.run(later)["snapshot_id"] == demo


def test_load_page_reads_compressed_jsonl_by_upload_and_by_path(store_dir):
    """A .jsonl.zst upload and a .json.gz path are snapshots like any other;
    a truncated one is an error box naming it."""
    import json
    lines = "".join(json.dumps({"doc_id": i, "text": f"compressed page {i} · shared footer of the site",
                                "url": f"https://z.example/{i}"}) + "\n" for i in range(30)).encode()
    zst = pa.BufferOutputStream()
    with pa.CompressedOutputStream(zst, "zstd") as out:
        out.write(lines)
    at = app("pages/load.py")
    at.radio(key="load.source").set_value("Upload").run()
    at.file_uploader(key="load.upload").set_value(("docs.jsonl.zst", zst.getvalue().to_pybytes(),
                                                   "application/zstd")).run()
    at.button(key="load.ingest_upload").click().run()
    assert not at.exception
    assert any("ingested" in s.value for s in at.success), [e.value for e in at.error]
    assert {m.label: m.value for m in at.metric}["Documents"] == "30"
    # issue 24: an upload recorded its temporary file (gone once ingested) as the source
    sources = peek(store_dir, "SELECT source FROM snapshots WHERE documents = 30")["source"].to_list()
    assert sources == ["upload: docs.jsonl.zst"], sources
    with pa.CompressedOutputStream(str(store_dir / "c4.json.gz"), "gzip") as out:
        out.write(lines.replace(b"compressed page", b"gzipped page"))
    data = (store_dir / "c4.json.gz").read_bytes()
    (store_dir / "cut.json.gz").write_bytes(data[:len(data) // 2])
    at.radio(key="load.source").set_value("Path").run()
    at.text_input(key="load.path").set_value(str(store_dir / "cut.json.gz")).run()
    at.button(key="load.ingest_path").click().run()
    assert not at.exception
    assert any("cut.json.gz" in e.value and "gzip" in e.value for e in at.error), [e.value for e in at.error]
    at.text_input(key="load.path").set_value(str(store_dir / "c4.json.gz")).run()
    at.button(key="load.ingest_path").click().run()
    assert not at.exception
    assert any("ingested" in s.value for s in at.success), [e.value for e in at.error]


def test_load_page_reads_a_hugging_face_folder_by_path(store_dir):
    from tests.support import write_hf_dataset
    docs = [{"doc_id": i, "url": f"https://hf.example/{i}", "text": f"dataset row {i} with the same closing line"}
            for i in range(12)]
    write_hf_dataset(store_dir / "hf_saved", docs, shards=2)
    at = app("pages/load.py")
    at.radio(key="load.source").set_value("Path").run()
    at.text_input(key="load.path").set_value(str(store_dir / "hf_saved")).run()
    at.button(key="load.ingest_path").click().run()
    assert not at.exception
    assert any("ingested" in s.value for s in at.success), [e.value for e in at.error]
    assert {m.label: m.value for m in at.metric}["Documents"] == "12"


def test_run_history_says_when_no_templates_were_mined(store_dir):
    """Issue 24: the run history's templates column said "None" for runs
    mined without templates."""
    from engine.api import mine
    from engine.ui.data import open_store
    s = open_store(os.environ["BOILERSCOPE_DB"])
    demo = peek_db("SELECT snapshot_id FROM snapshots WHERE documents = 2500")["snapshot_id"][0]
    mine(s.path, 44, 10, store=s, snapshot=demo)  # no templates
    at = app("pages/mine.py")
    history = next(df.value for df in at.dataframe if "templates" in df.value.columns)
    values = [str(v) for v in history["templates"].tolist()]
    assert "not mined" in values and "None" not in values and "nan" not in values, values


def test_index_eater_bars_keep_one_bar_per_phrase():
    """Issue 24: "The ten biggest index eaters" showed 7 bars: labels were the
    first 45 characters, and phrases with the same start stacked in one bar."""
    import polars as pl
    from engine.ui import render
    phrases = [f"pandas 1 5 3 documentation getting started user guide api reference {i}" for i in range(10)]
    top = render.ranked_labels(pl.DataFrame({"phrase": phrases, "psi": list(range(10, 0, -1))}), "phrase", 45)
    assert top["label"].n_unique() == 10 and top["label"][0].startswith("1. pandas")
    spec = render.hbar(top.select("label", "psi", "phrase"), "psi", "label", "eaters").to_dict()
    assert spec["encoding"]["y"]["field"] == "label"


def test_a_search_with_no_match_shows_no_phrase_detail(store_dir):
    """Issue 24: a search with no match left the previous phrase's detail on the page."""
    at = app("pages/phrases.py")
    assert at.subheader, "a phrase is opened"
    at.text_input(key="phrases.search").set_value("zzqx no phrase has this").run()
    assert not at.exception
    assert any("No block holds a phrase that passes" in i.value for i in at.info), [i.value for i in at.info]
    assert not at.subheader, [h.value for h in at.subheader]
    at.segmented_control(key="phrases.view").set_value("phrases").run()  # every phrase: the same
    assert any("No phrase matches" in i.value for i in at.info), [i.value for i in at.info]
    assert not at.subheader, [h.value for h in at.subheader]


def test_a_long_template_is_shown_small_in_a_scrolling_box():
    """A 4,815-token template was printed in full at 1.25em (a 5,000 px page):
    long ones are now at the text's size, in a box of bounded height; short
    ones stay large; the text is escaped either way."""
    from engine.ui import render
    short = render.template_html("showing * of * <b>products</b>")
    assert "1.25em" in short and "max-height" not in short and "&lt;b&gt;" in short and "<b>" not in short
    long_ = render.template_html(" ".join(["word"] * 4000 + ["*"] + ["tail"] * 815))
    assert "1.25em" not in long_ and "max-height:40vh" in long_ and "overflow:auto" in long_


def test_phrases_filters_and_log_scales_are_in_the_url(store_dir):
    """The minimum number of sites, the decision filter and the log scale go
    into the URL (they did not), and a URL carrying them restores them."""
    at = app("pages/phrases.py")
    at.toggle(key="phrases.log").set_value(True).run()
    at.number_input(key="phrases.min_sites").set_value(2).run()
    at.selectbox(key="phrases.decision").set_value("undecided").run()
    assert not at.exception
    params = {k: at.query_params[k] for k in ("minsites", "decided", "log")}
    assert {k: v[0] if isinstance(v, list) else v for k, v in params.items()} == \
        {"minsites": "2", "decided": "undecided", "log": "1"}
    shown = at.dataframe[0].value if at.dataframe else None
    assert shown is None or (shown["sites"] >= 2).all()
    # a fresh session opened on that URL
    fresh = AppTest.from_file(APP, default_timeout=180)
    demo = peek_db("SELECT snapshot_id FROM snapshots WHERE documents = 2500")["snapshot_id"][0]
    for k, v in {"snapshot": demo, "minsites": "2", "decided": "undecided", "log": "1"}.items():
        fresh.query_params[k] = v
    fresh.run()
    fresh.switch_page("pages/phrases.py").run()
    assert not fresh.exception
    assert fresh.number_input(key="phrases.min_sites").value == 2
    assert fresh.selectbox(key="phrases.decision").value == "undecided"
    fresh.switch_page("pages/sites.py").run()
    assert not fresh.exception and fresh.toggle(key="sites.log").value


def test_chart_axes_keep_every_label_and_readable_titles():
    """Issue 24: chart axes dropped every other label (Vega hides overlapping
    ones; the site that changed most had none) and titles showed raw column
    names."""
    import polars as pl
    from engine.ui import render
    sites = pl.DataFrame({"site": [f"site{i}.example" for i in range(40)], "covered_tokens": list(range(40))})
    spec = render.hbar(sites, "covered_tokens", "site", "sites").to_dict()
    assert spec["encoding"]["y"]["axis"]["labelOverlap"] is False and spec["height"] >= 22 * 40
    assert spec["encoding"]["x"]["title"] == "covered tokens"
    bars = pl.DataFrame({"bin": ["0%", "10%"] * 2, "documents_share": [0.1, 0.2, 0.3, 0.4], "run": ["a", "a", "b", "b"]})
    spec = render.grouped_bars(bars, "bin", "documents_share", "run", "h", x_title="contamination",
                               colours={"a": "#000", "b": "#fff"}).to_dict()
    assert spec["encoding"]["x"]["axis"]["labelOverlap"] is False
    assert spec["encoding"]["y"]["title"] == "documents share"


def test_sites_page_eaters_are_blocks_by_covered_tokens(store_dir):
    """Issue 24: the index eaters are ranked by the tokens they really cover
    (blocks, each token once), not by Ψ = length × df, which counts the same
    tokens again for every variant of one sidebar."""
    at = app("pages/sites.py")
    run = at.session_state["bs.run"]
    def walk(node):
        for child in getattr(node, "children", {}).values():
            yield child
            yield from walk(child)
    charts = [e for e in walk(at.main) if getattr(e, "type", "") in ("arrow_vega_lite_chart", "vega_lite_chart")]
    eaters = [c for c in charts if "index eaters" in str(c.proto)]
    assert eaters, [getattr(e, "type", "") for e in walk(at.main)]
    proto = str(eaters[0].proto)
    assert "blocks, by the tokens they cover" in proto and "covered_tokens" in proto
    want = peek(store_dir, "SELECT covered_tokens FROM run_blocks WHERE run_id = ?"
                " ORDER BY covered_tokens DESC, block_id LIMIT 1", [run])["covered_tokens"].to_list()
    assert want


def test_sites_page_offers_the_repetition_card(store_dir):
    """The Sites page downloads the page ``boilerscope report`` writes (engine/report.py), built on click."""
    from engine.ui import data
    at = app("pages/sites.py")
    run = at.session_state["bs.run"]
    buttons = [b for b in at.get("download_button") if "repetition card" in b.proto.label]
    assert len(buttons) == 1 and "sites.card" in buttons[0].proto.id
    card = data.repetition_card(run).decode("utf-8")
    assert card.startswith("<!DOCTYPE html>") and f"run {run}" in card and "<script" not in card


def test_ticked_blocks_are_decided_together_and_the_phrases_page_lists_blocks(store_dir):
    """Ticking several blocks makes the decision buttons (keys n/k/u/x) mark
    all their members at once; the Phrases page lists blocks by default and
    the phrases of the block picked, or every phrase on request."""
    demo = peek(store_dir, "SELECT snapshot_id FROM snapshots WHERE documents = 2500")["snapshot_id"][0]
    run = int(peek(store_dir, "SELECT min(run_id) AS r FROM runs WHERE snapshot_id = ?", [demo])["r"][0])
    top = peek(store_dir, "SELECT block_id FROM run_blocks WHERE run_id = ? ORDER BY covered_tokens DESC, block_id"
               " LIMIT 3", [run])["block_id"].to_list()
    at = app("pages/blocks.py", state={"bs.snapshot": demo, "bs.run": run, "bs.init": True,
                                       "blocks.ticked": top[1:3]})
    at.session_state["blocks.table"] = {"selection": {"rows": [1, 2], "columns": [], "cells": []}}
    at.run()
    assert not at.exception
    before = peek(store_dir, "SELECT phrase, scope, decision, note FROM decisions ORDER BY ALL").rows()
    assert any("the 2 ticked blocks'" in md.value for md in at.markdown), [md.value for md in at.markdown]
    at.button(key="blocks.decide.keep").click().run()
    assert not at.exception
    members = peek(store_dir, "SELECT phrase FROM run_phrases WHERE run_id = ? AND maximal AND block_id IN (?, ?)",
                   [run, top[1], top[2]])["phrase"].to_list()
    kept = set(peek(store_dir, "SELECT phrase FROM decisions WHERE decision = 'keep'")["phrase"].to_list())
    assert members and set(members) <= kept
    assert at.dataframe[0].value["decision"].tolist()[1:3] == ["keep", "keep"]
    at.button(key="blocks.undo").click().run()
    assert not at.exception
    assert peek(store_dir, "SELECT phrase, scope, decision, note FROM decisions ORDER BY ALL").rows() == before
    assert any(md.value == "**Members** (what a decision marks)" for md in at.markdown)  # the page drew to its end

    at = app("pages/phrases.py", state={"bs.snapshot": demo, "bs.run": run, "bs.init": True})
    assert at.dataframe[0].value["block_id"].tolist()[:3] == top  # blocks first
    first = peek(store_dir, "SELECT phrase_id FROM run_phrases WHERE run_id = ? AND maximal AND block_id = ?",
                 [run, top[0]])["phrase_id"].to_list()
    assert sorted(at.dataframe[1].value["phrase_id"].tolist()) == sorted(first)
    # picking another block opens one of its phrases (the detail kept the phrase of the block before)
    at.session_state["phrases.blocks"] = {"selection": {"rows": [1], "columns": [], "cells": []}}
    at.run()
    second = peek(store_dir, "SELECT phrase_id FROM run_phrases WHERE run_id = ? AND maximal AND block_id = ?",
                  [run, top[1]])["phrase_id"].to_list()
    assert not at.exception and at.selectbox(key="phrases.detail").value in second
    at.segmented_control(key="phrases.view").set_value("phrases").run()
    assert at.query_params["view"] in ("phrases", ["phrases"])
    everything = peek(store_dir, "SELECT count(*) AS n FROM run_phrases WHERE run_id = ? AND maximal", [run])["n"][0]
    assert len(at.dataframe[0].value) == min(everything, 500)


def test_sites_page_lists_each_sites_blocks(store_dir):
    """The site ranking names each site's top blocks; ticking a site lists
    its blocks by the tokens they cover there, and opens them for triage."""
    demo = peek(store_dir, "SELECT snapshot_id FROM snapshots WHERE documents = 2500")["snapshot_id"][0]
    run = int(peek(store_dir, "SELECT min(run_id) AS r FROM runs WHERE snapshot_id = ?", [demo])["r"][0])
    at = app("pages/sites.py", state={"bs.snapshot": demo, "bs.run": run, "bs.init": True})
    rank = at.dataframe[0].value
    assert "top_blocks" in rank.columns
    at.session_state["sites.rank"] = {"selection": {"rows": [0], "columns": [], "cells": []}}
    at.run()
    site = rank["site"].tolist()[0]
    assert at.query_params["site"] in (site, [site])
    want = peek(store_dir, "SELECT s.block_id, sum(s.token_end - s.token_start) AS t FROM run_block_spans s"
                " JOIN documents d ON d.snapshot_id = ? AND d.doc_index = s.doc_index WHERE s.run_id = ?"
                " AND d.site = ? GROUP BY s.block_id ORDER BY t DESC, s.block_id LIMIT 200", [demo, run, site])
    shown = at.dataframe[1].value
    assert shown["block_id"].tolist() == want["block_id"].to_list()
    assert shown["covered_tokens"].tolist() == want["t"].to_list()
    first = str(want["block_id"][0]).split(".")[0]
    assert rank["top_blocks"].tolist()[0].startswith(
        " ".join(peek(store_dir, "SELECT text FROM run_blocks WHERE run_id = ? AND block_id = ?",
                      [run, int(first)])["text"][0].split())[:60])


def test_a_link_without_a_snapshot_keeps_its_choices(store_dir):
    """A link without ?snapshot= means the default snapshot: its site, block
    and document stay (they were dropped as choices of "another" snapshot)."""
    from engine.ui.data import open_store
    sid = open_store(str(store_dir / "app.duckdb")).latest_snapshot()
    doc = peek(store_dir, "SELECT doc_id, site FROM documents WHERE snapshot_id = ? ORDER BY doc_index DESC"
               " LIMIT 1", [sid])
    at = AppTest.from_file(APP, default_timeout=180)
    at.query_params.update({"doc": str(doc["doc_id"][0]), "site": doc["site"][0]})
    at.run()
    assert not at.exception
    assert at.query_params["snapshot"] in (sid, [sid])
    assert at.query_params["doc"] in (str(doc["doc_id"][0]), [str(doc["doc_id"][0])])
    assert at.query_params["site"] in (doc["site"][0], [doc["site"][0]])


def test_every_block_of_the_demo_can_be_decided(store_dir):
    """A block that no phrase or template calls its own (each lies mostly in
    another block) offered nothing to decide; its members are now those with
    an occurrence starting inside it."""
    from engine import views
    from engine.ui.data import open_store
    store = open_store(str(store_dir / "app.duckdb"))
    demo = peek(store_dir, "SELECT snapshot_id FROM snapshots WHERE documents = 2500")["snapshot_id"][0]
    run = int(peek(store_dir, "SELECT min(run_id) AS r FROM runs WHERE snapshot_id = ?", [demo])["r"][0])
    blocks = peek(store_dir, "SELECT block_id FROM run_blocks WHERE run_id = ?", [run])["block_id"].to_list()
    orphans = peek(store_dir, "SELECT count(*) AS n FROM run_blocks b WHERE run_id = ? AND NOT EXISTS (SELECT 1"
                   " FROM run_phrases p WHERE p.run_id = b.run_id AND p.block_id = b.block_id AND p.maximal)"
                   " AND NOT EXISTS (SELECT 1 FROM run_templates t WHERE t.run_id = b.run_id"
                   " AND t.block_id = b.block_id)", [run])["n"][0]
    assert orphans > 0  # the demo has such blocks
    assert all(views.block_members(store, run, b).height for b in blocks)
