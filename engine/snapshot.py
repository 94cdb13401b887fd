"""Reading index snapshots (Parquet, JSONL, compressed JSONL, CSV) into one normalized table.

JSON lines compressed as a whole file (``.jsonl.gz``, ``.json.gz``,
``.jsonl.zst``, ``.json.zst``, ``.jsonl.bz2``, ``.json.bz2``) are read by
blocks through a decompressing stream, like plain JSONL: memory holds one
block, whatever the file's size.

A Common Crawl WET file (``.warc.wet.gz``, ``.warc.wet``, per-record gzip as
the crawl ships it) is read with fastwarc: one document per ``conversion``
record (``warcinfo`` and other records skipped), ``url`` its
``WARC-Target-URI`` (so ``site`` is the URL's host), ``doc_id`` its position
among the documents of the source from 0, shards in name order.  A payload
that is not valid UTF-8 is decoded with replacement characters and counted
(``SnapshotReader.replaced_payloads``); a record shorter than its
Content-Length (a cut file) is an error naming the file and the record's
byte offset.

A WARC file of the crawl's responses (``.warc.gz``, ``.warc``) gives one
document per ``response`` record whose HTTP content type is HTML, its text
extracted by resiliparse with main-content detection off (navigation,
sidebars and footers are kept: they are what Boilerscope measures), decoded
by the HTTP charset or resiliparse's detection; same ``url``, ``site`` and
``doc_id`` rules as WET.

A Hugging Face ``datasets`` folder written by ``save_to_disk`` (its Arrow
files, ``dataset_info.json`` and ``state.json``; or a ``DatasetDict``:
``dataset_dict.json`` and one such folder per split) is read with pyarrow
alone, without importing ``datasets``: the Arrow IPC streams in the order
``state.json`` lists them, the splits in the order ``dataset_dict.json``
lists them, by record batches.

A snapshot has one row per document: ``text`` (string) or ``tokens`` (list of
strings, already tokenized by the index: used as given, lowercased; when
both exist, ``text`` wins); optional ``url``, ``site`` (else the host of
``url``, else ``"unknown"``) and ``doc_id`` (int64, unique; else the row
number, from 0).  A null text is an empty document.

Every problem with the input raises :class:`~engine.errors.BoilerscopeError`
with one line that says what is wrong and what to do.
"""
from __future__ import annotations

import functools
import glob
import hashlib
import json
import os
import stat
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from urllib.parse import urlsplit

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from .constants import (COMPRESSED_JSONL_SUFFIXES, JSON_CODECS, PARQUET_BUFFER_BYTES, SHARD_SUFFIXES,
                        SNAPSHOT_SUFFIXES, WARC_SUFFIXES, WET_SUFFIXES)
from .errors import BoilerscopeError, first_line
from .kernels import bloomspan as KB
from .tokenizer import Tokenized, tokenize_arrow, tokenize_token_lists


@dataclass
class Snapshot:
    """A normalized snapshot: ``table`` has doc_id, site, url, text."""

    table: pa.Table
    tokenized: Tokenized
    snapshot_id: str
    source: str
    vocab_df: np.ndarray | None = None


#: What a message says a snapshot file may be.
FORMATS = (".parquet, .jsonl (also .jsonl.gz, .json.gz, .jsonl.zst, .json.zst, .jsonl.bz2, .json.bz2), .csv, "
           ".warc.wet.gz (Common Crawl WET), .warc.gz (HTML responses) or .arrow (a Hugging Face datasets folder)")


def suffix_of(path: str) -> str | None:
    """The snapshot suffix a path ends in (the longest: ``.jsonl.gz``), or None."""
    low = path.lower()
    return max((s for s in SNAPSHOT_SUFFIXES if low.endswith(s)), key=len, default=None)


def _json_stream(path: str):
    """A compressed JSON-lines file as (decompressed stream, the file under it:
    its position is the compressed bytes read so far)."""
    raw = pa.OSFile(path)
    return pa.CompressedInputStream(raw, JSON_CODECS[os.path.splitext(path.lower())[1]]), raw


