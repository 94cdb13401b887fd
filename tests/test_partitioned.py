"""The Spark job's partitioned step 4 (engine/partitioned.py), run in one
process with the same maps and reductions (``simulate``): the brute-force
oracle on small alphabets with several partition counts, first contexts and
input batches; skewed parts; more parts than seeds; the local engine's
phrases on real text.  The Spark wiring is tested in tests/test_spark.py."""
import os

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.api import mine
from engine.errors import BoilerscopeError
from engine.partitioned import covered_tokens, filter_buckets
from engine.simulate import simulate
from tests import naive
from tests.support import ROOT

corpus = st.lists(st.lists(st.sampled_from("abc"), max_size=16), min_size=1, max_size=12)


def answer(docs, sigma, L, **kw):
    phrases, covered, rounds = simulate([" ".join(d) for d in docs], sigma, L, **kw)
    got = {tuple(p.split(" ")): (d, o) for p, d, o in phrases.select("phrase", "df", "occurrences").rows()}
    return got, covered.tolist(), rounds


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(docs=corpus, sigma=st.integers(2, 4), L=st.integers(2, 4), parts=st.integers(1, 6),
       batches=st.integers(1, 3), extra=st.integers(1, 5))
def test_partitioned_equals_the_definition(docs, sigma, L, parts, batches, extra):
    got, covered, _ = answer(docs, sigma, L, parts=parts, batches=batches, context=L + extra)
    want, want_covered, _ = naive.mine(docs, sigma, L)
    assert got == want
    assert covered == want_covered


def test_long_phrases_take_rounds_and_stay_exact():
    # a 60-token block in 5 documents with varied fronts and tails: the seed at
    # its start grows past every context until it is doubled past 60
    block = [f"w{i}" for i in range(60)]
    docs = [[f"x{k}", f"y{k}"] + block + [f"z{k}"] for k in range(5)] + [block[:30], block[10:50]]
    got, covered, rounds = answer(docs, 3, 4, parts=3, context=5)
    want, want_covered, _ = naive.mine(docs, 3, 4)
    assert got == want and covered == want_covered
    assert rounds >= 3  # 5 -> 40 -> 320


def test_skewed_parts_and_more_parts_than_seeds():
    # one site's template in most documents, a little prose elsewhere: one
    # seed holds most occurrences; and 64 parts for a handful of seeds
    tpl = "home products about us contact cookie policy accept all".split()
    docs = [tpl + [f"d{k}", "x"] + tpl[:5] for k in range(40)] + [["a", "b", "c", "d"], ["a", "b", "c", "d"]]
    want, want_covered, _ = naive.mine(docs, 2, 3)
    for parts in (1, 2, 64):
        got, covered, _ = answer(docs, 2, 3, parts=parts, batches=3, context=4)
        assert got == want and covered == want_covered


def test_runs_of_one_token():
    docs = [["0"] * 40, ["0"] * 25 + ["1"] + ["0"] * 9, ["1", "0", "0", "0"]]
    want, want_covered, _ = naive.mine(docs, 2, 2)
    got, covered, _ = answer(docs, 2, 2, parts=2, context=3)
    assert got == want and covered == want_covered


def test_partitioned_gives_the_local_phrases_on_real_text(tmp_path):
    # the demo snapshot: every column of phrases.parquet but block_id, and
    # each document's covered tokens
    table = pq.read_table(os.path.join(ROOT, "data", "demo.parquet")).slice(0, 800)
    pq.write_table(table, tmp_path / "in.parquet")
    mine(str(tmp_path / "in.parquet"), 5, 8, db=str(tmp_path / "x.duckdb"), out=str(tmp_path / "local"))
    local = pl.read_parquet(tmp_path / "local" / "phrases.parquet").drop("block_id")
    docs = pl.read_parquet(tmp_path / "local" / "documents.parquet")
    texts = [t or "" for t in table.column("text").to_pylist()]
    sites = docs.sort("doc_id")["site"].to_list()
    phrases, covered, rounds = simulate(texts, 5, 8, parts=4, batches=3, context=16, sites=sites)
    assert local.height > 50 and rounds >= 2
    assert phrases.equals(local)
    assert covered.tolist() == docs["covered_tokens"].to_list()


@settings(max_examples=120, deadline=None, suppress_health_check=list(HealthCheck))
@given(docs=st.lists(st.lists(st.sampled_from("abcd"), max_size=18), min_size=2, max_size=12),
       sigma=st.integers(2, 4), L=st.integers(2, 4), parts=st.integers(1, 5), batches=st.integers(1, 3),
       extra=st.integers(1, 5))
