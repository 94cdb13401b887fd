"""The store: one DuckDB database file, plus memory-mapped token arrays.

This is the only module that imports duckdb.  One connection per
:class:`Store`, a cursor per query, ``?`` parameters, results as polars frames.

Layout
------
* ``snapshots``, ``documents`` (doc_index, doc_id, site, url, text, n_tokens,
  token_start; ``text`` is NULL where the snapshot's text file holds it) and
  ``vocabulary`` (token_id, token, df), keyed by snapshot id.
* ``runs`` and the run tables ``run_phrases``, ``run_occurrences``,
  ``run_documents``, ``run_spans``, keyed by run id; each run is written in
  one transaction, so an interrupted run leaves earlier ones intact.
* ``decisions``: noise / keep / unsure per phrase text and scope: ``*`` for
  every snapshot of the store (the project), or one snapshot id (which wins
  over ``*`` there).  They survive re-mining.
* The token stream, document offsets and character spans of each snapshot live
  in ``<db>.arrays/<snapshot_id>/`` as ``.npy`` files, written in a temporary
  folder and renamed, and opened memory-mapped.  The documents' text lives
  there too, once, as ``text.parquet`` (doc_index, text; zstd, row groups of
  :data:`TEXT_ROWS_PER_GROUP` documents, so that one document's read touches
  one group), read by DuckDB's Parquet reader; the ``documents`` rows hold
  no text.  A snapshot stored before holds its text in the rows (read
  there: :meth:`Store.text_relation`).
"""
from __future__ import annotations

import contextlib
import json
import logging
import os
import shutil
import threading
import uuid
from dataclasses import dataclass

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from .coverage import ranges_mask
from .constants import ALL_SNAPSHOTS, INGEST_DUCKDB_MEMORY
from .errors import BoilerscopeError, first_line
from .files import NpyAppender

log = logging.getLogger(__name__)

#: The decisions table (one definition: the schema and the migration use it).
DECISIONS_COLUMNS = (f"phrase VARCHAR, scope VARCHAR DEFAULT '{ALL_SNAPSHOTS}', decision VARCHAR, note VARCHAR,"
                     " updated TIMESTAMP DEFAULT now(), PRIMARY KEY (phrase, scope)")

SCHEMA = """
CREATE TABLE IF NOT EXISTS snapshots(
    snapshot_id VARCHAR PRIMARY KEY, source VARCHAR, documents BIGINT,
    tokens BIGINT, sites BIGINT, vocabulary BIGINT, created TIMESTAMP DEFAULT now(),
    replaced_payloads BIGINT DEFAULT 0);
CREATE TABLE IF NOT EXISTS documents(
    snapshot_id VARCHAR, doc_index INTEGER, doc_id BIGINT, site VARCHAR, url VARCHAR,
    text VARCHAR, n_tokens BIGINT, token_start BIGINT);
CREATE TABLE IF NOT EXISTS vocabulary(
    snapshot_id VARCHAR, token_id INTEGER, token VARCHAR, df BIGINT);
CREATE SEQUENCE IF NOT EXISTS run_ids START 1;
CREATE TABLE IF NOT EXISTS runs(
    run_id BIGINT PRIMARY KEY, snapshot_id VARCHAR, sigma BIGINT, min_len INTEGER,
    algo VARCHAR, created TIMESTAMP DEFAULT now(), phrases BIGINT, covered_tokens BIGINT,
    coverage DOUBLE, seconds DOUBLE, summary VARCHAR);
CREATE TABLE IF NOT EXISTS run_phrases(
    run_id BIGINT, phrase_id INTEGER, phrase VARCHAR, length INTEGER, df BIGINT,
    occurrences BIGINT, sites BIGINT, psi BIGINT, maximal BOOLEAN, first_pos BIGINT, block_id INTEGER);
CREATE TABLE IF NOT EXISTS run_occurrences(
    run_id BIGINT, phrase_id INTEGER, doc_index INTEGER, token_pos INTEGER);
CREATE TABLE IF NOT EXISTS run_documents(
    run_id BIGINT, doc_index INTEGER, covered_tokens BIGINT);
CREATE TABLE IF NOT EXISTS run_spans(
    run_id BIGINT, doc_index INTEGER, token_start INTEGER, token_end INTEGER,
    char_start INTEGER, char_end INTEGER, phrase_id INTEGER);
CREATE TABLE IF NOT EXISTS run_templates(
    run_id BIGINT, template_id INTEGER, template VARCHAR, df BIGINT, occurrences BIGINT,
    slots INTEGER, constant_tokens INTEGER, sites BIGINT, max_slot INTEGER, fillers VARCHAR, block_id INTEGER);
CREATE TABLE IF NOT EXISTS run_template_occurrences(
    run_id BIGINT, template_id INTEGER, doc_index INTEGER, token_start INTEGER, token_end INTEGER,
    char_start INTEGER, char_end INTEGER);
CREATE TABLE IF NOT EXISTS run_blocks(
    run_id BIGINT, block_id INTEGER, text VARCHAR, phrases BIGINT, documents BIGINT, sites BIGINT,
    covered_tokens BIGINT, share DOUBLE);
CREATE TABLE IF NOT EXISTS run_block_spans(
    run_id BIGINT, block_id INTEGER, doc_index INTEGER, token_start INTEGER, token_end INTEGER,
    char_start INTEGER, char_end INTEGER);
CREATE SEQUENCE IF NOT EXISTS dedup_ids START 1;
CREATE TABLE IF NOT EXISTS dedup_runs(
    dedup_id BIGINT PRIMARY KEY, snapshot_id VARCHAR, run_id BIGINT, raw BOOLEAN,
    created TIMESTAMP DEFAULT now(), config VARCHAR, summary VARCHAR);
CREATE TABLE IF NOT EXISTS dedup_clusters(
    dedup_id BIGINT, cluster_id BIGINT, doc_id BIGINT, definition VARCHAR);
CREATE TABLE IF NOT EXISTS dedup_pairs(
    dedup_id BIGINT, doc_a BIGINT, doc_b BIGINT, common BIGINT, jaccard DOUBLE);
CREATE TABLE IF NOT EXISTS decisions({DECISIONS_COLUMNS});
CREATE TABLE IF NOT EXISTS boilerscope_meta(key VARCHAR PRIMARY KEY, value VARCHAR);
INSERT OR IGNORE INTO boilerscope_meta VALUES ('format', 'boilerscope-store'), ('version', '1');
""".replace("{DECISIONS_COLUMNS}", DECISIONS_COLUMNS)

