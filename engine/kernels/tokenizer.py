"""UTF-8 tokenizer kernel: maximal runs of word characters, with spans.

The kernel walks the UTF-8 bytes of a run of documents once, decodes each code
point, classifies it with a lookup table (1 = letter, mark or digit, i.e. the
class ``[\\p{L}\\p{M}\\p{N}]``) and emits, for every maximal run of such code
points, a raw token id and its span as code-point offsets in the document.

Raw ids come from an open-addressing hash table keyed by the token's bytes with
ASCII letters folded to lowercase (FNV-1a, 64 bit, compared byte by byte on a
hash match, so distinct tokens never merge).  Folding ASCII first is safe
because ``str.lower`` maps A-Z to a-z and casing context (final sigma) only
depends on whether neighbours are cased, which ASCII folding keeps.  The full
Unicode lowercasing of the non-ASCII raw tokens is done afterwards in Python,
once per distinct raw token.

Complexity: O(bytes) time; O(distinct raw tokens) memory for the table.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..config import NJIT
from .hashing import FNV_OFFSET as _FNV_OFFSET
from .hashing import FNV_PRIME as _FNV_PRIME
from .hashing import mix64 as _mix



@njit(**NJIT)
def ascii_tables(cls):
    """The ASCII fast path's tables: ``word[c]`` (the class of byte ``c <
    0x80``) and ``fold[c]`` (the byte with A-Z folded to a-z; bytes >= 0x80
    unchanged)."""
    word = np.zeros(128, np.uint8)
    for c in range(128):
        word[c] = cls[c]
    fold = np.arange(256).astype(np.uint8)
    for c in range(65, 91):
        fold[c] = c + 32
    return word, fold


@njit(**NJIT)
def tokenize_docs(data, offsets, d_begin, b_begin, ci_begin, cls, slot_id, raw_hash,
                  raw_off, raw_bytes, raw_ascii, n_raw, n_raw_bytes, out_tok, out_start,
                  out_end, nt, doc_ntok, fast_ascii=True):
    """Tokenize documents ``d_begin .. len(offsets) - 2`` of a UTF-8 buffer.

    The kernel never reallocates (a reassigned array in a hot loop costs
    reference counting on every iteration): before it stores a token it checks
    that the outputs, the hash table and the raw-token arrays can take it, and
    otherwise returns so that the wrapper grows them and calls again from the
    start of that token.  Buffers so grow with what is found, never with a
    document's worst case (one 200 MB document would otherwise reserve room
    for 100M tokens in every array).

    Two paths over the bytes: the ASCII fast path reads a run of ASCII word
    bytes (or of ASCII separators) in a tight loop of table lookups, with no
    decoding and no per-byte state; any byte >= 0x80 goes through the UTF-8
    decoder and the code-point table.  Both fold and hash a byte the same way,
    so a token's raw id never depends on the path (``fast_ascii=False`` sends
    every byte through the decoder: the twin the tests compare it with).

    Parameters
    ----------
    data : uint8 array
        Concatenated UTF-8 text.
    offsets : int64 array
        Byte offsets of the documents in ``data`` (``len = docs + 1``).
    d_begin, b_begin, ci_begin : int
        Where to start: document ``d_begin`` at byte ``b_begin`` (code point
        ``ci_begin`` of that document); ``b_begin = -1`` starts at the
        document's first byte.
    cls : uint8 array of size 0x110000
        1 for code points of class ``[\\p{L}\\p{M}\\p{N}]``.
    slot_id : int64 array (2 x a power of two)
        Open-addressing table, interleaved (hash, raw id) pairs so that a
        probe touches one cache line (id -1 = empty).
    raw_hash, raw_off, raw_bytes, raw_ascii : arrays
        Per raw token: FNV-1a hash, byte offsets into ``raw_bytes`` (ASCII
        folded), and whether it is pure ASCII.
    n_raw, n_raw_bytes : int
        Entries and bytes used so far.
    out_tok, out_start, out_end : int32 arrays
        Outputs (raw id, code-point span), written from index ``nt``.
    nt : int
        Tokens written so far.
    doc_ntok : int64 array
        Output: tokens per document.
    fast_ascii : bool
        The ASCII fast path (default); False decodes every byte.

    Returns
    -------
    tuple of int
        ``(status, d, b, ci, need, nt, n_raw, n_raw_bytes)``: status 0 = all
        done, 1 = grow (``need`` raw bytes for the pending token) and call
        again from document ``d`` at byte ``b``, code point ``ci``; 2 =
        document ``d`` is not valid UTF-8.
    """
    n_docs = offsets.shape[0] - 1
    cap = slot_id.shape[0] // 2
    tmask = cap - 1
    aword, fold = ascii_tables(cls)
    for d in range(d_begin, n_docs):
        b = offsets[d]
        e = offsets[d + 1]
        ci = 0
        if d == d_begin and b_begin >= 0:
            b = b_begin
            ci = ci_begin
        in_tok = False
        tb = b
        tc = 0
        h = _FNV_OFFSET
        ascii_only = True
        count0 = nt
        while b < e:
            c0 = np.int64(data[b])
            ending = False    # a token ends at (tend_b, tend_c)
            tend_b = b
            tend_c = ci
            if fast_ascii and c0 < 0x80:
                if aword[c0] != 0:
                    # a run of ASCII word bytes
                    if not in_tok:  # (h and ascii_only were reset when the last token ended)
                        in_tok = True
                        tb = b
                        tc = ci
                    while True:
                        h = (h ^ np.uint64(fold[c0])) * _FNV_PRIME
                        b += 1
                        ci += 1
                        if b >= e:
                            break
                        c0 = np.int64(data[b])
                        if c0 >= 0x80 or aword[c0] == 0:
                            break
                    if b < e:
                        continue  # the next byte ends the token or carries it on
                    ending = True
                    tend_b = b
                    tend_c = ci
                else:
                    # a run of ASCII separators
                    if in_tok:
                        ending = True
                    b += 1
                    ci += 1
                    while b < e and data[b] < 0x80 and aword[data[b]] == 0:
                        b += 1
                        ci += 1
            else:
                if c0 < 0x80:
                    cp = c0
                    nb = 1
                elif c0 < 0xC2:
                    return 2, d, b, ci, 0, nt, n_raw, n_raw_bytes
                elif c0 < 0xE0:
                    if b + 1 >= e or (data[b + 1] & 0xC0) != 0x80:
                        return 2, d, b, ci, 0, nt, n_raw, n_raw_bytes
                    cp = ((c0 & 0x1F) << 6) | (np.int64(data[b + 1]) & 0x3F)
                    nb = 2
                elif c0 < 0xF0:
                    if (b + 2 >= e or (data[b + 1] & 0xC0) != 0x80
                            or (data[b + 2] & 0xC0) != 0x80):
                        return 2, d, b, ci, 0, nt, n_raw, n_raw_bytes
                    cp = (((c0 & 0x0F) << 12) | ((np.int64(data[b + 1]) & 0x3F) << 6)
                          | (np.int64(data[b + 2]) & 0x3F))
                    if cp < 0x800 or (cp >= 0xD800 and cp <= 0xDFFF):
                        return 2, d, b, ci, 0, nt, n_raw, n_raw_bytes
                    nb = 3
                elif c0 < 0xF5:
                    if (b + 3 >= e or (data[b + 1] & 0xC0) != 0x80
                            or (data[b + 2] & 0xC0) != 0x80
                            or (data[b + 3] & 0xC0) != 0x80):
                        return 2, d, b, ci, 0, nt, n_raw, n_raw_bytes
                    cp = (((c0 & 0x07) << 18) | ((np.int64(data[b + 1]) & 0x3F) << 12)
                          | ((np.int64(data[b + 2]) & 0x3F) << 6)
                          | (np.int64(data[b + 3]) & 0x3F))
                    if cp < 0x10000 or cp > 0x10FFFF:
                        return 2, d, b, ci, 0, nt, n_raw, n_raw_bytes
                    nb = 4
                else:
                    return 2, d, b, ci, 0, nt, n_raw, n_raw_bytes
                if cls[cp] != 0:
                    if not in_tok:
                        in_tok = True
                        tb = b
                        tc = ci
                    for k in range(nb):
                        h = (h ^ np.uint64(fold[data[b + k]])) * _FNV_PRIME
                    if nb > 1:
                        ascii_only = False
                    b += nb
                    ci += 1
                    if b >= e:  # the document ends inside the token
                        ending = True
                        tend_b = b
                        tend_c = ci
                else:
                    if in_tok:
                        ending = True
                    b += nb
                    ci += 1
            if not ending:
                continue
            # the token [tb, tend_b) (code points [tc, tend_c)) ends: its raw id
            tlen = tend_b - tb
            if nt + 1 > out_tok.shape[0] or 2 * (n_raw + 1) > cap or n_raw + 2 > raw_hash.shape[0] \
                    or n_raw_bytes + tlen > raw_bytes.shape[0]:
                # no room for this token (if it is new): resume at its start
                doc_ntok[d] += nt - count0
                return 1, d, tb, tc, tlen, nt, n_raw, n_raw_bytes
            s = np.int64(_mix(h)) & tmask
            rid = -1
            hs = np.int64(h)
            while True:
                r = slot_id[2 * s + 1]
                if r == -1:
                    break
                if slot_id[2 * s] == hs and raw_off[r + 1] - raw_off[r] == tlen:
                    same = True
                    ro = raw_off[r]
                    for k in range(tlen):
                        if raw_bytes[ro + k] != fold[data[tb + k]]:
                            same = False
                            break
                    if same:
                        rid = r
                        break
                s = (s + 1) & tmask
            if rid == -1:
                rid = n_raw
                for k in range(tlen):
                    raw_bytes[n_raw_bytes + k] = fold[data[tb + k]]
                n_raw_bytes += tlen
                raw_hash[n_raw] = h
                raw_off[n_raw + 1] = n_raw_bytes
                raw_ascii[n_raw] = 1 if ascii_only else 0
                slot_id[2 * s] = hs
                slot_id[2 * s + 1] = n_raw
                n_raw += 1
            out_tok[nt] = rid
            out_start[nt] = tc
            out_end[nt] = tend_c
            nt += 1
            in_tok = False
            h = _FNV_OFFSET  # ready for the next token
            ascii_only = True
        doc_ntok[d] += nt - count0
    return 0, n_docs, 0, 0, 0, nt, n_raw, n_raw_bytes


@njit(**NJIT)
def rehash(raw_hash, n_raw, new_cap):
    """A fresh slot table of ``new_cap`` slots (a power of two) for the
    first ``n_raw`` raw tokens."""
    new_slots = np.full(2 * new_cap, -1, np.int64)
    tmask = new_cap - 1
    for r in range(n_raw):
        s = np.int64(_mix(raw_hash[r])) & tmask
        while new_slots[2 * s + 1] != -1:
            s = (s + 1) & tmask
        new_slots[2 * s] = np.int64(raw_hash[r])
        new_slots[2 * s + 1] = r
    return new_slots


@njit(**NJIT)
def remap(tokens, mapping):
    """``mapping[tokens]`` in place (int32)."""
    for i in range(tokens.shape[0]):
        tokens[i] = mapping[tokens[i]]
    return tokens


@njit(**NJIT)
def list_spans(char_len, doc_offsets, starts, ends):
    """Spans of tokens given as lists: each document's tokens joined by single
    spaces, code-point offsets of each token in that text."""
    for d in range(doc_offsets.shape[0] - 1):
        pos = 0
        for i in range(doc_offsets[d], doc_offsets[d + 1]):
            starts[i] = pos
            pos += char_len[i]
            ends[i] = pos
            pos += 1
