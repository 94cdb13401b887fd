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
    assert_one_line_error(*cli("mine", "in", "--engine", "spark", "--plan"), "--plan is for --partitioned")
    assert_one_line_error(*cli("mine", "in", "--plan"), "--plan is for --engine spark")
    assert_one_line_error(*cli("mine", "in", "--engine", "spark", "--out", "r", "--conf", "spark.x"),
                          "--conf spark.x: give KEY=VALUE")
    assert_one_line_error(*cli("mine", "in", "--engine", "spark", "--out", "r", "--parts", "3"),
                          "--parts is for --partitioned")
    assert not (tmp_path / "r").exists()
    (tmp_path / "j").mkdir()
    (tmp_path / "j" / "a.jsonl").write_text('{"text": "a b"}\n')
    assert_one_line_error(*cli("mine", "j", "--engine", "spark", "--partitioned", "--plan"),
                          "the plan reads Parquet footers")
