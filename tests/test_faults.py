"""Faults and hostile inputs: each case of the fault table (docs/faults.md).

Every test here failed before its fix (issue 12): a clean that replaced its
input, a hang on one document of repeated tokens, crash leftovers, a result
folder mixing two runs, foreign DuckDB files written into, exit 1 where the
contract says 2.
"""
import json
import os
import random
import signal
import subprocess
import sys
import time

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from engine.errors import BoilerscopeError
from engine.store import Store
from tests import naive
from tests.support import ROOT, assert_one_line_error, leftovers, snapshot, store_state
TEMPLATE = "Все права защищены. Read also our cookie policy and the terms of service of this shop"


def corpus(tmp_path, name="corpus.parquet", docs=60, words=40, seed=0):
    """Documents of random words with a shared template (a phrase to find)."""
    rng = random.Random(seed)
    vocab = [f"w{i}" for i in range(500)]
    texts = [" ".join(rng.choice(vocab) for _ in range(words)) + ". " + TEMPLATE for _ in range(docs)]
    path = tmp_path / name
    pq.write_table(pa.table({"text": texts, "url": [f"https://s{i % 3}.example/{i}" for i in range(docs)]}), path)
    return path


# -- 1. clean never replaces its input -----------------------------------------
def test_clean_refuses_to_overwrite_its_input(cli, tmp_path):
    snap = corpus(tmp_path)
    assert cli("mine", snap, "--sigma", 5, "--quiet")[0] == 0
    (tmp_path / "stop.csv").write_text("phrase,decision\n" + " ".join(naive.tokenize(TEMPLATE)[0]) + ",noise\n")
    before = snap.read_bytes()
    assert_one_line_error(*cli("clean", snap, "--run", 1, "--stoplist", "stop.csv", "--out", snap.name),
                          "is the snapshot")
    assert_one_line_error(*cli("clean", snap, "--run", 1, "--stoplist", "stop.csv", "--out", "./" + snap.name,
                               "--force"), "is the snapshot")
    assert snap.read_bytes() == before
    # a hard link to the input is the same file
    os.link(snap, tmp_path / "alias.parquet")
    assert_one_line_error(*cli("clean", snap, "--run", 1, "--stoplist", "stop.csv", "--out", "alias.parquet",
                               "--force"), "is the snapshot")
    assert snap.read_bytes() == before


def test_clean_checks_the_source_and_existing_outputs(cli, tmp_path):
    snap = corpus(tmp_path)
    other = corpus(tmp_path, "other.parquet", seed=1)
    assert cli("mine", snap, "--sigma", 5, "--quiet")[0] == 0
    (tmp_path / "stop.csv").write_text("phrase,decision\n" + " ".join(naive.tokenize(TEMPLATE)[0]) + ",noise\n")
    # a snapshot that is not the run's is refused (it used to clean the run's snapshot silently)
    assert_one_line_error(*cli("clean", other, "--run", 1, "--stoplist", "stop.csv", "--out", "c.parquet"),
                          "not the snapshot of run 1")
    assert not (tmp_path / "c.parquet").exists()
    status, out, err = cli("clean", snap, "--run", 1, "--stoplist", "stop.csv", "--out", "c.parquet")
    assert status == 0, err
    first = pl.read_parquet(tmp_path / "c.parquet")
    assert all("terms of service" not in t for t in first["text"].to_list())
    # an existing output needs --force
    assert_one_line_error(*cli("clean", snap, "--run", 1, "--stoplist", "stop.csv", "--out", "c.parquet"),
                          "already exists")
    status, out, err = cli("clean", "boilerscope.duckdb", "--run", 1, "--stoplist", "stop.csv",
                           "--out", "c.parquet", "--force")
    assert status == 0, err
    assert pl.read_parquet(tmp_path / "c.parquet").equals(first)
    assert leftovers(tmp_path) == []


STOPLISTS = {
    "csv without the columns": ("s.csv", "text,kind\na b,noise\n", "'phrase' and 'decision'"),
    "csv with an unterminated quote": ("s.csv", 'phrase,decision\n"a b,noise\n', "not a stop-phrase list"),
    "json of another shape": ("s.json", json.dumps({"phrase": "a b", "decision": "noise"}), "list of objects"),
    "json rows without text": ("s.json", json.dumps([{"phrase": 3, "decision": "noise"}]), "entry 1"),
    "unknown decision": ("s.json", json.dumps([{"phrase": "a b", "decision": "cut"}]), "decision 'cut'"),
}


