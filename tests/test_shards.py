"""Sharded snapshots (a folder or a glob of Parquet/JSONL shards), streamed.

The streamed reader must give exactly what one file gives: the same token
ids, spans, vocabulary, document frequencies and snapshot id, whatever the
cut into shards and chunks; bad shards are named in one line and leave the
store as it was.
"""
import os

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.api import ingest, mine
from engine.snapshot import SnapshotReader, load
from engine.store import Store
from tests.support import (assert_one_line_error, cut, documents, leftovers, store_state, write_compressed_jsonl,
                           write_hf_dataset, write_jsonl, write_parquet, write_wet)


def gathered(reader):
    parts = list(reader.chunks())
    return (np.concatenate([c.tokens for c in parts]), np.concatenate([c.n_tokens for c in parts]),
            np.concatenate([c.span_start for c in parts]), np.concatenate([c.span_end for c in parts]),
            list(reader.vocab), reader.df.copy(), reader.snapshot_id)


def same(a, b):
    for x, y in zip(a, b):
        if isinstance(x, np.ndarray):
            assert np.array_equal(x, y)
        else:
            assert x == y


@settings(max_examples=25, deadline=None)
@given(n=st.integers(1, 40), seed=st.integers(0, 10**6), data=st.data())
def test_any_cut_into_shards_and_chunks_reads_as_one_file(tmp_path_factory, n, seed, data):
    d = tmp_path_factory.mktemp("cut")
    docs = documents(n, seed)
    write_parquet(d / "one.parquet", docs)
    whole = gathered(SnapshotReader(str(d / "one.parquet")))
    sizes = data.draw(st.lists(st.integers(0, n), max_size=4))
    shards = d / "shards"
    shards.mkdir()
    for i, part in enumerate(cut(docs, sizes)):
        if part:
            write_parquet(shards / f"part-{i:03d}.parquet", part, row_group=data.draw(st.integers(1, 8)))
    rows = data.draw(st.integers(1, 9))
    same(gathered(SnapshotReader(str(shards), _chunk_rows=rows)), whole)
    same(gathered(SnapshotReader(str(d / "one.parquet"), _chunk_rows=rows)), whole)


def test_large_documents_come_in_chunks_of_the_chunk_size(tmp_path):
    """Parquet rows of 150 KB: a chunk holds about chunk_bytes of them (it
    held at least 1,024 rows, 150 MB, and the store's capped ingest of
    4,000 such pages failed with DuckDB's "failed to pin block")."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    word = "x" * 299
    texts = [" ".join(f"w{i}{word}" for i in range(500)) + f" end{d}" for d in range(60)]
    pq.write_table(pa.table({"doc_id": list(range(60)), "text": texts}), tmp_path / "big.parquet")
    reader = SnapshotReader(str(tmp_path / "big.parquet"), chunk_bytes=1 << 20)
    rows = [c.table.num_rows for c in reader.chunks()]
    assert sum(rows) == 60 and max(rows) <= 8  # 1 MB / 150 KB
    whole = gathered(SnapshotReader(str(tmp_path / "big.parquet")))
    assert whole[-1] == reader.snapshot_id  # the same snapshot, however chunked


def test_jsonl_shards_and_a_glob_read_as_the_parquet_file(tmp_path):
    docs = documents(120, seed=3)
    write_parquet(tmp_path / "one.parquet", docs)
    whole = gathered(SnapshotReader(str(tmp_path / "one.parquet")))
    (tmp_path / "j").mkdir()
    for i, part in enumerate(cut(docs, [50, 1, 30])):
        write_jsonl(tmp_path / "j" / f"part-{i}.jsonl", part)
    same(gathered(SnapshotReader(str(tmp_path / "j"), _chunk_rows=7)), whole)
    (tmp_path / "p").mkdir()
    for i, part in enumerate(cut(docs, [60])):
        write_parquet(tmp_path / "p" / f"crawl-{i}.parquet", part)
    (tmp_path / "p" / "notes.txt").write_text("not a shard")
    same(gathered(SnapshotReader(str(tmp_path / "p" / "crawl-*.parquet"))), whole)
    assert len(SnapshotReader(str(tmp_path / "p")).paths) == 2


def mines_alike(parquet, other, work):
    """Mining ``other`` gives the snapshot id and the very result files of
    mining the same documents as ``parquet`` (sigma 4, L 3)."""
    one = mine(str(parquet), 4, 3, db=str(work / "a.duckdb"), out=str(work / "a"))
    two = mine(str(other), 4, 3, db=str(work / "b.duckdb"), out=str(work / "b"))
    assert one.snapshot_id == two.snapshot_id
    for name in ("phrases.parquet", "documents.parquet", "sites.parquet"):
        assert (work / "a" / name).read_bytes() == (work / "b" / name).read_bytes(), name


COMPRESSED = (".jsonl.gz", ".json.gz", ".jsonl.zst", ".json.zst", ".jsonl.bz2", ".json.bz2")


@pytest.mark.parametrize("suffix", COMPRESSED)
def test_compressed_jsonl_reads_as_the_parquet_file(tmp_path, suffix):
    """One compressed file and a folder of compressed shards give the Parquet
    file's token ids, spans, vocabulary, df and snapshot id."""
    docs = documents(150, seed=11)
    write_parquet(tmp_path / "one.parquet", docs)
    whole = gathered(SnapshotReader(str(tmp_path / "one.parquet")))
    write_compressed_jsonl(tmp_path / f"one{suffix}", docs)
    same(gathered(SnapshotReader(str(tmp_path / f"one{suffix}"), _chunk_rows=13)), whole)
    (tmp_path / "z").mkdir()
    for i, part in enumerate(cut(docs, [40, 0, 77])):
        if part:
            write_compressed_jsonl(tmp_path / "z" / f"part-{i}{suffix}", part)
    same(gathered(SnapshotReader(str(tmp_path / "z"))), whole)
    same(gathered(SnapshotReader(str(tmp_path / "z" / f"part-*{suffix}"))), whole)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10**6), data=st.data())
