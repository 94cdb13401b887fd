"""The command line: outputs, their contract, and one clear line for every bad input."""
import json
import os
import subprocess
import sys
import time

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.store import Store
from tests import naive
from tests.support import EXAMPLE, assert_one_line_error, snapshot


def test_mine_writes_the_contract_files(cli, tmp_path):
    snap = snapshot(tmp_path)
    status, out, err = cli("mine", snap, "--sigma", 3, "--min-len", 2, "--out", "res", "--quiet")
    assert status == 0, err
    res = tmp_path / "res"
    phrases = pl.read_parquet(res / "phrases.parquet")
    assert phrases.schema == {"phrase": pl.String, "length": pl.Int32, "df": pl.Int64,
                              "occurrences": pl.Int64, "sites": pl.Int64, "psi": pl.Int64, "block_id": pl.Int32}
    assert phrases.rows() == [("доставка бесплатно при заказе от 3000 рублей", 7, 3, 3, 2, 21, 0)]
    # one block, its text as written (casing and punctuation of its first occurrence's document)
    blocks = pl.read_parquet(res / "blocks.parquet")
    assert blocks.schema == {"block_id": pl.Int32, "text": pl.String, "phrases": pl.Int64, "documents": pl.Int64,
                             "sites": pl.Int64, "covered_tokens": pl.Int64, "share": pl.Float64}
    (text,) = blocks["text"].to_list()
    assert text.lower() != text and naive.tokenize(text)[0] == "доставка бесплатно при заказе от 3000 рублей".split()
    # "доставка бесплатно" alone (df 4) in the last document is part of it: 23 covered tokens, as the run's
    assert blocks.select("block_id", "phrases", "documents", "sites", "covered_tokens").rows() == [(0, 1, 4, 2, 23)]
    spans = pl.read_parquet(res / "block_spans.parquet")
    assert spans.columns == ["block_id", "doc_id", "start", "end", "char_start", "char_end"]
    assert spans["doc_id"].to_list() == [0, 1, 2, 3] and (spans["end"] - spans["start"]).to_list() == [7, 7, 7, 2]
    docs = pl.read_parquet(res / "documents.parquet")
    assert docs.columns == ["doc_id", "site", "url", "n_tokens", "covered_tokens", "contamination"]
    assert docs["covered_tokens"].to_list() == [7, 7, 7, 2]
    assert docs["doc_id"].to_list() == [0, 1, 2, 3]
    assert docs["site"].to_list() == ["shop0.example", "shop1.example"] * 2
    sites = pl.read_parquet(res / "sites.parquet")
    assert sites.columns == ["site", "documents", "tokens", "covered_tokens", "coverage",
                             "median_contamination", "p90_contamination"]
    assert sites["documents"].to_list() == [2, 2]
    summary = json.loads((res / "summary.json").read_text())
    for key in ("version", "snapshot_id", "run_id", "sigma", "min_len", "algo", "documents", "tokens",
                "covered_tokens", "coverage", "filters", "phrases", "seconds", "compile_seconds",
                "peak_rss_bytes"):
        assert key in summary, key
    assert summary["covered_tokens"] == 23 and summary["phrases"] == 1
    assert f"run {summary['run_id']}" in out
    # the summary is built once: the store keeps exactly what summary.json says
    with Store(str(tmp_path / "boilerscope.duckdb"), read_only=True) as st:
        assert st.run(summary["run_id"])["summary"] == summary


