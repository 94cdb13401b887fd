"""The same exact job on Apache Spark: ``boilerscope mine SOURCE --engine spark``.

PySpark DataFrames read the shards with Spark's own readers; Arrow-based
``mapInArrow`` runs this package's tokenizer and numpy/numba code on each
partition; no cluster code of our own.  The result files (phrases.parquet,
documents.parquet, sites.parquet) hold what the local engine writes for the
same snapshot, and summary.json its figures plus ``"engine": "spark"`` and
the master.  This is the only module that imports pyspark (the ``spark``
extra: ``make install-spark``).

Method (the decomposition suggested in issue 8; each step's exactness below)
-----------------------------------------------------------------------------
1. *Read* (Spark): ``spark.read.parquet`` / ``spark.read.json`` over the
   shards.  Documents are normalized as :mod:`engine.snapshot` does: a null
   text is empty, the site is the ``site`` column, else the URL's host,
   else ``unknown``; ``doc_id`` is the column, else (Parquet) the row's
   number in the snapshot, from Spark's ``_metadata.row_index`` plus the rows
   of the shards before it in name order (read from the Parquet footers).
   A doc_id found twice is refused.  Formats Spark has no reader for
   (compressed JSONL, WET, WARC, Hugging Face Arrow folders, CSV) are read
   by this package's own reader (:meth:`engine.snapshot.SnapshotReader.file_tables`)
   inside the executors, a task per file (:func:`read_files`), kept on the
   executors' disks; the driver only collects a row per file (its documents
   and columns) to number documents without doc_id as the local reader does.
2. *Count* (map, then a hash-partitioned shuffle): each Arrow batch is
   tokenized (:func:`engine.tokenizer.tokenize_arrow`), each token is given a
   64-bit hash of its text, and every L-token window of a document a
   polynomial hash of those.  Distinct (window hash, document) pairs are
   counted per hash inside the batch (the map-side combine: a document is
   never split between batches), then summed per hash across partitions.
   A hash can only merge the counts of different L-grams, never split one,
   so the set F of hashes summed to at least sigma holds the hash of every
   frequent L-gram (a superset: a collision adds, never removes).
3. *Segments* (map, F broadcast): in each document, the maximal runs of
   tokens inside a window whose hash is in F.  The coverage mask of the
   definitions (tokens inside a frequent L-gram) lies inside them, and so
   does every occurrence of every frequent phrase of length >= L, since each
   of its L-grams is frequent.  Segments are the document's own text.
4. *Exact mining over the segments* (driver): the segments of a document
   are joined into one pseudo-document, with a separator token of its own
   between two segments, and mined by the local BloomSpan kernels
   (:func:`engine.planner.mine_tokens`) with the same sigma and L.  A
   separator occurs once, so (sigma >= 2) it is in no frequent phrase and no
   phrase crosses it; at sigma 1 every window is in F and each document is
   one segment.  The frequent phrases of length >= L, their documents and
   occurrences are those of the corpus (all their occurrences are inside
   segments, and the segments add no occurrence that is not in the
   corpus); a one-token extension of one that is frequent has length >= L+1
   and is inside the segments too, so maximality is decided the same way;
   the coverage mask is the same.  Extra segments from hash collisions only
   add text to mine, never a count.

Departures and limits
---------------------
* On this path (``partitioned=False``; the command line's
  ``--no-partitioned``) step 4 runs on the driver: it holds the segments
  (the repeated text; 29% of webdocs' tokens at sigma 20, L 10), not the
  corpus.  :func:`mine_partitioned` runs it on the executors (the command
  line's default).
* The result files alone have no snapshot id: the id hashes the content
  in order, which Spark does not read in order.  With a store (``--db``),
  :func:`store_run` ingests the snapshot there with the local reader (the
  dashboard needs its text and token arrays anyway), matches Spark's
  documents to it by doc_id, maps the pseudo-documents' positions back to
  the documents' own and stores the run as the local engine would: the
  same rows up to the phrase ids (checked in ``tests/test_spark.py``).
  The ingest runs on the driver, so the shards must be readable there.
* Text snapshots only (a ``tokens`` column is refused).  A plain JSONL
  snapshot (read by Spark's JSON reader) needs a ``doc_id`` column (Spark's
  JSON reader gives no row index); the formats read in the executors number
  their rows themselves, but from a path every executor can open (a shared
  mount), not from an ``s3a://`` or ``hdfs://`` URI.

Complexity: steps 2-3 are linear in the tokens, spread over the partitions
(each window's hash rolled from the previous one); the shuffle moves one row per distinct L-gram
per batch; step 4 is the local engine's cost on the segments.
"""
from __future__ import annotations

import gc
import logging
import os
import sys
import tempfile
import time
import zipimport

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc

from . import frames
from .constants import COMPRESSED_JSONL_SUFFIXES, VERSION, WARC_SUFFIXES, WET_SUFFIXES
from .blocks import find_blocks
from .coverage import ranges_mask
from .errors import BoilerscopeError, first_line
from .snapshot import suffix_of
from .files import write_result_set
from .params import RunParams
from .planner import mine_tokens
from .partitioned import count_windows, segments
from .runner import publish_run, published, result_set, run_finisher
from .summary import RunSummary

log = logging.getLogger(__name__)

DEFAULT_MASTER = "local[*]"
_SEP = "\x00"                          # never in a token: names the separators


def session(master: str | None = None, conf: dict | None = None):
    """A SparkSession on ``master``; ``None``: the master spark-submit gave
    (a driver started by spark-submit has its gateway in the environment),
    else local mode on every core.  In local mode the workers run this Python."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        raise BoilerscopeError("the Spark engine needs pyspark: run 'make install-spark'") from None
    if master is None and "PYSPARK_GATEWAY_PORT" not in os.environ:
        master = DEFAULT_MASTER
    if master is not None:
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    builder = SparkSession.builder if master is None else SparkSession.builder.master(master)
    if master and master.startswith("local"):
        os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")  # no interface lookup in local mode
    # the JVM (and the Python workers it starts) write their logs to a file,
    # not to our stderr: it inherits the descriptor 2 it is started with
    log_path = os.path.join(tempfile.gettempdir(), f"boilerscope-spark-{os.getpid()}.log")
    fd = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    saved = os.dup(2)
    sys.stderr.flush()
    os.dup2(fd, 2)
    try:
        builder = (builder.appName("boilerscope")
                   .config("spark.ui.enabled", "false")
                   .config("spark.ui.showConsoleProgress", "false")
                   .config("spark.sql.shuffle.partitions", "8")
                   .config("spark.sql.execution.arrow.pyspark.enabled", "true"))
        for key, value in (conf or {}).items():  # before the JVM starts: spark.driver.memory too
            builder = builder.config(key, value)
        spark = builder.getOrCreate()
    except Exception as exc:  # the JVM did not start: Java missing, bad master
        raise BoilerscopeError(f"Spark did not start ({first_line(exc)}); check Java 17 "
                               f"('make install-spark') and {{master}}; Spark's log: {log_path}", "master") from None
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
        os.close(fd)
    spark.sparkContext.setLogLevel("ERROR")
    log.info("Spark's own log: %s", log_path)
    return spark


def _spark_error(exc: BaseException) -> str:
    """The line of a Spark error that says what went wrong (a JVM error's
    first line only names the call)."""
    lines = [x.strip() for x in str(exc).splitlines() if x.strip()]
    for x in lines:  # our own error, raised in an executor: its line as it is
        if "BoilerscopeError: " in x:
            return x.split("BoilerscopeError: ", 1)[1][:300]
    for x in lines:
        if ("Exception:" in x or "Error:" in x) and not x.startswith("at "):
            return x[:300]
    return lines[0][:300] if lines else type(exc).__name__


def _paths(source: str) -> list[str]:
    if "://" in source:
        return [source]  # a remote path (s3a://, hdfs://): Spark's readers resolve it
    from .snapshot import resolve_source
    return resolve_source(source)


def check_shards(source: str, paths: list[str]) -> dict:
    """The shards' checks that need no Spark (local Parquet: readable footers,
    the same columns, a text column), before the JVM starts; ``paths`` are
    the source's files (:func:`_paths`).  Returns each Parquet shard's first
    row number in the snapshot (real path -> row)."""
    if python_read(paths):
        if "://" in source:
            raise BoilerscopeError(f"{source}: the Spark engine reads {suffix_of(paths[0].lower()) or 'these'} files "
                                   "from a path every executor can open (a shared mount), not from a URI; "
                                   "copy or mount the shards there")
        for p in paths:
            _check_shard(p)
        return {}
    offsets: dict = {}
    if "://" in source or not paths[0].lower().endswith(".parquet"):
        return offsets
    import pyarrow.parquet as pq
    first = None
    base = 0
    for p in paths:
        try:
            md = pq.read_metadata(p)
        except Exception as exc:
            raise BoilerscopeError(f"{p} is not a readable Parquet shard ({first_line(exc)}); "
                                   "replace or remove it") from None
        names = sorted(md.schema.to_arrow_schema().names)
        if first is None:
            first = names
            if "text" not in names:
                msg = ("a 'tokens' column: the Spark engine reads text snapshots; mine it locally"
                       if "tokens" in names else f"no 'text' column (columns: {', '.join(names)})")
                raise BoilerscopeError(f"{p} has {msg}")
        elif names != first:
            raise BoilerscopeError(f"{p} has the columns {', '.join(names)} but {paths[0]} has "
                                   f"{', '.join(first)}; every shard must have the same columns")
        offsets[os.path.realpath(p)] = base
        base += md.num_rows
    return offsets


#: Formats Spark has no reader for (or none that numbers the rows): read by
#: this package's own reader inside the executors, a file per task.
PYTHON_READ_SUFFIXES = COMPRESSED_JSONL_SUFFIXES + WET_SUFFIXES + WARC_SUFFIXES + (".arrow", ".csv")

#: What the executors' reader gives for each document.
FILE_ROWS = "file long, row long, doc_id long, text string, url string, site string, columns string, replaced long"


def python_read(paths: list[str]) -> bool:
    """True when the shards are read by the executors' Python reader."""
    return bool(paths) and paths[0].lower().endswith(PYTHON_READ_SUFFIXES)