@pytest.mark.parametrize("case", list(STOPLISTS))
def test_bad_stoplists(cli, tmp_path, case):
    name, content, words = STOPLISTS[case]
    snap = snapshot(tmp_path)
    assert cli("mine", snap, "--sigma", 3, "--min-len", 2, "--quiet")[0] == 0
    (tmp_path / name).write_text(content)
    assert_one_line_error(*cli("clean", snap, "--run", 1, "--stoplist", name, "--out", "c.parquet"), words)
    assert not (tmp_path / "c.parquet").exists()


def test_clean_bad_run_and_output(cli, tmp_path):
    snap = snapshot(tmp_path)
    assert cli("mine", snap, "--sigma", 3, "--min-len", 2, "--quiet")[0] == 0
    (tmp_path / "s.csv").write_text("phrase,decision\nдоставка бесплатно,noise\n")
    assert_one_line_error(*cli("clean", snap, "--run", 7, "--stoplist", "s.csv", "--out", "c.parquet"), "run 7")
    assert_one_line_error(*cli("clean", snap, "--run", 1, "--stoplist", "s.csv", "--out", "c.csv"), ".parquet")
    assert_one_line_error(*cli("clean", snap, "--run", 1, "--stoplist", "s.csv", "--out", "s.csv"),
                          ".parquet")
    assert_one_line_error(*cli("clean", snap, "--run", 1, "--stoplist", "s.csv",
                               "--out", "/proc/none/c.parquet"), "cannot write")


# -- 2. no hang on tiny inputs, Ctrl-C stops at once ------------------------------
@pytest.mark.timeout(120)
def test_one_document_of_one_token_at_sigma_1(cli, tmp_path):
    """200,000 copies of "0" at sigma 1 (4,000 took 33 s before; 25,000 more
    than 200 s): the whole-document rule answers in O(n log n)."""
    pq.write_table(pa.table({"text": [" ".join(["0"] * 200_000), "0 0 0"]}), tmp_path / "z.parquet")
    for algo in ("auto", "bloomspan", "fhk"):
        status, out, err = cli("mine", "z.parquet", "--sigma", 1, "--algo", algo, "--out", algo, "--quiet")
        assert status == 0, err
        ph = pl.read_parquet(tmp_path / algo / "phrases.parquet")
        assert ph["length"].to_list() == [200_000] and ph["df"].to_list() == [1]
        assert pl.read_parquet(tmp_path / algo / "documents.parquet")["covered_tokens"].to_list() == [200_000, 0]


def test_periodic_runs_growth_buffers_stay_linear():
    """BloomSpan's growth on a run of k copies (sigma 2): the children of a
    node are moved onto its dead slice, so the work buffer stays O(k)
    (it needed k^2/2 entries: 3 GB for two runs of 25,000)."""
    from engine.planner import mine_tokens
    from engine.steps import Worker
    k = 3000
    toks = np.zeros(2 * k, np.int32)
    res = mine_tokens(toks, np.array([0, k, 2 * k], np.int64), 1, 2, 10, workers=1)
    assert res.node_max.sum() == 1 and int(res.node_len[res.node_max == 1][0]) == k
    assert res.covered.tolist() == [k, k]
    # the buffers this took, replayed on one worker
    w = Worker(1, 2 * k - 2)
    pos = np.concatenate([np.arange(k - 1), np.arange(k, 2 * k - 1)]).astype(np.int32)
    doc = np.repeat(np.arange(2, dtype=np.int32), k - 1)
    seeds = (pos, doc, np.array([0], np.int64), np.array([2 * k - 2], np.int64), np.array([2], np.int64))
    w.run(toks, np.array([0, k, 2 * k], np.int64), seeds, np.array([0], np.int64), 2, 10)
    assert w.bpos.shape[0] <= 8 * k, w.bpos.shape[0]


def _slow_snapshot(tmp_path):
    # BloomSpan forced on long periodic runs at sigma 2: many seconds of growth
    pq.write_table(pa.table({"text": [" ".join(["0"] * 60_000)] * 2}), tmp_path / "slow.parquet")
    return tmp_path / "slow.parquet"