def test_partitioned_blocks_equal_the_definition(docs, sigma, L, parts, batches, extra):
    """Phase D (engine/partitioned_blocks.py) against the literal definition:
    block_spans, each block's covered tokens, documents and representative,
    and each phrase's block_id."""
    phrases, _, _, blocks, spans = simulate([" ".join(d) for d in docs], sigma, L, parts=parts, batches=batches,
                                            context=L + extra, with_blocks=True)
    want_spans, want_blocks, want_of = naive.block_files(docs, sigma, L, phrases["phrase"].to_list())
    assert spans.select("block_id", "doc_id", "start", "end").rows() == want_spans
    assert blocks.select("covered_tokens", "documents", "text").rows() == want_blocks
    assert blocks["block_id"].to_list() == list(range(len(want_blocks)))
    assert dict(phrases.select("phrase", "block_id").rows()) == want_of
    counted = {}
    for k in want_of.values():
        counted[k] = counted.get(k, 0) + 1
    assert blocks["phrases"].to_list() == [counted.get(k, 0) for k in range(len(want_blocks))]


def test_partitioned_blocks_on_real_text(tmp_path):
    """The demo's first 1,500 pages: blocks.parquet, block_spans.parquet and
    phrases.parquet's block_id equal the local engine's files."""
    table = pq.read_table(os.path.join(ROOT, "data", "demo.parquet")).slice(0, 1500)
    pq.write_table(table, tmp_path / "in.parquet")
    mine(str(tmp_path / "in.parquet"), 5, 8, db=str(tmp_path / "x.duckdb"), out=str(tmp_path / "local"))
    local = {k: pl.read_parquet(tmp_path / "local" / f"{k}.parquet") for k in ("phrases", "blocks", "block_spans")}
    ids = table.column("doc_id").to_pylist()
    sites = (pl.DataFrame({"doc_id": ids}).join(pl.read_parquet(tmp_path / "local" / "documents.parquet"),
                                                on="doc_id", how="left", maintain_order="left")["site"].to_list())
    phrases, _, _, blocks, spans = simulate([t or "" for t in table.column("text").to_pylist()], 5, 8, parts=4,
                                            batches=3, context=16, sites=sites, with_blocks=True, doc_ids=ids)
    assert local["blocks"].height > 100
    assert phrases.equals(local["phrases"]) and blocks.equals(local["blocks"]) and spans.equals(local["block_spans"])


def test_filter_and_coverage_helpers():
    from engine.partitioned import CHUNK, chunk_bits, count_chunks, filter_has
    from engine.kernels.filters import count_buckets
    rng = np.random.default_rng(3)
    h = rng.integers(-2**63, 2**63 - 1, 3000, dtype=np.int64).view(np.uint64)
    assert filter_buckets(10) == CHUNK and filter_buckets(10**9) == 64 << 20 and filter_buckets(10**6) == 4 << 20
    # two partitions' counters: h[:1000] three times in each (6 >= sigma 5), the rest once
    parts = []
    for _ in range(2):
        c = np.zeros(2 * CHUNK, np.uint8)
        for _ in range(3):
            count_buckets(c, h[:1000])
        count_buckets(c, h[1000:])
        parts.append(dict(count_chunks(c)))
    bits = np.concatenate([chunk_bits([p[k] for p in parts], 5) for k in range(2)])
    assert filter_has(bits, h[:1000]).all()  # never a frequent one lost
    assert filter_has(bits, h[1000:]).mean() < 0.01
    # saturation: 300 counts stay 255, and pass sigma 400 (a bound, not a count)
    c = np.zeros(CHUNK, np.uint8)
    for _ in range(300):
        count_buckets(c, h[:1])
    assert c.max() == 255 and filter_has(chunk_bits([c], 400), h[:1]).all()
    doc, cov = covered_tokens(np.array([1, 0, 1, 1]), np.array([0, 5, 2, 9]), 3)
    assert doc.tolist() == [0, 1] and cov.tolist() == [3, 8]  # [0,5) and [9,12)


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(st.integers(0, 3), max_size=12), min_size=1, max_size=5), st.integers(1, 4),
       st.integers(0, 3))