def _check_shard(path: str) -> None:
    from .snapshot import resolve_source
    resolve_source(path)  # exists, a regular file, a known suffix


def read_files(batches):
    """Step 1's map for the formats Spark cannot read: each input row names a
    file (its rank in name order and its path); its documents come out as
    rows of :data:`FILE_ROWS` (the row's number in its file, doc_id when the
    file has that column, the file's column names, and on the first row of
    each table the payloads it decoded with replacement characters)."""
    from .snapshot import SnapshotReader
    for b in batches:
        for rank, path in zip(b.column(0).to_pylist(), b.column(1).to_pylist()):
            reader = SnapshotReader(path)
            row = 0
            for raw, _ in reader.file_tables(path):
                names = raw.column_names
                if "text" not in names:
                    msg = ("a 'tokens' column: the Spark engine reads text snapshots; mine it locally"
                           if "tokens" in names else f"no 'text' column (columns: {', '.join(names)})")
                    raise BoilerscopeError(f"{path} has {msg}")
                replaced_here = reader.replaced_payloads
                reader.replaced_payloads = 0
                # a batch per chunk of the table (a whole CSV is one table: its
                # text may exceed the 2 GiB of one string array)
                for batch in raw.to_batches(max_chunksize=8192):
                    n = batch.num_rows
                    replaced = np.zeros(n, np.int64)
                    if n:
                        replaced[0], replaced_here = replaced_here, 0

                    def col(name, kind, batch=batch, n=n):
                        if name not in names:
                            return pa.nulls(n, kind)
                        column = batch.column(names.index(name))
                        try:
                            return column.cast(kind)
                        except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
                            raise BoilerscopeError(f"{path}: column '{name}' holds {column.type}, not "
                                                   f"{'integers' if kind == pa.int64() else 'strings'}") from None
                    yield pa.RecordBatch.from_arrays(
                        [pa.array(np.full(n, rank, np.int64)), pa.array(np.arange(row, row + n, dtype=np.int64)),
                         col("doc_id", pa.int64()), col("text", pa.string()), col("url", pa.string()),
                         col("site", pa.string()), pa.array([",".join(sorted(names))] * n, pa.string()),
                         pa.array(replaced)],
                        names=["file", "row", "doc_id", "text", "url", "site", "columns", "replaced"])
                    row += n


def python_documents(spark, source: str, paths: list[str]):
    """Step 1 for the formats of :data:`PYTHON_READ_SUFFIXES`: the executors
    read the files (a task per file) with :func:`read_files`; the rows are
    kept on the executors' disks (read once).  The driver collects one row
    per file (its documents, columns and replaced payloads) to number the
    documents of files without doc_id as the local reader does (the row's
    place in the snapshot, files in name order).  Returns the DataFrame and
    the number of payloads decoded with replacement characters."""
    import pyspark.sql.functions as F
    from pyspark import StorageLevel
    files = spark.createDataFrame(spark.sparkContext.parallelize(list(enumerate(paths)), len(paths)),
                                  "file long, path string")
    rows = files.mapInArrow(read_files, FILE_ROWS).persist(StorageLevel.DISK_ONLY)
    try:
        per_file = sorted(rows.groupBy("file").agg(
            F.count("*").alias("n"), F.min("columns").alias("lo"), F.max("columns").alias("hi"),
            F.sum("replaced").alias("replaced"), F.count("doc_id").alias("ids")).collect())
    except Exception as exc:
        rows.unpersist()
        raise BoilerscopeError(f"{source}: {_spark_error(exc)}") from None
    first = None
    for r in per_file:
        cols = r["lo"]
        if first is None:
            first = (paths[r["file"]], cols)
        if r["lo"] != r["hi"]:
            rows.unpersist()
            raise BoilerscopeError(f"{paths[r['file']]}: its records have different fields "
                                   f"({r['lo'].replace(',', ', ')} and {r['hi'].replace(',', ', ')}); "
                                   "give every document the same fields")
        if cols != first[1]:
            rows.unpersist()
            raise BoilerscopeError(f"{paths[r['file']]} has the columns {(r['hi'] or '').replace(',', ', ')} "
                                   f"but {first[0]} has {first[1].replace(',', ', ')}; "
                                   "every shard must have the same columns")
    has_ids = "doc_id" in (first[1].split(",") if first else [])
    if has_ids and any(r["ids"] != r["n"] for r in per_file):
        bad = next(r for r in per_file if r["ids"] != r["n"])
        rows.unpersist()
        raise BoilerscopeError(f"{paths[bad['file']]}: a doc_id is missing; give every document one, or none")
    counts = {r["file"]: r["n"] for r in per_file}
    base, start = 0, {}
    for i in range(len(paths)):  # files without documents have no row
        start[i] = base
        base += counts.get(i, 0)
    if not has_ids:
        mapping = F.create_map(*[x for k, v in start.items() for x in (F.lit(k), F.lit(v))])
        rows_ = rows.withColumn("doc_id", mapping[F.col("file")] + F.col("row"))
    else:
        rows_ = rows
    replaced = sum(int(r["replaced"] or 0) for r in per_file)
    return rows_.select("doc_id", "text", "url", "site"), rows, replaced


def read_documents(spark, source: str, paths: list[str], offsets: dict):
    """Step 1: a DataFrame with doc_id, text, and url / site when present."""
    import pyspark.sql.functions as F
    low = paths[0].lower().rstrip("/")
    try:
        if low.endswith(".jsonl") or low.endswith(".json"):
            df = spark.read.json(paths)
        else:
            df = spark.read.parquet(*paths)
        cols = df.columns
    except Exception as exc:
        raise BoilerscopeError(f"{source}: Spark could not read the shards ({_spark_error(exc)})") from None
    if "text" not in cols:
        raise BoilerscopeError(f"{source} has no 'text' column (columns: {', '.join(cols)})")
    keep = [c for c in ("doc_id", "text", "url", "site") if c in cols]
    if "doc_id" not in cols:
        if not offsets:
            raise BoilerscopeError(f"{source}: the Spark engine needs a doc_id column in JSONL shards and in "
                                   "shards on a remote file system (their row numbers are not known here)")
        # Spark names each file by its URI: match them to the shards in name order
        from urllib.parse import unquote, urlsplit
        try:
            uris = [r[0] for r in df.select(F.col("_metadata.file_path")).distinct().collect()]
        except Exception as exc:
            raise BoilerscopeError(f"{source}: Spark could not read the shards ({_spark_error(exc)})") from None
        by_uri = {u: offsets.get(os.path.realpath(unquote(urlsplit(u).path))) for u in uris}
        missing = [u for u, v in by_uri.items() if v is None]
        if missing:
            raise BoilerscopeError(f"{source}: Spark read {missing[0]}, which is not one of the shards")
        mapping = F.create_map(*[x for k, v in by_uri.items() for x in (F.lit(k), F.lit(v))])
        df = df.withColumn("doc_id", mapping[F.col("_metadata.file_path")] + F.col("_metadata.row_index"))
        keep = ["doc_id", *keep]
    return df.select(*[F.col(c).cast("long") if c == "doc_id" else F.col(c).cast("string") for c in keep])


def _one_table(batches) -> pa.Table | None:
    """Every batch of a partition as one table (a reduction needs them all)."""
    batches = [b for b in batches if b.num_rows]
    return pa.Table.from_batches(batches) if batches else None


def byte_chunks(batch: pa.RecordBatch, column: str, max_bytes: int | None = None):
    """``batch`` cut into batches holding at most about ``max_bytes``
    (default BATCH_BYTES) of its string ``column`` (only that column's bytes
    count; a row larger than that goes alone): a map whose output grows with
    its parameters (phase B's intervals with the context) hands the JVM
    batches of a bounded size, not one buffer of several GB."""
    max_bytes = BATCH_BYTES if max_bytes is None else max_bytes
    if batch.num_rows <= 1:
        yield batch
        return
    sizes = pc.binary_length(batch.column(column)).fill_null(0)
    ends = np.cumsum(sizes.to_numpy(zero_copy_only=False).astype(np.int64))
    if ends[-1] <= max_bytes:
        yield batch
        return
    start = 0
    while start < batch.num_rows:
        base = ends[start - 1] if start else 0
        stop = max(start + 1, int(np.searchsorted(ends, base + max_bytes, side="right")))
        yield batch.slice(start, stop - start)
        start = stop