#: The write-ahead log's size that triggers a checkpoint (DuckDB's default is 16 MB).
CHECKPOINT_BYTES = 256 << 20

#: The tables of a store; a file holding any other table is not ours.
TABLES = ("snapshots", "documents", "vocabulary", "runs", "run_phrases", "run_occurrences",
          "run_documents", "run_spans", "run_templates", "run_template_occurrences", "run_blocks",
          "run_block_spans", "dedup_runs",
          "dedup_clusters", "dedup_pairs", "decisions", "boilerscope_meta")

def _storage_failure(message: str) -> bool:
    low = message.lower()
    return any(w in low for w in ("no space left", "disk is full", "read-only", "permission denied",
                                  "could not write", "could not fsync", "invalidated"))


def _schema_columns() -> dict[str, list[str]]:
    """Columns of each table of SCHEMA, from a scratch in-memory database."""
    global _SCHEMA_COLUMNS
    if _SCHEMA_COLUMNS is None:
        con = duckdb.connect(":memory:")
        try:
            con.execute(SCHEMA)
            rows = con.execute(
                "SELECT table_name, list(column_name ORDER BY ordinal_position) FROM information_schema.columns"
                " GROUP BY table_name").fetchall()
        finally:
            con.close()
        _SCHEMA_COLUMNS = {name: cols for name, cols in rows if name != "boilerscope_meta"}
    return _SCHEMA_COLUMNS


_SCHEMA_COLUMNS = None

#: Layouts of earlier versions, migrated when the store is opened for writing.
LEGACY_COLUMNS = {"decisions": ["phrase", "decision", "note", "updated"],
                  "snapshots": ["snapshot_id", "source", "documents", "tokens", "sites", "vocabulary", "created"],
                  "run_phrases": ["run_id", "phrase_id", "phrase", "length", "df", "occurrences", "sites", "psi",
                                  "maximal", "first_pos"],
                  "run_templates": ["run_id", "template_id", "template", "df", "occurrences", "slots",
                                    "constant_tokens", "sites", "max_slot", "fillers"]}

RUN_TABLES = ("run_phrases", "run_occurrences", "run_documents", "run_spans", "run_templates",
              "run_template_occurrences", "run_blocks", "run_block_spans")
ARRAY_NAMES = ("tokens", "doc_offsets", "span_start", "span_end")
#: The documents' text, beside the arrays (issue 26: inserting it into DuckDB
#: rows and checkpointing them took 1.5 s of webdocs' 6.2 s ingest).
TEXT_FILE = "text.parquet"
#: Documents per row group of the text file: a document's read decompresses
#: its group (webdocs, read by pyarrow: 1.4 ms median against 5.0 ms at 1,024
#: per group and 8.4 ms in DuckDB rows; bench/text_store.py).
TEXT_ROWS_PER_GROUP = 256
#: boilerscope_meta's key (plus the snapshot id) of a snapshot whose text is in its file.
TEXT_MARK = "text_file:"
DECISIONS = ("noise", "keep", "unsure")


class TextWriter:
    """The text file of a snapshot being stored, written chunk by chunk
    (doc_index, text; zstd level 1: the compression runs at about 400 MB/s
    on one core, level 3 saved 15% of the size for 30% more time)."""

    SCHEMA = pa.schema([("doc_index", pa.int32()), ("text", pa.large_string())])

    def __init__(self, path: str):
        self.path = path
        self._writer = pq.ParquetWriter(path, self.SCHEMA, compression="zstd", compression_level=1)

    def append(self, doc_index: pa.Array, text) -> None:
        self._writer.write_table(pa.table([doc_index, pc.cast(text, pa.large_string())], schema=self.SCHEMA),
                                 row_group_size=TEXT_ROWS_PER_GROUP)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None

    def discard(self) -> None:
        with contextlib.suppress(Exception):
            self.close()
        with contextlib.suppress(OSError):
            os.remove(self.path)


def _run_row(cur, run_id: int, snapshot_id: str, sigma: int, min_len: int, algo: str, summary: dict,
             before_commit) -> int:
    """A run's last step inside its transaction: ``before_commit(run_id)``
    (it may complete the summary), then the ``runs`` row."""
    summary["run_id"] = int(run_id)
    if before_commit is not None:
        before_commit(int(run_id))
    cur.execute(
        "INSERT INTO runs(run_id, snapshot_id, sigma, min_len, algo, phrases,"
        " covered_tokens, coverage, seconds, summary) VALUES (?,?,?,?,?,?,?,?,?,?)",
        [run_id, snapshot_id, sigma, min_len, algo, summary.get("phrases"),
         summary.get("covered_tokens"), summary.get("coverage"),
         summary.get("seconds", {}).get("total"), json.dumps(summary)])
    return int(run_id)


def _lost(what: str) -> BoilerscopeError:
    return BoilerscopeError(f"the Spark job's parts are incomplete or damaged ({what}); nothing was stored: "
                            "the store's folder must be on storage the driver and every executor share")


def _quoted(path: str) -> str:
    """A path as an SQL string literal (where DuckDB takes no parameter: COPY, a list of files)."""
    return "'" + path.replace("'", "''") + "'"


def _parquet_relation(files: list[str]) -> str:
    """``read_parquet`` of these files as SQL."""
    return "read_parquet([" + ", ".join(_quoted(f) for f in files) + "])"


class _AlreadyStored(Exception):
    """The streamed snapshot's content is already stored (rolls back the copy)."""


@dataclass
class SnapshotArrays:
    tokens: np.ndarray
    doc_offsets: np.ndarray
    span_start: np.ndarray
    span_end: np.ndarray