def test_window_hashes_and_groups(docs, L, collide):
    """The window kernel against its formula in plain Python; the groups by
    one sort on the hash against the sort on every key, also when L-grams
    share a hash (hashes forced into ``collide + 1`` values)."""
    from engine.partitioned import WINDOW_MULT, group_windows, window_hashes
    th = np.array([0x9E3779B97F4A7C15 * (t + 1) % 2**64 for t in range(4)], np.uint64)
    ids = np.array([t for d in docs for t in d], np.int64)
    off = np.cumsum([0] + [len(d) for d in docs]).astype(np.int64)
    h, starts = window_hashes(th[ids], off, L)
    want_h, want_s = [], []
    for d in range(len(docs)):
        for s in range(off[d], off[d + 1] - L + 1):
            x = 0
            for k in range(L):
                x = (x * int(WINDOW_MULT) + int(th[ids[s + k]])) % 2**64
            want_h.append(x ^ (x >> 31))
            want_s.append(s)
    assert h.tolist() == want_h and starts.tolist() == want_s
    for hashes in (h, h % np.uint64(collide + 1)):  # real hashes, then forced collisions
        order, gid = group_windows(hashes, ids, starts, L)
        rows = [(int(x), tuple(ids[s:s + L].tolist()), i) for i, (x, s) in
                enumerate(zip(hashes.view(np.int64), starts))]
        rows.sort()  # by hash (as int64), then the L-gram, then input order
        keys = [r[:2] for r in rows]
        assert order.tolist() == [r[2] for r in rows]
        assert gid.tolist() == [sorted(set(keys)).index(k) for k in keys]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.lists(st.sampled_from(["a", "b", "Éa", "日本", "x1", "😀", "ß", "e\u0301"]), max_size=14)
                .map(lambda ws: "".join(w + s for w, s in zip(ws, ["  ", ". ", "\n", "—"] * 4))), max_size=6),
       st.integers(1, 3), st.randoms(use_true_random=False))
def test_segment_rows_against_a_plain_loop(texts, L, rnd):
    """Step 3's rows (segments, starts, text as written, characters) against
    a plain Python loop over each document's covered runs, on multi-byte text."""
    import pyarrow as pa
    from engine.partitioned import segments, token_hashes, window_hashes
    from engine.tokenizer import tokenize_arrow
    batch = pa.RecordBatch.from_arrays([pa.array(range(len(texts)), pa.int64()), pa.array(texts, pa.string())],
                                       names=["doc_id", "text"])
    tk = tokenize_arrow(batch.column(1), workers=1)
    h, starts = window_hashes(token_hashes(tk.vocab)[tk.tokens], tk.doc_offsets, L)
    frequent = np.unique(np.array([x for x in h if rnd.random() < 0.5], np.uint64))
    row = next(segments([batch], L, frequent, written=True)).to_pylist()
    hit = {int(s) for x, s in zip(h, starts) if x in set(frequent.tolist())}
    for d, text in enumerate(texts):
        a, e = int(tk.doc_offsets[d]), int(tk.doc_offsets[d + 1])
        cov = [any(p - L < s <= p for s in hit) for p in range(a, e)]
        segs, at, raw, cs, ce = [], [], [], [], []
        p = 0
        while p < e - a:
            if not cov[p]:
                p += 1
                continue
            q = p
            while q < e - a and cov[q]:
                q += 1
            segs.append(" ".join(tk.vocab[t] for t in tk.tokens[a + p:a + q]))
            at.append(p)
            raw.append(text[tk.span_start[a + p]:tk.span_end[a + q - 1]])
            cs += tk.span_start[a + p:a + q].tolist()
            ce += tk.span_end[a + p:a + q].tolist()
            p = q
        got = row[d]
        assert (got["segments"], got["starts"], got["raw"], got["cs"], got["ce"]) == (segs, at, raw, cs, ce)
        assert got["n_tokens"] == e - a


def test_sigma_one_is_refused():
    with pytest.raises(ValueError, match="sigma >= 2"):
        simulate(["a b c"], 1, 2)