def _chunks(batch: pa.RecordBatch, rows: int = 65536):
    """A reduction's output in batches of at most ``rows`` rows."""
    if batch.num_rows <= rows:
        yield batch
    else:
        yield from pa.Table.from_batches([batch]).to_batches(max_chunksize=rows)


def reduce_frequent(batches, sigma: int):
    """Phase A's reduce over one partition (every row of its hashes)."""
    from .partitioned import frequent_rows
    table = _one_table(batches)
    if table is not None:
        yield from _chunks(frequent_rows(table, sigma))


#: Names a file whose removal makes one phase C task fail (the fault tests:
#: Spark retries the task and the answer must not change).
FAIL_ONCE_ENV = "BOILERSCOPE_SPARK_FAIL_ONCE"


#: The same for a step 3 task, once it has written a snapshot part (``--db``).
FAIL_PART_ENV = "BOILERSCOPE_SPARK_FAIL_PART"


def _fail_once(env: str) -> None:
    flag = os.environ.get(env)
    if flag:
        try:
            os.remove(flag)  # succeeds for one task only
        except OSError:
            pass
        else:
            raise RuntimeError("a task failed on purpose (the fault test)")


def reduce_parts(batches, sigma: int, L: int, context: int):
    """Phase C over one partition (every interval of its parts)."""
    from .partitioned import mine_part
    table = _one_table(batches)
    _fail_once(FAIL_ONCE_ENV)
    if table is not None:
        yield from _chunks(mine_part(table, sigma, L, context))


def counter_map(batches, L: int, n_buckets: int):
    """Step 2's map over one partition: its counters, a row per chunk with a count."""
    from .partitioned import count_chunks, window_counters
    for c, part in count_chunks(window_counters(batches, L, n_buckets)):
        yield pa.RecordBatch.from_arrays([pa.array([c], pa.int64()), pa.array([part.tobytes()], pa.binary())],
                                         names=["c", "counts"])


def _rss() -> int:
    """This process's resident memory now (bytes; 0 where /proc is missing)."""
    try:
        with open("/proc/self/statm", encoding="ascii") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _keep_directory() -> None:
    """A zip importer's refresh, skipped (see :func:`lean_task`)."""


_frozen_at = [0]  # how many modules this worker had imported when it last froze its objects


def lean_task() -> None:
    """At a task's start in a reused Python worker: cut two fixed costs that
    Spark's worker pays for every task (0.1-0.2 s each, measured; a job runs
    hundreds of tasks, about 20 s of the two cores on webdocs).

    * Before each task the worker calls ``importlib.invalidate_caches()``,
      and every zip importer on its path then reads its archive's directory
      again: Spark's own jar (5,000 entries), ``pyspark.zip`` once per
      imported subpackage, py4j's zip.  Those archives do not change while
      the worker lives: their importers keep the directory they read.
    * After each task the daemon runs ``gc.collect()``, which walks every
      object of the imported libraries (numba, polars, pyarrow).  When the
      worker has imported modules since it last did, the objects alive at
      the task's start are frozen (``gc.freeze``: the collector no longer
      walks them; reference counting still frees them, a cycle among them
      stays until the worker exits).  The previous task's garbage was
      collected before this one started, and a worker freezes a few times
      in its life (as its stages import their modules), not at every task."""
    for finder in list(sys.path_importer_cache.values()):
        if isinstance(finder, zipimport.zipimporter):
            finder.invalidate_caches = _keep_directory
    if len(sys.modules) != _frozen_at[0]:
        _frozen_at[0] = len(sys.modules)
        gc.freeze()


def lean(batches):
    """Yield ``batches`` from a task started with :func:`lean_task`."""
    lean_task()
    yield from batches


def measured(name: str, acc, batches):
    """Yield ``batches``, noting in the accumulator ``acc`` the largest
    resident memory of the Python worker running stage ``name`` (taken after
    each output batch, while the stage's input and output are alive).
    Starts the task with :func:`lean_task`."""
    for b in lean(batches):
        acc.add({name: _rss()})
        yield b


def _max_param():
    from pyspark.accumulators import AccumulatorParam

    class MaxByStage(AccumulatorParam):
        """The largest value per key (the workers' memory per stage)."""

        def zero(self, value):
            return {}

        def addInPlace(self, a, b):
            for k, v in b.items():
                a[k] = max(a.get(k, 0), v)
            return a
    return MaxByStage()


def piece_map(batches, L: int):
    """Phase D1 over one partition (every frequent L-gram occurrence of its
    documents): their pieces, numbered from the partition's index, with
    their components in the partition and those components' keys."""
    from pyspark import TaskContext
    from .partitioned_blocks import PID_BITS, piece_rows
    table = _one_table(batches)
    if table is not None:
        yield from _chunks(piece_rows(table, L, first_pid=TaskContext.get().partitionId() << PID_BITS))


def span_map(batches):
    """Phase D4: each document's spans (its segment row with its pieces)."""
    from .partitioned_blocks import span_rows
    for b in batches:
        if b.num_rows:
            yield span_rows(b)


def rep_map(batches):
    """Phase D4's representatives over one partition (every span of its
    documents and the representatives among them): their text as written."""
    from .partitioned_blocks import rep_rows
    table = _one_table(batches)
    if table is not None:
        yield from _chunks(rep_rows(table))


def phrase_block_map(batches):
    """Phase D5 over one partition (every span and phrase occurrence of its
    documents): tokens per phrase and block."""
    from .partitioned_blocks import phrase_block_rows
    table = _one_table(batches)
    if table is not None:
        yield from _chunks(phrase_block_rows(table))


def _partition_rows(batches):
    from pyspark import TaskContext
    lean_task()
    n = sum(b.num_rows for b in batches)
    yield pa.RecordBatch.from_arrays([pa.array([TaskContext.get().partitionId()], pa.int64()),
                                      pa.array([n], pa.int64())], names=["p", "n"])


def _number_rows(batches, first: dict, name: str):
    from pyspark import TaskContext
    lean_task()
    at = first.get(TaskContext.get().partitionId(), 0)
    for b in batches:
        yield b.append_column(name, pa.array(np.arange(at, at + b.num_rows, dtype=np.int64)))
        at += b.num_rows


def numbered(frame, order: list, name: str, keep):
    """``frame`` sorted by ``order`` (a distributed sort) with a column
    ``name`` numbering its rows 0, 1, ... in that order: each sorted
    partition's row count (one number per partition reaches the driver)
    gives its first number.  ``keep`` computes a frame once (the sorted
    frame is read twice)."""
    from pyspark.sql.types import LongType, StructField, StructType
    ordered = keep(frame.orderBy(*order))
    counts = sorted((r["p"], r["n"]) for r in ordered.mapInArrow(_partition_rows, "p long, n long").collect())
    first, at = {}, 0
    for p, n in counts:
        first[p] = at
        at += n
    schema = StructType(list(ordered.schema.fields) + [StructField(name, LongType(), False)])
    return ordered.mapInArrow(lambda it: _number_rows(it, first, name), schema)


def components(edges, keep):
    """Connected components of an undirected graph given by its ``edges``
    (u, v longs, u != v): returns rows (u, v), one per node that is not the
    smallest of its component, v that smallest, and the rounds taken (Kiveris et al. 2014,
    alternating large-star and small-star rounds until every component is a
    star around its smallest node; each round a few shuffles of the
    edges, its two graphs kept by ``keep``)."""
    import pyspark.sql.functions as F
    col = F.col
    graph = keep(edges.select("u", "v").distinct())
    # O(log^2 n) rounds in the worst case (about log n in practice): a bound
    # that only a bug reaches
    most = int(np.ceil(np.log2(graph.count() + 2))) ** 2 + 2
    for rounds in range(1, most + 1):
        both = graph.unionByName(graph.select(col("v").alias("u"), col("u").alias("v")))
        low = both.groupBy("u").agg(F.min("v").alias("m"))
        # large star: every larger neighbour of u joins u's smallest neighbour (or u)
        large = keep(both.where(col("v") > col("u")).join(low, "u")
                     .select(col("v").alias("hi"), F.least(col("m"), col("u")).alias("lo")).distinct())
        # small star: every node joins the smallest of its smaller neighbours
        m = large.groupBy("hi").agg(F.min("lo").alias("m"))
        small = (large.join(m, "hi").where(col("lo") != col("m")).select(col("lo").alias("u"), col("m").alias("v"))
                 .unionByName(m.select(col("hi").alias("u"), col("m").alias("v"))).distinct())
        graph = keep(small)  # every edge has u > v
        row = graph.agg(F.count(F.lit(1)).alias("n"), F.countDistinct("u").alias("nu")).first()
        if row["n"] == row["nu"] and \
                not graph.select("v").join(graph.select(col("u").alias("v")), "v", "left_semi").limit(1).count():
            return graph, rounds  # stars: each u has one v, and no v has a smaller one
    raise BoilerscopeError(f"the blocks' components did not settle in {most} rounds (a bug: "
                           "please report it with the corpus)")


