"""Tokenisation: the contract every other part of Boilerscope relies on.

Tokens are the maximal runs of ``[\\p{L}\\p{M}\\p{N}]+`` (Unicode letters,
combining marks, digits) in the ORIGINAL text, each lowercased with Python's
``str.lower()`` (full Unicode lowercasing: ``"İ"`` becomes ``"i̇"``, a final
capital sigma becomes ``"ς"``).  Everything else separates tokens and is
dropped.  Each token keeps its span in the original text as code-point
offsets, so any token range maps back to the original text with its case and
punctuation.  Scripts written without spaces (Chinese, Japanese) come out as
long tokens, one per run of letters.

The character class is taken from the ``regex`` module's own Unicode tables
(the reference implementation of ``\\p{..}``), compiled once into a lookup
table of 0x110000 bytes; the scan itself runs in :mod:`engine.kernels.tokenizer`.
"""
from __future__ import annotations

import functools
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import regex

from .errors import BoilerscopeError
from .kernels import tokenizer as K


TOKEN_PATTERN = r"[\p{L}\p{M}\p{N}]+"
_TOKEN_RE = regex.compile(TOKEN_PATTERN)


@functools.lru_cache(maxsize=1)
def char_classes() -> np.ndarray:
    """Lookup table: 1 for each code point of class ``[\\p{L}\\p{M}\\p{N}]``."""
    cps = np.arange(0x110000, dtype=np.uint32)
    cps[0xD800:0xE000] = 0x20  # surrogates are never word characters
    text = cps.tobytes().decode("utf-32-le")
    cls = np.zeros(0x110000, np.uint8)
    for m in _TOKEN_RE.finditer(text):
        cls[m.start():m.end()] = 1
    return cls


def tokenize(text: str) -> list[str]:
    """Tokens of one string (the plain-Python reading of the contract)."""
    return [m.group().lower() for m in _TOKEN_RE.finditer(text)]


@dataclass
class Tokenized:
    """A tokenized corpus.

    Attributes
    ----------
    tokens : int32 array (n_tokens,)
        Token ids, all documents concatenated.
    doc_offsets : int64 array (n_docs + 1,)
        ``tokens[doc_offsets[d]:doc_offsets[d + 1]]`` is document ``d``.
    span_start, span_end : int32 arrays (n_tokens,)
        Code-point offsets of each token in its document's original text.
    vocab : list of str
        ``vocab[i]`` is the lowercased token with id ``i`` (ids in order of
        first occurrence).
    """

    tokens: np.ndarray
    doc_offsets: np.ndarray
    span_start: np.ndarray
    span_end: np.ndarray
    vocab: list[str]

    @property
    def n_docs(self) -> int:
        return int(self.doc_offsets.shape[0] - 1)

    @property
    def n_tokens(self) -> int:
        return int(self.tokens.shape[0])


def _as_large_string(arr: pa.Array | pa.ChunkedArray) -> pa.LargeStringArray:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    if pa.types.is_string(arr.type) or pa.types.is_string_view(arr.type):
        arr = arr.cast(pa.large_string())
    if not pa.types.is_large_string(arr.type):
        raise BoilerscopeError(f"text column has type {arr.type}, expected strings")
    if arr.null_count:
        arr = arr.fill_null("")
    return arr


def string_buffers(arr: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """A string column's offsets (int64, ``len + 1``, into the bytes) and its
    UTF-8 bytes (uint8), without a copy of the bytes; nulls read as empty."""
    arr = _as_large_string(arr)
    if len(arr) == 0:
        return np.zeros(1, np.int64), np.zeros(0, np.uint8)
    _, offsets, data = arr.buffers()
    return (np.frombuffer(offsets, np.int64)[arr.offset:arr.offset + len(arr) + 1],
            np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8))


def _grown(a: np.ndarray, size: int, used: int) -> np.ndarray:
    """A larger buffer holding the first ``used`` items of ``a`` (np.resize
    would also fill the rest by repeating ``a``)."""
    out = np.empty(size, a.dtype)
    out[:used] = a[:used]
    return out