def test_same_input_gives_byte_identical_parquet(cli, tmp_path):
    snap = snapshot(tmp_path, texts=EXAMPLE * 5)
    for out in ("a", "b"):
        assert cli("mine", snap, "--sigma", 3, "--min-len", 2, "--out", out, "--quiet")[0] == 0
    for name in ("phrases.parquet", "documents.parquet", "sites.parquet"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes()


def test_formats_share_one_snapshot_id_and_ingest_is_idempotent(cli, tmp_path):
    table = pa.table({"doc_id": [5, 7, 9, 11], "site": ["s", "s", "t", "t"], "url": ["u1", "u2", "u3", "u4"],
                      "text": EXAMPLE})
    pq.write_table(table, tmp_path / "a.parquet")
    pl.from_arrow(table).write_ndjson(tmp_path / "a.jsonl")
    pl.from_arrow(table).write_csv(tmp_path / "a.csv")
    outs = [cli("ingest", tmp_path / f"a.{ext}", "--quiet") for ext in ("parquet", "jsonl", "csv")]
    assert [o[0] for o in outs] == [0, 0, 0]
    ids = {o[1].split()[1] for o in outs}
    assert len(ids) == 1
    assert "ingested" in outs[0][1] and "already" in outs[1][1] and "already" in outs[2][1]
    with Store(str(tmp_path / "boilerscope.duckdb")) as st:
        assert st.snapshots().height == 1
        assert st.query("SELECT count(*) AS n FROM documents")["n"][0] == 4


def test_csv_with_line_breaks_in_texts(cli, tmp_path):
    """Texts over several lines, quoted, in a CSV larger than the reader's
    blocks: the same snapshot as the Parquet file (a block boundary inside a
    quoted value was a parse error)."""
    texts = [f"title {i}\nline one of {i} \"quoted\"\r\n" + "word " * (i % 200) + "\nend" for i in range(6000)]
    table = pa.table({"doc_id": list(range(6000)), "text": texts})
    pq.write_table(table, tmp_path / "a.parquet")
    pl.from_arrow(table).write_csv(tmp_path / "a.csv")
    assert os.path.getsize(tmp_path / "a.csv") > 2 << 20
    outs = [cli("ingest", tmp_path / f"a.{ext}", "--quiet") for ext in ("parquet", "csv")]
    assert [o[0] for o in outs] == [0, 0], outs[1][2]
    assert outs[0][1].split()[1] == outs[1][1].split()[1] and "already" in outs[1][1]


def test_tokens_column_and_sigma_share(cli, tmp_path):
    tokens = [t.split() for t in ["A b c d", "x a B c d", "a b c d y", "q r"]]
    pq.write_table(pa.table({"tokens": tokens}), tmp_path / "t.parquet")
    status, out, err = cli("mine", tmp_path / "t.parquet", "--sigma", "75%", "--min-len", 2, "--out", "o", "--quiet")
    assert status == 0, err
    phrases = pl.read_parquet(tmp_path / "o" / "phrases.parquet")
    assert phrases["phrase"].to_list() == ["a b c d"]
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["sigma"] == 3


def test_mine_a_store_and_list_and_delete_runs(cli, tmp_path):
    snap = snapshot(tmp_path)
    assert cli("ingest", snap, "--db", "x.duckdb", "--quiet")[0] == 0
    status, out, err = cli("mine", "x.duckdb", "--sigma", 3, "--min-len", 2, "--quiet")
    assert status == 0, err
    status, out, err = cli("mine", "x.duckdb", "--sigma", 2, "--min-len", 2, "--quiet")
    assert status == 0, err
    status, out, _ = cli("runs", "--db", "x.duckdb")
    assert status == 0 and len(out.strip().splitlines()) == 3
    assert cli("runs", "--db", "x.duckdb", "--delete", 1)[0] == 0
    with Store(str(tmp_path / "x.duckdb")) as st:
        assert st.runs()["run_id"].to_list() == [2]
        assert st.query("SELECT count(*) AS n FROM run_spans WHERE run_id = 1")["n"][0] == 0
        assert st.query("SELECT count(*) AS n FROM run_spans WHERE run_id = 2")["n"][0] > 0
    assert_one_line_error(*cli("runs", "--db", "x.duckdb", "--delete", 99), "run 99")


def write_bytes(tmp_path, name, data):
    p = tmp_path / name
    p.write_bytes(data)
    return p


BAD_INPUTS = {
    "missing file": (lambda t: t / "nope.parquet", ["mine"], "not found"),
    "unknown format": (lambda t: write_bytes(t, "x.txt", b"hello"), ["mine"], "unknown format"),
    "no text column": (lambda t: (pq.write_table(pa.table({"body": ["a"]}), t / "n.parquet"), t / "n.parquet")[1],
                       ["mine"], "no 'text'"),
    "non-string text": (lambda t: (pq.write_table(pa.table({"text": [1, 2]}), t / "i.parquet"), t / "i.parquet")[1],
                        ["mine"], "not strings"),
    "invalid utf-8": (lambda t: write_bytes(t, "bad.csv", b"text\nabc\n\xff\xfe oops\n"), ["mine"], "UTF-8"),
    "malformed jsonl": (lambda t: write_bytes(t, "bad.jsonl", b'{"text": "a"}\n{"text": \n'), ["mine"], "JSONL"),
    "corrupt parquet": (lambda t: write_bytes(t, "bad.parquet", b"PAR1 this is not parquet"), ["mine"], "Parquet"),
    "empty snapshot": (lambda t: (pq.write_table(pa.table({"text": pa.array([], pa.string())}), t / "e.parquet"),
                                  t / "e.parquet")[1], ["mine"], "no documents"),
    "duplicate doc_id": (lambda t: (pq.write_table(pa.table({"doc_id": [1, 1], "text": ["a", "b"]}), t / "d.parquet"),
                                    t / "d.parquet")[1], ["mine"], "doc_id 1"),
    "sigma below 1": (lambda t: snapshot(t), ["mine", "--sigma", "0"], "sigma"),
    "sigma not a number": (lambda t: snapshot(t), ["mine", "--sigma", "lots"], "sigma"),
    "L below 2": (lambda t: snapshot(t), ["mine", "--min-len", "1"], "min length"),
    "unwritable output": (lambda t: snapshot(t), ["mine", "--out", "/proc/no-such-dir/out"], "cannot write"),
}


@pytest.mark.parametrize("case", list(BAD_INPUTS))
def test_bad_input_one_line_status_2_store_intact(cli, tmp_path, case):
    make, args, words = BAD_INPUTS[case]
    good = snapshot(tmp_path, name="good.parquet")
    assert cli("mine", good, "--sigma", 3, "--min-len", 2, "--quiet")[0] == 0
    db = tmp_path / "boilerscope.duckdb"

    def state():
        with Store(str(db), read_only=True) as st:
            return (st.snapshots()["snapshot_id"].to_list(), st.runs()["run_id"].to_list(),
                    st.query("SELECT count(*) AS n FROM documents")["n"][0],
                    st.query("SELECT count(*) AS n FROM run_spans")["n"][0],
                    sorted(os.listdir(str(db) + ".arrays")))

    before = state()
    assert len(before[0]) == 1 and len(before[1]) == 1 and before[3] > 0
    path = make(tmp_path)
    cmd, *rest = args
    status, out, err = cli(cmd, path, *rest, "--quiet")
    assert_one_line_error(status, out, err, words)
    assert state() == before
    # no temporary file or folder anywhere under the test folder (store, arrays, outputs)
    temps = [os.path.join(b, n) for b, ds, fs in os.walk(tmp_path) for n in ds + fs
             if n.endswith(".tmp") or n.startswith(".tmp-") or ".new-" in n]
    assert temps == []


def test_store_held_by_another_process(cli, tmp_path):
    snap = snapshot(tmp_path)
    assert cli("ingest", snap, "--quiet")[0] == 0
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); print('held', flush=True); time.sleep(60)",
         str(tmp_path / "boilerscope.duckdb")], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        assert_one_line_error(*cli("mine", snap, "--sigma", 3, "--min-len", 2, "--quiet"), "in use")
    finally:
        holder.kill()
        holder.wait()
    time.sleep(0.2)
    with Store(str(tmp_path / "boilerscope.duckdb")) as st:
        assert st.snapshots().height == 1


