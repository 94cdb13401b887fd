"""Every dashboard page through Streamlit's AppTest, on a real DuckDB store."""
import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from streamlit.testing.v1 import AppTest

from conftest import ROOT

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
    from pages.conn import _store
    return _store(os.environ["BOILERSCOPE_DB"]).query(sql, params)


def evil_snapshot(store_dir) -> str:
    """A snapshot of hostile markup in the app's store (each test that needs
    it makes sure it is there: no test depends on another's order)."""
    from engine.api import ingest
    from pages.conn import _store
    texts = [f"<script>alert({i})</script> Copyright 2024 Evil Corp. All rights reserved. "
             f"<img src=x onerror=alert(1)> page {i} body" for i in range(25)]
    path = store_dir / "evil.parquet"
    pq.write_table(pa.table({"text": texts, "site": ["evil.example"] * 25}), path)
    return ingest(str(path), store=_store(str(store_dir / "app.duckdb")))[0]


def peek(store_dir, sql, params=()):
    """Read the store the app owns through the app's own cached connection."""
    from pages.conn import _store
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
    at.slider(key="mine.sigma").set_value(30).run()
    assert at.number_input(key="mine.sigma_n").value == 30
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


def test_phrases_page_decisions_persist(store_dir):
    at = app("pages/phrases.py")
    assert at.dataframe, "phrase table"
    phrase = at.selectbox(key="phrases.detail").format_func(at.selectbox(key="phrases.detail").value)
    at.text_input(key="phrases.note").set_value("site footer").run()
    at.button(key="phrases.decide.noise").click().run()
    assert not at.exception
    stored = peek(store_dir, "SELECT phrase, decision, note FROM decisions WHERE note = 'site footer'")
    assert stored.height == 1 and stored["decision"][0] == "noise"
    assert stored["phrase"][0].startswith(phrase[:100])
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
    at.session_state["sites.bar"] = ("(all sites)", 0)
    at.multiselect(key="sites.pick").set_value([]).run()
    assert not at.exception
    assert any("(all sites): contamination 0%" in h.value for h in at.subheader)


def test_document_page_highlights_and_escapes(store_dir):
    demo = peek(store_dir, "SELECT snapshot_id FROM snapshots WHERE documents = 2500")["snapshot_id"][0]
    run = peek(store_dir, "SELECT min(run_id) AS r FROM runs WHERE snapshot_id = ?", [demo])["r"][0]
    doc = peek(store_dir, "SELECT min(doc_index) AS d FROM run_spans WHERE run_id = ?", [run])["d"][0]
    at = app("pages/document.py", state={"bs.snapshot": demo, "bs.run": int(run), "bs.doc": int(doc),
                                         "bs.init": True})
    assert any("<mark" in h.value for h in at.html)
    assert at.query_params["doc"] in (str(doc), [str(doc)])
    at.toggle(key="document.clean").set_value(True).run()
    assert not at.exception
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


def test_export_page_stoplist_and_cleaned_snapshot(store_dir):
    from pages.conn import _store
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


def test_duplicates_page_detects_and_compares(store_dir):
    at = app("pages/duplicates.py")
    at.radio(key="dup.mode").set_value("raw").run()
    at.button(key="dup.run").click().run()
    assert not at.exception
    metrics = {m.label: m.value for m in at.metric}
    assert int(metrics["Similar pairs"].replace(",", "")) > 0
    at.selectbox(key="dup.def").set_value("components").run()
    assert not at.exception
    assert any("Token similarity" in cap.value for cap in at.caption)
    stored = peek(store_dir, "SELECT count(*) AS n FROM dedup_runs WHERE raw")
    assert stored["n"][0] >= 1


def test_mine_page_on_a_snapshot_of_few_documents(store_dir):
    """Fewer documents than the default sigma 20 crashed the default page
    (StreamlitValueAboveMaxError); now every value is clamped into one range."""
    from engine.api import ingest
    from pages.conn import _store
    path = store_dir / "five.parquet"
    pq.write_table(pa.table({"text": [f"the same footer of five words page {i}" for i in range(5)]}), path)
    sid, _ = ingest(str(path), store=_store(os.environ["BOILERSCOPE_DB"]))
    at = app("pages/mine.py", state={"bs.snapshot": sid, "bs.run": None, "bs.init": True})
    assert at.slider(key="mine.sigma").value == 5 and at.number_input(key="mine.sigma_n").value == 5
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
    sigma, L = at.slider(key="mine.sigma"), at.slider(key="mine.min_len")
    assert sigma.min <= sigma.value <= sigma.max and L.min <= L.value <= L.max
    assert at.number_input(key="mine.sigma_n").value == sigma.value


def test_load_page_path_checks(store_dir, tmp_path, monkeypatch):
    from pages import boot as common
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
    link = os.path.join(common.DATA_DIR, "zz-outside-link.parquet")
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
