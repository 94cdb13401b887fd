"""The Spark engine (engine/spark.py) in local mode: the brute-force oracle on
small corpora cut into uneven shards, the local engine's own files on real
text, and bad shards.  Run by ``make test-spark`` (needs ``make install-spark``);
``make test`` leaves them out."""
import json
import os
import random

import polars as pl
import pyarrow as pa
import pyarrow.csv  # noqa: F401  (pa.csv)
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests import naive

pytestmark = pytest.mark.spark
pyspark = pytest.importorskip("pyspark")

from engine.api import mine  # noqa: E402
from engine.errors import BoilerscopeError  # noqa: E402
from engine.spark import pseudo_documents, mine_spark, session  # noqa: E402
from tests.support import ROOT, assert_one_line_error, write_shards


@pytest.fixture(scope="module")
def spark():
    s = session("local[2]")
    yield s
    s.stop()


corpus = st.lists(st.lists(st.sampled_from("abc"), max_size=14), min_size=1, max_size=12)


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(docs=corpus, sigma=st.integers(1, 4), L=st.integers(2, 4), data=st.data())
def test_spark_equals_the_definition_on_uneven_shards(spark, tmp_path_factory, docs, sigma, L, data):
    cuts = data.draw(st.lists(st.integers(0, len(docs)), max_size=3))
    folder = write_shards(str(tmp_path_factory.mktemp("shards") / "in"), [" ".join(d) for d in docs], cuts)
    out = str(tmp_path_factory.mktemp("out") / "res")
    s = mine_spark(folder, sigma, L, out, spark=spark)
    want, covered, _ = naive.mine(docs, sigma, L)
    got = pl.read_parquet(os.path.join(out, "phrases.parquet"))
    assert {tuple(p.split(" ")): (d, o) for p, d, o in got.select("phrase", "df", "occurrences").rows()} == want
    documents = pl.read_parquet(os.path.join(out, "documents.parquet"))
    # no doc_id column: the row number over the shards in name order
    assert documents["doc_id"].to_list() == list(range(len(docs)))
    assert documents["covered_tokens"].to_list() == covered
    assert s.covered_tokens == sum(covered) and s.engine == "spark"


def test_pseudo_documents_keep_segments_apart():
    segs = pa.array([["a b", "b c d"], [], ["a"]], pa.list_(pa.large_string()))
    tokens, offsets, vocab, n_sep, within = pseudo_documents(segs)
    words = [vocab[t] for t in tokens]
    assert n_sep == 1 and offsets.tolist() == [0, 6, 6, 7] and within is None
    assert words[:2] == ["a", "b"] and words[2].startswith("\x00") and words[3:6] == ["b", "c", "d"]
    assert words[6] == "a"
    # each token's place in its own document, the segments' starts given
    starts = pa.array([[3, 9], [], [0]], pa.list_(pa.int64()))
    within = pseudo_documents(segs, starts)[4]
    assert within.tolist() == [3, 4, -1, 9, 10, 11, 0]


def compare_with_local(tmp_path, source, spark, sigma=20, L=10):
    local = mine(source, sigma, L, db=str(tmp_path / "x.duckdb"), out=str(tmp_path / "local"))
    s = mine_spark(source, sigma, L, str(tmp_path / "spark"), spark=spark)
    for name in ("phrases.parquet", "documents.parquet", "sites.parquet"):
        a = (tmp_path / "local" / name).read_bytes()
        b = (tmp_path / "spark" / name).read_bytes()
        assert a == b, name
    for key in ("sigma", "min_len", "documents", "tokens", "covered_tokens", "coverage", "phrases"):
        assert getattr(s, key) == getattr(local.summary, key), key
    return s


def demo_shards(tmp_path):
    """The demo's first 900 pages (url and text, no doc_id) in three uneven
    Parquet shards of 64-row groups: (table, texts, urls, folder)."""
    table = pq.read_table(os.path.join(ROOT, "data", "demo.parquet")).slice(0, 900)
    texts, urls = table.column("text").to_pylist(), table.column("url").to_pylist()
    folder = tmp_path / "pq"
    folder.mkdir()
    for k, (a, b) in enumerate([(0, 100), (100, 650), (650, 900)]):
        pq.write_table(pa.table({"url": urls[a:b], "text": texts[a:b]}), folder / f"part-{k}.parquet",
                       row_group_size=64)
    return table, texts, urls, folder


def test_spark_gives_the_local_files_on_real_text(spark, tmp_path):
    """Byte-identical Parquet on the demo's documentation pages (sites from
    the URLs, real boilerplate, Unicode), read as three uneven Parquet shards
    without doc_id, and as JSONL shards with doc_id."""
    table, texts, urls, folder = demo_shards(tmp_path)
    s = compare_with_local(tmp_path / "a", str(folder), spark, sigma=10, L=8)
    assert s.phrases > 10 and 0 < s.coverage < 1
    jl = tmp_path / "jl"
    jl.mkdir()
    ids = table.column("doc_id").to_pylist()
    for k, (a, b) in enumerate([(0, 400), (400, 900)]):
        with open(jl / f"part-{k}.jsonl", "w", encoding="utf-8") as fh:
            for i in range(a, b):
                fh.write(json.dumps({"doc_id": ids[i], "url": urls[i], "text": texts[i]}) + "\n")
    compare_with_local(tmp_path / "b", str(jl), spark, sigma=10, L=8)