def test_plan_reads_only_the_footers(cli, tmp_path):
    """--plan: the partitioned job's partitions, filter and memory per stage
    from the shards' footers, no Spark started (it runs in make test)."""
    table = pq.read_table(os.path.join(ROOT, "data", "demo.parquet"))
    os.makedirs(tmp_path / "in")
    for k in range(3):
        pq.write_table(table.slice(k * 800, 800), tmp_path / "in" / f"part-{k}.parquet", row_group_size=100)
    status, out, err = cli("mine", "in", "--engine", "spark", "--partitioned", "--plan", "--master", "local[4]",
                           "--sigma", "20", "--min-len", "10")
    assert status == 0, err
    assert "3 shards, 2,400 documents" in out and "parts: 8" in out  # 2 x 4 cores, the floor
    assert "python worker per task, parts" in out and "MB on the driver" in out
    from tests.support import assert_one_line_error
    assert_one_line_error(*cli("mine", "in", "--engine", "spark", "--no-partitioned", "--plan"),
                          "--plan is for the partitioned job")
    assert_one_line_error(*cli("mine", "in", "--partitioned", "--out", "r"), "--[no-]partitioned is for --engine spark")
    assert_one_line_error(*cli("mine", "in", "--plan"), "--plan is for --engine spark")
    assert_one_line_error(*cli("mine", "in", "--engine", "spark", "--out", "r", "--conf", "spark.x"),
                          "--conf spark.x: give KEY=VALUE")
    assert_one_line_error(*cli("mine", "in", "--engine", "spark", "--no-partitioned", "--out", "r", "--parts", "3"),
                          "--parts is for the partitioned job")
    assert not (tmp_path / "r").exists()
    (tmp_path / "j").mkdir()
    (tmp_path / "j" / "a.jsonl").write_text('{"text": "a b"}\n')
    assert_one_line_error(*cli("mine", "j", "--engine", "spark", "--partitioned", "--plan"),
                          "the plan reads Parquet footers")


# --- the partitioned job's store rows and snapshot parts (no Spark) ----------

@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(docs=corpus, sigma=st.integers(2, 4), L=st.integers(2, 4), data=st.data())
def test_store_spans_cover_the_mask(docs, sigma, L, data):
    """engine/partitioned_store.py on the definitions: the spans' union is
    each document's mask (tokens inside a frequent L-gram), each span holds
    its phrase (a maximal phrase's occurrence, or a frequent L-gram with its
    df), each with its first and last token's characters; the documents in
    one batch or many, each one segment or cut at a random token."""
    import hashlib
    import pyarrow as pa
    from engine.partitioned_store import store_span_rows
    pd = naive.phrase_docs(docs)
    maximal, _, _ = naive.mine(docs, sigma, L)
    rows = []
    for i, d in enumerate(docs):
        grams = [(k, len(pd[tuple(d[k:k + L])])) for k in range(len(d) - L + 1) if len(pd[tuple(d[k:k + L])]) >= sigma]
        if not grams:
            continue
        mx = [{"pos": k, "length": len(p), "key": hashlib.sha256(" ".join(p).encode()).hexdigest()}
              for p in maximal for k in range(len(d) - len(p) + 1) if tuple(d[k:k + len(p)]) == p]
        # segments as step 3 makes them: the runs of tokens under a window that passed the
        # filter (the frequent ones and a few false positives), gaps between them
        extra = data.draw(st.sets(st.integers(0, max(len(d) - L, 0)), max_size=2))
        under = [False] * len(d)
        for k in [k for k, _ in grams] + [k for k in extra if k + L <= len(d)]:
            under[k:k + L] = [True] * L
        pieces, k = [], 0
        while k < len(d):
            if under[k]:
                e = k
                while e < len(d) and under[e]:
                    e += 1
                pieces.append((k, e))
                k = e
            else:
                k += 1
        rows.append({"doc_id": 100 + i, "segments": [" ".join(d[a:b]) for a, b in pieces],
                     "starts": [a for a, _ in pieces],
                     "cs": [3 * k for a, b in pieces for k in range(a, b)],
                     "ce": [3 * k + 2 for a, b in pieces for k in range(a, b)],
                     "lg": [{"pos": k, "h": hash(tuple(d[k:k + L])) & 0xFFFF, "g": 0, "df": df} for k, df in grams],
                     "mx": mx or None})
    if not rows:
        return
    schema = pa.schema([("doc_id", pa.int64()), ("segments", pa.list_(pa.string())), ("starts", pa.list_(pa.int64())),
                        ("cs", pa.list_(pa.int32())), ("ce", pa.list_(pa.int32())),
                        ("lg", pa.list_(pa.struct([("pos", pa.int64()), ("h", pa.int64()), ("g", pa.int64()),
                                                   ("df", pa.int64())]))),
                        ("mx", pa.list_(pa.struct([("pos", pa.int64()), ("length", pa.int64()),
                                                   ("key", pa.string())])))])
    table = pa.Table.from_pylist(rows, schema=schema)
    cut = data.draw(st.integers(1, len(rows)))
    out = pa.concat_tables([pa.Table.from_batches([store_span_rows(table.slice(a, cut), L)])
                            for a in range(0, len(rows), cut)]).to_pylist()
    keys = {hashlib.sha256(" ".join(p).encode()).hexdigest(): p for p in maximal}
    masks = {r["doc_id"]: [False] * len(docs[r["doc_id"] - 100]) for r in rows}
    for s in out:
        d = docs[s["doc_id"] - 100]
        a, e = s["start"], s["end"]
        span = tuple(d[a:e])
        if s["kind"] == 0:
            assert keys[s["key"]] == span
        else:
            assert e - a == L and s["text"] == " ".join(span) and s["df"] == len(pd[span]) >= sigma
        assert (s["char_start"], s["char_end"]) == (3 * a, 3 * (e - 1) + 2)
        masks[s["doc_id"]][a:e] = [True] * (e - a)
    want = naive.window_masks(docs, L, {p for p, s in pd.items() if len(p) == L and len(s) >= sigma})
    for doc_id, m in masks.items():
        assert m == want[doc_id - 100]
    # every maximal phrase occurrence is a span of its own
    assert sum(s["kind"] == 0 for s in out) == sum(len(r["mx"] or []) for r in rows)