@pytest.mark.timeout(120)
def test_ctrl_c_stops_a_running_kernel_within_a_second(tmp_path):
    slow = _slow_snapshot(tmp_path)
    env = {**os.environ, "PYTHONPATH": ROOT}
    run = [sys.executable, "-m", "engine.cli"]
    assert subprocess.run(run + ["ingest", str(slow), "--quiet"], cwd=tmp_path, env=env).returncode == 0
    before = store_state(tmp_path / "boilerscope.duckdb")
    p = subprocess.Popen(run + ["mine", "boilerscope.duckdb", "--sigma", "2", "--algo", "bloomspan"],
                         cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
    time.sleep(6)  # well inside the growth (the kernels are warm)
    assert p.poll() is None, "the run ended before the interrupt: make the input slower"
    t = time.monotonic()
    p.send_signal(signal.SIGINT)
    status = p.wait(timeout=30)
    waited = time.monotonic() - t
    err = p.stderr.read()
    assert status == 130, err
    assert waited < 1.0, waited
    assert "interrupted" in err and "Traceback" not in err
    assert store_state(tmp_path / "boilerscope.duckdb") == before


# -- 3. ingest memory is bounded by what is found -> test_tokenize.py ------------

# -- 5. crash leftovers ------------------------------------------------------------
def test_leftovers_of_a_killed_ingest_are_cleaned(cli, tmp_path):
    snap = corpus(tmp_path)
    assert cli("ingest", snap, "--quiet")[0] == 0
    arrays = tmp_path / "boilerscope.duckdb.arrays"
    (arrays / ".tmp-0123abcd").mkdir()
    (arrays / ".tmp-0123abcd" / "tokens.npy").write_bytes(b"x" * 1000)
    (arrays / "feedfacefeedfacefeed").mkdir()  # renamed in place, never committed
    status, out, err = cli("runs")
    assert status == 0, err  # a read-only command leaves them
    assert cli("mine", "boilerscope.duckdb", "--sigma", 5, "--quiet")[0] == 0
    assert sorted(os.listdir(arrays)) == store_state(tmp_path / "boilerscope.duckdb")[0]


@pytest.mark.timeout(300)
def test_kill_9_during_ingest_and_mine_keeps_the_store(tmp_path):
    """kill -9 at several moments: earlier snapshots and runs stay intact and
    identical, and the next command succeeds and leaves no leftovers."""
    env = {**os.environ, "PYTHONPATH": ROOT}
    run = [sys.executable, "-m", "engine.cli"]
    first = corpus(tmp_path, "first.parquet", docs=50)
    assert subprocess.run(run + ["mine", str(first), "--sigma", "5", "--out", "res", "--quiet"],
                          cwd=tmp_path, env=env).returncode == 0
    db = tmp_path / "boilerscope.duckdb"
    before = store_state(db)
    with Store(str(db), read_only=True) as st:
        run1 = st.query("SELECT * FROM run_phrases WHERE run_id = 1 ORDER BY phrase_id")
    assert run1.height > 0 and before[3] == run1.height  # the template is found: there is something to lose
    res_before = {n: (tmp_path / "res" / n).read_bytes() for n in os.listdir(tmp_path / "res")}
    big = corpus(tmp_path, "big.parquet", docs=40_000, words=60, seed=3)
    for delay in (0.5, 1.5, 2.5, 3.5, 5.0):
        for cmd in (["ingest", str(big), "--quiet"],
                    ["mine", str(first), "--sigma", "3", "--out", "res", "--quiet"]):
            p = subprocess.Popen(run + cmd, cwd=tmp_path, env=env, stderr=subprocess.DEVNULL)
            time.sleep(delay)
            p.kill()
            p.wait()
            snaps, runs, docs, phrases = store_state(db)
            assert snaps[:1] == before[0][:1] or set(before[0]) <= set(snaps)
            assert set(before[1]) <= set(runs)
            # the result folder is the old set or a whole new one, never a mix
            summary = json.loads((tmp_path / "res" / "summary.json").read_text())
            names = sorted(os.listdir(tmp_path / "res"))
            assert names == sorted(res_before)
            if summary["sigma"] == 5:
                assert {n: (tmp_path / "res" / n).read_bytes() for n in names} == res_before
            else:
                assert summary["sigma"] == 3 and summary["run_id"] in runs
    # the next commands succeed and clean every leftover
    assert subprocess.run(run + ["ingest", str(big), "--quiet"], cwd=tmp_path, env=env).returncode == 0
    assert subprocess.run(run + ["mine", str(first), "--sigma", "3", "--out", "res", "--quiet"],
                          cwd=tmp_path, env=env).returncode == 0
    assert leftovers(tmp_path) == []
    snaps, runs, _, _ = store_state(db)
    assert len(snaps) == 2 and sorted(os.listdir(tmp_path / "boilerscope.duckdb.arrays")) == sorted(snaps)
    with Store(str(db), read_only=True) as st:
        old = st.query("SELECT * FROM run_phrases WHERE run_id = 1 ORDER BY phrase_id")
    assert old.equals(run1)


def test_result_folder_is_replaced_as_a_whole(tmp_path, monkeypatch):
    """A failure while the new set is written leaves the old set untouched and
    no temporary folder; a success replaces every file at once."""
    from engine import api, files
    snap = corpus(tmp_path)
    db = str(tmp_path / "r.duckdb")
    api.mine(str(snap), sigma=5, db=db, out=str(tmp_path / "res"))
    old = {n: (tmp_path / "res" / n).read_bytes() for n in os.listdir(tmp_path / "res")}
    real = pl.DataFrame.write_parquet
    calls = {"n": 0}

    def failing(self, path, **kw):
        calls["n"] += 1
        if calls["n"] == 2:
            raise pl.exceptions.ComputeError("failed to write: No space left on device (os error 28)")
        return real(self, path, **kw)

    monkeypatch.setattr(pl.DataFrame, "write_parquet", failing)
    with pytest.raises(BoilerscopeError, match="cannot write results"):
        api.mine(str(snap), sigma=3, db=db, out=str(tmp_path / "res"))
    monkeypatch.setattr(pl.DataFrame, "write_parquet", real)
    # 6. the run was rolled back with the files: nothing half-done is recorded
    with Store(db, read_only=True) as st:
        assert st.runs()["run_id"].to_list() == [1]
    assert {n: (tmp_path / "res" / n).read_bytes() for n in os.listdir(tmp_path / "res")} == old
    assert leftovers(tmp_path) == []
    run = api.mine(str(snap), sigma=3, db=db, out=str(tmp_path / "res"))
    summary = json.loads((tmp_path / "res" / "summary.json").read_text())
    assert summary["run_id"] == run.run_id
    with Store(db, read_only=True) as st:
        assert st.runs()["run_id"].to_list() == [1, run.run_id]
    assert pl.read_parquet(tmp_path / "res" / "phrases.parquet").equals(run.phrases)
    # a folder with other files is refused, not replaced
    (tmp_path / "mixed").mkdir()
    (tmp_path / "mixed" / "notes.txt").write_text("mine")
    with pytest.raises(BoilerscopeError, match="holds other files"):
        api.mine(str(snap), sigma=3, db=db, out=str(tmp_path / "mixed"))
    assert os.listdir(tmp_path / "mixed") == ["notes.txt"]
    # dedup results beside mine results are kept when mine writes again
    api.dedup(str(snap), raw=True, db=db, out=str(tmp_path / "res"))
    api.mine(str(snap), sigma=4, db=db, out=str(tmp_path / "res"))
    assert {"clusters.parquet", "pairs.parquet", "dedup_summary.json", "phrases.parquet"} <= set(
        os.listdir(tmp_path / "res"))
    del files


# -- 7. foreign DuckDB files ----------------------------------------------------------
@pytest.mark.parametrize("tables", ["CREATE TABLE events(x INTEGER); INSERT INTO events VALUES (1)",
                                    "CREATE TABLE runs(id INTEGER, who VARCHAR); "
                                    "CREATE TABLE snapshots(day DATE); CREATE TABLE documents(body VARCHAR)"])
def test_foreign_duckdb_files_are_refused_and_untouched(cli, tmp_path, tables):
    import duckdb
    path = tmp_path / "other.duckdb"
    con = duckdb.connect(str(path))
    con.execute(tables)
    con.close()
    before = path.read_bytes()
    snap = snapshot(tmp_path)
    for args in (["runs", "--db", path.name], ["ingest", snap, "--db", path.name],
                 ["mine", path.name], ["runs", "--db", path.name, "--delete", "1"]):
        assert_one_line_error(*cli(*args), "not a Boilerscope store")
    assert path.read_bytes() == before
    assert not (tmp_path / "other.duckdb.arrays").exists()


def test_stores_made_before_the_marker_still_open(tmp_path):
    import duckdb

    from engine.store import SCHEMA
    legacy = SCHEMA.split("CREATE TABLE IF NOT EXISTS boilerscope_meta")[0]
    con = duckdb.connect(str(tmp_path / "old.duckdb"))
    con.execute(legacy)
    con.close()
    with Store(str(tmp_path / "old.duckdb")) as st:
        assert st.scalar("SELECT value FROM boilerscope_meta WHERE key = 'format'") == "boilerscope-store"


# -- 8. exit 2, not 1 ----------------------------------------------------------------
def test_out_of_range_values_exit_2(cli, tmp_path):
    snap = snapshot(tmp_path)
    for args, words in ((["--sigma", "99999999999999999999999"], "sigma"),
                        (["--min-len", "3000000000"], "min length"),
                        (["--min-len", "3e9"], "min length"),
                        (["--workers", "-1"], "--workers"), (["--workers", "0"], "--workers")):
        assert_one_line_error(*cli("mine", snap, *args, "--quiet"), words)
    pq.write_table(pa.table({"doc_id": pa.array([1, 2**63], pa.uint64()), "text": ["a", "b"]}),
                   tmp_path / "u.parquet")
    assert_one_line_error(*cli("ingest", "u.parquet", "--quiet"), "2^63")
    assert not (tmp_path / "boilerscope.duckdb").exists() or store_state(tmp_path / "boilerscope.duckdb")[0] == []


def test_unwritable_arrays_folder_exit_2(cli, tmp_path):
    snap = snapshot(tmp_path)
    (tmp_path / "boilerscope.duckdb.arrays").write_text("a file where the folder goes")
    assert_one_line_error(*cli("ingest", snap, "--quiet"), "token arrays")
    # the store this ingest would have made is not left behind half-made; the
    # file in the way is the user's and stays
    assert not (tmp_path / "boilerscope.duckdb").exists()
    assert (tmp_path / "boilerscope.duckdb.arrays").read_text() == "a file where the folder goes"


@pytest.fixture
def small_disk(tmp_path):
    """A tmpfs of 24 MB (needs root: CI and developers run as root here)."""
    mnt = tmp_path / "disk"
    mnt.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=24m", "tmpfs", str(mnt)],
                      capture_output=True).returncode != 0:
        pytest.skip("cannot mount a tmpfs here (not root)")
    try:
        yield mnt
    finally:
        subprocess.run(["umount", "-l", str(mnt)], capture_output=True)