def test_spark_reads_every_format_in_the_executors(spark, tmp_path):
    """Compressed JSONL, WET, WARC, a Hugging Face folder and CSV are read by
    the package's reader inside the executors (a task per file): the result
    files are the local engine's, byte for byte, with the documents numbered
    over the shards in name order, as the local reader numbers them."""
    from tests.support import warc_response, write_compressed_jsonl, write_hf_dataset, write_wet
    table = pq.read_table(os.path.join(ROOT, "data", "demo.parquet")).slice(0, 600)
    docs = [{"url": u, "text": t} for u, t in zip(table.column("url").to_pylist(), table.column("text").to_pylist())]
    cuts = [(0, 90), (90, 91), (91, 420), (420, 600)]  # uneven, one shard of one document
    zst = tmp_path / "zst"
    zst.mkdir()
    for k, (a, b) in enumerate(cuts):
        write_compressed_jsonl(zst / f"part-{k}.jsonl.zst", [{**d, "meta": {"k": k}} for d in docs[a:b]])
    compare_with_local(tmp_path / "zst-run", str(zst), spark, sigma=10, L=8)
    wet = tmp_path / "wet"
    wet.mkdir()
    for k, (a, b) in enumerate(cuts):
        write_wet(wet / f"CC-{k:03d}.warc.wet.gz", docs[a:b])
    s = compare_with_local(tmp_path / "wet-run", str(wet), spark, sigma=10, L=8)
    assert s.spark["replaced_payloads"] == 0
    gzs = tmp_path / "gzs"  # an empty shard between two: the numbering skips it
    gzs.mkdir()
    for k, part in enumerate([docs[:50], [], docs[50:120]]):
        write_compressed_jsonl(gzs / f"part-{k}.jsonl.gz", part)
    compare_with_local(tmp_path / "gzs-run", str(gzs), spark, sigma=5, L=8)
    gz = tmp_path / "one.jsonl.gz"
    write_compressed_jsonl(gz, docs)
    compare_with_local(tmp_path / "gz-run", str(gz), spark, sigma=10, L=8)
    hf = tmp_path / "hf"
    write_hf_dataset(hf, [{**d, "doc_id": 1000 - i} for i, d in enumerate(docs)], shards=3)
    compare_with_local(tmp_path / "hf-run", str(hf), spark, sigma=10, L=8)
    csv = tmp_path / "one.csv"
    pa.csv.write_csv(pa.table({"url": [d["url"] for d in docs], "text": [d["text"] for d in docs]}), str(csv))
    compare_with_local(tmp_path / "csv-run", str(csv), spark, sigma=10, L=8)
    pages = [f"<html><body><nav>Home Docs Blog About</nav><p>Page {i} text {i * 7} here</p>"
             f"<footer>Copyright the example company all rights reserved</footer></body></html>" for i in range(12)]
    warc = tmp_path / "crawl.warc.gz"
    warc.write_bytes(b"".join(warc_response(f"https://ex.com/{i}", p.encode(), record_id=i)
                              for i, p in enumerate(pages)))
    compare_with_local(tmp_path / "warc-run", str(warc), spark, sigma=5, L=3)