def read_table(path: str) -> pa.Table:
    """Read a whole snapshot file into an Arrow table (no normalization)."""
    _check_file(path)
    suffix = suffix_of(path)
    try:
        if suffix == ".parquet":
            import pyarrow.parquet as pq
            return pq.read_table(path)
        if suffix == ".jsonl" or suffix in COMPRESSED_JSONL_SUFFIXES:
            import pyarrow.json as pj
            source = path if suffix == ".jsonl" else _json_stream(path)[0]
            return pj.read_json(source, read_options=pj.ReadOptions(block_size=16 << 20))
        import pyarrow.csv as pcsv
        # quoted values may hold line breaks (a document's text does)
        return pcsv.read_csv(path, parse_options=pcsv.ParseOptions(newlines_in_values=True),
                             convert_options=pcsv.ConvertOptions(
            column_types={"text": pa.large_string(), "url": pa.string(), "site": pa.string()},
            strings_can_be_null=False))
    except (pa.ArrowInvalid, pa.ArrowException, OSError, ValueError) as exc:
        raise _unreadable(path, exc) from None


def url_host(url: str | None) -> str | None:
    """The URL's host (lowercase, no port or user), None if it has none.

    Only the part before the first ``/`` after the first ``//`` can hold
    the host (the network location ends at the first ``/?#`` after the
    scheme's ``//``), so the host of that prefix is the URL's; the prefixes
    repeat across a site's pages and are parsed once (cached)."""
    if not url:
        return None
    u = url if "//" in url else "//" + url
    cut = u.find("/", u.find("//") + 2)
    return _prefix_host(u if cut < 0 else u[:cut])


def sites_of(sites: list, urls: list) -> list[str]:
    """Each document's site: its own ``site`` when given, else its URL's host,
    else ``"unknown"`` (the rule of every reader, local or Spark)."""
    return [s if s else (url_host(u) or "unknown") for s, u in zip(sites, urls)]


@functools.lru_cache(maxsize=1 << 16)
def _prefix_host(prefix: str) -> str | None:
    try:
        host = urlsplit(prefix).hostname
    except ValueError:
        return None
    return host or None


def _string_column(table: pa.Table, name: str, path: str) -> pa.ChunkedArray | None:
    if name not in table.column_names:
        return None
    col = table.column(name)
    if pa.types.is_null(col.type):
        return pa.chunked_array([pa.nulls(len(col), pa.large_string())])
    if not (pa.types.is_string(col.type) or pa.types.is_large_string(col.type)
            or pa.types.is_string_view(col.type)):
        raise BoilerscopeError(
            f"{path}: column '{name}' holds {col.type}, not strings; store it as text")
    return col.cast(pa.large_string())


def _doc_ids(table: pa.Table, path: str, first_row: int) -> np.ndarray:
    n = table.num_rows
    if "doc_id" not in table.column_names:
        return np.arange(first_row, first_row + n, dtype=np.int64)
    ids = table.column("doc_id")
    if pa.types.is_null(ids.type) and n:
        raise BoilerscopeError(f"{path}: column 'doc_id' has empty values; give every row an id")
    if not pa.types.is_integer(ids.type):
        raise BoilerscopeError(
            f"{path}: column 'doc_id' holds {ids.type}; it must hold whole numbers")
    if ids.null_count:
        raise BoilerscopeError(f"{path}: column 'doc_id' has empty values; give every row an id")
    if pa.types.is_uint64(ids.type) and n and pc.max(ids).as_py() > 2**63 - 1:
        raise BoilerscopeError(
            f"{path}: column 'doc_id' holds {pc.max(ids).as_py()}, above 2^63 - 1; doc_id must fit in int64")
    # a copy: the reader keeps every chunk's ids until the end (the uniqueness
    # check), and a zero-copy view would keep the chunk's whole buffer alive
    # (an Arrow IPC batch holds every column in one body: the text with it)
    return np.array(ids.cast(pa.int64()).to_numpy(), dtype=np.int64, copy=True)