@pytest.mark.timeout(300)
def test_full_disk_exit_2_store_intact(cli, tmp_path, small_disk):
    small = corpus(tmp_path, "small.parquet", docs=50)
    db = small_disk / "s.duckdb"
    assert cli("mine", small, "--db", db, "--sigma", 5, "--quiet")[0] == 0
    before = store_state(db)
    big = corpus(tmp_path, "big.parquet", docs=60_000, words=80, seed=5)
    status, out, err = cli("ingest", big, "--db", db, "--quiet")
    assert_one_line_error(status, out, err, "space")
    assert store_state(db) == before
    assert leftovers(small_disk) == []
    # results that do not fit: the run is rolled back, nothing half-written
    out_disk = small_disk / "fill"
    with open(out_disk, "wb") as fh:
        try:
            while True:
                fh.write(b"\0" * (1 << 20))
                fh.flush()
        except OSError:
            pass
    status, out, err = cli("mine", small, "--db", tmp_path / "other.duckdb", "--sigma", 5, "--out",
                           small_disk / "res", "--quiet")
    assert_one_line_error(status, out, err)
    with Store(str(tmp_path / "other.duckdb"), read_only=True) as st:
        assert st.runs().height == 0
    assert leftovers(small_disk) == [] and not (small_disk / "res").exists()
    os.remove(out_disk)
    status, out, err = cli("mine", db, "--sigma", 5, "--quiet")
    assert status == 0, err