def test_greedy_cover_takes_the_furthest_window():
    from engine.partitioned_store import greedy_cover
    starts = np.array([0, 2, 3, 10])
    # positions 1..6 under windows of 4 tokens: the window at 3 reaches furthest from 1? no: the last start <= 1 is 0
    assert greedy_cover(np.array([1, 2, 3, 4, 5, 6]), starts, 4).tolist() == [0, 2]
    assert greedy_cover(np.array([], np.int64), starts, 4).tolist() == []
    with pytest.raises(AssertionError, match="in no frequent L-gram"):
        greedy_cover(np.array([8]), starts, 4)


def test_snapshot_parts_store_the_local_snapshot(tmp_path):
    """engine/partitioned_snapshot.py: the demo's pages written as parts of
    two batch sizes (as step 3's executors write them) and copied into a
    store hold the local ingest's documents, tokens, characters and df; the
    id is the same for both cuts, and a part changed after its vocabulary
    was numbered is one clear error."""
    import pyarrow as pa
    from engine.partitioned import normalize_batch, tokenize_text
    from engine.partitioned_snapshot import PartsReader, part_name, write_part
    from engine.store import Store
    table = pq.read_table(os.path.join(ROOT, "data", "demo.parquet")).slice(0, 300)
    assert "doc_id" in table.column_names
    local_db = str(tmp_path / "local.duckdb")
    path = str(tmp_path / "in.parquet")
    pq.write_table(table, path)
    from engine.api import ingest
    local_sid, _ = ingest(path, local_db)
    ids = []
    for size in (7, 120):
        folder = tmp_path / f"parts{size}"
        folder.mkdir()
        for k, a in enumerate(range(0, table.num_rows, size)):
            batch = table.slice(a, size).to_batches()[0]
            doc_id, text, sites, urls = normalize_batch(batch)
            write_part(str(folder), part_name(k % 3, k), tokenize_text(text), doc_id, sites, urls, text)
        db = str(tmp_path / f"s{size}.duckdb")
        with Store(db) as st:
            sid, created = st.add_parts_snapshot(PartsReader(str(folder), path))
            assert created and st.add_parts_snapshot(PartsReader(str(folder), path)) == (sid, False)
        ids.append(sid)
        with Store(db, read_only=True) as st, Store(local_db, read_only=True) as lst:
            want = {r[1]: r[2:] for r in lst.documents_text(local_sid).rows()}
            got = {r[1]: r[2:] for r in st.documents_text(sid).rows()}
            assert got == want
            for s, i in ((st, sid), (lst, local_sid)):
                arrays, vocab = s.arrays(i), s.vocabulary(i)
                docs = s.documents_meta(i)
                toks = {d: [vocab[t] for t in arrays.tokens[int(arrays.doc_offsets[x]):int(arrays.doc_offsets[x + 1])]]
                        for x, d in zip(docs["doc_index"].to_list(), docs["doc_id"].to_list())}
                spans = {d: (arrays.span_start[int(arrays.doc_offsets[x]):int(arrays.doc_offsets[x + 1])].tolist(),
                             arrays.span_end[int(arrays.doc_offsets[x]):int(arrays.doc_offsets[x + 1])].tolist())
                         for x, d in zip(docs["doc_index"].to_list(), docs["doc_id"].to_list())}
                df = dict(s.query("SELECT token, df FROM vocabulary WHERE snapshot_id = ?", [i]).rows())
                if s is lst:
                    assert (toks, spans, df) == want_arrays
                else:
                    want_arrays = (toks, spans, df)
    assert ids[0] == ids[1] != local_sid
    # a part whose tokens the numbered vocabulary does not cover
    folder = tmp_path / "parts7"
    reader = PartsReader(str(folder), path)
    name = reader.names[0]
    np.save(folder / f"{name}.tokens.npy", np.full(5, 10 ** 6, np.int32))
    with Store(str(tmp_path / "bad.duckdb")) as st:
        with pytest.raises(BoilerscopeError, match=f"snapshot part {name} is incomplete or changed"):
            st.add_parts_snapshot(PartsReader(str(folder), path))
        assert st.snapshots().height == 0