@dataclass
class Chunk:
    """Consecutive documents of a snapshot, normalized and tokenized with the
    snapshot's one vocabulary: ``table`` has doc_id, site, url, text;
    ``tokens``/``span_start``/``span_end`` cover its documents in order and
    ``n_tokens`` holds each document's token count."""

    table: pa.Table
    tokens: np.ndarray
    span_start: np.ndarray
    span_end: np.ndarray
    n_tokens: np.ndarray


class ContentHasher:
    """The snapshot id, computed chunk by chunk: a hash of the doc_ids, the
    sites, the URLs and the text (named by the input kind, so a ``tokens``
    snapshot never shares an id with a ``text`` snapshot of the joined
    tokens).  String columns are hashed as two streams, their offsets
    (rebased to the whole snapshot) and their bytes, so the same documents in
    one file or cut into any shards get the same id."""

    COLUMNS = ("site", "url", "text")

    def __init__(self):
        self._ids = hashlib.blake2b(digest_size=16)
        # sha256 runs on the CPU's SHA instructions: 1.4 GB/s here, blake2b 0.6
        self._offs = {c: hashlib.sha256() for c in self.COLUMNS}
        self._data = {c: hashlib.sha256() for c in self.COLUMNS}
        self._base = dict.fromkeys(self.COLUMNS, 0)
        self.kind = "text"

    def update(self, table: pa.Table, text: bool = True) -> None:
        """Hash a chunk's doc_ids, sites and URLs (and its text unless
        ``text`` is False: the caller hashes it with :meth:`update_column`)."""
        self._ids.update(np.ascontiguousarray(table.column("doc_id").to_numpy()).tobytes())
        for name in self.COLUMNS if text else self.COLUMNS[:2]:
            self.update_column(name, table.column(name))

    def update_column(self, name: str, col) -> None:
        col = col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col
        arr = pc.fill_null(col.cast(pa.large_string()), "\x00null") if col.null_count else col.cast(pa.large_string())
        offs = np.frombuffer(arr.buffers()[1], np.int64)[arr.offset:arr.offset + len(arr) + 1]
        # every offset after the first, rebased to the snapshot's start
        self._offs[name].update((offs[1:] - offs[0] + self._base[name]).tobytes())
        self._base[name] += int(offs[-1] - offs[0])
        data = arr.buffers()[2]
        if data is not None and offs[-1] > offs[0]:
            self._data[name].update(memoryview(data)[offs[0]:offs[-1]])

    def hexdigest(self) -> str:
        h = hashlib.blake2b(digest_size=10)
        h.update(self._ids.digest())
        for name in self.COLUMNS:
            h.update((self.kind if name == "text" else name).encode())
            h.update(self._offs[name].digest())
            h.update(self._data[name].digest())
        return h.hexdigest()