class RawTable:
    """One worker's table of raw tokens (the kernel's open-addressing table,
    the raw tokens' bytes) and their vocabulary ids.

    A snapshot read in chunks keeps one per worker across its chunks
    (``tokenize_arrow(..., raw_tables=...)``), so a raw token is lowercased
    and looked up in the vocabulary once per snapshot and worker, not once
    per chunk: a chunk's raw tokens are mostly known ones (each chunk of
    the generated 40M-token corpus has about 200,000 distinct words), and
    that per-chunk lookup took a third of the reading thread's time."""

    def __init__(self, start_size: int = 1 << 16):
        self.start_size = start_size  # also the first size of a slice's output buffers
        self.cap = start_size
        self.slot_id = np.full(2 * start_size, -1, np.int64)
        self.raw_hash = np.empty(start_size, np.uint64)
        self.raw_off = np.zeros(start_size + 1, np.int64)
        self.raw_bytes = np.empty(16 * start_size, np.uint8)
        self.raw_ascii = np.empty(start_size, np.uint8)
        self.n_raw = 0
        self.n_raw_bytes = 0
        self.mapping = np.empty(0, np.int32)  # vocabulary id of raw ids < len(mapping)

    def grow(self, need_bytes: int) -> None:
        """Room for one more raw token of ``need_bytes`` bytes."""
        if 2 * (self.n_raw + 1) > self.cap:
            self.cap *= 2
            self.slot_id = K.rehash(self.raw_hash, self.n_raw, self.cap)
        if self.n_raw + 2 > self.raw_hash.shape[0]:
            size = 2 * self.raw_hash.shape[0]
            self.raw_hash = _grown(self.raw_hash, size, self.n_raw)
            self.raw_ascii = _grown(self.raw_ascii, size, self.n_raw)
            self.raw_off = _grown(self.raw_off, size + 1, self.n_raw + 1)
        if self.n_raw_bytes + need_bytes > self.raw_bytes.shape[0]:
            self.raw_bytes = _grown(self.raw_bytes, max(self.n_raw_bytes + need_bytes, 2 * self.raw_bytes.shape[0]),
                                    self.n_raw_bytes)

    def map_new(self, lowered: dict, vocab: list) -> np.ndarray:
        """Vocabulary ids for the raw tokens not mapped yet (full Unicode
        lowercasing of the non-ASCII ones; new tokens get the next ids, in
        raw-id order, which is their order of first occurrence); returns
        the whole raw id -> vocabulary id mapping."""
        lo, hi = self.mapping.shape[0], self.n_raw
        if hi == lo:
            return self.mapping
        raw = pa.LargeStringArray.from_buffers(hi - lo, pa.py_buffer(self.raw_off[:hi + 1]),
                                               pa.py_buffer(self.raw_bytes[:self.n_raw_bytes]), offset=lo)
        strs = raw.to_pylist()
        asc = self.raw_ascii[lo:hi]
        lows = strs if asc.all() else [x if t else x.lower() for x, t in zip(strs, asc.tolist())]
        get = lowered.get
        ids = [get(x) for x in lows]
        if None in ids:
            for i, j in enumerate(ids):
                if j is None:
                    low = lows[i]
                    j = get(low)  # a new token met earlier in these raw tokens
                    if j is None:
                        j = len(vocab)
                        lowered[low] = j
                        vocab.append(low)
                    ids[i] = j
        self.mapping = np.concatenate([self.mapping, np.array(ids, np.int32)])
        return self.mapping