def test_spark_python_reader_refuses_bad_files(spark, tmp_path):
    """A bad file read in an executor: one line naming it, no result files."""
    from tests.support import write_compressed_jsonl, write_wet
    docs = [{"url": f"https://a.com/{i}", "text": f"alpha beta gamma delta {i}"} for i in range(8)]
    folder = tmp_path / "cut"
    folder.mkdir()
    write_compressed_jsonl(folder / "part-0.jsonl.gz", docs)
    write_compressed_jsonl(folder / "part-1.jsonl.gz", docs)
    data = (folder / "part-1.jsonl.gz").read_bytes()
    (folder / "part-1.jsonl.gz").write_bytes(data[:len(data) // 2])  # truncated
    with pytest.raises(BoilerscopeError, match="part-1.jsonl.gz"):
        mine_spark(str(folder), 2, 2, str(tmp_path / "out"), spark=spark)
    empty = tmp_path / "empty.warc.wet.gz"
    write_wet(empty, [])
    with pytest.raises(BoilerscopeError, match="no conversion record"):
        mine_spark(str(empty), 2, 2, str(tmp_path / "out"), spark=spark)
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    write_compressed_jsonl(mixed / "a.jsonl.zst", docs)
    write_compressed_jsonl(mixed / "b.jsonl.zst", [{"text": d["text"]} for d in docs])
    with pytest.raises(BoilerscopeError, match="b.jsonl.zst has the columns text but .*a.jsonl.zst has text, url"):
        mine_spark(str(mixed), 2, 2, str(tmp_path / "out"), spark=spark)
    assert not os.path.exists(tmp_path / "out")


def stored_run(db, run_id=None):
    """A store's run in a canonical form: phrases by text, the occurrences,
    per-document coverage and covered spans by phrase text and doc_id (two
    snapshots of the same documents may order them differently)."""
    from engine.store import Store
    with Store(db, read_only=True) as st:
        run_id = run_id or st.scalar("SELECT max(run_id) FROM runs")
        row = st.run(run_id)
        sid = row["snapshot_id"]
        q = lambda sql: st.query(sql, [sid, run_id])  # noqa: E731
        doc = " JOIN documents d ON d.snapshot_id = ? AND d.doc_index = x.doc_index"
        phrases = st.query("SELECT phrase, length, df, occurrences, sites, psi, maximal FROM run_phrases"
                           " WHERE run_id = ? ORDER BY phrase", [run_id]).rows()
        occ = q("SELECT p.phrase, d.doc_id, x.token_pos FROM run_occurrences x JOIN run_phrases p"
                " USING (run_id, phrase_id)" + doc + " WHERE run_id = ? ORDER BY ALL").rows()
        docs = q("SELECT d.doc_id, x.covered_tokens FROM run_documents x" + doc + " WHERE run_id = ?"
                 " ORDER BY ALL").rows()
        spans = q("SELECT d.doc_id, x.token_start, x.token_end, x.char_start, x.char_end, p.phrase"
                  " FROM run_spans x JOIN run_phrases p USING (run_id, phrase_id)" + doc + " WHERE run_id = ?"
                  " ORDER BY ALL").rows()
        # the blocks: rows, spans and each phrase's block
        blocks = st.query("SELECT * EXCLUDE (run_id) FROM run_blocks WHERE run_id = ? ORDER BY block_id",
                          [run_id]).rows()
        block_spans = q("SELECT x.block_id, d.doc_id, x.token_start, x.token_end, x.char_start, x.char_end"
                        " FROM run_block_spans x" + doc + " WHERE run_id = ? ORDER BY ALL").rows()
        phrase_blocks = st.query("SELECT phrase, block_id FROM run_phrases WHERE run_id = ? AND maximal"
                                 " ORDER BY ALL", [run_id]).rows()
        # first_pos: an occurrence of the phrase in the snapshot's tokens
        arrays, vocab = st.arrays(sid), st.vocabulary(sid)
        for text, first, length in st.query("SELECT phrase, first_pos, length FROM run_phrases WHERE run_id = ?",
                                            [run_id]).rows():
            assert " ".join(vocab[t] for t in arrays.tokens[first:first + length]) == text
    return row, {"phrases": phrases, "occurrences": occ, "documents": docs, "spans": spans, "blocks": blocks,
                 "block_spans": block_spans, "phrase_blocks": phrase_blocks}


def demo_jsonl(tmp_path):
    """700 demo pages in two JSONL shards with doc_ids whose order is not the snapshot's."""
    table = pq.read_table(os.path.join(ROOT, "data", "demo.parquet")).slice(0, 700)
    texts, urls = table.column("text").to_pylist(), table.column("url").to_pylist()
    ids = [(i * 7919) % 100003 for i in range(len(texts))]  # not sorted: doc_id order != snapshot order
    folder = tmp_path / "jl"
    folder.mkdir()
    for k, (a, b) in enumerate([(0, 250), (250, 700)]):
        with open(folder / f"part-{k}.jsonl", "w", encoding="utf-8") as fh:
            for i in range(a, b):
                fh.write(json.dumps({"doc_id": ids[i], "url": urls[i], "text": texts[i]}) + "\n")
    return folder


def phrases_page_shows(db, snapshot_id, phrase):
    """The dashboard opens the store's run: the Phrases page lists ``phrase``."""
    from streamlit.testing.v1 import AppTest
    os.environ["BOILERSCOPE_DB"] = db
    try:
        at = AppTest.from_file(os.path.join(ROOT, "app.py"), default_timeout=180)
        at.session_state["bs.snapshot"] = snapshot_id
        at.session_state["bs.init"] = True
        at.session_state["bs.view"] = "phrases"  # every phrase by Ψ (the page lists blocks first)
        at.run()
        assert not at.exception, at.exception
        at.switch_page("pages/phrases.py").run()
        assert not at.exception, at.exception
        assert any(phrase in str(df.value.to_string()) for df in at.dataframe), phrase
    finally:
        os.environ.pop("BOILERSCOPE_DB", None)


def snapshot_content(db, sid):
    """A stored snapshot by doc_id: site, url, text, tokens (as text) and
    their characters; and its vocabulary's df by token."""
    import numpy as np
    from engine.store import Store
    with Store(db, read_only=True) as st:
        arrays, vocab = st.arrays(sid), st.vocabulary(sid)
        docs = st.documents_text(sid)
        off = np.asarray(arrays.doc_offsets)
        out = {}
        for i, doc_id, site, url, text, n in docs.rows():
            a, b = int(off[i]), int(off[i + 1])
            assert b - a == n
            out[doc_id] = (site, url, text, tuple(vocab[t] for t in arrays.tokens[a:b]),
                           tuple(arrays.span_start[a:b].tolist()), tuple(arrays.span_end[a:b].tolist()))
        df = dict(st.query("SELECT token, df FROM vocabulary WHERE snapshot_id = ?", [sid]).rows())
        row = st.query("SELECT documents, tokens, sites, vocabulary FROM snapshots WHERE snapshot_id = ?",
                       [sid]).rows()
    return out, df, row


def test_spark_run_in_the_store_is_the_local_run(spark, tmp_path):
    """``db=``: the Spark run lands in the store as the local engine's run of
    the same snapshot (same phrases, occurrences at the same token positions,
    per-document coverage, covered spans with their character offsets), with
    doc_ids whose order is not the snapshot's, and the dashboard opens it."""
    folder = demo_jsonl(tmp_path)
    local_db, spark_db = str(tmp_path / "local.duckdb"), str(tmp_path / "spark.duckdb")
    local = mine(str(folder), 10, 8, db=local_db)
    s = mine_spark(str(folder), 10, 8, str(tmp_path / "out"), spark=spark, db=spark_db)
    assert s.snapshot_id == local.snapshot_id and s.run_id is not None
    row_l, want = stored_run(local_db)
    row_s, got = stored_run(spark_db, s.run_id)
    assert want["phrases"] and want["spans"] and want["blocks"] and want["block_spans"]
    for key in want:
        assert got[key] == want[key], key
    for key in ("sigma", "min_len", "phrases", "covered_tokens", "coverage"):
        assert row_s[key] == row_l[key], key
    assert row_s["summary"]["engine"] == "spark"
    # the result files are the local engine's too; their summary names the stored run
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["run_id"] == s.run_id and summary["snapshot_id"] == local.snapshot_id
    local_files = tmp_path / "lf"
    mine(str(folder), 10, 8, db=local_db, out=str(local_files))
    for name in ("phrases.parquet", "documents.parquet", "sites.parquet", "blocks.parquet", "block_spans.parquet"):
        assert (local_files / name).read_bytes() == (tmp_path / "out" / name).read_bytes(), name
    # mined again into the same store: the snapshot is found, a second run added
    s2 = mine_spark(str(folder), 10, 8, None, spark=spark, db=spark_db)
    assert s2.run_id != s.run_id and stored_run(spark_db, s2.run_id)[1] == got
    # the dashboard opens the Spark run: its phrases and a document's highlighted spans
    phrases_page_shows(spark_db, s.snapshot_id, pl.read_parquet(tmp_path / "out" / "phrases.parquet")["phrase"][0])


def test_spark_refuses_bad_shards(spark, tmp_path):
    folder = write_shards(str(tmp_path / "a"), ["x y z"] * 6, [2, 4])
    with open(os.path.join(folder, "part-001.parquet"), "wb") as fh:
        fh.write(b"PAR1 this is not parquet")
    with pytest.raises(BoilerscopeError, match="part-001.parquet is not a readable Parquet shard"):
        mine_spark(folder, 2, 2, str(tmp_path / "out"), spark=spark)
    other = write_shards(str(tmp_path / "b"), ["x y z"] * 6, [3])
    pq.write_table(pa.table({"body": ["x"]}), os.path.join(other, "part-009.parquet"))
    with pytest.raises(BoilerscopeError, match="part-009.parquet has the columns body"):
        mine_spark(other, 2, 2, str(tmp_path / "out"), spark=spark)
    dup = write_shards(str(tmp_path / "c"), ["x y z"] * 4, [2], doc_ids=[1, 2, 3, 1])
    with pytest.raises(BoilerscopeError, match="doc_id 1 appears more than once"):
        mine_spark(dup, 2, 2, str(tmp_path / "out"), spark=spark)
    assert not os.path.exists(tmp_path / "out")


def test_cli_engine_spark(cli, tmp_path):
    rng = random.Random(1)
    texts = [f"Menu home about contact. {' '.join(f'w{rng.randint(0, 999)}' for _ in range(20))} "
             "All rights reserved by the example company" for _ in range(30)]
    write_shards(str(tmp_path / "in"), texts, [7, 19], doc_ids=list(range(100, 130)))
    status, out, err = cli("mine", "in", "--engine", "spark", "--master", "local[1]", "--sigma", 5,
                           "--min-len", 4, "--out", "res", "--quiet")
    assert status == 0, err
    summary = json.loads((tmp_path / "res" / "summary.json").read_text())
    assert summary["engine"] == "spark" and summary["master"] == "local[1]"
    assert summary["spark"]["step4"] == "partitioned"  # the default on Spark
    phrases = pl.read_parquet(tmp_path / "res" / "phrases.parquet")["phrase"].to_list()
    assert "all rights reserved by the example company" in phrases
    assert "WARN" not in err and "log4j" not in err, err  # Spark's own log goes to a file
    dup = write_shards(str(tmp_path / "dup"), texts[:4], [2], doc_ids=[5, 6, 7, 5])
    assert_one_line_error(*cli("mine", dup, "--engine", "spark", "--master", "local[1]", "--out", "r3", "--quiet"),
                          "doc_id 5 appears more than once")
    assert not (tmp_path / "r3").exists()
    assert_one_line_error(*cli("mine", "in", "--engine", "spark", "--quiet"), "--out DIR or --db STORE")
    # --no-partitioned --db: step 4 and the ingest on the driver; the run goes
    # into a store, listed by 'runs'
    status, out, err = cli("mine", "in", "--engine", "spark", "--master", "local[1]", "--sigma", 5,
                           "--min-len", 4, "--db", "s.duckdb", "--out", "res2", "--no-partitioned", "--quiet")
    assert status == 0 and "stored in s.duckdb" in out, err
    assert json.loads((tmp_path / "res2" / "summary.json").read_text())["spark"]["step4"] == "driver"
    assert pl.read_parquet(tmp_path / "res2" / "phrases.parquet")["phrase"].to_list() == phrases
    status, out, err = cli("runs", "--db", "s.duckdb")
    assert status == 0 and "bloomspan" in out, err
    assert_one_line_error(*cli("mine", "in", "--engine", "spark", "--templates", "--out", "r2", "--quiet"),
                          "--templates")


def test_spark_submit_runs_the_job_as_the_readme_says(tmp_path):
    """spark-submit with the package as a zip (the cluster recipe of docs/spark.md,
    here with a local master)."""
    import shutil
    import subprocess
    import sys
    import zipfile
    zpath = tmp_path / "boilerscope.zip"
    with zipfile.ZipFile(zpath, "w") as z:
        for folder, _, files in os.walk(os.path.join(ROOT, "engine")):
            for name in files:
                if name.endswith(".py"):
                    full = os.path.join(folder, name)
                    z.write(full, os.path.relpath(full, ROOT))
    submit = shutil.which("spark-submit", path=os.path.dirname(sys.executable))
    assert submit, "spark-submit comes with pyspark"
    texts = [f"Intro {i}. Shared footer line of every page on this site here." for i in range(12)]
    write_shards(str(tmp_path / "in"), texts, [5], doc_ids=list(range(12)))
    env = {**os.environ, "PYSPARK_PYTHON": sys.executable, "PYTHONPATH": ""}
    p = subprocess.run([submit, "--master", "local[1]", "--py-files", str(zpath),
                        os.path.join(ROOT, "engine", "__main__.py"), "mine", str(tmp_path / "in"),
                        "--engine", "spark", "--out", str(tmp_path / "res"), "--sigma", "3", "--min-len", "4"],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    phrases = pl.read_parquet(tmp_path / "res" / "phrases.parquet")
    assert phrases["phrase"].to_list() == ["shared footer line of every page on this site here"]
    assert phrases["df"].to_list() == [12]


# --- step 4 partitioned (engine/partitioned.py on the executors) -----------

def partitioned_files(out):
    return {name: pl.read_parquet(os.path.join(out, f"{name}.parquet"))
            for name in ("phrases", "documents", "sites", "blocks", "block_spans")}


@settings(max_examples=5, deadline=None, suppress_health_check=list(HealthCheck))
@given(docs=corpus, sigma=st.integers(2, 4), L=st.integers(2, 4), parts=st.sampled_from([1, 3, 64]),
       extra=st.integers(1, 4), data=st.data())
def test_partitioned_equals_the_definition(spark, tmp_path_factory, docs, sigma, L, parts, extra, data):
    cuts = data.draw(st.lists(st.integers(0, len(docs)), max_size=3))
    folder = write_shards(str(tmp_path_factory.mktemp("shards") / "in"), [" ".join(d) for d in docs], cuts)
    out = str(tmp_path_factory.mktemp("out") / "res")
    db = str(tmp_path_factory.mktemp("db") / "s.duckdb")
    s = mine_spark(folder, sigma, L, out, spark=spark, partitioned=True, parts=parts, context=L + extra, db=db)
    want, covered, _ = naive.mine(docs, sigma, L)
    files = partitioned_files(out)
    # the store: the same phrases and coverage; the spans' union is the mask, each span its phrase's text
    masks, nonmax = store_spans(db, s.run_id)
    assert [int(m.sum()) for m in masks] == covered
    stored = stored_phrases(db, s.run_id, True)
    assert {tuple(p.split(" ")): (d, o) for p, _, d, o, _ in stored} == want
    for phrase, _, _, _, positions in stored:  # every occurrence, at its place (doc_id = row number here)
        gram = tuple(phrase.split(" "))
        assert sorted(positions) == [(i, k) for i, d in enumerate(docs) for k in range(len(d) - len(gram) + 1)
                                     if tuple(d[k:k + len(gram)]) == gram]
    for phrase, length, df, occ, positions in nonmax:  # the L-grams explaining the rest: exact df, every occurrence
        gram = tuple(phrase.split(" "))
        where = [(i, k) for i, d in enumerate(docs) for k in range(len(d) - L + 1) if tuple(d[k:k + L]) == gram]
        assert length == L and df == len({i for i, _ in where}) >= sigma and occ == len(where)
        assert sorted(positions) == where
    got = files["phrases"]
    assert {tuple(p.split(" ")): (d, o) for p, d, o in got.select("phrase", "df", "occurrences").rows()} == want
    assert files["documents"]["doc_id"].to_list() == list(range(len(docs)))
    assert files["documents"]["covered_tokens"].to_list() == covered
    assert s.covered_tokens == sum(covered) and s.spark["step4"] == "partitioned"
    # the blocks: the literal definition (tests/naive.py)
    want_spans, want_blocks, want_of = naive.block_files(docs, sigma, L, got["phrase"].to_list())
    assert files["block_spans"].select("block_id", "doc_id", "start", "end").rows() == want_spans
    assert files["blocks"].select("covered_tokens", "documents", "text").rows() == want_blocks
    assert dict(got.select("phrase", "block_id").rows()) == want_of and s.blocks == len(want_blocks)


def stored_phrases(db, run_id, maximal):
    """(phrase, length, df, occurrences, [(doc_id, token_pos)]) of a
    stored run's maximal (or other) phrases."""
    from engine.store import Store
    with Store(db, read_only=True) as st:
        sid = st.run(run_id)["snapshot_id"]
        rows = st.query("SELECT p.phrase, p.length, p.df, p.occurrences, list(d.doc_id) AS d,"
                        " list(o.token_pos) AS k FROM run_phrases p LEFT JOIN run_occurrences o"
                        " USING (run_id, phrase_id) LEFT JOIN documents d ON d.snapshot_id = ?"
                        " AND d.doc_index = o.doc_index WHERE run_id = ? AND p.maximal = ? GROUP BY ALL",
                        [sid, run_id, maximal]).rows()
    return [(p, n, d, o, [(a, b) for a, b in zip(ds, ks) if a is not None]) for p, n, d, o, ds, ks in rows]


def store_spans(db, run_id):
    """Each document's mask (by doc_id) rebuilt from a stored run's spans (asserting
    that every span holds its phrase's tokens, with the characters of its
    first and last token), and the run's non-maximal phrases."""
    import numpy as np
    from engine.store import Store
    with Store(db, read_only=True) as st:
        row = st.run(run_id)
        sid = row["snapshot_id"]
        arrays, vocab = st.arrays(sid), st.vocabulary(sid)
        offsets = np.asarray(arrays.doc_offsets)
        masks = [np.zeros(int(b - a), bool) for a, b in zip(offsets[:-1], offsets[1:])]
        spans = st.query("SELECT s.doc_index, s.token_start, s.token_end, s.char_start, s.char_end, p.phrase"
                         " FROM run_spans s JOIN run_phrases p USING (run_id, phrase_id) WHERE run_id = ?",
                         [run_id]).rows()
        for d, a, e, cs, ce, phrase in spans:
            base = int(offsets[d])
            assert " ".join(vocab[t] for t in arrays.tokens[base + a:base + e]) == phrase
            assert (cs, ce) == (int(arrays.span_start[base + a]), int(arrays.span_end[base + e - 1]))
            masks[d][a:e] = True
        n = int(offsets[-1])
        assert np.array_equal(~st.run_coverage_mask(run_id, sid, n).astype(bool), np.concatenate(masks + [
            np.zeros(0, bool)]))
        ids = st.documents_meta(sid)["doc_id"].to_list()
    return [masks[i] for i in np.argsort(ids, kind="stable")], stored_phrases(db, run_id, False)


def test_partitioned_run_in_the_store(spark, tmp_path):
    """``--partitioned --db``: the store gets the local engine's maximal
    phrases with every occurrence, per-document coverage, blocks and block
    spans (row for row, JSONL shards whose doc_ids are not in snapshot
    order), the same coverage mask from its spans, and the dashboard opens it."""
    folder = demo_jsonl(tmp_path)
    local_db, spark_db = str(tmp_path / "local.duckdb"), str(tmp_path / "spark.duckdb")
    local = mine(str(folder), 10, 8, db=local_db)
    s = mine_spark(str(folder), 10, 8, str(tmp_path / "out"), spark=spark, db=spark_db, partitioned=True,
                   parts=3, context=12)
    assert s.run_id is not None and s.spark["rounds"] >= 2 and s.spark["snapshot_stored"]
    # the snapshot the executors wrote: the local ingest's documents, tokens, characters and df
    got_snap, want_snap = snapshot_content(spark_db, s.snapshot_id), snapshot_content(local_db, local.snapshot_id)
    assert got_snap == want_snap and s.snapshot_id != local.snapshot_id
    row_l, want = stored_run(local_db)
    row_s, got = stored_run(spark_db, s.run_id)
    for key in ("documents", "blocks", "block_spans", "phrase_blocks"):
        assert got[key] == want[key], key
    maximal = lambda rows: [r for r in rows if r[-1]]  # noqa: E731
    assert maximal(got["phrases"]) == maximal(want["phrases"]) and want["phrases"]
    names = {r[0] for r in maximal(want["phrases"])}
    assert [o for o in got["occurrences"] if o[0] in names] == [o for o in want["occurrences"] if o[0] in names]
    for key in ("sigma", "min_len", "phrases", "covered_tokens", "coverage"):
        assert row_s[key] == row_l[key], key
    masks, nonmax = store_spans(spark_db, s.run_id)
    store_spans(local_db, row_l["run_id"])
    assert nonmax and all(length == 8 for _, length, _, _, _ in nonmax)
    summary = json.loads((tmp_path / "out" / "summary.json").read_text())
    assert summary["run_id"] == s.run_id and summary["snapshot_id"] == s.snapshot_id
    assert pl.read_parquet(tmp_path / "out" / "phrases.parquet").height == row_s["phrases"]
    # a store only (no --out), the shards cut otherwise: the snapshot found by its id, a second run,
    # the same rows, no staging left beside the store
    spark.conf.set("spark.sql.files.maxPartitionBytes", "65536")
    try:
        s2 = mine_spark(str(folder / "part-*.jsonl"), 10, 8, None, spark=spark, db=spark_db, partitioned=True)
    finally:
        spark.conf.unset("spark.sql.files.maxPartitionBytes")
    assert s2.spark["partitions"] > s.spark["partitions"]
    assert s2.snapshot_id == s.snapshot_id and not s2.spark["snapshot_stored"] and s2.run_id != s.run_id
    assert stored_run(spark_db, s2.run_id)[1] == got
    assert not [n for n in os.listdir(tmp_path) if n.startswith(".boilerscope-spark-")]
    phrases_page_shows(spark_db, s.snapshot_id, pl.read_parquet(tmp_path / "out" / "phrases.parquet")["phrase"][0])


def test_partitioned_gives_the_local_files(spark, tmp_path):
    """The demo's pages in three uneven shards: the local engine's phrases
    (block_id too), documents, sites, blocks and block spans, row for row,
    with a few parts, many parts (more than the seeds of most), and a small
    first context (several rounds)."""
    _, _, _, folder = demo_shards(tmp_path)
    local = mine(str(folder), 10, 8, db=str(tmp_path / "x.duckdb"), out=str(tmp_path / "local"))
    want = partitioned_files(str(tmp_path / "local"))
    for parts, context in ((2, None), (200, 12)):
        out = str(tmp_path / f"p{parts}")
        s = mine_spark(str(folder), 10, 8, out, spark=spark, partitioned=True, parts=parts, context=context)
        got = partitioned_files(out)
        for name in want:
            assert got[name].equals(want[name]), (name, parts)
        for key in ("documents", "tokens", "covered_tokens", "coverage", "phrases", "blocks"):
            assert getattr(s, key) == getattr(local.summary, key), key
        assert s.spark["parts"] == parts and s.spark["rounds"] >= (3 if context else 1)
        assert all(n.endswith(".parquet") for n in os.listdir(os.path.join(out, "phrases.parquet")))


def test_partitioned_skewed_repeats(spark, tmp_path):
    """One site holds almost all the repeated text (one seed with most
    occurrences), the other sites a little each: exact for 1 and 64 parts."""
    rng = random.Random(5)
    nav = "home products pricing docs blog careers contact us sign in".split()
    docs = [nav + [f"w{rng.randint(0, 40)}" for _ in range(8)] + nav[:4] for _ in range(60)]
    docs += [["cookie", "notice", "we", "use", "cookies", f"x{k}"] for k in range(6)]
    sites = ["big.example"] * 60 + [f"s{k % 3}.example" for k in range(6)]
    folder = write_shards(str(tmp_path / "in"), [" ".join(d) for d in docs], [20, 50], sites=sites)
    want, covered, _ = naive.mine(docs, 3, 4)
    for parts in (1, 64):
        out = str(tmp_path / f"o{parts}")
        mine_spark(folder, 3, 4, out, spark=spark, partitioned=True, parts=parts, context=6)
        files = partitioned_files(out)
        got = {tuple(p.split(" ")): (d, o) for p, d, o in files["phrases"].select("phrase", "df", "occurrences").rows()}
        assert got == want and files["documents"]["covered_tokens"].to_list() == covered
        assert files["sites"].filter(pl.col("site") == "big.example")["documents"].to_list() == [60]


def test_partitioned_refuses_bad_shards(spark, tmp_path):
    folder = write_shards(str(tmp_path / "a"), ["x y z"] * 6, [2, 4])
    with open(os.path.join(folder, "part-001.parquet"), "wb") as fh:
        fh.write(b"PAR1 this is not parquet")
    with pytest.raises(BoilerscopeError, match="part-001.parquet is not a readable Parquet shard"):
        mine_spark(folder, 2, 2, str(tmp_path / "out"), spark=spark, partitioned=True)
    with pytest.raises(BoilerscopeError, match="part-001.parquet is not a readable Parquet shard"):
        mine_spark(folder, 2, 2, None, spark=spark, partitioned=True, db=str(tmp_path / "s.duckdb"))
    assert not os.path.exists(tmp_path / "out") and not os.path.exists(tmp_path / "s.duckdb")


def big_corpus(folder, n_docs, sites=8, token_chars=300):
    """n_docs documents; site s's template (450 + 20 s tokens of ~300
    characters) opens each of its documents, three tokens of its own follow.
    Returns the templates' lengths and the bytes of their text in all documents."""
    os.makedirs(folder, exist_ok=True)
    lengths = [450 + 20 * s for s in range(sites)]
    tpl = [" ".join(f"s{s}t{i}" + "x" * token_chars for i in range(lengths[s])) for s in range(sites)]
    for k in range(4):
        ids = range(k * n_docs // 4, (k + 1) * n_docs // 4)
        pq.write_table(pa.table({"doc_id": list(ids), "url": [f"https://site{d % sites}.org/{d}" for d in ids],
                                 "text": [tpl[d % sites] + f" unique{d} words{d} here{d}" for d in ids]}),
                       os.path.join(folder, f"part-{k}.parquet"), row_group_size=32)
    return lengths, sum(len(tpl[d % sites]) for d in range(n_docs))


def test_partitioned_driver_memory_below_the_segments(tmp_path):
    """Local mode with spark.driver.memory=512m (the JVM that also runs the
    executors) on a corpus whose segments (the repeated text) are over 600 MB:
    the exact answer, the driver's Python process far below the segments.
    The driver path (segments collected onto the driver) fails here."""
    import subprocess
    import sys
    n = 4000
    lengths, repeated_bytes = big_corpus(str(tmp_path / "in"), n)
    cmd = [sys.executable, "-m", "engine", "mine", "in", "--engine", "spark", "--master", "local[2]",
           "--partitioned", "--conf", "spark.driver.memory=512m", "--sigma", "10", "--min-len", "8",
           "--out", "res", "--db", "s.duckdb", "--quiet"]
    p = subprocess.run(cmd, capture_output=True, text=True, cwd=tmp_path, timeout=1200)
    assert p.returncode == 0, p.stderr[-2000:]
    summary = json.loads((tmp_path / "res" / "summary.json").read_text())
    sp = summary["spark"]
    # the segments are the templates (a unique token may join one: the filter's false positives)
    assert sum(lengths[d % 8] for d in range(n)) <= sp["segment_tokens"] <= sum(lengths[d % 8] + 3 for d in range(n))
    assert repeated_bytes > 600 << 20
    assert sp["driver_heap_bytes"] <= 512 << 20
    # the driver's Python grew by at most the filter and small results while the job ran
    assert sp["driver_python_peak_rss_bytes"] - sp["driver_python_start_rss_bytes"] < 96 << 20, sp
    assert sp["driver_python_peak_rss_bytes"] < repeated_bytes
    phrases = pl.read_parquet(tmp_path / "res" / "phrases.parquet")
    assert sorted(phrases["length"].to_list()) == lengths
    assert set(phrases["df"].to_list()) == {n // 8} and set(phrases["sites"].to_list()) == {1}
    documents = pl.read_parquet(tmp_path / "res" / "documents.parquet")
    assert documents["covered_tokens"].to_list() == [lengths[d % 8] for d in range(n)]
    # --db: the executors wrote the snapshot (its text is the repeated text and more), the driver
    # copied it in a part at a time, DuckDB capped: its Python stayed far below the text
    print("driver memory", {k: v for k, v in sp.items() if k.startswith("driver")})
    assert sp["driver_python_store_peak_rss_bytes"] - sp["driver_python_start_rss_bytes"] < 256 << 20, sp
    assert sp["driver_python_store_peak_rss_bytes"] < repeated_bytes, sp
    from engine.store import Store
    with Store(str(tmp_path / "s.duckdb"), read_only=True) as st:
        assert st.run(summary["run_id"])["covered_tokens"] == sum(lengths[d % 8] for d in range(n))
        assert st.snapshots()["documents"].to_list() == [n]


def test_partitioned_task_failure_is_retried(tmp_path):
    """A phase C task fails once (Spark retries it: local[2,4]): the answer
    is unchanged."""
    import subprocess
    import sys
    docs = [f"intro {i} the shared footer of every page here and there {i % 3}".split() for i in range(30)]
    write_shards(str(tmp_path / "in"), [" ".join(d) for d in docs], [10, 20])
    flag, part = tmp_path / "fail-once", tmp_path / "fail-part"
    flag.write_text("")
    part.write_text("")
    env = {**os.environ, "BOILERSCOPE_SPARK_FAIL_ONCE": str(flag), "BOILERSCOPE_SPARK_FAIL_PART": str(part)}
    p = subprocess.run([sys.executable, "-m", "engine", "mine", "in", "--engine", "spark", "--master", "local[2,4]",
                        "--partitioned", "--sigma", "3", "--min-len", "3", "--out", "res", "--db", "s.duckdb",
                        "--quiet"], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=600)
    assert p.returncode == 0, p.stderr[-2000:]
    assert not flag.exists() and not part.exists()  # both failures happened
    assert "stored in s.duckdb" in p.stdout
    want, covered, _ = naive.mine(docs, 3, 3)
    files = partitioned_files(str(tmp_path / "res"))
    got = {tuple(p.split(" ")): (d, o) for p, d, o in files["phrases"].select("phrase", "df", "occurrences").rows()}
    assert got == want and files["documents"]["covered_tokens"].to_list() == covered
    # the store: the snapshot written again by the retried task, whole; the same phrases and mask
    run_id = json.loads((tmp_path / "res" / "summary.json").read_text())["run_id"]
    masks, _ = store_spans(str(tmp_path / "s.duckdb"), run_id)
    assert [int(m.sum()) for m in masks] == covered
    assert {tuple(p.split(" ")): (d, o) for p, _, d, o, _ in stored_phrases(str(tmp_path / "s.duckdb"), run_id,
                                                                            True)} == want
    content, _, row = snapshot_content(str(tmp_path / "s.duckdb"), json.loads(
        (tmp_path / "res" / "summary.json").read_text())["snapshot_id"])
    assert sorted(content) == list(range(30)) and row[0][:2] == (30, sum(len(d) for d in docs))
    assert all(content[i][3] == tuple(d) for i, d in enumerate(docs))


def test_partitioned_faults_sigma_and_a_vanished_shard(spark, tmp_path, monkeypatch):
    """sigma above the document count: the local engine's answer (nothing
    repeats), a warning; sigma 1 with --partitioned: step 4 on the driver,
    the definition's answer; a shard removed between the footers' check and
    Spark's read: one line naming it, no result folder."""
    import engine.spark as es
    folder = write_shards(str(tmp_path / "a"), ["x y z w"] * 6, [2, 4])
    for partitioned in (True, False):
        s = mine_spark(folder, 7, 2, str(tmp_path / f"s{partitioned}"), spark=spark, partitioned=partitioned)
        assert s.phrases == 0 and s.covered_tokens == 0 and s.documents == 6
    docs = [["a", "b", "c"], ["a", "b"], ["c", "a", "b", "c"]]
    one = write_shards(str(tmp_path / "one"), [" ".join(d) for d in docs], [1])
    s = mine_spark(one, 1, 2, str(tmp_path / "o1"), spark=spark, partitioned=True)
    want, covered, _ = naive.mine(docs, 1, 2)
    got = pl.read_parquet(tmp_path / "o1" / "phrases.parquet")
    assert {tuple(p.split(" ")): (d, o) for p, d, o in got.select("phrase", "df", "occurrences").rows()} == want
    assert s.covered_tokens == sum(covered)
    checked = es.check_shards

    def check_then_remove(source, paths):
        offsets = checked(source, paths)
        os.remove(os.path.join(folder, "part-001.parquet"))
        return offsets
    monkeypatch.setattr(es, "check_shards", check_then_remove)
    with pytest.raises(BoilerscopeError, match="part-001.parquet") as err:
        mine_spark(folder, 2, 2, str(tmp_path / "out"), spark=spark, partitioned=True)
    assert "\n" not in str(err.value)
    assert not os.path.exists(tmp_path / "out")