def test_mining_compressed_shards_gives_the_parquet_files_results(tmp_path_factory, seed, data):
    d = tmp_path_factory.mktemp("z")
    docs = documents(data.draw(st.integers(20, 80)), seed)
    write_parquet(d / "one.parquet", docs)
    suffix = data.draw(st.sampled_from(COMPRESSED))
    (d / "z").mkdir()
    for i, part in enumerate(cut(docs, data.draw(st.lists(st.integers(0, 30), max_size=3)))):
        if part:
            write_compressed_jsonl(d / "z" / f"part-{i:02d}{suffix}", part)
    mines_alike(d / "one.parquet", d / "z", d)


def test_bad_compressed_files_are_one_line_and_store_nothing(tmp_path, cli, stored):
    docs = documents(200, seed=4)
    write_compressed_jsonl(tmp_path / "ok.jsonl.gz", docs)
    data = (tmp_path / "ok.jsonl.gz").read_bytes()
    (tmp_path / "truncated.jsonl.gz").write_bytes(data[:len(data) // 2])
    write_compressed_jsonl(tmp_path / "ok.jsonl.zst", docs)
    zdata = (tmp_path / "ok.jsonl.zst").read_bytes()
    (tmp_path / "truncated.jsonl.zst").write_bytes(zdata[:len(zdata) // 2])
    write_jsonl(tmp_path / "plain.jsonl", docs)
    (tmp_path / "notgzip.jsonl.gz").write_bytes((tmp_path / "plain.jsonl").read_bytes())
    with pa.CompressedOutputStream(str(tmp_path / "notjson.jsonl.gz"), "gzip") as out:
        out.write(b"this is not JSON\n")
    (tmp_path / "mixed").mkdir()
    write_compressed_jsonl(tmp_path / "mixed" / "a.jsonl.gz", docs[:5])
    write_jsonl(tmp_path / "mixed" / "b.jsonl", docs[5:])
    before = store_state(stored)
    for name, words in (("truncated.jsonl.gz", ("truncated.jsonl.gz", "gzip")),
                        ("truncated.jsonl.zst", ("truncated.jsonl.zst", "zstd")),
                        ("notgzip.jsonl.gz", ("notgzip.jsonl.gz", "gzip")),
                        ("notjson.jsonl.gz", ("notjson.jsonl.gz",)),
                        ("mixed", ("several formats",))):
        assert_one_line_error(*cli("ingest", tmp_path / name, "--db", stored, "--quiet"), *words)
        assert_one_line_error(*cli("ingest", tmp_path / name, "--db", tmp_path / "new.duckdb", "--quiet"),
                              *words)
        assert not os.path.exists(tmp_path / "new.duckdb")
    assert store_state(stored) == before and leftovers(tmp_path) == []


def test_hugging_face_folders_read_as_the_parquet_file(tmp_path):
    """A save_to_disk folder (several Arrow files) and a DatasetDict (two
    splits, read in dataset_dict.json's order) read without the datasets
    library, as the same documents in Parquet."""
    import json
    docs = documents(90, seed=21)
    write_parquet(tmp_path / "one.parquet", docs)
    whole = gathered(SnapshotReader(str(tmp_path / "one.parquet")))
    write_hf_dataset(tmp_path / "hf", docs, shards=3)
    reader = SnapshotReader(str(tmp_path / "hf"), _chunk_rows=5)
    assert [os.path.basename(p) for p in reader.paths] == [f"data-0000{i}-of-00003.arrow" for i in range(3)]
    same(gathered(reader), whole)
    write_hf_dataset(tmp_path / "dd", docs[:60], shards=2, split="train")
    write_hf_dataset(tmp_path / "dd", docs[60:], shards=1, split="test")
    (tmp_path / "dd" / "dataset_dict.json").write_text(json.dumps({"splits": ["train", "test"]}))
    same(gathered(SnapshotReader(str(tmp_path / "dd"))), whole)
    mines_alike(tmp_path / "one.parquet", tmp_path / "hf", tmp_path)


def test_bad_hugging_face_folders_are_one_line(tmp_path, cli):
    import json
    docs = documents(20, seed=2)
    write_hf_dataset(tmp_path / "missing", docs, shards=2)
    os.remove(tmp_path / "missing" / "data-00001-of-00002.arrow")
    write_hf_dataset(tmp_path / "corrupt", docs)
    (tmp_path / "corrupt" / "data-00000-of-00001.arrow").write_bytes(b"ARROW1 not really")
    write_hf_dataset(tmp_path / "badstate", docs)
    (tmp_path / "badstate" / "state.json").write_text("{not json")
    write_hf_dataset(tmp_path / "escape", docs)
    (tmp_path / "escape" / "state.json").write_text(json.dumps({"_data_files": [{"filename": "../x.arrow"}]}))
    for name, words in (("missing", ("data-00001-of-00002.arrow",)), ("corrupt", ("data-00000-of-00001.arrow",)),
                        ("badstate", ("state.json",)), ("escape", ("x.arrow",))):
        assert_one_line_error(*cli("ingest", tmp_path / name, "--db", tmp_path / "s.duckdb", "--quiet"), *words)
        assert not os.path.exists(tmp_path / "s.duckdb")


def wet_documents(n, seed=0):
    """Documents as a WET file gives them: doc_id = position, url, no site."""
    return [{"doc_id": i, "url": d["url"], "text": d["text"]} for i, d in enumerate(documents(n, seed))]


@pytest.mark.parametrize("compressed", [True, False])
def test_wet_files_read_as_the_parquet_file(tmp_path, compressed):
    """One document per conversion record (warcinfo and metadata skipped),
    url from WARC-Target-URI, site its host, doc_id the position: the same
    snapshot id and results as the same documents in Parquet, as one file
    and as shards in name order."""
    docs = wet_documents(70, seed=8)
    write_parquet(tmp_path / "one.parquet", docs)
    whole = gathered(SnapshotReader(str(tmp_path / "one.parquet")))
    suffix = ".warc.wet.gz" if compressed else ".warc.wet"
    write_wet(tmp_path / f"one{suffix}", docs, compressed)
    same(gathered(SnapshotReader(str(tmp_path / f"one{suffix}"), _chunk_rows=9)), whole)
    (tmp_path / "cc").mkdir()
    for i, part in enumerate(cut(docs, [25, 30])):
        write_wet(tmp_path / "cc" / f"CC-MAIN-2024-{i:05d}{suffix}", part, compressed)
    same(gathered(SnapshotReader(str(tmp_path / "cc"))), whole)
    mines_alike(tmp_path / "one.parquet", tmp_path / "cc", tmp_path)


def test_wet_payloads_that_are_not_utf8_are_replaced_and_counted(tmp_path):
    from tests.support import wet_record
    data = b"".join([wet_record("conversion", "https://x.example/1", "fine text".encode(), 1),
                     wet_record("conversion", "https://x.example/2", b"caf\xe9 latin-1 text", 2)])
    (tmp_path / "x.warc.wet.gz").write_bytes(data)
    reader = SnapshotReader(str(tmp_path / "x.warc.wet.gz"))
    parts = list(reader.chunks())
    assert reader.replaced_payloads == 1 and reader.n_docs == 2
    assert sum(c.n_tokens.sum() for c in parts) > 0
    # the count is in the snapshot's row of the store
    import engine
    with engine.connect(str(tmp_path / "s.duckdb")) as bs:
        snap = bs.ingest(str(tmp_path / "x.warc.wet.gz"))
        assert snap.replaced_payloads == 1
        assert bs.snapshots().filter(pl.col("snapshot_id") == snap.snapshot_id)["replaced_payloads"].to_list() == [1]


def test_a_store_from_before_the_replaced_payloads_column_is_migrated(tmp_path):
    """A store whose snapshots table predates ``replaced_payloads`` (no format
    marker either) is recognised, and the column is added with 0."""
    import duckdb
    import engine
    db = str(tmp_path / "old.duckdb")
    with engine.connect(db) as bs:
        pq.write_table(pa.table({"text": ["a b c", "b c d"]}), tmp_path / "p.parquet")
        bs.ingest(str(tmp_path / "p.parquet"))
    con = duckdb.connect(db)
    con.execute("ALTER TABLE snapshots DROP COLUMN replaced_payloads")
    con.execute("DROP TABLE boilerscope_meta")
    con.close()
    with engine.connect(db) as bs:
        assert bs.snapshots()["replaced_payloads"].to_list() == [0]


def test_bad_wet_files_are_one_line_and_store_nothing(tmp_path, cli):
    docs = wet_documents(30, seed=1)
    write_wet(tmp_path / "ok.warc.wet.gz", docs, compressed=False)
    raw = (tmp_path / "ok.warc.wet.gz").read_bytes()
    (tmp_path / "cut.warc.wet").write_bytes(raw[:len(raw) - 200])  # in the last record's headers
    (tmp_path / "cut10.warc.wet").write_bytes(raw[:len(raw) - 10])  # in its text
    from tests.support import wet_record
    (tmp_path / "info.warc.wet.gz").write_bytes(wet_record("warcinfo", None, b"software: x\r\n"))
    (tmp_path / "text.warc.wet.gz").write_bytes(b"just some text, not a WARC file at all\n" * 50)
    for name, words in (("cut.warc.wet", ("cut.warc.wet", "truncated", "byte")),
                        ("cut10.warc.wet", ("cut10.warc.wet", "truncated", "byte")),
                        ("info.warc.wet.gz", ("info.warc.wet.gz", "no conversion record")),
                        ("text.warc.wet.gz", ("text.warc.wet.gz",))):
        assert_one_line_error(*cli("ingest", tmp_path / name, "--db", tmp_path / "s.duckdb", "--quiet"), *words)
        assert not os.path.exists(tmp_path / "s.duckdb")


def test_warc_html_responses_keep_navigation_and_footers(tmp_path):
    """One document per HTML response (other records and content types
    skipped), its text extracted with the navigation and footer kept, the
    page's charset honoured; the same snapshot as those texts in Parquet."""
    import html as H
    from resiliparse.extract.html2text import extract_plain_text
    from tests.support import wet_record, warc_response
    pages = []
    for i in range(40):
        body = (f"<html><head><title>Page {i}</title><script>var x = {i};</script></head><body>"
                f"<nav>Home | Products | About us | Contact</nav><main><h1>Item {i}</h1><p>"
                f"{H.escape(documents(1, seed=i)[0]['text'])} café</p></main>"
                "<footer>© 2024 Example Shop · all rights reserved · privacy policy</footer></body></html>")
        pages.append((f"https://shop{i % 2}.example/p/{i}", body))
    parts = [wet_record("warcinfo", None, b"software: tests\r\n")]
    for i, (uri, body) in enumerate(pages):
        charset = "iso-8859-1" if i % 5 == 0 else "utf-8"
        parts.append(warc_response(uri, body.encode(charset, "xmlcharrefreplace"), f"text/html; charset={charset}", i))
        if i % 4 == 0:
            parts.append(warc_response(uri + ".png", b"\x89PNG not text", "image/png", 1000 + i))
    (tmp_path / "crawl.warc.gz").write_bytes(b"".join(parts))
    texts = [extract_plain_text(body, main_content=False) for _, body in pages]
    assert all("Home | Products" in t and "all rights reserved" in t and "café" in t and "var x" not in t
               for t in texts)
    write_parquet(tmp_path / "one.parquet", [{"doc_id": i, "url": uri, "text": t}
                                             for i, ((uri, _), t) in enumerate(zip(pages, texts))])
    same(gathered(SnapshotReader(str(tmp_path / "crawl.warc.gz"), _chunk_rows=6)),
         gathered(SnapshotReader(str(tmp_path / "one.parquet"))))
    run = mine(str(tmp_path / "crawl.warc.gz"), 20, 5, db=str(tmp_path / "w.duckdb"))
    assert any("home products about us contact" in p for p in run.phrases["phrase"].to_list())


def test_a_warc_without_html_responses_is_one_line(tmp_path, cli):
    from tests.support import warc_response
    (tmp_path / "images.warc.gz").write_bytes(warc_response("https://x.example/a.png", b"\x89PNG", "image/png"))
    assert_one_line_error(*cli("ingest", tmp_path / "images.warc.gz", "--db", tmp_path / "s.duckdb", "--quiet"),
                          "images.warc.gz", "no HTML response")
    assert not os.path.exists(tmp_path / "s.duckdb")


def test_ingest_and_mine_a_shard_folder_as_one_file(tmp_path):
    docs = documents(300, seed=5)
    write_parquet(tmp_path / "one.parquet", docs)
    (tmp_path / "shards").mkdir()
    for i, part in enumerate(cut(docs, [17, 150, 3])):
        write_parquet(tmp_path / "shards" / f"part-{i}.parquet", part, row_group=11)
    db = str(tmp_path / "s.duckdb")
    sid, created = ingest(str(tmp_path / "shards"), db)
    assert created
    # the same content from one file is the same snapshot
    assert ingest(str(tmp_path / "one.parquet"), db) == (sid, False)
    one = mine(str(tmp_path / "one.parquet"), 5, 3, db=str(tmp_path / "one.duckdb"))
    many = mine(str(tmp_path / "shards"), 5, 3, db=str(tmp_path / "many.duckdb"))
    assert one.summary.snapshot_id == many.summary.snapshot_id == sid
    assert one.phrases.equals(many.phrases)
    assert one.documents.equals(many.documents)
    with Store(db, read_only=True) as st:
        snap = load(str(tmp_path / "one.parquet"))
        arrays = st.arrays(sid)
        assert np.array_equal(arrays.tokens, snap.tokenized.tokens)
        assert np.array_equal(arrays.doc_offsets, snap.tokenized.doc_offsets)
        assert np.array_equal(arrays.span_start, snap.tokenized.span_start)
        assert st.vocabulary(sid) == snap.tokenized.vocab
        docs_stored = st.documents_meta(sid)
        assert docs_stored["doc_id"].to_list() == [d["doc_id"] for d in docs]
        assert st.document(sid, 299)["text"] == docs[299]["text"]


@pytest.fixture
def stored(tmp_path, cli):
    """A store holding one snapshot and one run (to check bad shards change nothing)."""
    write_parquet(tmp_path / "first.parquet", documents(40, seed=9))
    db = tmp_path / "s.duckdb"
    assert cli("mine", tmp_path / "first.parquet", "--db", db, "--sigma", 5, "--quiet")[0] == 0
    return db


def shard_folder(tmp_path, name, docs_lists):
    folder = tmp_path / name
    folder.mkdir()
    for i, docs in enumerate(docs_lists):
        write_parquet(folder / f"part-{i}.parquet", docs)
    return folder


def test_duplicate_doc_id_across_shards(tmp_path, cli, stored):
    docs = documents(30, seed=1)
    folder = shard_folder(tmp_path, "dup", [docs[:20], docs[15:]])
    before = store_state(stored)
    status, out, err = cli("ingest", folder, "--db", stored, "--quiet")
    assert_one_line_error(status, out, err, "doc_id 1105", "more than once", "part-0.parquet", "part-1.parquet")
    assert store_state(stored) == before
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("case", ["columns", "schema", "corrupt"])
def test_a_bad_shard_is_named_and_nothing_is_stored(tmp_path, cli, stored, case):
    docs = documents(30, seed=2)
    folder = shard_folder(tmp_path, "bad", [docs[:10], docs[10:20], docs[20:]])
    bad = folder / "part-2.parquet"
    if case == "columns":
        pq.write_table(pa.table({"doc_id": [1, 2], "body": ["a", "b"], "url": ["u", "v"]}), bad)
        words = ("part-2.parquet", "same columns")
    elif case == "schema":
        pq.write_table(pa.table({"doc_id": [1, 2], "url": ["u", "v"], "text": [1.5, 2.5]}), bad)
        words = ("part-2.parquet", "not strings")
    else:
        bad.write_bytes(b"PAR1" + os.urandom(500) + b"PAR1")
        words = ("part-2.parquet", "not a readable parquet")
    before = store_state(stored)
    assert_one_line_error(*cli("ingest", folder, "--db", stored, "--quiet"), *words)
    assert store_state(stored) == before
    assert leftovers(tmp_path) == []
    # a new store is not left behind half-made either
    assert_one_line_error(*cli("ingest", folder, "--db", tmp_path / "new.duckdb", "--quiet"), *words)
    assert not (tmp_path / "new.duckdb").exists() and not (tmp_path / "new.duckdb.arrays").exists()


def test_bad_sources(tmp_path, cli):
    (tmp_path / "empty").mkdir()
    assert_one_line_error(*cli("ingest", tmp_path / "empty", "--quiet"), "without .parquet or (compressed) .jsonl shards")
    assert_one_line_error(*cli("ingest", tmp_path / "nothing-*.parquet", "--quiet"), "matches no file")
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    write_parquet(mixed / "a.parquet", documents(3))
    write_jsonl(mixed / "b.jsonl", documents(3))
    assert_one_line_error(*cli("ingest", mixed, "--quiet"), "mixes shards of several formats (.jsonl, .parquet)")
    (mixed / "notes.txt").write_text("not a shard")
    assert_one_line_error(*cli("ingest", tmp_path / "mixed" / "*", "--quiet"), "notes.txt", "not a .parquet")
    only_empty = tmp_path / "only-empty"
    only_empty.mkdir()
    write_parquet(only_empty / "a.parquet", [])
    assert_one_line_error(*cli("ingest", only_empty, "--quiet"), "holds no documents")
    assert not (tmp_path / "boilerscope.duckdb").exists()


_URL_PART = st.text(alphabet="ab.:@[]1?#/é%-Z", max_size=12)


@settings(max_examples=1000, deadline=None)
@given(st.one_of(st.text(alphabet="hts:/.?#@[]:a1Bé-_%", max_size=30),
                 st.builds(lambda sc, net, rest: sc + net + rest,
                           st.sampled_from(["", "http://", "https://", "//", "http:/", "mailto:", "HTTP://"]),
                           _URL_PART, _URL_PART)))
def test_site_from_url_is_urllib_hostname(url):
    """The cached host of a URL's prefix is urllib's hostname of the whole URL."""
    from urllib.parse import urlsplit
    from engine.snapshot import url_host
    try:
        want = urlsplit(url if "//" in url else "//" + url).hostname or None
    except ValueError:
        want = None
    assert url_host(url) == (want if url else None)


def test_ingest_caps_the_buffer_pool_and_gives_it_back(tmp_path):
    """DuckDB's buffer pool is capped while an ingest runs (memory would grow
    with the input otherwise) and back to the default afterwards, also after
    a failed ingest."""
    import engine
    from engine.constants import INGEST_DUCKDB_MEMORY
    pq.write_table(pa.table({"text": ["a b c", "b c d"]}), tmp_path / "p.parquet")
    (tmp_path / "bad.parquet").write_bytes(b"PAR1 not parquet")
    with engine.connect(str(tmp_path / "s.duckdb")) as bs:
        limit = lambda: bs.store.scalar("SELECT current_setting('memory_limit')")  # noqa: E731
        default = limit()
        seen = []
        reader = SnapshotReader(str(tmp_path / "p.parquet"), on_bytes=lambda n: seen.append(limit()))
        bs.store.add_snapshot(reader)
        assert INGEST_DUCKDB_MEMORY == "512MB" and set(seen) == {"488.2 MiB"} and default != "488.2 MiB"
        assert limit() == default
        with pytest.raises(Exception):
            bs.ingest(str(tmp_path / "bad.parquet"))
        assert limit() == default


def test_a_store_from_before_blocks_is_migrated_and_mined_again(tmp_path):
    """A store without the block columns and tables (made before issue 24):
    recognised, the columns added (NULL for its runs), the tables created,
    and a new run stores its blocks; deleting a run deletes its blocks."""
    import duckdb
    import engine
    db = str(tmp_path / "old.duckdb")
    texts = [f"menu home about contact page {i} text {i * 3} footer all rights reserved" for i in range(12)]
    pq.write_table(pa.table({"text": texts}), tmp_path / "p.parquet")
    with engine.connect(db) as bs:
        bs.ingest(str(tmp_path / "p.parquet"))
        bs.mine(sigma=3, min_len=3)
    con = duckdb.connect(db)
    for stmt in ("ALTER TABLE run_phrases DROP COLUMN block_id", "ALTER TABLE run_templates DROP COLUMN block_id",
                 "DROP TABLE run_blocks", "DROP TABLE run_block_spans", "DROP TABLE boilerscope_meta"):
        con.execute(stmt)
    con.close()
    with engine.connect(db) as bs:
        run = bs.mine(sigma=3, min_len=3)
        st = bs.store
        ids = st.query("SELECT run_id, count(block_id) AS b, count(*) FILTER (maximal) AS m FROM run_phrases"
                       " GROUP BY run_id ORDER BY run_id").rows()
        assert ids[0][1] == 0 and ids[1][0] == run.run_id and ids[1][1] >= ids[1][2] > 0
        covered = st.scalar("SELECT sum(covered_tokens) FROM run_blocks WHERE run_id = ?", [run.run_id])
        assert covered == run.summary.covered_tokens > 0
        bs.delete_run(run.run_id)
        assert st.scalar("SELECT count(*) FROM run_block_spans") == 0


@pytest.mark.parametrize("suffix", [".jsonl", ".jsonl.gz", ".jsonl.zst"])
def test_an_empty_json_shard_holds_no_documents(tmp_path, suffix):
    """An empty JSONL shard (sharded exports write them) adds no document: the
    folder is the snapshot of the other shards; a folder of empty shards
    holds no documents (one line)."""
    docs = [{"url": f"https://a.com/{i}", "text": f"alpha beta gamma {i}"} for i in range(6)]
    for name, folder, parts in (("with", tmp_path / "with", [docs[:3], [], docs[3:]]),
                                ("without", tmp_path / "without", [docs[:3], docs[3:]]),
                                ("empty", tmp_path / "empty", [[], []])):
        folder.mkdir()
        for k, part in enumerate(parts):
            path = folder / f"part-{k}{suffix}"
            if suffix == ".jsonl":
                path.write_text("".join(__import__("json").dumps(d) + "\n" for d in part))
            else:
                write_compressed_jsonl(path, part)
    a = SnapshotReader(str(tmp_path / "with"))
    b = SnapshotReader(str(tmp_path / "without"))
    list(a.chunks()), list(b.chunks())
    assert a.snapshot_id == b.snapshot_id and a.n_docs == 6
    with pytest.raises(Exception, match="holds no documents"):
        list(SnapshotReader(str(tmp_path / "empty")).chunks())