def test_python_api_mirrors_cli(tmp_path):
    from engine import mine
    run = mine(str(snapshot(tmp_path)), sigma=3, min_len=2, db=str(tmp_path / "api.duckdb"))
    assert run.run_id == 1
    assert run.phrases["phrase"].to_list() == ["доставка бесплатно при заказе от 3000 рублей"]
    assert run.documents["covered_tokens"].to_list() == [7, 7, 7, 2]


def test_fhk_gives_the_same_files(cli, tmp_path):
    snap = snapshot(tmp_path, texts=EXAMPLE * 3)
    for algo in ("bloomspan", "fhk"):
        status, out, err = cli("mine", snap, "--sigma", 3, "--min-len", 2, "--algo", algo, "--out", algo, "--quiet")
        assert status == 0, err
    for name in ("phrases.parquet", "documents.parquet", "sites.parquet"):
        assert (tmp_path / "bloomspan" / name).read_bytes() == (tmp_path / "fhk" / name).read_bytes()
    # sigma 1: both answer by the whole-document rule (engine.sigma1)
    for algo in ("bloomspan", "fhk"):
        status, out, err = cli("mine", snap, "--sigma", 1, "--min-len", 2, "--algo", algo, "--out", f"{algo}1",
                               "--quiet")
        assert status == 0, err
    for name in ("phrases.parquet", "documents.parquet", "sites.parquet"):
        assert (tmp_path / "bloomspan1" / name).read_bytes() == (tmp_path / "fhk1" / name).read_bytes()
    assert pl.read_parquet(tmp_path / "fhk1" / "phrases.parquet")["df"].to_list() == [3] * 4


def test_tokens_and_text_snapshots_never_share_an_id(cli, tmp_path):
    """A tokens snapshot whose tokens joined by spaces equal another snapshot's
    text is another snapshot: its own id, its own spans."""
    pq.write_table(pa.table({"tokens": [["Hello", "World"], ["a", "b"]]}), tmp_path / "t.parquet")
    pq.write_table(pa.table({"text": ["Hello World", "a b"]}), tmp_path / "x.parquet")
    out_t = cli("ingest", "t.parquet", "--quiet")
    out_x = cli("ingest", "x.parquet", "--quiet")
    assert out_t[0] == 0 and out_x[0] == 0 and "ingested" in out_x[1]
    assert out_t[1].split()[1] != out_x[1].split()[1]
    with Store(str(tmp_path / "boilerscope.duckdb"), read_only=True) as st:
        assert st.snapshots().height == 2


def test_deleting_a_run_deletes_its_dedup_results(cli, tmp_path):
    snap = snapshot(tmp_path, texts=EXAMPLE * 6)
    assert cli("mine", snap, "--sigma", 3, "--min-len", 2, "--quiet")[0] == 0
    assert cli("dedup", snap, "--run", 1, "--quiet")[0] == 0
    assert cli("dedup", snap, "--raw", "--quiet")[0] == 0
    assert cli("runs", "--delete", 1)[0] == 0
    with Store(str(tmp_path / "boilerscope.duckdb"), read_only=True) as st:
        left = st.query("SELECT run_id, raw FROM dedup_runs").rows()
        assert left == [(None, True)]
        for table in ("dedup_clusters", "dedup_pairs"):
            assert st.query(f"SELECT count(*) AS n FROM {table} WHERE dedup_id NOT IN "
                            "(SELECT dedup_id FROM dedup_runs)")["n"][0] == 0