# -- 9. the rest -----------------------------------------------------------------
def test_runs_needs_no_write_access(cli, tmp_path):
    snap = snapshot(tmp_path)
    assert cli("mine", snap, "--sigma", 3, "--min-len", 2, "--quiet")[0] == 0
    holder = subprocess.Popen(
        [sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1], read_only=True);"
         " print('held', flush=True); time.sleep(60)", str(tmp_path / "boilerscope.duckdb")],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        status, out, err = cli("runs")
        assert status == 0, err
        assert len(out.strip().splitlines()) == 2
    finally:
        holder.kill()
        holder.wait()


@pytest.mark.timeout(60)
def test_fifo_and_nul_paths_are_refused(cli, tmp_path):
    os.mkfifo(tmp_path / "pipe.parquet")
    assert_one_line_error(*cli("ingest", "pipe.parquet", "--quiet"), "not a regular file")
    from engine import api
    with pytest.raises(BoilerscopeError, match="NUL"):
        api.ingest("a\x00b.parquet", db=str(tmp_path / "x.duckdb"))


def test_numba_cache_moves_where_the_checkout_is_read_only(tmp_path):
    """A user who cannot write the checkout (numba caches beside the sources)
    gets the cache in their own cache folder instead of a traceback.  Root
    can write anywhere, so the read-only checkout is simulated."""
    code = f"""
import os
real = os.access
os.access = lambda p, m, **k: False if "kernels" in str(p) and m == os.W_OK else real(p, m, **k)
os.environ.pop("NUMBA_CACHE_DIR", None)
os.environ["XDG_CACHE_HOME"] = {str(tmp_path)!r}
import engine
import numpy as np
from engine.kernels import tokenizer as K
assert os.environ["NUMBA_CACHE_DIR"] == os.path.join({str(tmp_path)!r}, "boilerscope", "numba")
K.remap(np.zeros(3, np.int32), np.zeros(1, np.int32))
print("ok")
"""
    p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                       env={k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"})
    assert p.returncode == 0 and p.stdout.strip() == "ok", p.stderr
    cached = [n for _, _, files in os.walk(tmp_path / "boilerscope" / "numba") for n in files]
    assert any(n.endswith(".nbi") for n in cached), cached


@pytest.mark.timeout(300)
def test_two_processes_mining_one_store_at_once(tmp_path):
    """DuckDB lets one process write a file: the other gets one line and exit
    2 ("in use"), the winner's run is stored whole, nothing else changes."""
    snap = corpus(tmp_path, docs=400)
    env = {**os.environ, "PYTHONPATH": ROOT}
    run = [sys.executable, "-m", "engine.cli"]
    assert subprocess.run(run + ["ingest", str(snap), "--quiet"], cwd=tmp_path, env=env).returncode == 0
    procs = [subprocess.Popen(run + ["mine", "boilerscope.duckdb", "--sigma", str(s), "--quiet"], cwd=tmp_path,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for s in (5, 6)]
    outs = [(p.wait(timeout=240), p.stdout.read(), p.stderr.read()) for p in procs]
    statuses = sorted(o[0] for o in outs)
    assert statuses in ([0, 0], [0, 2]), outs
    for status, out, err in outs:
        if status == 2:
            assert "in use" in err and len(err.strip().splitlines()) == 1
    _, runs, _, _ = store_state(tmp_path / "boilerscope.duckdb")
    assert len(runs) == statuses.count(0)


def test_chunks_of_an_unfinished_ingest_are_removed(cli, tmp_path):
    """Ingest commits its documents chunk by chunk under a temporary id (DuckDB
    then never holds a whole snapshot's text); a failed ingest deletes them at
    once, and those a kill -9 left go at the next writable open."""
    import shutil
    from engine.snapshot import SnapshotReader
    snap = corpus(tmp_path)
    assert cli("ingest", snap, "--quiet")[0] == 0
    db = str(tmp_path / "boilerscope.duckdb")
    before = store_state(db)

    class Failing(SnapshotReader):
        def chunks(self, prefetch=True):
            yield from super().chunks(prefetch=False)
            raise BoilerscopeError("the source went away")

    folder = tmp_path / "shards"
    folder.mkdir()
    for k in range(3):
        shutil.copy(snap, folder / f"part-{k}.parquet")
    with Store(db) as st:
        with pytest.raises(BoilerscopeError, match="went away"):
            st.add_snapshot(Failing(str(folder), _chunk_rows=7))
        assert st.scalar("SELECT count(*) FROM documents WHERE snapshot_id LIKE '.ingest-%'") == 0
        # what a kill -9 between two chunks leaves behind
        st._write(lambda cur: cur.execute(
            "INSERT INTO documents(snapshot_id, doc_index, doc_id, site, url, text, n_tokens, token_start)"
            " VALUES ('.ingest-dead', 0, 1, 's', NULL, 'x', 1, 0)"))
    assert store_state(db)[2] == before[2] + 1
    assert cli("runs")[0] == 0  # read-only: left alone
    assert cli("mine", "boilerscope.duckdb", "--sigma", 2, "--quiet")[0] == 0
    assert store_state(db)[:1] == before[:1] and store_state(db)[2] == before[2]
    assert leftovers(tmp_path) == []