def _tokenize_slice(data, offsets, cls, d_lo, d_hi, chunk_bytes, on_bytes, table: RawTable, fast_ascii=True):
    """Tokenize documents [d_lo, d_hi) with the raw-token table ``table``
    (extended in place).

    Returns (raw ids, span starts, span ends, tokens per document)."""
    t = table
    start_size = t.start_size
    offs = offsets[d_lo:d_hi + 1]
    n_docs = d_hi - d_lo
    total_bytes = int(offs[-1] - offs[0]) if n_docs else 0
    # buffers start small and double with what is found (never sized by a
    # document's worst case: that is what made one huge document cost 40x
    # its size); natural text has about one token per 6 bytes
    out_tok = np.empty(max(start_size, total_bytes // 8 if start_size >= 1 << 16 else 0), np.int32)
    out_st = np.empty_like(out_tok)
    out_en = np.empty_like(out_tok)
    doc_ntok = np.zeros(n_docs, np.int64)
    nt = 0
    d0 = 0
    while d0 < n_docs:
        # documents [d0, d1) hold about chunk_bytes bytes (progress granularity)
        d1 = int(np.searchsorted(offs, offs[d0] + chunk_bytes, side="right"))
        d1 = min(max(d1, d0 + 1), n_docs)
        d, b, ci = d0, -1, 0
        while True:
            status, d, b, ci, need, nt, t.n_raw, t.n_raw_bytes = K.tokenize_docs(
                data, offs[:d1 + 1], d, b, ci, cls, t.slot_id, t.raw_hash, t.raw_off,
                t.raw_bytes, t.raw_ascii, t.n_raw, t.n_raw_bytes, out_tok, out_st,
                out_en, nt, doc_ntok, fast_ascii)
            if status == 0:
                break
            if status == 2:
                raise BoilerscopeError(
                    f"document at row {d_lo + d} is not valid UTF-8; re-encode the "
                    "snapshot as UTF-8 and ingest it again")
            # grow whatever is short (the table's arrays too), then resume at the pending token
            t.grow(need)
            if nt + 1 > out_tok.shape[0]:
                size = 2 * out_tok.shape[0]
                out_tok = _grown(out_tok, size, nt)
                out_st = _grown(out_st, size, nt)
                out_en = _grown(out_en, size, nt)
        if on_bytes is not None:
            on_bytes(int(offs[d1] - offs[d0]))
        d0 = d1
    return out_tok[:nt], out_st[:nt], out_en[:nt], doc_ntok


def tokenize_arrow(texts: pa.Array | pa.ChunkedArray, *, on_bytes=None,
                   chunk_bytes: int = 16 << 20, workers: int | None = None,
                   parallel_min_bytes: int = 8 << 20, vocabulary: tuple[dict, list] | None = None,
                   raw_tables: list | None = None, fast_ascii: bool = True,
                   _start_size: int = 1 << 16) -> Tokenized:
    """Tokenize an Arrow string column (nulls are empty documents).

    Parameters
    ----------
    texts : pyarrow string array
    on_bytes : callable(int) or None
        Called with the number of bytes done after each chunk (a byte
        counter, not a ``progress(stage, fraction)`` callback).
    chunk_bytes : int
        Bytes per kernel call (the granularity of ``on_bytes``).
    workers : int, optional
        Threads, each on a slice of the documents with its own raw-token
        table (merged by token text afterwards); 1 is the serial twin.
    parallel_min_bytes : int
        Below this much text one thread is used.
    vocabulary : (dict, list), optional
        A vocabulary to extend (token -> id, and the tokens by id), for a
        corpus tokenized in chunks: ids continue the given ones, and the
        returned ``vocab`` is that list.
    raw_tables : list of RawTable, optional
        The workers' raw-token tables to extend, kept by the caller across
        the chunks of one corpus together with ``vocabulary`` (a raw token
        is then lowercased and looked up once per worker, not per chunk);
        empty at first.
    fast_ascii : bool
        The kernel's ASCII fast path (default); False sends every byte
        through the UTF-8 decoder (the twin the tests compare it with: the
        same tokens, ids and spans).
    _start_size : int
        Initial buffer size (a power of two; tests pass tiny ones so that
        every regrowth path runs).
    """
    from .config import default_workers

    n_docs = len(texts)
    offsets, data = string_buffers(texts)
    cls = char_classes()
    workers = workers or default_workers()
    total = int(offsets[-1] - offsets[0]) if n_docs else 0
    if total < parallel_min_bytes:
        workers = 1
    cuts = [0] + [int(np.searchsorted(offsets, offsets[0] + total * i // workers)) for i in range(1, workers)]
    cuts = sorted(set(min(c, n_docs) for c in cuts)) + [n_docs]
    slices = [(cuts[i], cuts[i + 1]) for i in range(len(cuts) - 1) if cuts[i] < cuts[i + 1]] or [(0, n_docs)]
    lock = threading.Lock()

    def prog(nbytes):
        if on_bytes is not None:
            with lock:
                on_bytes(nbytes)

    tables = raw_tables if raw_tables is not None else []
    while len(tables) < len(slices):
        tables.append(RawTable(_start_size))

    def run(k):
        return _tokenize_slice(data, offsets, cls, slices[k][0], slices[k][1], chunk_bytes, prog, tables[k],
                               fast_ascii)

    if len(slices) > 1:
        with ThreadPoolExecutor(len(slices)) as ex:
            parts = list(ex.map(run, range(len(slices))))
    else:
        parts = [run(0)]

    # full Unicode lowercasing, once per distinct raw token of each table
    lowered, vocab = vocabulary if vocabulary is not None else ({}, [])
    mappings = [tables[k].map_new(lowered, vocab) for k in range(len(parts))]
    for (tok, *_), mapping in zip(parts, mappings):
        K.remap(tok, mapping)
    if len(parts) == 1:
        tokens, starts, ends = parts[0][0], parts[0][1], parts[0][2]
        doc_ntok = parts[0][3]
    else:
        tokens = np.concatenate([p[0] for p in parts])
        starts = np.concatenate([p[1] for p in parts])
        ends = np.concatenate([p[2] for p in parts])
        doc_ntok = np.concatenate([p[3] for p in parts])
    doc_offsets = np.zeros(n_docs + 1, np.int64)
    np.cumsum(doc_ntok, out=doc_offsets[1:])
    return Tokenized(tokens=tokens, doc_offsets=doc_offsets, span_start=starts, span_end=ends,
                     vocab=vocab)


def tokenize_lists(token_lists: list[list[str] | None]) -> tuple[Tokenized, list[str]]:
    """:func:`tokenize_token_lists` on Python lists; returns the texts as a list."""
    tk, texts = tokenize_token_lists(pa.array(token_lists, pa.large_list(pa.large_string())))
    return tk, texts.to_pylist()


def tokenize_token_lists(col, vocabulary: tuple[dict, list] | None = None) -> tuple[Tokenized, pa.Array]:
    """Documents given as token lists (already tokenized by the index).

    Tokens are used as given (null tokens skipped), lowercased with
    ``str.lower()`` once per distinct raw token; the display text of a
    document is its tokens joined by single spaces, and spans (code points)
    point into that text.  Vectorised with Arrow compute (dictionary encoding,
    ``binary_join``, ``utf8_length``): as fast as the text path.

    Parameters
    ----------
    col : pyarrow list<string> (or list<null>) array or chunked array
    vocabulary : (dict, list), optional
        A vocabulary to extend, as in :func:`tokenize_arrow`.

    Returns
    -------
    (Tokenized, texts as a large_string array)
    """
    if isinstance(col, pa.ChunkedArray):
        col = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    n_docs = len(col)
    if not (pa.types.is_string(col.type.value_type) or pa.types.is_large_string(col.type.value_type)):
        col = col.cast(pa.large_list(pa.large_string()))  # a list of nulls
    values = pc.list_flatten(col)
    lengths = pc.fill_null(pc.list_value_length(col), 0).to_numpy(zero_copy_only=False)
    doc_offsets = np.zeros(n_docs + 1, np.int64)
    lists = col
    if values.null_count:
        # null tokens are skipped: count the valid ones per document
        doc = np.repeat(np.arange(n_docs, dtype=np.int64), lengths)
        valid = values.is_valid()
        doc = doc[valid.to_numpy(zero_copy_only=False)]
        values = values.filter(valid)
        np.cumsum(np.bincount(doc, minlength=n_docs), out=doc_offsets[1:])
        lists = pa.LargeListArray.from_arrays(pa.array(doc_offsets), values.cast(pa.large_string()))
    else:
        np.cumsum(lengths, out=doc_offsets[1:])
    sep = pa.scalar(" ", lists.type.value_type)
    with ThreadPoolExecutor(2) as ex:  # Arrow's kernels release the GIL
        joined = ex.submit(lambda: pc.fill_null(pc.binary_join(lists, sep), "").cast(pa.large_string()))
        char_len = ex.submit(lambda: pc.utf8_length(values).to_numpy(zero_copy_only=False))
        enc = pc.dictionary_encode(values)
        raw = enc.dictionary.to_pylist()
        ids, vocab = vocabulary if vocabulary is not None else ({}, [])
        mapping = np.empty(len(raw), np.int32)
        for i, t in enumerate(raw):
            low = t.lower()
            j = ids.get(low)
            if j is None:
                j = ids[low] = len(vocab)
                vocab.append(low)
            mapping[i] = j
        tokens = mapping[enc.indices.to_numpy(zero_copy_only=False)]
        n = tokens.shape[0]
        starts = np.empty(n, np.int32)
        ends = np.empty(n, np.int32)
        K.list_spans(char_len.result(), doc_offsets, starts, ends)
        texts = joined.result()
    return Tokenized(tokens=tokens, doc_offsets=doc_offsets, span_start=starts, span_end=ends, vocab=vocab), texts