class SnapshotReader:
    """A snapshot read as a stream of chunks (:class:`Chunk`), with bounded memory.

    ``source`` is one file (``.parquet``, ``.jsonl``, ``.csv``), a folder of
    ``.parquet`` or ``.jsonl`` shards, or a glob of them
    (``crawl/part-*.parquet``); shards are read in name order, Parquet by
    record batches of about ``chunk_bytes`` of data, JSONL by blocks.  Every
    shard must have the first one's columns.  Token ids are given in order of
    first occurrence over the whole snapshot, as one file would get them.

    After :meth:`chunks` is exhausted: ``snapshot_id``, ``vocab``, ``df``
    (documents per token), ``n_docs``, ``n_tokens``, ``n_sites``.
    """

    def __init__(self, source: str, *, on_bytes=None, chunk_bytes: int = 16 << 20,
                 _chunk_rows: int | None = None):
        self.source = source
        self.origin = os.path.abspath(source)  # what the store records as the snapshot's source
        self.paths = resolve_source(source)
        self.on_bytes = on_bytes  # called with the bytes of each chunk read
        self.chunk_bytes = chunk_bytes
        self._chunk_rows = _chunk_rows
        self.vocab: list[str] = []
        self._ids: dict[str, int] = {}
        self._raw_tables: list = []  # the tokenizer's raw-token tables, kept across chunks
        self.replaced_payloads = 0  # WET records whose text was not valid UTF-8
        self.df = np.zeros(1024, np.int64)
        self.hasher = ContentHasher()
        self.n_docs = 0
        self.n_tokens = 0
        self._sites: set[str] = set()
        self._columns: list[str] | None = None
        self._doc_ids: list[tuple[str, np.ndarray]] = []
        self.snapshot_id: str | None = None

    @property
    def n_sites(self) -> int:
        return len(self._sites)

    # -- reading ----------------------------------------------------------
    def file_tables(self, path: str):
        """The raw tables of one shard, a chunk at a time, each with the bytes
        of the file it stands for: the file's own columns, before any check or
        normalization (the Spark engine's executors read files with it)."""
        _check_file(path)
        low = path.lower()
        size = os.path.getsize(path)
        try:
            if low.endswith(".parquet"):
                import pyarrow.parquet as pq
                # buffered column reads: memory holds a few MB of a column
                # chunk, not the whole chunk (a file written as one row group
                # would otherwise cost its compressed size: 0.4 GB at 4x webdocs)
                pf = pq.ParquetFile(path, buffer_size=PARQUET_BUFFER_BYTES, pre_buffer=False)
                rows = pf.metadata.num_rows
                if self._chunk_rows:
                    batch = self._chunk_rows
                else:
                    raw = sum(pf.metadata.row_group(i).total_byte_size for i in range(pf.metadata.num_row_groups))
                    batch = max(1, int(rows * self.chunk_bytes / max(raw, 1)))  # ~chunk_bytes, whatever the row size
                if rows == 0:
                    yield pf.schema_arrow.empty_table(), size
                    return
                for rb in pf.iter_batches(batch_size=batch):
                    yield pa.Table.from_batches([rb]), size * rb.num_rows // max(rows, 1)
            elif low.endswith(".jsonl") or low.endswith(COMPRESSED_JSONL_SUFFIXES):
                import pyarrow.json as pj
                stream, raw = (path, None) if low.endswith(".jsonl") else _json_stream(path)
                try:
                    reader = pj.open_json(stream, read_options=pj.ReadOptions(
                        block_size=min(self.chunk_bytes, 16 << 20)))
                except pa.ArrowInvalid as exc:
                    if "Empty JSON" in str(exc):  # an empty shard: no documents (sharded exports have them)
                        return
                    raise
                done = 0
                for rb in reader:
                    t = pa.Table.from_batches([rb])
                    # progress by the bytes of the file read so far (compressed ones for a compressed file)
                    upto = size if raw is None else min(size, raw.tell())
                    start = done
                    for piece in _pieces(t, self._chunk_rows):
                        done_now = min(upto, done + (upto - start) * piece.num_rows // max(1, rb.num_rows))
                        yield piece, done_now - done
                        done = done_now
            elif low.endswith(".arrow"):
                # read, not memory-mapped: a chunk outlives the file's handle in the prefetch queue
                with pa.OSFile(path) as src:
                    done = 0
                    for rb in _arrow_reader(src):
                        upto, start = min(size, src.tell()), done
                        for piece in _pieces(pa.Table.from_batches([rb]), self._chunk_rows):
                            done_now = min(upto, done + (upto - start) * piece.num_rows // max(1, rb.num_rows))
                            yield piece, done_now - done
                            done = done_now
            elif low.endswith(WET_SUFFIXES):
                yield from self._warc_tables(path, size, html=False)
            elif low.endswith(WARC_SUFFIXES):
                yield from self._warc_tables(path, size, html=True)
            elif low.endswith(".csv"):
                t = read_table(path)
                for piece in _pieces(t, self._chunk_rows):
                    yield piece, size * piece.num_rows // max(t.num_rows, 1)
            else:
                raise BoilerscopeError(
                    f"{path}: unknown format; a snapshot ends in {FORMATS}, a store in .duckdb")
        except BoilerscopeError:
            raise
        except (pa.ArrowInvalid, pa.ArrowException, OSError, ValueError) as exc:
            raise _unreadable(path, exc) from None

    def _warc_tables(self, path: str, size: int, html: bool):
        """The documents of a WET file (``html`` False: conversion records)
        or of a WARC file (HTML responses, their text extracted), a table
        (url, text) per about ``chunk_bytes`` of text, with the bytes of the
        file read so far."""
        from fastwarc import ArchiveIterator, WarcRecordType

        def table():
            return pa.table({"url": pa.array(urls, pa.string()), "text": pa.array(texts, pa.large_string())})
        urls: list = []
        texts: list = []
        held, done, found = 0, 0, 0
        kind = WarcRecordType.response if html else WarcRecordType.conversion
        with open(path, "rb") as fh:
            for rec in ArchiveIterator(fh, record_types=kind, parse_http=html):
                if html and not _is_html(rec.http_content_type):
                    continue
                payload = rec.reader.read()
                if rec.headers.get("Content-Length") is None or (not html and len(payload) < rec.content_length):
                    raise BoilerscopeError(f"{path}: the record at byte {rec.stream_pos} is cut short ({len(payload)} "
                                           f"of {rec.content_length} bytes); the file is truncated, fetch it again")
                if html:
                    text = _html_text(payload, rec.http_charset)
                else:
                    try:
                        text = payload.decode("utf-8")
                    except UnicodeDecodeError:
                        text = payload.decode("utf-8", "replace")
                        self.replaced_payloads += 1
                urls.append(rec.headers.get("WARC-Target-URI"))
                texts.append(text)
                held += len(payload)
                found += 1
                if held >= self.chunk_bytes or (self._chunk_rows and len(texts) >= self._chunk_rows):
                    upto = min(size, fh.tell())
                    yield table(), upto - done
                    urls, texts, held, done = [], [], 0, upto
        if not found:
            raise BoilerscopeError(
                f"{path} holds no HTML response record; give a WARC file of the crawl's responses" if html else
                f"{path} holds no conversion record; give a Common Crawl WET file (.warc.wet.gz: the text of the crawl)")
        if texts:
            yield table(), size - done

    def chunks(self, prefetch: bool = True):
        """Yield the snapshot's chunks; validates as it goes.

        With ``prefetch`` the next chunk is read and tokenized in a thread
        while the caller stores the current one (at most two chunks in
        memory)."""
        if prefetch:
            yield from _prefetched(self._chunks())
        else:
            yield from self._chunks()

    def _chunks(self):
        row = 0
        for path in self.paths:
            tables = self.file_tables(path)
            while True:
                try:
                    raw, nbytes = next(tables)
                except StopIteration:
                    break
                except BoilerscopeError:
                    raise
                except (pa.ArrowInvalid, pa.ArrowException, OSError, ValueError) as exc:
                    raise _unreadable(path, exc) from None
                self._check_columns(raw, path)
                if raw.num_rows:
                    yield self._normalize(raw, path, row)
                    row += raw.num_rows
                if self.on_bytes is not None:
                    self.on_bytes(nbytes)
        if self.n_docs == 0:
            raise BoilerscopeError(f"{self.source} holds no documents; give a snapshot with at least one row")
        self._check_unique()
        self.df = self.df[:len(self.vocab)]
        self.snapshot_id = self.hasher.hexdigest()

    def _check_columns(self, raw: pa.Table, path: str) -> None:
        cols = raw.column_names
        if self._columns is None:
            self._columns = cols
            if "text" not in cols and "tokens" not in cols:
                raise BoilerscopeError(
                    f"{path} has no 'text' or 'tokens' column (columns: {', '.join(cols)}); "
                    "name the document text column 'text'")
            self.hasher.kind = "text" if "text" in cols else "tokens"
        elif sorted(cols) != sorted(self._columns):
            raise BoilerscopeError(
                f"{path} has the columns {', '.join(cols)} but {self.paths[0]} has "
                f"{', '.join(self._columns)}; every shard must have the same columns")

    def _normalize(self, table: pa.Table, path: str, first_row: int) -> Chunk:
        n = table.num_rows
        texts = _string_column(table, "text", path)
        if texts is None:
            col = table.column("tokens")
            if not (pa.types.is_list(col.type) or pa.types.is_large_list(col.type)) or not (
                    pa.types.is_string(col.type.value_type)
                    or pa.types.is_large_string(col.type.value_type)
                    or pa.types.is_null(col.type.value_type)):
                raise BoilerscopeError(
                    f"{path}: column 'tokens' holds {col.type}, not lists of strings")
            tk, texts = tokenize_token_lists(col, vocabulary=(self._ids, self.vocab))
        else:
            texts = texts.fill_null("")
            tk = None
        with ThreadPoolExecutor(1) as pool:
            # the content hash runs beside the tokenizer (hashlib releases the GIL)
            hashed = pool.submit(self._hash_text, texts)
            if tk is None:
                tk = tokenize_arrow(texts, vocabulary=(self._ids, self.vocab), raw_tables=self._raw_tables)
            texts = hashed.result()
        doc_id = _doc_ids(table, path, first_row)
        urls = _string_column(table, "url", path)
        url_list = urls.to_pylist() if urls is not None else [None] * n
        sites = _string_column(table, "site", path)
        site_list = sites.to_pylist() if sites is not None else [None] * n
        site_list = sites_of(site_list, url_list)
        self._sites.update(site_list)
        out = pa.table({
            "doc_id": pa.array(doc_id, pa.int64()),
            "site": pa.array(site_list, pa.string()),
            "url": pa.array(url_list, pa.string()),
            "text": texts,
        })
        self.hasher.update(out, text=False)
        self._doc_ids.append((path, doc_id))
        vocab = self.vocab
        if len(vocab) > self.df.shape[0]:
            self.df = np.concatenate([self.df, np.zeros(max(len(vocab), 2 * self.df.shape[0]) - self.df.shape[0],
                                                         np.int64)])
        if tk.tokens.shape[0]:
            self.df[:len(vocab)] += KB.word_df(tk.tokens, tk.doc_offsets, len(vocab))
        self.n_docs += n
        self.n_tokens += int(tk.tokens.shape[0])
        return Chunk(table=out, tokens=tk.tokens, span_start=tk.span_start, span_end=tk.span_end,
                     n_tokens=np.diff(tk.doc_offsets).astype(np.int64))

    def _hash_text(self, texts):
        texts = (texts.combine_chunks() if isinstance(texts, pa.ChunkedArray) else texts).cast(pa.large_string())
        self.hasher.update_column("text", texts)
        return texts

    def _check_unique(self) -> None:
        ids = np.concatenate([a for _, a in self._doc_ids])
        if np.unique(ids).shape[0] == ids.shape[0]:
            return
        vals, counts = np.unique(ids, return_counts=True)
        dup = int(vals[counts > 1][0])
        where = [p for p, a in self._doc_ids if (a == dup).any()]
        shards = sorted(set(where), key=where.index)
        place = shards[0] if len(shards) == 1 else f"{shards[0]} and {shards[1]}"
        raise BoilerscopeError(f"{place}: doc_id {dup} appears more than once; doc_id must be unique")


def _prefetched(items):
    """``items`` produced one ahead in a thread; its exceptions are raised
    here, in order, and it stops when the consumer does."""
    import queue
    import threading

    q: queue.Queue = queue.Queue(maxsize=1)
    stop = threading.Event()
    done = object()

    def produce():
        try:
            for item in items:
                while not stop.is_set():
                    try:
                        q.put((item, None), timeout=0.1)
                        break
                    except queue.Full:
                        continue
                if stop.is_set():
                    return
            q.put((done, None))
        except BaseException as exc:  # handed to the consumer
            q.put((None, exc))

    t = threading.Thread(target=produce, name="boilerscope-read", daemon=True)
    t.start()
    try:
        while True:
            item, exc = q.get()
            if exc is not None:
                raise exc
            if item is done:
                return
            yield item
    finally:
        stop.set()
        while t.is_alive():
            try:
                q.get_nowait()
            except queue.Empty:
                pass
            t.join(0.05)


def _pieces(table: pa.Table, rows: int | None):
    if not rows or table.num_rows <= rows:
        yield table
        return
    for i in range(0, table.num_rows, rows):
        yield table.slice(i, rows)


def _unreadable(path: str, exc: BaseException) -> BoilerscopeError:
    low = path.lower()
    kind = {".parquet": "Parquet", ".jsonl": "JSONL", ".csv": "CSV", ".arrow": "Arrow", ".warc.wet.gz": "WET",
            ".warc.wet": "WET", ".warc.gz": "WARC", ".warc": "WARC"}.get(suffix_of(low), "snapshot")
    if low.endswith(COMPRESSED_JSONL_SUFFIXES):
        kind = f"compressed JSONL ({JSON_CODECS[os.path.splitext(low)[1]]})"
    detail = first_line(exc)
    if "utf8" in detail.lower() or "utf-8" in detail.lower():
        return BoilerscopeError(f"{path} is not valid UTF-8 ({detail}); re-encode it as UTF-8")
    return BoilerscopeError(f"{path} is not a readable {kind} file ({detail}); check the file or export it again")


def _is_html(content_type: str | None) -> bool:
    ct = (content_type or "").split(";")[0].strip().lower()
    return ct in ("text/html", "application/xhtml+xml")


def _html_text(payload: bytes, charset: str | None) -> str:
    """An HTML page's text as resiliparse extracts it with main-content
    detection off (navigation, sidebars and footers kept)."""
    from resiliparse.extract.html2text import extract_plain_text
    from resiliparse.parse.encoding import bytes_to_str, detect_encoding
    html = bytes_to_str(payload, charset or detect_encoding(payload), errors="replace")
    return extract_plain_text(html, main_content=False)


def _arrow_reader(src):
    """The record batches of an Arrow IPC file: a stream (what ``datasets``
    writes) or the random-access file format."""
    try:
        return pa.ipc.open_stream(src)
    except pa.ArrowInvalid:
        src.seek(0)
        f = pa.ipc.open_file(src)
        return (f.get_batch(i) for i in range(f.num_record_batches))


def _json_file(path: str):
    try:
        with open(path, encoding="utf-8") as fh:
            return json.load(fh)
    except (OSError, ValueError) as exc:
        raise BoilerscopeError(f"{path} is not readable JSON ({first_line(exc)}); is the folder a complete "
                               "save_to_disk of Hugging Face datasets?") from None


def hf_dataset_files(folder: str) -> list[str] | None:
    """The Arrow files of a Hugging Face ``save_to_disk`` folder, in order
    (every split of a DatasetDict in turn), or None for another folder."""
    if os.path.isfile(os.path.join(folder, "dataset_dict.json")):
        splits = _json_file(os.path.join(folder, "dataset_dict.json")).get("splits") or []
        files = []
        for split in splits:
            part = hf_dataset_files(os.path.join(folder, str(split)))
            if part is None:
                raise BoilerscopeError(f"{folder}: split {split} of dataset_dict.json has no state.json; "
                                       "is the folder a complete save_to_disk?")
            files += part
        return files
    state = os.path.join(folder, "state.json")
    if not os.path.isfile(state):
        return None
    names = [d.get("filename") for d in _json_file(state).get("_data_files") or []]
    files = [os.path.join(folder, str(n)) for n in names if n]
    for f in files:
        if os.path.dirname(os.path.realpath(f)) != os.path.realpath(folder) or not os.path.isfile(f):
            raise BoilerscopeError(f"{folder}: state.json names {os.path.basename(f)}, which is not a file of "
                                   "the folder; is the folder a complete save_to_disk?")
    return files


def resolve_source(source: str) -> list[str]:
    """The files a SOURCE names: one snapshot file, the shards of a folder
    (or the Arrow files of a Hugging Face datasets folder), or the files a
    glob matches (in name order; shards of one format)."""
    if "\x00" in source:
        raise BoilerscopeError("the snapshot path holds a NUL byte; give a plain file path")
    if os.path.isdir(source) and (hf := hf_dataset_files(source)) is not None:
        if not hf:
            raise BoilerscopeError(f"{source} is a Hugging Face datasets folder without data files")
        return hf
    if any(ch in source for ch in "*?[") and not os.path.exists(source):
        paths = sorted(p for p in glob.glob(source) if not os.path.isdir(p))
        if not paths:
            raise BoilerscopeError(f"{source} matches no file; give a snapshot, a folder of shards "
                                   "or a pattern such as crawl/part-*.parquet")
        bad = [p for p in paths if not p.lower().endswith(SHARD_SUFFIXES)]
        if bad:
            raise BoilerscopeError(f"{bad[0]} matches {source} but is not a .parquet or .jsonl shard; "
                                   "make the pattern match only the shards")
    elif os.path.isdir(source):
        paths = sorted(os.path.join(source, n) for n in os.listdir(source)
                       if n.lower().endswith(SHARD_SUFFIXES) and not n.startswith(".")
                       and not os.path.isdir(os.path.join(source, n)))
        if not paths:
            raise BoilerscopeError(f"{source} is a folder without .parquet or (compressed) .jsonl shards; "
                                   "give a snapshot file or a folder of shards")
    else:
        _check_file(source)
        return [source]
    if len({suffix_of(p) for p in paths}) > 1:
        raise BoilerscopeError(f"{source} mixes shards of several formats ({', '.join(sorted({suffix_of(p) for p in paths}))}); "
                               "give shards of one format")
    return paths


def _check_file(path: str) -> None:
    if "\x00" in path:
        raise BoilerscopeError("the snapshot path holds a NUL byte; give a plain file path")
    if not os.path.exists(path):
        raise BoilerscopeError(
            f"{path}: file not found; give the path of a {FORMATS} snapshot")
    if os.path.isdir(path):
        raise BoilerscopeError(f"{path} is a folder; give a {FORMATS} file")
    if not stat.S_ISREG(os.stat(path).st_mode):
        # a FIFO or a device would block or never end
        raise BoilerscopeError(f"{path} is not a regular file; give a {FORMATS} file")
    if not path.lower().endswith(SNAPSHOT_SUFFIXES):
        raise BoilerscopeError(
            f"{path}: unknown format; a snapshot ends in {FORMATS}, a store in .duckdb")


def load(source: str, on_bytes=None) -> Snapshot:
    """Read, validate and tokenize a whole snapshot in memory (the stream of
    :class:`SnapshotReader` gathered; same ids, same snapshot id)."""
    reader = SnapshotReader(source, on_bytes=on_bytes)
    parts = list(reader.chunks())
    lengths = np.concatenate([c.n_tokens for c in parts])
    doc_offsets = np.zeros(lengths.shape[0] + 1, np.int64)
    np.cumsum(lengths, out=doc_offsets[1:])
    tk = Tokenized(tokens=np.concatenate([c.tokens for c in parts]).astype(np.int32, copy=False),
                   doc_offsets=doc_offsets,
                   span_start=np.concatenate([c.span_start for c in parts]),
                   span_end=np.concatenate([c.span_end for c in parts]), vocab=reader.vocab)
    table = pa.concat_tables([c.table for c in parts])
    return Snapshot(table=table, tokenized=tk, snapshot_id=reader.snapshot_id,
                    source=os.path.abspath(source), vocab_df=reader.df)