def test_lost_or_changed_parts_are_one_clear_error(tmp_path):
    """Snapshot parts with a file lost, a damaged JSON file or other text
    than the job wrote (its digest), and a run whose parts are missing: one
    clear error each, nothing stored."""
    import json
    import shutil
    import pyarrow as pa
    from engine.partitioned import normalize_batch, tokenize_text
    from engine.partitioned_snapshot import PartsReader, part_name, write_part
    from engine.store import Store
    table = pq.read_table(os.path.join(ROOT, "data", "demo.parquet")).slice(0, 40)
    good = tmp_path / "good"
    good.mkdir()
    for k, a in enumerate(range(0, 40, 10)):
        doc_id, text, sites, urls = normalize_batch(table.slice(a, 10).to_batches()[0])
        write_part(str(good), part_name(0, k), tokenize_text(text), doc_id, sites, urls, text)
    name = part_name(0, 1)

    def broken(how):
        folder = tmp_path / how
        shutil.copytree(good, folder)
        if how == "lost":
            os.remove(folder / f"{name}.span_end.npy")
        elif how == "json":
            (folder / f"{name}.json").write_text("{not json")
        elif how == "vocab":
            os.remove(folder / f"{name}.vocab.parquet")
        else:  # other text, same shape: the digest differs
            docs = pq.read_table(folder / f"{name}.docs.parquet")
            texts = docs.column("text").to_pylist()
            docs = docs.set_column(docs.column_names.index("text"), "text",
                                   pa.array([t.upper() for t in texts], docs.schema.field("text").type))
            pq.write_table(docs, folder / f"{name}.docs.parquet")
        return str(folder)
    for how in ("lost", "json", "vocab", "text"):
        db = str(tmp_path / f"{how}.duckdb")
        with Store(db) as st:
            with pytest.raises(BoilerscopeError, match="incomplete or (changed|damaged)") as e:
                st.add_parts_snapshot(PartsReader(broken(how), "x"))
            assert "\n" not in str(e.value) and st.snapshots().height == 0
    # a run whose store rows never arrived
    db = str(tmp_path / "run.duckdb")
    with Store(db) as st:
        sid, _ = st.add_parts_snapshot(PartsReader(str(good), "x"))
        docs = st.documents_meta(sid)
        folder = tmp_path / "run"
        (folder / "documents.parquet").mkdir(parents=True)
        pq.write_table(pa.table({"doc_id": docs["doc_id"].to_arrow(), "n_tokens": docs["n_tokens"].to_arrow(),
                                 "covered_tokens": pa.array([0] * docs.height, pa.int64())}),
                       folder / "documents.parquet" / "part-0.parquet")
        for name in ("phrases.parquet", "blocks.parquet", "block_spans.parquet"):
            (folder / name).mkdir()
        folders = {n: str(folder / f"{n}.parquet") for n in ("phrases", "documents", "blocks", "block_spans")}
        folders.update({n: str(folder / n) for n in ("occurrences", "spans", "lgrams", "lgram_occurrences")})
        with pytest.raises(BoilerscopeError, match="parts are incomplete or damaged"):
            st.add_parts_run(sid, 2, 3, "bloomspan", folders, {"phrases": 0})
        assert st.runs().height == 0
        for n in ("occurrences", "spans", "lgrams", "lgram_occurrences"):
            (folder / n).mkdir()
        run_id = st.add_parts_run(sid, 2, 3, "bloomspan", folders, {"phrases": 0, "covered_tokens": 0})
        assert st.runs()["run_id"].to_list() == [run_id]
        json.dumps(st.run(run_id)["summary"])