def spark_blocks(pieces, seg, occurrences, n_tokens: int, keep, acc, partitions: int):
    """Phase D (:mod:`engine.partitioned_blocks`) on Spark: ``pieces`` D1's
    rows with a ``pid``, ``seg`` step 3's rows, ``occurrences`` the maximal
    phrases' (phrase, length, doc_id, pos).  Returns (blocks.parquet,
    block_spans.parquet, phrase -> block_id) frames and figures (blocks,
    block_spans, component_rounds)."""
    import pyspark.sql.functions as F
    from pyspark.sql import Window
    from .partitioned_blocks import PHRASE_BLOCK_ROWS, REP_ROWS, SPAN_ROWS
    col = F.col
    # D2: each partition's components (D1) joined across partitions: a star
    # per key around the smallest root holding it, then the components of
    # the roots
    keyed = pieces.select("pid", F.explode(F.arrays_zip("key_h", "key_g")).alias("k")) \
        .select("pid", col("k.key_h").alias("h"), col("k.key_g").alias("g"))
    anchor = keyed.groupBy("h", "g").agg(F.min("pid").alias("a"))
    edges = keyed.join(anchor, ["h", "g"]).where(col("pid") != col("a")).select(col("pid").alias("u"),
                                                                                 col("a").alias("v"))
    roots, rounds = components(edges, keep)
    labelled = (pieces.select("pid", "doc_id", "start", "end", "root")
                .join(roots.withColumnRenamed("u", "root"), "root", "left")
                .withColumn("root", F.coalesce(col("v"), col("root"))))
    # D3: numbered by covered tokens, then first piece
    comp = labelled.groupBy("root").agg(F.sum(col("end") - col("start")).alias("covered_tokens"),
                                        F.min(F.struct("doc_id", "start")).alias("first"))
    comp = keep(numbered(comp, [col("covered_tokens").desc(), col("first.doc_id"), col("first.start")], "block",
                         keep))
    n_blocks = comp.count()
    # D4: spans of the documents' pieces
    per_doc = (labelled.join(comp.select("root", "block"), "root")
               .groupBy("doc_id").agg(F.collect_list(F.struct("start", "end", "block")).alias("pieces")))
    spans = keep(seg.select("doc_id", "site", "segments", "starts", "raw", "cs", "ce").join(per_doc, "doc_id")
                 .mapInArrow(lambda it: measured("spans", acc, span_map(it)), SPAN_ROWS))
    # representatives: spans grouped by their text's 128-bit key and length
    # (the JVM never sorts the text); the chosen span's text as written
    # fetched by document
    groups = (spans.select("block", "k1", "k2", (col("end") - col("start")).alias("len"), "doc_id", "start")
              .groupBy("block", "k1", "k2", "len").agg(F.count(F.lit(1)).alias("count"),
                                                       F.min(F.struct("doc_id", "start")).alias("first")))
    best = Window.partitionBy("block").orderBy(col("count").desc(), col("len").desc(), col("first.doc_id"),
                                               col("first.start"))
    chosen = (groups.withColumn("r", F.row_number().over(best)).where(col("r") == 1)
              .select(col("first.doc_id").alias("doc_id"), col("first.start").alias("start"), "block",
                      F.lit(None).cast("string").alias("raw")))
    reps = (spans.select("doc_id", "start", F.lit(None).cast("long").alias("block"), "raw").unionByName(chosen)
            .repartition(partitions, "doc_id")
            .mapInArrow(lambda it: measured("representatives", acc, rep_map(it)), REP_ROWS))
    stats = spans.groupBy("block").agg(F.countDistinct("doc_id").alias("documents"),
                                       F.countDistinct("site").alias("sites"))  # sites are never null
    # D5: each phrase's block
    meet = (spans.select("doc_id", col("start").alias("a"), col("end").alias("e"), "block",
                         F.lit(None).cast("string").alias("phrase"))
            .unionByName(occurrences.select("doc_id", col("pos").alias("a"), (col("pos") + col("length")).alias("e"),
                                            F.lit(None).cast("long").alias("block"), "phrase")))
    tokens = (meet.repartition(partitions, "doc_id")
              .mapInArrow(lambda it: measured("phrase blocks", acc, phrase_block_map(it)), PHRASE_BLOCK_ROWS)
              .groupBy("phrase", "block").agg(F.sum("tokens").alias("tokens")))
    top = Window.partitionBy("phrase").orderBy(col("tokens").desc(), col("block"))
    phrase_block = keep(tokens.withColumn("r", F.row_number().over(top)).where(col("r") == 1)
                        .select("phrase", col("block").cast("int").alias("block_id")))
    counts = phrase_block.groupBy("block_id").agg(F.count(F.lit(1)).alias("phrases"))
    blocks = (comp.select("block", "covered_tokens").join(reps, "block", "left").join(stats, "block", "left")
              .join(counts.withColumnRenamed("block_id", "block"), "block", "left")
              .select(col("block").cast("int").alias("block_id"), "text",
                      F.coalesce(col("phrases"), F.lit(0)).cast("long").alias("phrases"),
                      col("documents").cast("long"), col("sites").cast("long"), "covered_tokens",
                      ((col("covered_tokens").cast("double") / F.lit(float(n_tokens))) if n_tokens
                       else F.lit(0.0)).alias("share"))
              .orderBy("block_id"))
    block_spans = (spans.select(col("block").cast("int").alias("block_id"), "doc_id", col("start").cast("int"),
                                col("end").cast("int"), "char_start", "char_end")
                   .orderBy("block_id", "doc_id", "start"))
    return blocks, block_spans, phrase_block, {"blocks": int(n_blocks), "block_spans": int(spans.count()),
                                               "component_rounds": rounds}


def counter_reduce(batches, sigma: int):
    """Step 2's reduce: each chunk's counters summed as they come (one
    running total per chunk of this partition), then its bits."""
    from .kernels.bloomspan import merge_counters
    from .partitioned import chunk_bits
    totals: dict[int, np.ndarray] = {}
    for b in batches:
        for c, counts in zip(b.column(0).to_pylist(), b.column(1).to_pylist()):
            part = np.frombuffer(counts, np.uint8)
            if c in totals:
                merge_counters(totals[c], part)
            else:
                totals[c] = part.copy()
    for c in sorted(totals):
        bits = chunk_bits([totals.pop(c)], sigma)
        yield pa.RecordBatch.from_arrays([pa.array([c], pa.int64()), pa.array([bits.tobytes()], pa.binary())],
                                         names=["c", "bits"])


def sites_of_group(table: pa.Table) -> pa.Table:
    """sites.parquet's row of one site (the local engine's own code)."""
    out = frames.sites_frame(pl.from_arrow(table)).to_arrow()
    return out.cast(pa.schema([pa.field(n, pa.string() if t == pa.large_string() else t)
                               for n, t in zip(out.schema.names, out.schema.types)]))


SITES_ROWS = ("site string, documents long, tokens long, covered_tokens long, coverage double, "
              "median_contamination double, p90_contamination double")


#: The bytes of documents Spark hands a Python worker at once (Arrow batches
#: and Parquet reader batches are counted in rows; rows are sized from this).
BATCH_BYTES = 8 << 20


def shard_sizes(paths: list[str]) -> dict | None:
    """From the footers of local Parquet shards, read once: ``rows``,
    uncompressed ``bytes`` (all columns), ``text`` bytes (the text column)
    and the ``largest`` row group's bytes; None for other formats and
    remote paths."""
    import pyarrow.parquet as pq
    out = dict(rows=0, bytes=0, text=0, largest=0)
    for p in paths:
        if "://" in p or not p.lower().endswith(".parquet"):
            return None
        try:
            md = pq.read_metadata(p)
            ti = next(j for j in range(md.num_columns) if md.schema.column(j).path == "text")
        except Exception:
            return None
        out["rows"] += md.num_rows
        for i in range(md.num_row_groups):
            group = md.row_group(i)
            out["bytes"] += group.total_byte_size
            out["text"] += group.column(ti).total_uncompressed_size
            out["largest"] = max(out["largest"], group.total_byte_size)
    return out