class Store:
    """A Boilerscope store (DuckDB file + array folder).

    Parameters
    ----------
    path : str
        The database file (created if missing).
    read_only : bool
        Open without writing (the schema must exist).
    """

    def __init__(self, path: str, read_only: bool = False):
        self.path = os.path.abspath(path)
        self.arrays_root = self.path + ".arrays"
        self.read_only = read_only
        self._write_lock = threading.Lock()
        self._pool_lock = threading.Lock()
        self._ingests = 0  # ingests running (the buffer pool is capped while any runs)
        self._text_in_file: set = set()  # snapshots marked as having their text in their file
        self._text_checked: dict = {}  # text file -> (mtime, size) whose footer was read
        folder = os.path.dirname(self.path)
        if "\x00" in path:
            raise BoilerscopeError("the store path holds a NUL byte; give a plain file name for {db}", "db")
        if not os.path.isdir(folder):
            raise BoilerscopeError(f"{path}: folder {folder} does not exist; create it or pick another {{db}}", "db")
        if os.path.isdir(self.path):
            raise BoilerscopeError(f"{path} is a folder; give a .duckdb file for {{db}}", "db")
        exists = os.path.exists(self.path) and os.path.getsize(self.path) > 0
        if read_only and not exists:
            raise BoilerscopeError(f"{path}: store not found; run 'boilerscope ingest' first")
        self.con = self._connect(read_only)
        if exists:
            # look before writing anything: another program's database is never written to
            try:
                self._check_ours()
            except BaseException:
                self.con.close()
                raise
        if not read_only:
            try:
                self._migrate()
                self.con.execute(SCHEMA)
            except duckdb.Error as exc:
                self.con.close()
                raise BoilerscopeError(f"{path}: cannot set up the store ({first_line(exc)}); "
                                       "check the disk and the file's permissions") from None
            except BaseException:
                self.con.close()
                raise
            self._clean_leftovers()

    def _migrate(self) -> None:
        """Bring an earlier layout up to date (a transaction per change)."""
        cols = [r[0] for r in self.con.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'decisions'"
            " AND table_catalog = current_database() ORDER BY ordinal_position").fetchall()]
        if cols == LEGACY_COLUMNS["decisions"]:
            def write(cur):
                cur.execute("ALTER TABLE decisions RENAME TO decisions_v0")
                cur.execute(f"CREATE TABLE decisions({DECISIONS_COLUMNS})")
                cur.execute("INSERT INTO decisions SELECT phrase, ?, decision, note, updated FROM decisions_v0",
                            [ALL_SNAPSHOTS])
                cur.execute("DROP TABLE decisions_v0")

            self._write(write)
        added = {"snapshots": "replaced_payloads BIGINT DEFAULT 0",  # issue 29: 0 for older snapshots
                 "run_phrases": "block_id INTEGER", "run_templates": "block_id INTEGER"}  # issue 24: NULL before
        for table, column in added.items():
            have = [r[0] for r in self.con.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = ?"
                " AND table_catalog = current_database() ORDER BY ordinal_position", [table]).fetchall()]
            if have == LEGACY_COLUMNS[table]:
                self._write(lambda cur, t=table, c=column: cur.execute(f"ALTER TABLE {t} ADD COLUMN {c}"))

    def _connect(self, read_only: bool):
        try:
            con = duckdb.connect(self.path, read_only=read_only)
            # the text files' footers read once, not on every document's read
            # (webdocs: one document 6.4 ms median against 7.5 ms)
            con.execute("SET parquet_metadata_cache = true")
            if not read_only:
                # ingest commits a chunk at a time: checkpoint every 256 MB of
                # log, not every 16 MB (100M tokens: 28.9 s to 21.5 s, same memory)
                con.execute(f"SET checkpoint_threshold = '{CHECKPOINT_BYTES >> 20}MB'")
            return con
        except duckdb.IOException as exc:
            msg = str(exc)
            if "lock" in msg.lower():
                raise BoilerscopeError(
                    f"{self.path} is in use by another process (the dashboard?); close it "
                    "or use {db} with another file", "db") from None
            raise BoilerscopeError(f"{self.path} cannot be opened ({msg.splitlines()[0]})") from None
        except duckdb.Error as exc:
            raise BoilerscopeError(
                f"{self.path} is not a Boilerscope store ({first_line(exc)}); "
                "give another {db} file", "db") from None

    def _check_ours(self) -> None:
        """Refuse a DuckDB file that another program made (never write into it).

        A store carries ``boilerscope_meta`` (format, version); a store made
        before the marker existed is recognised by its tables and columns."""
        cur = self.con.cursor()
        try:
            rows = cur.execute(
                "SELECT table_name, list(column_name ORDER BY ordinal_position) FROM information_schema.columns"
                " WHERE table_catalog = current_database() GROUP BY table_name").fetchall()
            tables = {name: cols for name, cols in rows}
            if not tables:
                return
            if "boilerscope_meta" in tables:
                fmt = cur.execute("SELECT value FROM boilerscope_meta WHERE key = 'format'").fetchall()
                if fmt and fmt[0][0] == "boilerscope-store":
                    return
            foreign = sorted(set(tables) - set(TABLES))
            legacy = not foreign and all(
                tables.get(name) in (cols, LEGACY_COLUMNS.get(name))
                for name, cols in _schema_columns().items() if name in tables)
            if legacy:
                return
        except duckdb.Error:
            pass
        finally:
            cur.close()
        raise BoilerscopeError(
            f"{self.path} is not a Boilerscope store (another program's database); "
            "give another {db} file", "db")

    def _clean_leftovers(self) -> None:
        """Remove what a killed ingest left: its documents (committed chunk by
        chunk under a temporary ``.ingest-`` id), temporary folders, and
        snapshot folders whose snapshot never committed.  Safe
        here: this process holds the store's write lock, so no other writer
        is running."""
        if self.scalar("SELECT count(*) FROM documents WHERE snapshot_id LIKE '.ingest-%'"):
            log.info("removing the documents of an ingest that never finished")
            self._write(lambda cur: cur.execute("DELETE FROM documents WHERE snapshot_id LIKE '.ingest-%'"))
        try:
            names = os.listdir(self.arrays_root)
        except OSError:
            return
        if not names:
            return
        known = set(self.query("SELECT snapshot_id FROM snapshots")["snapshot_id"].to_list())
        for name in names:
            if name not in known:
                log.info("removing leftover %s", name)
                shutil.rmtree(os.path.join(self.arrays_root, name), ignore_errors=True)

    def close(self):
        self.con.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- queries -----------------------------------------------------------
    def query(self, sql: str, params: list | tuple = ()) -> pl.DataFrame:
        """Run one query on a fresh cursor; the result as a polars frame."""
        cur = self.con.cursor()
        try:
            return cur.sql(sql, params=list(params) or None).pl()
        finally:
            cur.close()

    def scalar(self, sql: str, params: list | tuple = ()):
        cur = self.con.cursor()
        try:
            rows = cur.execute(sql, list(params)).fetchall()
            return rows[0][0] if rows else None
        finally:
            cur.close()

    def _write(self, fn):
        """Run ``fn(cursor)`` in one transaction (writers are serialised).

        A failure of the storage itself (disk full, read-only file) becomes a
        :class:`BoilerscopeError`; the transaction is rolled back, so the
        store keeps what it had."""
        if self.read_only:
            raise BoilerscopeError(f"{self.path} is open read-only; it cannot be changed")
        with self._write_lock:
            cur = self.con.cursor()
            try:
                cur.execute("BEGIN TRANSACTION")
                out = fn(cur)
                cur.execute("COMMIT")
                return out
            except BaseException as exc:
                try:
                    cur.execute("ROLLBACK")
                except duckdb.Error:
                    pass
                if isinstance(exc, (duckdb.IOException, duckdb.FatalException, duckdb.OutOfMemoryException)) or (
                        isinstance(exc, duckdb.Error) and _storage_failure(str(exc))):
                    raise BoilerscopeError(
                        f"cannot write to the store {self.path} ({first_line(exc)}); nothing was "
                        "changed: free some disk space or use another {db}", "db") from None
                raise
            finally:
                cur.close()

    # -- snapshots ---------------------------------------------------------
    def has_snapshot(self, snapshot_id: str) -> bool:
        return bool(self.scalar("SELECT count(*) FROM snapshots WHERE snapshot_id = ?",
                                [snapshot_id]))

    def snapshots(self) -> pl.DataFrame:
        return self.query("SELECT * FROM snapshots ORDER BY created DESC, snapshot_id")

    def latest_snapshot(self) -> str:
        sid = self.scalar("SELECT snapshot_id FROM snapshots ORDER BY created DESC LIMIT 1")
        if sid is None:
            raise BoilerscopeError(
                f"{self.path} holds no snapshot yet; ingest a snapshot into it first")
        return sid

    def add_snapshot(self, reader) -> tuple[str, bool]:
        """Store a snapshot streamed chunk by chunk; returns (snapshot_id,
        created), created False when the same content was already there
        (nothing is then added).

        ``reader`` is a :class:`~engine.snapshot.SnapshotReader` (or anything
        with its ``chunks()``, and after them ``snapshot_id``, ``source``,
        ``vocab``, ``df``, ``n_docs``, ``n_tokens``, ``n_sites``).  Documents
        are inserted as they come under a temporary id, one transaction per
        chunk (DuckDB would otherwise hold the whole snapshot's text in
        memory until the commit: 8 bytes per token, 8.6 GB of a 1B-token
        ingest), and the token arrays appended to files in a temporary
        folder.  Once the id is known (the hash of the whole content), one
        last transaction gives the rows that id, adds the snapshot and renames
        the folder into place: only then does the snapshot exist.  Any
        failure deletes the rows and removes the folder, and a kill -9 leaves
        them to the next writer (:meth:`_clean_leftovers`): the store keeps
        what it had.
        """
        tmp_id = f".ingest-{uuid.uuid4().hex}"
        tmp = os.path.join(self.arrays_root, f".tmp-{uuid.uuid4().hex}")
        try:
            os.makedirs(tmp, exist_ok=False)
        except OSError as exc:
            raise BoilerscopeError(f"cannot write the token arrays in {self.arrays_root} "
                                   f"({exc.strerror or exc}); check its permissions or use another {{db}}", "db") from None
        dtypes = {"tokens": np.int32, "doc_offsets": np.int64, "span_start": np.int32, "span_end": np.int32}
        writers: dict = {}
        text_writer = None  # opened inside the try below: a failure to open one closes the others
        final = None
        pos = {"base": 0, "doc_index": 0}

        def add_chunk(chunk):
            # each chunk is its own transaction, under the temporary id: DuckDB
            # then holds one chunk's text, never the whole snapshot's
            n = chunk.table.num_rows
            ends = pos["base"] + np.cumsum(chunk.n_tokens)
            doc_index = pa.array(np.arange(pos["doc_index"], pos["doc_index"] + n, dtype=np.int32))
            docs = pa.table({
                "doc_index": doc_index,
                "doc_id": chunk.table.column("doc_id"),
                "site": chunk.table.column("site"),
                "url": chunk.table.column("url"),
                "text": pa.nulls(n, pa.string()),  # the text goes to the text file, once
                "n_tokens": pa.array(chunk.n_tokens),
                "token_start": pa.array(ends - chunk.n_tokens),
            })
            text_writer.append(doc_index, chunk.table.column("text"))

            def write(cur):
                cur.register("_docs", docs)
                cur.execute("INSERT INTO documents SELECT ? AS snapshot_id, * FROM _docs", [tmp_id])
                cur.unregister("_docs")

            self._write(write)
            writers["tokens"].append(chunk.tokens)
            writers["span_start"].append(chunk.span_start)
            writers["span_end"].append(chunk.span_end)
            writers["doc_offsets"].append(ends)
            pos["base"] = int(ends[-1]) if n else pos["base"]
            pos["doc_index"] += n

        def finish(cur):
            # one transaction: the rows take the snapshot's id, its vocabulary
            # and row go in, the arrays folder takes its place
            nonlocal final
            sid = reader.snapshot_id
            if cur.execute("SELECT count(*) FROM snapshots WHERE snapshot_id = ?", [sid]).fetchone()[0]:
                raise _AlreadyStored(sid)
            cur.execute("UPDATE documents SET snapshot_id = ? WHERE snapshot_id = ?", [sid, tmp_id])
            # the text is in the snapshot's text file (a snapshot stored before has it in its rows)
            cur.execute("INSERT OR REPLACE INTO boilerscope_meta VALUES (?, ?)", [TEXT_MARK + sid, TEXT_FILE])
            files = getattr(reader, "vocab_files", None)
            if files is not None:  # Parquet parts (token_id, token, df), read by DuckDB (a Spark run's)
                if files:
                    cur.execute("INSERT INTO vocabulary SELECT ?, token_id::INTEGER, token, df"
                                f" FROM {_parquet_relation(files)}", [sid])
                n_vocab = reader.n_vocab
            else:
                vocab = pa.table({
                    "token_id": pa.array(np.arange(len(reader.vocab), dtype=np.int32)),
                    "token": pa.array(reader.vocab, pa.string()),
                    "df": pa.array(np.asarray(reader.df, np.int64)),
                })
                cur.register("_vocab", vocab)
                cur.execute("INSERT INTO vocabulary SELECT ? AS snapshot_id, * FROM _vocab", [sid])
                cur.unregister("_vocab")
                n_vocab = len(reader.vocab)
            cur.execute(
                "INSERT INTO snapshots(snapshot_id, source, documents, tokens, sites, vocabulary, replaced_payloads)"
                " VALUES (?, ?, ?, ?, ?, ?, ?)",
                [sid, reader.origin, reader.n_docs, reader.n_tokens, reader.n_sites,
                 n_vocab, int(getattr(reader, "replaced_payloads", 0))])
            final = os.path.join(self.arrays_root, sid)
            if os.path.exists(final):
                shutil.rmtree(final)
            os.replace(tmp, final)
            return sid

        def drop_rows():
            # the chunks already committed under the temporary id go (a kill -9
            # leaves them to the next writer: _clean_leftovers)
            with contextlib.suppress(BoilerscopeError, duckdb.Error):
                self._write(lambda cur: cur.execute("DELETE FROM documents WHERE snapshot_id = ?", [tmp_id]))

        try:
            self._buffer_pool(capped=True)
            for name in ARRAY_NAMES:
                writers[name] = NpyAppender(os.path.join(tmp, name + ".npy"), dtypes[name])
            text_writer = TextWriter(os.path.join(tmp, TEXT_FILE))
            writers["doc_offsets"].append(np.zeros(1, np.int64))
            for chunk in reader.chunks():
                add_chunk(chunk)
            for w in writers.values():
                w.close()
            text_writer.close()
            return self._write(finish), True
        except _AlreadyStored as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            drop_rows()
            return exc.args[0], False
        except BaseException as exc:
            for w in writers.values():
                w.discard()
            if text_writer is not None:
                text_writer.discard()
            shutil.rmtree(tmp, ignore_errors=True)  # first: it frees the disk the DELETE may need
            if final is not None:
                shutil.rmtree(final, ignore_errors=True)
            drop_rows()
            if isinstance(exc, OSError):
                raise BoilerscopeError(f"cannot write the token arrays in {self.arrays_root} "
                                       f"({exc.strerror or exc}); nothing was stored: free some disk "
                                       "space or use another {db}", "db") from None
            raise
        finally:
            self._buffer_pool(capped=False)

    def add_parts_snapshot(self, reader) -> tuple[str, bool]:
        """Store a snapshot the Spark job's executors wrote in parts
        (:class:`engine.partitioned_snapshot.PartsReader`): found by its id,
        else copied in by :meth:`add_snapshot` a part at a time (its sites
        counted here, over the parts' documents)."""
        if self.has_snapshot(reader.snapshot_id):
            return reader.snapshot_id, False
        files = reader.docs_files()
        if files:
            self._buffer_pool(capped=True)
            cur = self.con.cursor()
            try:  # (a part missing or unreadable: one clear error)
                reader.n_sites = int(cur.execute(
                    f"SELECT count(DISTINCT site) FROM {_parquet_relation(files)}").fetchone()[0])
                # the vocabulary in order of first occurrence (part, then local id), and each part's map
                vocab = _parquet_relation(reader.vocab_parts())
                cur.execute("CREATE OR REPLACE TEMP TABLE _v AS SELECT (row_number() OVER (ORDER BY f.part, f.local_id)"
                            " - 1)::INTEGER AS token_id, token, df FROM (SELECT token, sum(df) AS df,"
                            f" min({{'part': part, 'local_id': local_id}}) AS f FROM {vocab} GROUP BY token)")
                cur.execute("COPY (SELECT token_id, token, df FROM _v ORDER BY token_id)"
                            f" TO {_quoted(reader.vocabulary)} (FORMAT parquet)")
                cur.execute(f"COPY (SELECT v.part, v.local_id, g.token_id FROM {vocab}"
                            f" v JOIN _v g USING (token)) TO {_quoted(reader.maps)} (FORMAT parquet, PARTITION_BY (part), OVERWRITE)")
                reader.n_vocab = int(cur.execute("SELECT count(*) FROM _v").fetchone()[0])
                cur.execute("DROP TABLE _v")
            except (duckdb.IOException, duckdb.InvalidInputException) as exc:
                raise _lost(first_line(exc)) from None
            finally:
                cur.close()
                self._buffer_pool(capped=False)
            reader.vocab_files = [reader.vocabulary]
        return self.add_snapshot(reader)

    def _buffer_pool(self, capped: bool) -> None:
        """Cap DuckDB's buffer pool while ingests run (it keeps every block it
        wrote cached, up to 80% of RAM, so memory would grow with the input),
        and give the default back when the last one ends (``RESET``: a store
        never sets a limit of its own).  Counted, so that two ingests of one
        store (two dashboard sessions) neither restore too early nor keep the
        cap.  Best effort: a failure leaves the limit as it was."""
        with self._pool_lock:
            self._ingests += 1 if capped else -1
            if self._ingests == (1 if capped else 0):
                with contextlib.suppress(duckdb.Error):
                    self.con.execute(f"SET memory_limit = '{INGEST_DUCKDB_MEMORY}'" if capped
                                     else "RESET memory_limit")


    def arrays(self, snapshot_id: str) -> SnapshotArrays:
        folder = os.path.join(self.arrays_root, snapshot_id)
        try:
            return SnapshotArrays(**{
                name: np.load(os.path.join(folder, name + ".npy"), mmap_mode="r")
                for name in ARRAY_NAMES})
        except (OSError, ValueError) as exc:
            raise BoilerscopeError(
                f"the token arrays of snapshot {snapshot_id} are missing or damaged ({exc}); "
                "ingest the snapshot again into a new {db}", "db") from None

    def vocabulary(self, snapshot_id: str) -> list[str]:
        return self.query("SELECT token FROM vocabulary WHERE snapshot_id = ? ORDER BY token_id",
                          [snapshot_id])["token"].to_list()

    def documents_meta(self, snapshot_id: str) -> pl.DataFrame:
        """doc_index, doc_id, site, url, n_tokens (no text)."""
        return self.query(
            "SELECT doc_index, doc_id, site, url, n_tokens FROM documents "
            "WHERE snapshot_id = ? ORDER BY doc_index", [snapshot_id])

    def text_relation(self, snapshot_id: str) -> tuple[str, list]:
        """The documents' text of a snapshot as SQL (a relation of doc_index,
        text) and its parameters, to join on doc_index: the snapshot's text
        file, or its ``documents`` rows for a snapshot stored before the
        text file."""
        if snapshot_id not in self._text_in_file:  # (a mark, once made, stays: asked once per snapshot)
            try:
                marked = self.scalar("SELECT count(*) FROM boilerscope_meta WHERE key = ?",
                                     [TEXT_MARK + snapshot_id])
            except duckdb.CatalogException:  # a store from before the meta table, opened read-only
                marked = 0
            if not marked:
                return "(SELECT doc_index, text FROM documents WHERE snapshot_id = ?)", [snapshot_id]
            self._text_in_file.add(snapshot_id)
        path = os.path.join(self.arrays_root, snapshot_id, TEXT_FILE)
        self._check_text_file(snapshot_id, path)
        return "(SELECT doc_index, text FROM read_parquet(?))", [path]

    def _check_text_file(self, snapshot_id: str, path: str) -> None:
        """The text file is there and its footer reads (once per file
        version): else one clear error, never empty text."""
        try:
            st = os.stat(path)
            stamp = (st.st_mtime_ns, st.st_size)
            if self._text_checked.get(path) == stamp:
                return
            meta = pq.read_metadata(path)
            if meta.schema.to_arrow_schema().names != TextWriter.SCHEMA.names:
                raise ValueError(f"columns {meta.schema.to_arrow_schema().names}")
        except (OSError, ValueError, pa.ArrowException) as exc:
            raise BoilerscopeError(
                f"the text of snapshot {snapshot_id} is missing or damaged ({first_line(exc)}); "
                "ingest the snapshot again into a new {db}", "db") from None
        self._text_checked[path] = stamp

    def documents_text(self, snapshot_id: str) -> pl.DataFrame:
        """doc_index, doc_id, site, url, text, n_tokens of every document (the export)."""
        rel, params = self.text_relation(snapshot_id)
        return self.query(
            f"SELECT d.doc_index, d.doc_id, d.site, d.url, t.text, d.n_tokens FROM documents d LEFT JOIN {rel} t"
            " ON t.doc_index = d.doc_index WHERE d.snapshot_id = ? ORDER BY d.doc_index", params + [snapshot_id])

    def document(self, snapshot_id: str, doc_index: int) -> dict | None:
        rel, params = self.text_relation(snapshot_id)
        df = self.query(f"SELECT d.* REPLACE (t.text AS text) FROM documents d LEFT JOIN {rel} t"
                        " ON t.doc_index = d.doc_index WHERE d.snapshot_id = ? AND d.doc_index = ?",
                        params + [snapshot_id, doc_index])
        return df.row(0, named=True) if df.height else None

    def text_slices(self, snapshot_id: str, doc_index, char_start, char_end) -> list[str]:
        """The characters ``[char_start, char_end)`` of each given document's
        text, cut in the database (only the slices leave it)."""
        # (through polars: pyarrow's pa.array of a numpy array imports pandas, 0.2 s)
        ranges = pl.DataFrame({"i": np.arange(len(doc_index), dtype=np.int64),
                               "doc_index": np.asarray(doc_index, np.int32),
                               "a": np.asarray(char_start, np.int64),
                               "b": np.asarray(char_end, np.int64)}).to_arrow()
        if not ranges.num_rows:
            return []
        rel, params = self.text_relation(snapshot_id)
        cur = self.con.cursor()
        try:
            cur.register("_ranges", ranges)
            rows = cur.execute(
                f"SELECT r.i, substring(coalesce(d.text, ''), r.a + 1, r.b - r.a) FROM _ranges r JOIN {rel} d"
                " ON d.doc_index = r.doc_index ORDER BY r.i", params).fetchall()
        finally:
            cur.close()
        return [t for _, t in rows]

    # -- runs --------------------------------------------------------------
    def add_run(self, snapshot_id: str, sigma: int, min_len: int, algo: str,
                frames: dict[str, pl.DataFrame], summary: dict, before_commit=None) -> int:
        """Store one run in one transaction; returns its run id.

        ``before_commit(run_id)`` runs inside the transaction, after the run's
        tables are written and before its ``runs`` row (it may complete the
        summary, and write the result files): if it fails, the run is rolled
        back."""

        def write(cur):
            run_id = cur.execute("SELECT nextval('run_ids')").fetchall()[0][0]
            for table in RUN_TABLES:
                if table not in frames:  # a run without templates
                    continue
                frame = frames[table].with_columns(pl.lit(run_id, pl.Int64).alias("run_id"))
                cols = self.query(f"SELECT * FROM {table} LIMIT 0").columns
                arrow = frame.select(cols).to_arrow()
                cur.register("_frame", arrow)
                cur.execute(f"INSERT INTO {table} SELECT * FROM _frame")
                cur.unregister("_frame")
            return _run_row(cur, run_id, snapshot_id, sigma, min_len, algo, summary, before_commit)

        return self._write(write)

    def add_parts_run(self, snapshot_id: str, sigma: int, min_len: int, algo: str, folders: dict[str, str],
                      summary: dict, before_commit=None) -> int:
        """Store a run from folders of Parquet parts (the partitioned Spark
        job's, written by its executors: :mod:`engine.partitioned_store`) in
        one transaction, DuckDB reading the parts: nothing passes through
        Python frames.  ``folders``: ``phrases``, ``documents``, ``blocks``,
        ``block_spans`` (the result files) and ``occurrences``, ``spans``,
        ``lgrams``, ``lgram_occurrences``; documents are matched to the
        snapshot's by doc_id (the same documents and token counts, or an
        error).  Maximal phrases are numbered in the files' order, the
        L-grams that explain spans after them.  ``before_commit(run_id)`` as
        in :meth:`add_run`.  Returns the run id."""
        files = {}  # each folder's parts, listed once
        for name, folder in folders.items():
            if not os.path.isdir(folder):
                raise _lost(f"{folder} is missing")
            files[name] = sorted(os.path.join(folder, f) for f in os.listdir(folder) if f.endswith(".parquet"))

        def rp(name):
            return _parquet_relation(files[name])

        def write(cur):
            run_id = cur.execute("SELECT nextval('run_ids')").fetchall()[0][0]
            cur.execute("CREATE OR REPLACE TEMP TABLE _d AS SELECT doc_index, doc_id, token_start, n_tokens"
                        " FROM documents WHERE snapshot_id = ?", [snapshot_id])
            docs = files["documents"]
            bad = cur.execute(
                f"SELECT (SELECT count(*) FROM {rp('documents')}) <> (SELECT count(*) FROM _d) OR EXISTS ("
                f"SELECT 1 FROM {rp('documents')} x LEFT JOIN _d USING (doc_id)"
                " WHERE _d.doc_id IS NULL OR _d.n_tokens <> x.n_tokens)").fetchone()[0] if docs else True
            if bad:
                raise BoilerscopeError(f"the store's snapshot {snapshot_id} does not hold the documents Spark "
                                       "read (were the shards changed meanwhile?); mine again")
            if files["phrases"]:
                cur.execute("CREATE OR REPLACE TEMP TABLE _m AS SELECT (row_number() OVER (ORDER BY psi DESC,"
                            " length DESC, phrase) - 1)::INTEGER AS phrase_id, sha256(phrase) AS key, *"
                            f" FROM {rp('phrases')}")
            else:  # nothing repeats (Spark wrote no part)
                cur.execute("CREATE OR REPLACE TEMP TABLE _m (phrase_id INTEGER, key VARCHAR, phrase VARCHAR,"
                            " length INTEGER, df BIGINT, occurrences BIGINT, sites BIGINT, psi BIGINT, block_id INTEGER)")
            n_max = cur.execute("SELECT count(*) FROM _m").fetchone()[0]
            if files["lgrams"]:
                cur.execute("CREATE OR REPLACE TEMP TABLE _g AS SELECT (? + row_number() OVER (ORDER BY h, g)"
                            f" - 1)::INTEGER AS phrase_id, * FROM {rp('lgrams')}", [n_max])
            else:
                cur.execute("CREATE OR REPLACE TEMP TABLE _g (phrase_id INTEGER, h BIGINT, g BIGINT,"
                            " phrase VARCHAR, df BIGINT, occurrences BIGINT)")
            if files["occurrences"]:
                cur.execute("INSERT INTO run_occurrences SELECT ?, m.phrase_id, d.doc_index, o.pos::INTEGER"
                            f" FROM {rp('occurrences')} o JOIN _m m USING (key) JOIN _d d USING (doc_id)",
                            [run_id])
            if files["lgram_occurrences"]:
                cur.execute("INSERT INTO run_occurrences SELECT ?, l.phrase_id, d.doc_index, o.pos::INTEGER"
                            f" FROM {rp('lgram_occurrences')} o JOIN _g l USING (h, g) JOIN _d d USING (doc_id)",
                            [run_id])
            # a first occurrence of each phrase, in the snapshot's token array
            cur.execute("CREATE OR REPLACE TEMP TABLE _f AS SELECT o.phrase_id, min(d.token_start + o.token_pos)"
                        " AS first_pos FROM run_occurrences o JOIN _d d USING (doc_index) WHERE o.run_id = ?"
                        " GROUP BY o.phrase_id", [run_id])
            cur.execute("INSERT INTO run_phrases SELECT ?, m.phrase_id, m.phrase, m.length, m.df, m.occurrences,"
                        " m.sites, m.psi, true, f.first_pos, m.block_id FROM _m m LEFT JOIN _f f USING (phrase_id)",
                        [run_id])
            cur.execute("INSERT INTO run_phrases SELECT ?, l.phrase_id, l.phrase, ?, l.df, l.occurrences, NULL,"
                        " ? * l.df, false, f.first_pos, NULL FROM _g l LEFT JOIN _f f USING (phrase_id)",
                        [run_id, min_len, min_len])
            cur.execute("INSERT INTO run_documents SELECT ?, d.doc_index, x.covered_tokens"
                        f" FROM {rp('documents')} x JOIN _d d USING (doc_id)", [run_id])
            if files["spans"]:
                cur.execute("INSERT INTO run_spans SELECT ?, d.doc_index, s.start::INTEGER, s.\"end\"::INTEGER,"
                            " s.char_start, s.char_end, coalesce(m.phrase_id, l.phrase_id)"
                            f" FROM {rp('spans')} s JOIN _d d USING (doc_id) LEFT JOIN _m m ON m.key = s.key"
                            " LEFT JOIN _g l ON l.h = s.h AND l.g = s.g", [run_id])
            if files["blocks"]:
                cur.execute("INSERT INTO run_blocks SELECT ?, block_id, text, phrases, documents, sites,"
                            f" covered_tokens, share FROM {rp('blocks')}", [run_id])
            if files["block_spans"]:
                cur.execute("INSERT INTO run_block_spans SELECT ?, b.block_id, d.doc_index, b.start, b.\"end\","
                            " b.char_start, b.char_end"
                            f" FROM {rp('block_spans')} b JOIN _d d USING (doc_id)", [run_id])
            # every part arrived: each phrase's occurrences, one span per maximal phrase occurrence,
            # every span explained
            found = cur.execute(
                "SELECT (SELECT coalesce(sum(occurrences), 0) FROM _m) + (SELECT coalesce(sum(occurrences), 0) FROM _g),"
                " (SELECT count(*) FROM run_occurrences WHERE run_id = ?),"
                " (SELECT coalesce(sum(occurrences), 0) FROM _m),"
                " (SELECT count(*) FROM run_spans s JOIN _m USING (phrase_id) WHERE s.run_id = ?),"
                " (SELECT count(*) FROM run_spans WHERE run_id = ? AND phrase_id IS NULL)",
                [run_id, run_id, run_id]).fetchone()
            if found[0] != found[1] or found[2] != found[3] or found[4]:
                raise _lost(f"occurrences {found[1]} of {found[0]}, maximal spans {found[3]} of {found[2]}, "
                            f"{found[4]} spans without their phrase")
            for t in ("_d", "_m", "_g", "_f"):
                cur.execute(f"DROP TABLE IF EXISTS {t}")
            return _run_row(cur, run_id, snapshot_id, sigma, min_len, algo, summary, before_commit)

        self._buffer_pool(capped=True)  # DuckDB spills past the cap: the driver's memory stays bounded
        try:
            return self._write(write)
        except (duckdb.IOException, duckdb.InvalidInputException) as exc:
            raise _lost(first_line(exc)) from None
        finally:
            self._buffer_pool(capped=False)

    def runs(self, snapshot_id: str | None = None) -> pl.DataFrame:
        sql = ("SELECT run_id, snapshot_id, sigma, min_len, algo,"
               " json_extract(summary, '$.templates.templates')::BIGINT AS templates, created, phrases,"
               " covered_tokens, coverage, seconds FROM runs")
        if snapshot_id:
            return self.query(sql + " WHERE snapshot_id = ? ORDER BY run_id", [snapshot_id])
        return self.query(sql + " ORDER BY run_id")

    def run(self, run_id: int) -> dict | None:
        df = self.query("SELECT * FROM runs WHERE run_id = ?", [run_id])
        if not df.height:
            return None
        row = df.row(0, named=True)
        row["summary"] = json.loads(row["summary"]) if row["summary"] else {}
        return row

    def find_run(self, snapshot_id: str, sigma: int, min_len: int, algo: str, max_slot: int = 0) -> int | None:
        """The newest run with these parameters; ``max_slot`` > 0: one that
        mined templates with that slot width, 0: one without templates."""
        return self.scalar(
            "SELECT max(run_id) FROM runs WHERE snapshot_id = ? AND sigma = ? AND min_len = ?"
            " AND algo = ? AND coalesce(json_extract(summary, '$.templates.max_slot')::INTEGER, 0) = ?",
            [snapshot_id, sigma, min_len, algo, int(max_slot)])

    def delete_run(self, run_id: int) -> bool:
        if self.run(run_id) is None:
            return False

        def write(cur):
            for table in RUN_TABLES:
                cur.execute(f"DELETE FROM {table} WHERE run_id = ?", [run_id])
            # near-duplicate results computed on this run's coverage go with it
            for table in ("dedup_clusters", "dedup_pairs"):
                cur.execute(f"DELETE FROM {table} WHERE dedup_id IN"
                            " (SELECT dedup_id FROM dedup_runs WHERE run_id = ?)", [run_id])
            cur.execute("DELETE FROM dedup_runs WHERE run_id = ?", [run_id])
            cur.execute("DELETE FROM runs WHERE run_id = ?", [run_id])

        self._write(write)
        return True

    def run_coverage_mask(self, run_id: int, snapshot_id: str, n_tokens: int) -> np.ndarray:
        """uint8 mask over the snapshot's tokens: 1 where the run found no
        boilerplate (the tokens to keep)."""
        spans = self.query(
            "SELECT d.token_start + s.token_start AS a, d.token_start + s.token_end AS b FROM run_spans s"
            " JOIN documents d ON d.snapshot_id = ? AND d.doc_index = s.doc_index WHERE s.run_id = ?",
            [snapshot_id, run_id])
        return (~ranges_mask(n_tokens, spans["a"].to_numpy(), spans["b"].to_numpy())).astype(np.uint8)

    def add_dedup(self, snapshot_id: str, run_id: int | None, raw: bool, config: dict,
                  clusters: pl.DataFrame, pairs: pl.DataFrame, summary: dict, before_commit=None) -> int:
        def write(cur):
            did = cur.execute("SELECT nextval('dedup_ids')").fetchall()[0][0]
            for table, frame in (("dedup_clusters", clusters), ("dedup_pairs", pairs)):
                arrow = frame.with_columns(pl.lit(did, pl.Int64).alias("dedup_id")).select(
                    ["dedup_id", *frame.columns]).to_arrow()
                cur.register("_frame", arrow)
                cur.execute(f"INSERT INTO {table} SELECT * FROM _frame")
                cur.unregister("_frame")
            summary["dedup_id"] = int(did)
            cur.execute("INSERT INTO dedup_runs(dedup_id, snapshot_id, run_id, raw, config, summary)"
                        " VALUES (?, ?, ?, ?, ?, ?)",
                        [did, snapshot_id, run_id, raw, json.dumps(config), json.dumps(summary)])
            if before_commit is not None:
                before_commit(int(did))
            return int(did)

        return self._write(write)

    def dedups(self, snapshot_id: str) -> pl.DataFrame:
        return self.query("SELECT dedup_id, run_id, raw, created, config, summary FROM dedup_runs"
                          " WHERE snapshot_id = ? ORDER BY dedup_id", [snapshot_id])

    # -- decisions -----------------------------------------------------------
    def set_decision(self, phrase: str, decision: str | None, note: str = "", scope: str = ALL_SNAPSHOTS) -> None:
        """Decide a phrase for every snapshot (``scope='*'``) or for one
        snapshot id; ``decision=None`` clears it there."""
        self.set_decisions([(phrase, decision, note)], scope)

    def set_decisions(self, items, scope: str = ALL_SNAPSHOTS) -> None:
        """Several decisions in one transaction: ``(phrase, decision, note)``
        items, ``decision=None`` clearing the phrase's decision at ``scope``."""
        items = list(items)
        for _, decision, _ in items:
            if decision is not None and decision not in DECISIONS:
                raise BoilerscopeError(f"decision must be one of {', '.join(DECISIONS)}")

        def write(cur):
            for phrase, decision, note in items:
                cur.execute("DELETE FROM decisions WHERE phrase = ? AND scope = ?", [phrase, scope])
                if decision is not None:
                    cur.execute("INSERT INTO decisions(phrase, scope, decision, note) VALUES (?, ?, ?, ?)",
                                [phrase, scope, decision, note or ""])

        self._write(write)

    def decisions_at(self, phrases, scope: str) -> dict[str, tuple[str, str]]:
        """phrase -> (decision, note) of the phrases decided at exactly ``scope``."""
        rows = self.query("SELECT phrase, decision, note FROM decisions WHERE scope = ? AND list_contains(?, phrase)",
                          [scope, list(phrases)]).rows()
        return {p: (d, n) for p, d, n in rows}

    def decisions(self, snapshot_id: str | None = None) -> pl.DataFrame:
        """phrase, decision, note, updated, scope.  With a snapshot: the
        decisions in force there (its own win over the project's), else all."""
        if snapshot_id is None:
            return self.query("SELECT phrase, decision, note, updated, scope FROM decisions ORDER BY phrase, scope")
        return self.query(
            "SELECT phrase, decision, note, updated, scope FROM decisions WHERE scope IN (?, ?)"
            " QUALIFY row_number() OVER (PARTITION BY phrase ORDER BY scope = ?) = 1 ORDER BY phrase",
            [ALL_SNAPSHOTS, snapshot_id, ALL_SNAPSHOTS])