def batch_rows(sizes: dict | None) -> int:
    """Rows per batch so that a batch of documents holds about
    :data:`BATCH_BYTES` (from :func:`shard_sizes`; 1,000 when unknown): long
    documents in big batches would not fit a small executor's heap."""
    if not sizes or sizes["rows"] == 0:
        return 1000
    return int(min(10000, max(16, BATCH_BYTES // max(1, sizes["bytes"] // sizes["rows"]))))


#: A later round with at most this many seed occurrences ships them to every
#: task (a broadcast: bounded by this constant) instead of shuffling the segments.
BROADCAST_SEEDS = 200_000


def mine_partitioned(spark, docs, sigma: int, L: int, parts: int | None = None, buckets: int | None = None,
                     context: int | None = None, stage=None, store: bool = False, snapshot: str | None = None):
    """Steps 2-4 with step 4 partitioned (:mod:`engine.partitioned`): the
    driver holds the frequent-window filter (one bit per bucket, ``buckets``
    fixed before the job) and figures, nothing that grows with the corpus.
    Returns (phrases, documents, sites, blocks, block_spans) as Spark
    DataFrames (ordered like the local files), Spark's figures and, with
    ``store``, the store's own rows (:func:`store_frames`; else empty).
    ``snapshot``: a folder where step 3's executors write the snapshot's
    parts (:mod:`engine.partitioned_snapshot`).
    The frames kept on the executors' disks are local checkpoints, released
    with the session."""
    import pyspark.sql.functions as F
    from pyspark import StorageLevel
    from .partitioned import (CHUNK, CONTEXT_GROWTH, FIRST_CONTEXT, FREQUENT_ROWS, INTERVAL_ROWS, PART_ROWS, WINDOW_ROWS,
                              filter_buckets, window_rows, interval_rows)
    from .partitioned_blocks import PIECE_ROWS
    stage = stage or (lambda name, frac: None)
    figures = {}
    disk = StorageLevel.DISK_ONLY
    acc = spark.sparkContext.accumulator({}, _max_param())  # the Python workers' memory by stage
    figures["worker_rss_bytes"] = acc
    base = max(spark.sparkContext.defaultParallelism * 2, 4)

    def keep(frame):
        """Computed once, its rows on the executors' disks (a local
        checkpoint streams rows; a DataFrame cache builds column batches
        of rows in the heap first)."""
        return frame.localCheckpoint(eager=True, storageLevel=disk)
    # step 2: saturating counters per bucket of window hashes, summed by chunk
    n_buckets = buckets or filter_buckets(0)
    n_chunks = n_buckets // CHUNK
    # a counter array per counting task: as many tasks as cores, whatever the input partitions
    chunks = (docs.coalesce(base).mapInArrow(lambda it: measured("count", acc, counter_map(it, L, n_buckets)),
                                             "c long, counts binary")
              .repartition(min(n_chunks, base), "c")
              .mapInArrow(lambda it: measured("filter", acc, counter_reduce(it, sigma)), "c long, bits binary").toArrow())
    bits = np.zeros(n_buckets // 64, np.uint64)
    words = CHUNK // 64
    for c, b in zip(chunks.column("c").to_pylist(), chunks.column("bits").to_pylist()):
        bits[c * words:(c + 1) * words] = np.frombuffer(b, np.uint64)
    del chunks
    figures.update(filter_buckets=n_buckets, filter_buckets_passing=int(np.bitwise_count(bits).sum()))
    stage("segments", 0.2)
    bc = spark.sparkContext.broadcast(bits)
    seg = docs.mapInArrow(lambda it: measured("segments", acc, segments(
        it, L, bc, bits=True, written=True, snapshot=part_writer(snapshot) if snapshot else None)),
        "doc_id long, site string, url string, n_tokens long, segments array<string>, "
        "starts array<long>, raw array<string>, cs array<int>, ce array<int>")
    seg = keep(seg)
    totals = seg.select(F.sum("n_tokens").alias("t"),
                        F.sum(F.aggregate(F.transform("segments", lambda x: F.size(F.split(x, " "))),
                                          F.lit(0), lambda a, x: a + x)).alias("s")).first()
    seg_tokens = int(totals["s"] or 0)
    figures["segment_tokens"] = seg_tokens
    # phase A: the frequent L-grams exactly, the seeds
    stage("seeds", 0.35)
    part_a = max(base, -(-seg_tokens // SEED_PART_TOKENS))
    freq = (seg.mapInArrow(lambda it: measured("windows", acc, (window_rows(b, L, bc.value) for b in it)),
                           WINDOW_ROWS)
            .repartition(part_a, "h")
            .mapInArrow(lambda it: measured("seeds", acc, reduce_frequent(it, sigma)), FREQUENT_ROWS))
    freq = keep(freq)
    seeds = freq.filter("seed").select("h", "doc_id", "pos")
    n_seeds = seeds.count()
    figures.update(seed_partitions=part_a, seed_occurrences=int(n_seeds))
    # phase D1: each document's pieces (rule 2-5 of the blocks); they
    # partition its covered tokens (the union of its frequent L-grams'
    # occurrences), so they give the coverage too
    stage("pieces", 0.4)
    pieces = keep(freq.select("doc_id", "pos", "df", "h", "g").repartition(part_a, "doc_id")
                  .mapInArrow(lambda it: measured("pieces", acc, piece_map(it, L)), PIECE_ROWS))
    covered = pieces.groupBy("doc_id").agg(F.sum(F.col("end") - F.col("start")).alias("covered_tokens"))
    documents = (seg.select("doc_id", "site", "url", "n_tokens").join(covered, "doc_id", "left")
                 .withColumn("covered_tokens", F.coalesce(F.col("covered_tokens"), F.lit(0)).cast("long"))
                 .withColumn("contamination", F.when(F.col("n_tokens") > 0,
                                                     F.col("covered_tokens") / F.col("n_tokens"))
                             .otherwise(F.lit(0.0)).cast("double"))
                 .select("doc_id", "site", "url", "n_tokens", "covered_tokens", "contamination"))
    sites = documents.groupBy("site").applyInArrow(sites_of_group, SITES_ROWS)
    # phase B and C, in rounds of doubling contexts
    context = context or max(FIRST_CONTEXT, 2 * L)
    parts = parts or max(base, -(-n_seeds * context // PART_TOKENS))
    figures["parts"] = parts
    found, rounds = [], 0
    figures["round_seeds"] = []
    body = seg.select("doc_id", "site", "segments", "starts")
    while n_seeds:
        rounds += 1
        figures["round_seeds"].append(int(n_seeds))
        stage(f"mine (round {rounds}, context {context})", min(0.8, 0.45 + 0.1 * rounds))
        per_doc = seeds.groupBy("doc_id").agg(F.collect_list(F.struct("h", "pos")).alias("seeds"))
        if rounds > 1 and n_seeds <= BROADCAST_SEEDS:
            # few flagged seeds: their documents' rows go to every task, the
            # segments are scanned where they lie (not shuffled again)
            per_doc = F.broadcast(per_doc)
        ctx = context
        mined = (body.join(per_doc, "doc_id")
                 .mapInArrow(lambda it, c=ctx: measured("contexts", acc, (
                     part for b in it for part in byte_chunks(interval_rows(b, c, parts), "text"))), INTERVAL_ROWS)
                 .repartition(parts, "part")
                 .mapInArrow(lambda it, c=ctx: measured("parts", acc, reduce_parts(it, sigma, L, c)), PART_ROWS))
        mined = keep(mined)
        found.append(mined.filter("kind = 0").select("phrase", "length", "df", "occurrences", "sites", "psi",
                                                     "occ_doc", "occ_pos"))
        seeds = mined.filter("kind = 1").select("h", "doc_id", "pos")
        n_seeds = seeds.count()
        context *= CONTEXT_GROWTH
    figures["rounds"] = rounds
    if found:
        phrases = found[0]
        for f in found[1:]:
            phrases = phrases.unionAll(f)
    else:
        phrases = spark.createDataFrame([], "phrase string, length int, df long, occurrences long, sites long, "
                                            "psi long, occ_doc array<long>, occ_pos array<long>")
    # phase D2-D5: the blocks, and each phrase's
    stage("blocks", 0.85)
    occurrences = phrases.select("phrase", "length", F.explode(F.arrays_zip("occ_doc", "occ_pos")).alias("o")) \
        .select("phrase", "length", F.col("o.occ_doc").alias("doc_id"), F.col("o.occ_pos").alias("pos"))
    blocks, block_spans, phrase_block, found_blocks = spark_blocks(pieces, seg, occurrences, int(totals["t"] or 0),
                                                                   keep, acc, part_a)
    figures.update(found_blocks)
    phrases = (phrases.select("phrase", "length", "df", "occurrences", "sites", "psi")
               .join(phrase_block, "phrase", "left")
               .orderBy(F.col("psi").desc(), F.col("length").desc(), F.col("phrase").asc()))
    if store:
        stage("store rows", 0.88)
    extra = store_frames(seg, freq, occurrences, L, keep, acc) if store else {}
    bc.unpersist()
    return phrases, documents.orderBy("doc_id"), sites.orderBy("site"), blocks, block_spans, figures, extra


def part_writer(folder: str):
    """In a task of step 3: the writer of its batches' snapshot parts
    (:func:`engine.partitioned_snapshot.write_part`), named by the task's
    partition and the batch's rank in it."""
    import itertools
    from pyspark import TaskContext
    from .partitioned_snapshot import part_name, write_part
    pid = TaskContext.get().partitionId()
    rank = itertools.count()

    def write(tk, doc_id, sites, urls, text):
        write_part(folder, part_name(pid, next(rank)), tk, doc_id, sites, urls, text)
        _fail_once(FAIL_PART_ENV)  # the fault test: the retried task writes the same part again
    return write


def store_span_map(batches, L: int):
    """The store's covered spans, a document at a time
    (:func:`engine.partitioned_store.store_span_rows`)."""
    from .partitioned_store import store_span_rows
    for b in batches:
        if b.num_rows:
            yield store_span_rows(b, L)


def store_frames(seg, freq, occurrences, L: int, keep, acc) -> dict:
    """What a store holds beyond the result files (:mod:`engine.partitioned_store`),
    as frames the executors write: ``occurrences`` (key, doc_id, pos: every
    occurrence of a maximal phrase, ``key`` the SHA-256 of its text),
    ``spans`` (doc_id, start, end, char_start, char_end, key, h, g), and the
    L-grams that explain spans, ``lgrams`` (h, g, phrase, df, occurrences)
    with every one of their ``lgram_occurrences`` (h, g, doc_id, pos)."""
    import pyspark.sql.functions as F
    from .partitioned_store import STORE_SPAN_ROWS
    keyed = occurrences.select(F.sha2("phrase", 256).alias("key"), "length", "doc_id", "pos")
    mx = keyed.groupBy("doc_id").agg(F.collect_list(F.struct("pos", "length", "key")).alias("mx"))
    lg = freq.groupBy("doc_id").agg(F.collect_list(F.struct("pos", "h", "g", "df")).alias("lg"))
    rows = keep(seg.select("doc_id", "segments", "starts", "cs", "ce").join(lg, "doc_id").join(mx, "doc_id", "left")
                .mapInArrow(lambda it: measured("store spans", acc, store_span_map(it, L)), STORE_SPAN_ROWS))
    used = keep(rows.where("kind = 1").groupBy("h", "g").agg(F.first("text").alias("phrase"),
                                                             F.first("df").alias("df")))
    lgram_occ = freq.select("h", "g", "doc_id", "pos").join(used.select("h", "g"), ["h", "g"], "left_semi")
    lgrams = used.join(lgram_occ.groupBy("h", "g").agg(F.count(F.lit(1)).alias("occurrences")), ["h", "g"])
    return {"occurrences": keyed.select("key", "doc_id", "pos"),
            "spans": rows.select("doc_id", "start", "end", "char_start", "char_end", "key", "h", "g"),
            "lgrams": lgrams.select("h", "g", "phrase", "df", "occurrences"),
            "lgram_occurrences": lgram_occ}


def mine_spark(source: str, sigma, min_len: int, out: str | None, master: str | None = None, spark=None,
               progress=None, db: str | None = None, partitioned: bool = False, parts: int | None = None,
               context: int | None = None, conf: dict | None = None) -> RunSummary:
    """Mine ``source`` on Spark and return the summary.

    ``out``: the folder for the result files.  ``db``: a store that receives
    the run (the snapshot is ingested into it first, or found there), as a
    local run would, so that the dashboard opens it; the summary then has
    the snapshot and run ids.  At least one of the two.  ``partitioned``:
    step 4 on the executors (:func:`mine_partitioned`, in ``parts`` parts
    from a first ``context``; with ``db`` the executors also write the
    snapshot and the store's rows: :func:`store_parts_run`)."""
    t0 = time.perf_counter()
    if out is None and db is None:
        raise BoilerscopeError("the Spark engine needs somewhere to put the results: give {out} DIR or {db} STORE",
                               "out", "db")
    params = RunParams(sigma=sigma, min_len=min_len).checked()
    min_len = params.min_len
    paths = _paths(source)  # resolved once: a glob or folder is listed here only
    offsets = check_shards(source, paths)
    if db is not None and os.path.exists(db):  # a foreign or locked store fails now, not after the job
        from .store import Store
        Store(db).close()
    held, replaced = None, 0  # the executors' copy of the documents (Python-read formats)
    own = spark is None
    spark = spark or session(master, conf)
    sizes = shard_sizes(paths) if partitioned else None
    if partitioned:  # batches of a few MB: a small executor's heap holds them
        rows = batch_rows(sizes)
        spark.conf.set("spark.sql.execution.arrow.maxRecordsPerBatch", str(rows))
        spark.conf.set("spark.sql.parquet.columnarReaderBatchSize", str(rows))
        spark.conf.set("spark.sql.inMemoryColumnarStorage.batchSize", str(rows))  # persisted frames
    timings = {}
    stage = progress or (lambda name, frac: None)
    try:
        import pyspark.sql.functions as F
        t = time.perf_counter()
        if python_read(paths):
            docs, held, replaced = python_documents(spark, source, paths)
        else:
            docs = read_documents(spark, source, paths, offsets)
        try:
            n_docs = docs.count()
            dup = docs.groupBy("doc_id").count().filter("count > 1").limit(1).collect()
        except Exception as exc:
            raise BoilerscopeError(f"{source}: Spark could not read the shards ({_spark_error(exc)})") from None
        if n_docs == 0:
            raise BoilerscopeError(f"{source} holds no documents; give a snapshot with at least one row")
        if dup:
            raise BoilerscopeError(f"{source}: doc_id {dup[0]['doc_id']} appears more than once; "
                                   "doc_id must be unique")
        sigma_n = params.sigma_for(n_docs)
        if sigma_n > n_docs:  # the local engine's answer: nothing repeats in that many documents
            log.warning("sigma %d is above the %d documents of %s: no phrase can be frequent", sigma_n, n_docs,
                        source)
        timings["read"] = time.perf_counter() - t
        if partitioned and sigma_n >= 2:
            from .partitioned import filter_buckets
            # about one window per 5 bytes; unknown sizes: the largest filter
            buckets = filter_buckets(sizes["bytes"] // 5 if sizes else 1 << 40)
            return _run_partitioned(spark, docs, source, sigma, sigma_n, min_len, out, db, n_docs, replaced, parts,
                                    context, buckets, stage, timings, t0, progress)
        if partitioned:
            log.info("sigma 1: its maximal phrases are whole documents; step 4 runs on the driver")
        stage("count", 0.0)
        t = time.perf_counter()
        L = min_len
        counted = (docs.mapInArrow(lambda it: lean(count_windows(it, L)), "h long, n long")
                   .groupBy("h").agg(F.sum("n").alias("df")).filter(F.col("df") >= sigma_n).select("h"))
        try:
            freq = counted.toArrow().column("h").to_numpy().view(np.uint64)
        except Exception as exc:
            raise BoilerscopeError(f"{source}: the Spark job failed ({_spark_error(exc)})") from None
        freq = np.sort(freq)
        timings["count"] = time.perf_counter() - t
        stage("segments", 0.3)
        t = time.perf_counter()
        bc = spark.sparkContext.broadcast(freq)
        seg = docs.mapInArrow(lambda it: lean(segments(it, L, bc)),
                              "doc_id long, site string, url string, n_tokens long, segments array<string>, "
                              "starts array<long>")
        try:
            table = seg.toArrow()
        except Exception as exc:
            raise BoilerscopeError(f"{source}: the Spark job failed ({_spark_error(exc)})") from None
        bc.unpersist()
        timings["segments"] = time.perf_counter() - t
        stage("mine", 0.6)
        t = time.perf_counter()
        table = table.sort_by("doc_id")
        meta = pl.from_arrow(table.select(["doc_id", "site", "url", "n_tokens"]))
        tokens, offsets, vocab, n_sep, within = pseudo_documents(
            table.column("segments"), table.column("starts") if db is not None else None)
        res = mine_tokens(tokens, offsets, len(vocab), sigma_n, L, workers=None)
        res.stats.pop("timings", None)
        # blocks on the pseudo-documents: the same as on the documents (the
        # separators and the text between segments are uncovered, and ties go
        # by doc_id), so each phrase gets the local engine's block_id
        pos = np.asarray(res.rng_pos, np.int64)
        blocks = find_blocks(tokens, offsets, sigma_n, L, within=ranges_mask(
            tokens.shape[0], pos, pos + np.asarray(res.rng_len, np.int64)), doc_key=meta["doc_id"].to_numpy())
        node_block = frames.node_blocks(blocks, offsets, res)
        allp, phrases, occ = frames.phrase_frames(tokens, offsets, vocab, meta["site"], res, node_block)
        documents = frames.documents_frame(meta, res.covered)
        sites = frames.sites_frame(documents)
        timings["mine"] = time.perf_counter() - t
        n_tokens = int(meta["n_tokens"].sum())
        covered = int(np.asarray(res.covered).sum())
        summary = RunSummary(
            version=VERSION, engine="spark", master=spark.sparkContext.master, snapshot_id=None,
            sigma=sigma_n, sigma_given=str(sigma), min_len=L, algo="bloomspan", algo_used="bloomspan",
            documents=n_docs, tokens=n_tokens, covered_tokens=covered, phrases=int(phrases.height),
            blocks=blocks.n_blocks,
            spark={"step4": "driver", "frequent_window_hashes": int(freq.shape[0]), "segment_tokens": int(tokens.shape[0]) - n_sep,
                   "partitions": docs.rdd.getNumPartitions(), "replaced_payloads": replaced})
        files = {"phrases.parquet": phrases, "documents.parquet": documents, "sites.parquet": sites}
        if db is None:
            summary.seconds = {k: round(v, 4) for k, v in timings.items()}
            summary.seconds["total"] = round(time.perf_counter() - t0, 4)
            write_result_set(out, files, "summary.json", summary.to_dict())
        else:
            stage("store", 0.8)
            store_run(db, source, meta, offsets, within, res, blocks, allp, occ, summary, files, out, timings, t0,
                      progress=progress)
        stage("done", 1.0)
        return summary
    finally:
        if held is not None:
            held.unpersist()
        if own:
            spark.stop()


def driver_memory(spark, start: int = 0) -> dict:
    """The driver's memory: the JVM's heap limit, this Python process's
    peak resident memory (the executors' Python workers not counted) and its
    resident memory ``start`` when the job began (imports and session up)."""
    import resource
    try:
        heap = int(spark.sparkContext._jvm.java.lang.Runtime.getRuntime().maxMemory())
    except Exception:  # a remote driver (Spark Connect) has no gateway to ask; None: not asked
        heap = None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    try:  # this process's own high-water mark (ru_maxrss keeps the parent's across fork and exec)
        with open("/proc/self/status", encoding="ascii") as fh:
            peak = next(int(x.split()[1]) * 1024 for x in fh if x.startswith("VmHWM:"))
    except (OSError, StopIteration, ValueError, IndexError):
        pass
    return {"driver_heap_bytes": heap, "driver_python_peak_rss_bytes": peak, "driver_python_start_rss_bytes": start}


#: The plan's model, measured on webdocs in local mode (sigma 20, L 10):
#: bytes of Parquet text per token, segment tokens per token (the repeated
#: text and the filter's false positives), seed occurrences per segment
#: token, and a Python worker's resident memory before any data (imports).
PLAN_BYTES_PER_TOKEN = 6.8
PLAN_SEGMENT_SHARE = 0.36
PLAN_SEEDS_PER_SEGMENT_TOKEN = 0.075
PLAN_WORKER_BASE = 320 << 20
#: Tokens of first-round context a part is given (the default part count
#: follows, the same in every round).  16 Mi, not 4: a part's intervals are
#: merged per segment, and more parts copy more of one segment (webdocs:
#: rounds 26 s with 4 or 5 parts, 49 s with 20; the parts' workers 0.8 GB
#: either way).
PART_TOKENS = 16 << 20
#: Segment tokens per partition of phase A (the seeds) and D1 (the pieces).
SEED_PART_TOKENS = 4 << 20


def plan_partitioned(source: str, sigma, L: int, parts: int | None = None, cores: int = 2) -> dict:
    """``--plan``: what the partitioned job would use, from the shards'
    footers alone (no Spark, no text read): documents, tokens, the filter,
    batch sizes, partition counts and each stage's memory per task."""
    from .partitioned import FIRST_CONTEXT, filter_buckets
    paths = _paths(source)
    check_shards(source, paths)
    sizes = shard_sizes(paths)
    if sizes is None:
        raise BoilerscopeError(f"{source}: the plan reads Parquet footers; give local Parquet shards")
    rows, text, largest = sizes["rows"], sizes["text"], sizes["largest"]
    tokens = int(text / PLAN_BYTES_PER_TOKEN)
    buckets = filter_buckets(sizes["bytes"] // 5)
    base = max(2 * cores, 4)
    seg_tokens = int(tokens * PLAN_SEGMENT_SHARE)
    part_a = max(base, -(-seg_tokens // SEED_PART_TOKENS))
    seeds = int(seg_tokens * PLAN_SEEDS_PER_SEGMENT_TOKEN)
    context = max(FIRST_CONTEXT, 2 * L)
    n_parts = parts or max(base, -(-seeds * context // PART_TOKENS))
    brows = batch_rows(sizes)
    batch = min(BATCH_BYTES, text // max(rows, 1) * brows)
    w = PLAN_WORKER_BASE
    per_task = {  # a Python worker's resident memory per stage (bytes), the model
        "count": w + buckets + 6 * batch,
        "segments": w + 8 * batch,
        "seeds": w + (seg_tokens // part_a) * 48,
        "parts": w + (seeds * context // n_parts) * 40,
    }
    return {"shards": len(paths), "documents": rows, "text_bytes": text, "tokens_estimated": tokens,
            "largest_row_group_bytes": largest, "batch_rows": brows, "filter_buckets": buckets,
            "driver_filter_bytes": buckets // 8, "segment_tokens_estimated": seg_tokens,
            "seed_partitions": part_a, "seed_occurrences_estimated": seeds, "parts": n_parts,
            "first_context": context, "worker_bytes_per_task": per_task,
            "executor_heap_bytes": 4 * batch + largest}


def check_parts(folder: str, n_phrases: int, n_docs: int, n_blocks: int, n_spans: int) -> None:
    """The parts the executors wrote are all here (an ``--out`` on a disk
    only some machines see loses parts without an error)."""
    import pyarrow.parquet as pq
    for name, want in (("phrases.parquet", n_phrases), ("documents.parquet", n_docs),
                       ("blocks.parquet", n_blocks), ("block_spans.parquet", n_spans)):
        path = os.path.join(folder, name)
        got = sum(pq.read_metadata(os.path.join(path, x)).num_rows for x in os.listdir(path)) \
            if os.path.isdir(path) else -1
        if got != want:
            raise BoilerscopeError(f"{name}: {got} rows reached {folder}, the job made {want}; {{out}} must be on "
                                   "storage the driver and every executor share (HDFS, S3, a shared mount)", "out")


def _run_partitioned(spark, docs, source, sigma, sigma_n, L, out, db, n_docs, replaced, parts, context, buckets,
                     stage, timings, t0, progress=None) -> RunSummary:
    """The partitioned job's steps 2-4 and its result files (written by the
    executors: a folder of Parquet parts per file, in the local files' order).
    With a store ``db``, the executors also write the store's own rows
    (:mod:`engine.partitioned_store`) into a folder beside the store, which
    :meth:`engine.store.Store.add_parts_run` reads in the run's transaction;
    the result files, if ``out`` is given too, are published after its commit."""
    import shutil
    from .files import ResultSet
    start_rss = _rss()
    rs = ResultSet(out) if out is not None else None  # a folder that cannot be written fails now
    staging = None
    if db is not None:
        staging = staging_folder(db)
    try:
        t = time.perf_counter()
        try:
            phrases, documents, sites, blocks, block_spans, figures, extra = mine_partitioned(
                spark, docs, sigma_n, L, parts=parts, buckets=buckets, context=context, stage=stage,
                store=db is not None, snapshot=os.path.join(staging, "snapshot") if db is not None else None)
        except BoilerscopeError:
            raise
        except Exception as exc:
            raise BoilerscopeError(f"{source}: the Spark job failed ({_spark_error(exc)})") from None
        timings["mine"] = time.perf_counter() - t
        t = time.perf_counter()
        stage("write", 0.9)
        import pyspark.sql.functions as F
        try:
            totals = documents.agg(F.sum("n_tokens").alias("t"), F.sum("covered_tokens").alias("c")).first()
            n_phrases = phrases.count()
        except Exception as exc:
            raise BoilerscopeError(f"{source}: the Spark job failed ({_spark_error(exc)})") from None
        summary = RunSummary(
            version=VERSION, engine="spark", master=spark.sparkContext.master, snapshot_id=None,
            sigma=sigma_n, sigma_given=str(sigma), min_len=L, algo="bloomspan", algo_used="bloomspan",
            documents=n_docs, tokens=int(totals["t"] or 0), covered_tokens=int(totals["c"] or 0),
            phrases=int(n_phrases), blocks=figures["blocks"],
            spark={**figures, "worker_rss_bytes": None,  # after the write, below
                   "step4": "partitioned", "partitions": docs.rdd.getNumPartitions(),
                   "replaced_payloads": replaced, **driver_memory(spark, start_rss)})

        def writer(frame):
            def write(path):
                try:
                    frame.write.mode("error").parquet(path, compression="zstd")
                except Exception as exc:  # the job's own failure (the sites are computed here)
                    raise BoilerscopeError(f"{source}: the Spark job failed ({_spark_error(exc)})") from None
                if os.path.isdir(path):  # a local folder: only the parts (readers take the folder)
                    for name in os.listdir(path):
                        if not name.endswith(".parquet"):
                            os.remove(os.path.join(path, name))
            return write
        writers = {"phrases.parquet": writer(phrases), "documents.parquet": writer(documents),
                   "sites.parquet": writer(sites), "blocks.parquet": writer(blocks),
                   "block_spans.parquet": writer(block_spans)}
        if rs is not None:
            rs.prepare(writers, "summary.json", {})  # the summary once the write is timed
            files = rs.new
        else:  # a store only: the files the store reads, beside it
            files = os.path.join(staging, "results")
            os.mkdir(files)
            for name in ("phrases.parquet", "documents.parquet", "blocks.parquet", "block_spans.parquet"):
                writers[name](os.path.join(files, name))
        for name, frame in extra.items():
            writer(frame)(os.path.join(staging, name))
        timings["write"] = time.perf_counter() - t
        summary.seconds = {k: round(v, 4) for k, v in timings.items()}
        summary.seconds["total"] = round(time.perf_counter() - t0, 4)
        check_parts(files, n_phrases, n_docs, figures["blocks"], figures["block_spans"])
        # the stages Spark ran during the write (the blocks' last maps) count too
        summary.spark["worker_rss_bytes"] = dict(sorted(figures["worker_rss_bytes"].value.items()))
        if db is None:
            rs.rewrite_summary("summary.json", summary.to_dict())
            rs.publish()
        else:
            stage("store", 0.95)
            store_parts_run(db, source, summary, files, staging, rs, timings, t0, replaced)
    except BaseException:
        if rs is not None:
            rs.discard()
        raise
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
    stage("done", 1.0)
    return summary


#: The folders a ``--partitioned --db`` job writes beside the store: the
#: prefix, then the driver's process id (a folder whose process is gone is a
#: killed job's, removed by the next job).
STAGING_PREFIX = ".boilerscope-spark-"


def staging_folder(db: str) -> str:
    """A new folder beside the store for the executors' parts (mode from the
    umask: executors may run as another user), after removing those of
    killed jobs on this machine."""
    import shutil
    parent = os.path.dirname(os.path.abspath(db))
    for name in os.listdir(parent) if os.path.isdir(parent) else []:
        if name.startswith(STAGING_PREFIX):
            pid = name[len(STAGING_PREFIX):].split("-")[0]
            if pid.isdigit() and int(pid) != os.getpid() and not os.path.exists(f"/proc/{pid}"):
                shutil.rmtree(os.path.join(parent, name), ignore_errors=True)
    path = None
    try:
        path = tempfile.mkdtemp(prefix=f"{STAGING_PREFIX}{os.getpid()}-", dir=parent)
        mask = os.umask(0)
        os.umask(mask)
        os.chmod(path, 0o777 & ~mask)
        os.mkdir(os.path.join(path, "snapshot"))
        return path
    except OSError as exc:
        if path is not None:
            shutil.rmtree(path, ignore_errors=True)
        raise BoilerscopeError(f"cannot write beside the store {db} ({exc.strerror or exc}); "
                               "use another {db}", "db") from None


def store_parts_run(db: str, source: str, summary: RunSummary, files: str, staging: str, rs, timings: dict,
                    t0: float, replaced: int = 0) -> int:
    """Put the partitioned job's run into the store ``db`` from the parts the
    executors wrote (``files``: the result files, ``staging``: the store's
    own rows and the snapshot's parts, :mod:`engine.partitioned_snapshot`);
    the snapshot is copied in first (or found by its id).  The result set
    ``rs``, if any, gets the run's summary inside the run's transaction and
    is published after the commit (a failed swap deletes the run)."""
    from .partitioned_snapshot import PartsReader
    from .store import Store
    reader = PartsReader(os.path.join(staging, "snapshot"), source if "://" in source else os.path.abspath(source),
                         replaced)
    if reader.n_docs != summary.documents or reader.n_tokens != summary.tokens:
        raise BoilerscopeError(f"{source}: the executors' snapshot parts hold {reader.n_docs} documents and "
                               f"{reader.n_tokens} tokens, the job {summary.documents} and {summary.tokens}; "
                               "the store's folder must be on storage every executor writes (a shared mount)")
    t = time.perf_counter()
    with Store(db) as st:
        sid, created = st.add_parts_snapshot(reader)
    timings["snapshot"] = time.perf_counter() - t
    summary.snapshot_id = sid
    summary.spark["snapshot_stored"] = created
    folders = {name: os.path.join(files, f"{name}.parquet")
               for name in ("phrases", "documents", "blocks", "block_spans")}
    folders.update({name: os.path.join(staging, name)
                    for name in ("occurrences", "spans", "lgrams", "lgram_occurrences")})
    def complete(s: RunSummary) -> None:
        # the driver's Python after the copy: it held a part at a time, DuckDB capped
        s.spark["driver_python_store_peak_rss_bytes"] = driver_memory(None)["driver_python_peak_rss_bytes"]

    def then(stored: dict) -> None:
        if rs is not None:
            rs.rewrite_summary("summary.json", stored)

    stored, finish = run_finisher(summary, timings, t0, complete, then)
    with Store(db) as st:
        run_id = st.add_parts_run(sid, summary.sigma, summary.min_len, "bloomspan", folders, stored,
                                  before_commit=finish)
        return published(st, run_id, rs)


def store_run(db: str, source: str, meta: pl.DataFrame, offsets, within, res, blocks, allp: pl.DataFrame,
              occ: pl.DataFrame, summary: RunSummary, files: dict, out: str | None, timings: dict, t0: float,
              progress=None) -> int:
    """Put a Spark run into the store ``db``, as the local engine's run of the
    same snapshot: the snapshot is ingested (or found: its id identifies the
    content), Spark's documents are matched to it by doc_id (the same token
    counts, or an error), and the positions in the pseudo-documents are
    mapped back to the documents' own (``within``).  The run's phrases,
    occurrences, per-document coverage and covered spans then hold what a
    local run stores; the result files in ``out`` are written inside the
    run's transaction (a failure rolls both back).  Returns the run id."""
    from .api import ingest
    from .store import Store
    t = time.perf_counter()
    sid, _ = ingest(source, db, progress=progress)
    timings["ingest"] = time.perf_counter() - t
    t = time.perf_counter()
    with Store(db) as st:
        store_meta = st.documents_meta(sid)  # by doc_index
        docs = store_meta.select("doc_index", "doc_id", "n_tokens").sort("doc_id")
        if (docs.height != meta.height or docs["doc_id"].to_list() != meta["doc_id"].to_list()
                or docs["n_tokens"].to_list() != meta["n_tokens"].to_list()):
            raise BoilerscopeError(f"{source}: the store's snapshot {sid} does not hold the documents Spark read "
                                   "(were the shards changed meanwhile?); mine again")
        arrays = st.arrays(sid)
        doc_index = docs["doc_index"].to_numpy().astype(np.int64)  # pseudo-document -> document
        store_offsets = np.asarray(arrays.doc_offsets, np.int64)
        lengths = np.diff(np.asarray(offsets, np.int64))
        snap_pos = np.repeat(store_offsets[doc_index], lengths) + within  # pseudo position -> snapshot position
        allp = allp.with_columns(pl.Series("first_pos", snap_pos[np.asarray(res.node_rep, np.int64)]))
        occ = occ.with_columns(
            pl.Series("doc_index", doc_index[np.asarray(res.occ_doc, np.int64)].astype(np.int32)),
            pl.Series("token_pos", within[np.asarray(res.occ_pos, np.int64)].astype(np.int32)))
        covered = np.zeros(doc_index.shape[0], np.int64)
        covered[doc_index] = np.asarray(res.covered, np.int64)
        run_docs = pl.DataFrame({"doc_index": np.arange(doc_index.shape[0], dtype=np.int32),
                                 "covered_tokens": covered})
        spans = frames.spans_frame(store_offsets, arrays.span_start, arrays.span_end,
                                snap_pos[np.asarray(res.rng_pos, np.int64)], res.rng_len, res.rng_node)
        # the pseudo-documents' blocks at the documents' own positions, their
        # text as written cut from the store
        blocks = blocks.remapped(doc_index, within, store_offsets)
        bfile, bspans, store_bspans = frames.block_frames(
            blocks, store_offsets, arrays.span_start, arrays.span_end, store_meta["doc_id"].to_numpy(),
            store_meta["site"].to_list(), int(store_offsets[-1]),
            st.text_slices(sid, *frames.block_char_ranges(blocks, store_offsets, arrays.span_start, arrays.span_end)),
            allp["block_id"].fill_null(-1).to_numpy(), allp["maximal"].to_numpy())
        files = {**files, "blocks.parquet": bfile, "block_spans.parquet": bspans}
        summary.snapshot_id = sid
        timings["results"] = time.perf_counter() - t
        return publish_run(st, sid, summary.sigma, summary.min_len, "bloomspan", {
            "run_phrases": allp, "run_occurrences": occ, "run_documents": run_docs,
            "run_spans": spans, "run_blocks": bfile, "run_block_spans": store_bspans},
            summary, files, result_set(out), timings, t0)


def pseudo_documents(segs: pa.ChunkedArray, starts=None):
    """One pseudo-document per document: its segments' tokens, a separator
    token of its own between two segments.  Returns (tokens, doc_offsets,
    vocab, separators, within); the separators' ids come after the tokens'.
    ``within`` (given ``starts``, each segment's first token in its
    document) is each pseudo token's position in its document, -1 for a
    separator; else None."""
    segs = segs.combine_chunks() if isinstance(segs, pa.ChunkedArray) else segs
    flat = segs.flatten()                          # one string per segment
    words = pc.split_pattern(flat, " ")            # its tokens
    enc = pc.dictionary_encode(words.flatten()).combine_chunks() \
        if isinstance(words.flatten(), pa.ChunkedArray) else pc.dictionary_encode(words.flatten())
    ids = enc.indices.to_numpy(zero_copy_only=False).astype(np.int32)
    vocab = enc.dictionary.to_pylist()
    n_seg = len(flat)
    seg_len = np.diff(words.offsets.to_numpy())    # tokens per segment
    segs_per_doc = np.diff(segs.offsets.to_numpy())
    n_docs = segs_per_doc.shape[0]
    doc_of_seg = np.repeat(np.arange(n_docs), segs_per_doc)
    # a separator after every segment but a document's last
    first_of_doc = np.zeros(n_seg, bool)
    if n_seg:
        first_of_doc[(np.cumsum(segs_per_doc) - segs_per_doc)[segs_per_doc > 0]] = True
    sep_before = ~first_of_doc
    n_sep = int(sep_before.sum())
    V = len(vocab)
    # layout: for each segment, [separator if not first of its doc] + tokens
    seg_total = seg_len + sep_before
    seg_start = (np.cumsum(seg_total) - seg_total).astype(np.int64)
    tokens = np.empty(int(seg_total.sum()), np.int32)
    sep_pos = seg_start[sep_before]
    tokens[sep_pos] = V + np.arange(n_sep, dtype=np.int32)
    tok_start = seg_start + sep_before
    # scatter the token ids of each segment
    within = np.arange(ids.shape[0]) - np.repeat(np.cumsum(seg_len) - seg_len, seg_len)
    tokens[np.repeat(tok_start, seg_len) + within] = ids
    orig = None
    if starts is not None:
        starts = starts.combine_chunks() if isinstance(starts, pa.ChunkedArray) else starts
        first = starts.flatten().to_numpy(zero_copy_only=False).astype(np.int64)
        orig = np.full(tokens.shape[0], -1, np.int64)
        orig[np.repeat(tok_start, seg_len) + within] = np.repeat(first, seg_len) + within
    doc_tokens = np.bincount(doc_of_seg, weights=seg_total, minlength=n_docs).astype(np.int64)
    offsets = np.concatenate(([0], np.cumsum(doc_tokens))).astype(np.int64)
    return tokens, offsets, vocab + [f"{_SEP}{i}" for i in range(n_sep)], n_sep, orig
