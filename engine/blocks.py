"""Boilerplate blocks: the covered text split into regions an analyst reads as one thing.

A run covers tokens (those inside an occurrence of a frequent L-gram, and
inside template occurrences when templates were mined).  Blocks partition
those covered tokens into regions that recur together across documents: a
site's sidebar with all its title variants is one block; a cross-site banner
and the site footer that sits next to it are two.

The definition (v3)
-------------------
Inputs: a tokenized corpus, sigma, L, and optionally template occurrences
(document, start, end exclusive, template id, template df).

1. A *window* is an occurrence of an L-gram (L consecutive tokens of one
   document) whose document frequency (distinct documents holding that
   L-gram) is >= sigma; a template occurrence is a window too, with its
   template's df.  *Covered* tokens are the tokens inside at least one window
   (the run's coverage mask; with templates, its union with the template
   occurrences).
2. For a covered token t, its *level* m(t) is the largest df of a window
   holding t.  For consecutive covered tokens t-1, t of one document, the
   *junction strength* b(t) is the largest df of a window holding both (0 if
   none).
3. Consecutive covered tokens t-1, t are *cut apart* when
   b(t) <= max(m(t-1), m(t)) / 2 (inside a template occurrence too: its df
   counts in b like any window's).
   Tokens separated by an uncovered token (or a document end) are always
   apart.  This cuts valleys (a site footer of df 100 followed in 50
   documents by a banner of df 1000: the junction's L-grams have df 50) and
   steps (a cross-site nav bar of df 6913 always followed by a site sidebar of
   df 2414: the junction's df is 2414 <= 6913 / 2).
4. The cuts split each document's covered tokens into *pieces*.  A piece
   *holds* the windows wholly inside it.  Its *keys* are the text of each
   L-gram window it holds and the template id of each template window it
   holds that fills at least half of its tokens; a piece with none of these
   is keyed by the ids of all the template windows it holds.
5. *Pieces holding no window join a neighbour*, in rounds until every piece
   holds one: in a round, every such piece is joined with its neighbour piece in the
   same run of covered tokens across the boundary with the larger b (the left
   one on ties; a side at the run's end does not count), all the joins of a
   round at once (so the result does not depend on an order).  A title of
   fewer than L tokens in front of a sidebar is cut off by rule 3 (its
   L-grams run into the sidebar with the title's df, at most half the
   sidebar's) and joins the sidebar here.
   *Termination*: a run of covered tokens is a union of windows, so a piece
   that is a whole run holds one; a piece holding none is therefore not a
   whole run and has a neighbour, and each round with such a piece removes at
   least one boundary of a run with finitely many.  When none is left, every
   piece holds a window.
6. *Blocks* are the connected components of the pieces of all documents,
   two pieces linked when they share a key.  Blocks are numbered by covered
   tokens (descending), ties by the position (document, token) of their
   first token.

Consequences: every covered token is in exactly one block (the blocks'
covered tokens sum to the coverage); variants of a region that differ at
edges shorter than L share the region's L-grams and fall in one block; a
window links only pieces it lies wholly inside, so two regions that merely
touch in some documents are linked only if a piece holds a window of each.

What an analyst should know: a common phrase embedded in a rarer region (an
"all rights reserved" line of df 1000 inside a footer of df 100) is a step on
both sides, so it is cut out as a block of its own, and the footer's two
halves are separate blocks (unless one is shorter than L, when it joins the
phrase).  A template occurrence is cut inside where a window inside it is
at least twice as frequent as the template (a generic phrase among its
constants is cut out as above), and a template links pieces by its id only
where it fills at least half of them: a short generic template inside many
sites' sidebars does not make them one block, while a slotted template
standing on its own (its constant parts shorter than L: no L-gram key) is
one block across its occurrences.

The method and its complexity
-----------------------------
n tokens, w windows, p pieces.

* L-gram df, exactly: the L-grams inside a mask known to hold every
  frequent L-gram occurrence (``within``: the run's coverage; when not
  given, the L-grams that pass a filter of the distinct documents per
  hash bucket, an upper bound on each df, with their tokens) are grouped
  by text in one pass over the positions: a rolling 64-bit hash, an
  open-addressing table that grows with the distinct texts and compares
  every match token by token with its group's first occurrence (past
  ``PART_GROUPS`` texts, in parts of the hash range, a pass each); each
  position keeps its group id.  O(n L) worst case, O(n) hashing.
* levels m, strengths b and "holds a whole window" (the smallest window end
  at or after each position): a sliding maximum of width L-1 (van Herk /
  Gil-Werman), O(n); the template windows in one sweep with a max-heap of
  the open ones, O(w log w + the positions they cover).
* cuts and joins: one pass per run, and per round of joins a pass over the
  run's pieces: O(run) per round; rounds are few in practice (one or two
  on webdocs), k rounds at worst for a run of k pieces.
* components: union-find over pieces, one union per window wholly inside a
  piece (the first piece holding each key is the key's anchor).  O(w a(p)).
  Levels, pieces and links run a chunk of documents at a time
  (``CHUNK_TOKENS``) into one union-find over the corpus' pieces.
* spans, documents and representatives: O(covered tokens) hashing with
  verification.

Memory: a run calls ``find_blocks_in_ranges`` with its covered ranges (the
phrases', and the template occurrences when templates were mined): they
are compacted (only the covered tokens read, 13 bytes each), the L-grams
grouped (4 bytes per covered position, about 36 per distinct L-gram), and
the chunks' levels and pieces: about 18 bytes per covered token plus the
pieces, where the whole corpus' arrays took about 60 per covered token (18
GiB at 3B tokens, 264M of them covered).  ``find_blocks`` on a whole
corpus (the Spark driver's path, with the coverage as ``within``; sigma 1)
works the same way over every position (plus the filter's 2^26 bucket
cells, 512 MB, when no coverage is given).

Departures: none from the definition; the join rounds are simultaneous
(rule 5 as written does not say; simultaneous rounds make it order-free).
"""
from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np

from .errors import BoilerscopeError
from .kernels import blocks as K
from .kernels import templates as KT
from .kernels import coverage as C
from .steps import doc_chunks

log = logging.getLogger(__name__)

#: Tokens of the documents whose levels, pieces and links are computed at
#: once (:func:`find_blocks_in_ranges`).
CHUNK_TOKENS = 1 << 24
#: Distinct L-gram texts grouped in one pass (about 36 bytes each): past
#: this the hash range is cut into parts, each grouped in its own pass.
PART_GROUPS = 1 << 25
#: At most 2^this parts (past it a part holds more groups).
MAX_PART_BITS = 12
#: Group ids and positions of the grouping are int32 below this many covered
#: tokens, int64 from it (tests lower it to run the int64 path).
WIDE_IDS_FROM = 2**31 - 1


@dataclass
class TemplateOccurrences:
    """Template occurrences, one row each: the document, the token range
    ``[start, end)`` relative to the document, the template id and the
    template's df (the same for every occurrence of one template)."""

    doc: np.ndarray
    start: np.ndarray
    end: np.ndarray
    template_id: np.ndarray
    df: np.ndarray


@dataclass
class Blocks:
    """Blocks of one run.

    Spans (one row per maximal stretch of one block in one document, sorted
    by document then start; positions relative to the document, end
    exclusive): ``piece_doc``, ``piece_start``, ``piece_end``,
    ``piece_block``.  Per block (ids 0 ..; 0 has the most covered tokens):
    ``covered_tokens``, ``documents``, and the representative span
    ``rep_doc``, ``rep_start``, ``rep_end`` (the block's most frequent span
    text; ties: the longest, then the first).  ``doc_offsets`` is the
    corpus's, for the lookups.
    """

    piece_doc: np.ndarray
    piece_start: np.ndarray
    piece_end: np.ndarray
    piece_block: np.ndarray
    covered_tokens: np.ndarray
    documents: np.ndarray
    rep_doc: np.ndarray
    rep_start: np.ndarray
    rep_end: np.ndarray
    doc_offsets: np.ndarray

    @property
    def n_blocks(self) -> int:
        return int(self.covered_tokens.shape[0])

    def _global_spans(self):
        base = self.doc_offsets[self.piece_doc]
        return base + self.piece_start, base + self.piece_end

    def block_of_ranges(self, doc, start, end) -> np.ndarray:
        """For each range ``[start, end)`` of document ``doc``: the block
        holding most of its tokens (ties: the smaller id); -1 when none of its
        tokens is covered."""
        doc, start, end = _ranges(self.doc_offsets, doc, start, end)
        n = doc.shape[0]
        idx = np.arange(n, dtype=np.int64)
        return self._of_groups(idx, idx, idx + 1, doc, start, end)

    def block_of_groups(self, group, doc, start, end, n_groups: int | None = None) -> np.ndarray:
        """For each group id 0 .. n_groups - 1 (a phrase or a template, with
        its occurrences as ranges ``[start, end)`` of document ``doc``): the
        block holding most of the tokens of all its occurrences (ties: the
        smaller id); -1 for a group with no covered token."""
        doc, start, end = _ranges(self.doc_offsets, doc, start, end)
        group = np.asarray(group)
        if group.shape != doc.shape or (group.shape[0] and group.min() < 0):
            raise BoilerscopeError("block_of_groups: group must hold one id >= 0 per range")
        group = group.astype(np.int64)
        if n_groups is None:
            n_groups = int(group.max()) + 1 if group.shape[0] else 0
        if group.shape[0] and group.max() >= n_groups:
            raise BoilerscopeError("block_of_groups: a group id is >= n_groups")
        order = np.argsort(group, kind="stable").astype(np.int64)
        bounds = np.searchsorted(group[order], np.arange(n_groups + 1)).astype(np.int64)
        return self._of_groups(order, bounds[:-1], bounds[1:], doc, start, end)

    def _of_groups(self, order, lo, hi, doc, start, end):
        ss, se = self._global_spans()
        base = self.doc_offsets[doc]
        return K.block_of_groups(np.ascontiguousarray(ss, np.int64), np.ascontiguousarray(se, np.int64),
                                 np.ascontiguousarray(self.piece_block, np.int64), self.n_blocks,
                                 np.ascontiguousarray(order, np.int64), np.ascontiguousarray(lo, np.int64),
                                 np.ascontiguousarray(hi, np.int64), base + start, base + end)

    def remapped(self, doc_of: np.ndarray, pos_in_doc: np.ndarray, doc_offsets: np.ndarray) -> "Blocks":
        """The same blocks on another layout of the same documents (the
        covered tokens only, or pseudo-documents of segments): ``doc_of``
        maps each document here to its index there, ``pos_in_doc`` each
        token position here (covered ones at least) to its position in its
        document there; ``doc_offsets`` is the other layout's.  A piece lies
        inside one run of covered tokens, which both layouts keep whole."""
        here = self.doc_offsets
        doc_of, pos_in_doc = np.asarray(doc_of, np.int64), np.asarray(pos_in_doc, np.int64)
        ps = pos_in_doc[here[self.piece_doc] + self.piece_start]
        pe = pos_in_doc[here[self.piece_doc] + self.piece_end - 1] + 1
        pd = doc_of[self.piece_doc]
        o = np.lexsort((ps, pd))  # by document, then start, in the other layout
        return Blocks(piece_doc=pd[o], piece_start=ps[o], piece_end=pe[o], piece_block=self.piece_block[o],
                      covered_tokens=self.covered_tokens, documents=self.documents, rep_doc=doc_of[self.rep_doc],
                      rep_start=pos_in_doc[here[self.rep_doc] + self.rep_start],
                      rep_end=pos_in_doc[here[self.rep_doc] + self.rep_end - 1] + 1,
                      doc_offsets=np.asarray(doc_offsets, np.int64))

    def token_blocks(self) -> np.ndarray:
        """The block of every token position of the corpus (-1: uncovered)."""
        n = int(self.doc_offsets[-1])
        out = np.full(n, -1, np.int64)
        ss, se = self._global_spans()
        lengths = se - ss
        pos = np.repeat(ss - np.concatenate(([0], np.cumsum(lengths)[:-1])), lengths) + np.arange(int(lengths.sum()))
        out[pos] = np.repeat(self.piece_block, lengths)
        return out


def _ranges(doc_offsets, doc, start, end):
    doc, start, end = (np.asarray(x) for x in (doc, start, end))
    if not (doc.shape == start.shape == end.shape) or doc.ndim != 1:
        raise BoilerscopeError("ranges: doc, start and end must be 1-d arrays of one length")
    if doc.shape[0] == 0:
        z = np.zeros(0, np.int64)
        return z, z, z
    doc, start, end = doc.astype(np.int64), start.astype(np.int64), end.astype(np.int64)
    n_docs = doc_offsets.shape[0] - 1
    if doc.min() < 0 or doc.max() >= n_docs:
        raise BoilerscopeError("ranges: a document index is out of range")
    lengths = doc_offsets[doc + 1] - doc_offsets[doc]
    if (start < 0).any() or (end < start).any() or (end > lengths).any():
        raise BoilerscopeError("ranges: need 0 <= start <= end <= document length")
    return doc, start, end


def _check_params(sigma, min_len) -> None:
    for name, v in (("sigma", sigma), ("min_len", min_len)):
        if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < 1:
            raise BoilerscopeError(f"{{{name}}} must be an integer >= 1, not {v!r}", name)


def _check(tokens, doc_offsets, sigma, min_len, templates, within):
    if not isinstance(tokens, np.ndarray) or tokens.dtype != np.int32 or tokens.ndim != 1:
        raise BoilerscopeError("find_blocks: tokens must be a 1-d int32 array")
    if not isinstance(doc_offsets, np.ndarray) or doc_offsets.dtype != np.int64 or doc_offsets.ndim != 1:
        raise BoilerscopeError("find_blocks: doc_offsets must be a 1-d int64 array")
    if doc_offsets.shape[0] < 1 or doc_offsets[0] != 0 or doc_offsets[-1] != tokens.shape[0] \
            or (np.diff(doc_offsets) < 0).any():
        raise BoilerscopeError("find_blocks: doc_offsets must rise from 0 to the number of tokens")
    if tokens.shape[0] and tokens.min() < 0:
        raise BoilerscopeError("find_blocks: token ids must be >= 0")
    _check_params(sigma, min_len)
    if within is not None and (not isinstance(within, np.ndarray) or within.dtype != np.bool_
                               or within.shape != tokens.shape):
        raise BoilerscopeError("find_blocks: within must be a bool mask with one entry per token")
    return _template_windows(doc_offsets, templates)


def _template_windows(doc_offsets, templates):
    """The template occurrences checked, as windows sorted by (start, end):
    global ``start, end``, a dense ``key`` per template, and ``df``."""
    if templates is None:
        z = np.zeros(0, np.int64)
        return z, z, z, z
    if not isinstance(templates, TemplateOccurrences):
        raise BoilerscopeError("find_blocks: templates must be TemplateOccurrences or None")
    cols = [np.asarray(getattr(templates, f)) for f in ("doc", "start", "end", "template_id", "df")]
    if any(c.ndim != 1 or c.shape != cols[0].shape for c in cols):
        raise BoilerscopeError("find_blocks: template occurrences need 1-d columns of one length")
    if any(c.shape[0] and not np.issubdtype(c.dtype, np.integer) for c in cols):
        raise BoilerscopeError("find_blocks: template occurrence columns must be integers")
    doc, start, end, tid, df = (c.astype(np.int64) for c in cols)
    if doc.shape[0] == 0:
        z = np.zeros(0, np.int64)
        return z, z, z, z
    n_docs = doc_offsets.shape[0] - 1
    if doc.min() < 0 or doc.max() >= n_docs:
        raise BoilerscopeError("find_blocks: a template occurrence names a document out of range")
    lengths = doc_offsets[doc + 1] - doc_offsets[doc]
    if (start < 0).any() or (end <= start).any() or (end > lengths).any():
        raise BoilerscopeError("find_blocks: template occurrences need 0 <= start < end <= document length")
    if (df < 1).any() or (tid < 0).any():
        raise BoilerscopeError("find_blocks: template ids must be >= 0 and template df >= 1")
    top = int(tid.max())
    if top <= 4 * tid.shape[0] + 1024:
        # ids of a miner (dense): per-id extremes and ranks by counting, no sort
        lo = np.full(top + 1, np.iinfo(np.int64).max, np.int64)
        hi = np.full(top + 1, -1, np.int64)
        np.minimum.at(lo, tid, df)
        np.maximum.at(hi, tid, df)
        if (lo[hi >= 0] != hi[hi >= 0]).any():
            raise BoilerscopeError("find_blocks: one template has two different df")
        key = (np.cumsum(hi >= 0) - 1)[tid]
    else:
        o = np.lexsort((df, tid))
        same = tid[o][1:] == tid[o][:-1]
        if (df[o][1:][same] != df[o][:-1][same]).any():
            raise BoilerscopeError("find_blocks: one template has two different df")
        _, key = np.unique(tid, return_inverse=True)
    gs = doc_offsets[doc] + start
    ge = doc_offsets[doc] + end
    o = order_by_start_end(gs, ge)
    return gs[o], ge[o], key.astype(np.int64)[o], df[o]


def order_by_start_end(gs, ge) -> np.ndarray:
    """The order of the ranges by (start, end), stable: one radix sort of
    (start, length) packed in 64 bits when they fit (numpy's lexsort took
    0.7 s on webdocs' 6.3M template occurrences), else the lexsort."""
    length = ge - gs
    bits = int(length.max()).bit_length()
    if gs.shape[0] > 1 and int(gs.max()) < (1 << (63 - bits)):
        keys = ((gs << np.int64(bits)) | length).astype(np.uint64)
        _, order = KT.radix_sort_pairs(keys, np.arange(gs.shape[0], dtype=np.int64))
        return order
    return np.lexsort((ge, gs))


def find_blocks(tokens: np.ndarray, doc_offsets: np.ndarray, sigma: int, min_len: int,
                templates: TemplateOccurrences | None = None, progress=None,
                within: np.ndarray | None = None, doc_key: np.ndarray | None = None) -> Blocks:
    """The boilerplate blocks of a corpus (the module docstring has the definition).

    ``tokens`` (int32) and ``doc_offsets`` (int64, from 0 to the number of
    tokens) are the corpus; ``sigma`` and ``min_len`` (L) the run's;
    ``templates`` the run's template occurrences, if any.  ``within``: an
    optional bool mask known to hold every occurrence of every L-gram with
    df >= sigma (the run's coverage); it only saves time.  ``progress``: a
    callable ``(stage, fraction)`` or None.  ``doc_key``: one distinct
    integer per document that orders the documents for the ties ("first
    position" means the smallest (doc_key, position)); default: the
    documents' order.  The engines pass the doc_ids, so that a corpus read
    in another order (Spark) numbers its blocks the same.
    """
    windows = _check(tokens, doc_offsets, sigma, min_len, templates, within)
    doc_key = _doc_key(doc_key, doc_offsets.shape[0] - 1)
    sigma, L = int(sigma), int(min_len)
    if within is None:
        within = _candidates(tokens, doc_offsets, sigma, L)
    return _blocks_by_chunks(tokens, doc_offsets, within, sigma, L, doc_key, progress, CHUNK_TOKENS, PART_GROUPS,
                             windows)


def _candidates(tokens, doc_offsets, sigma: int, L: int) -> np.ndarray:
    """A mask holding every occurrence of every L-gram with df >= sigma (what
    ``within`` must hold), when the run's coverage is not given: the
    L-grams that pass a filter of the distinct documents per hash bucket
    (an upper bound of each df: exact), their tokens marked.  At sigma 1
    every L-gram is frequent: every token."""
    n = tokens.shape[0]
    if sigma <= 1:
        return np.ones(n, np.bool_)
    h, ok = K.gram_hashes(tokens, doc_offsets, L, np.zeros(1, np.bool_), False)
    bits = int(min(26, max(10, np.ceil(np.log2(max(1, n))))))
    K.doc_count_filter(h, ok, doc_offsets, sigma, bits)
    del h
    starts = np.flatnonzero(ok).astype(np.int64)
    del ok
    return C.ranges_mask(n, starts, starts + L)


def _doc_key(doc_key, n_docs: int) -> np.ndarray:
    if doc_key is None:
        return np.arange(n_docs, dtype=np.int64)
    doc_key = np.asarray(doc_key)
    if doc_key.shape != (n_docs,) or not np.issubdtype(doc_key.dtype, np.integer) \
            or not _distinct(doc_key):
        raise BoilerscopeError("find_blocks: doc_key must hold one distinct integer per document")
    return doc_key.astype(np.int64)


def _distinct(x: np.ndarray) -> bool:
    s = np.sort(x)
    return bool((s[1:] != s[:-1]).all())


def _numbered(tokens, doc_offsets, ps, pe, root, doc_key) -> Blocks:
    """Rule 6's numbering and the blocks' figures, from the pieces (by
    position) and each piece's component root."""
    # numbering: covered tokens descending, then first position (a root is
    # its component's smallest piece, so the roots are where root == index:
    # no sort, where np.unique took 3 s on 3.5M ids)
    is_root = root == np.arange(root.shape[0])
    label = (np.cumsum(is_root) - 1)[root]
    nb = int(is_root.sum())
    tokens_per = np.bincount(label, weights=pe - ps, minlength=nb).astype(np.int64)
    pdoc = (np.searchsorted(doc_offsets, ps, side="right") - 1).astype(np.int64)
    # a block's first position: the smallest (doc_key, position) of its pieces
    prank = np.empty(ps.shape[0], np.int64)
    prank[np.lexsort((ps, doc_key[pdoc]))] = np.arange(ps.shape[0])
    first = np.full(nb, ps.shape[0], np.int64)
    np.minimum.at(first, label, prank)
    order = np.lexsort((first, -tokens_per))
    rank = np.empty(nb, np.int64)
    rank[order] = np.arange(nb)
    pblock = rank[label]
    ss, se, sd, sb = K.merge_spans(ps, pe, pdoc, pblock)
    # the representative's ties go to the first span in doc_key order
    so = np.lexsort((ss, doc_key[sd])).astype(np.int64)
    docs, rep = K.block_stats(tokens, ss[so], se[so], sd[so], sb[so], nb)
    rep = so[rep]
    base = doc_offsets[sd]
    rdoc = sd[rep]
    return Blocks(piece_doc=sd, piece_start=ss - base, piece_end=se - base, piece_block=sb,
                  covered_tokens=tokens_per[order], documents=docs, rep_doc=rdoc,
                  rep_start=ss[rep] - doc_offsets[rdoc], rep_end=se[rep] - doc_offsets[rdoc],
                  doc_offsets=doc_offsets)


def find_blocks_in_coverage(tokens: np.ndarray, doc_offsets: np.ndarray, sigma: int, min_len: int,
                            covered: np.ndarray, doc_key: np.ndarray | None = None, progress=None) -> Blocks:
    """:func:`find_blocks` of a run without templates, computed on its covered
    tokens only: each document's runs of covered tokens, joined by a
    separator token (one id above every covered token's: no window holds
    one), make a pseudo-document; the blocks found there are mapped
    back to the documents' positions.  The same answer (every window lies
    inside the coverage, and uncovered tokens always separate pieces), with
    memory and time in the covered tokens, not the corpus's (a run over a
    billion tokens, 9% covered, works on 90M).  ``covered`` is the run's
    coverage mask."""
    tokens = np.asarray(tokens)
    covered = np.asarray(covered, bool)
    if covered.shape != tokens.shape:
        raise BoilerscopeError("find_blocks: the coverage mask needs one entry per token")
    if int(sigma) < 2 or tokens.shape[0] == 0:
        return find_blocks(np.ascontiguousarray(tokens, np.int32), np.asarray(doc_offsets, np.int64), sigma,
                           min_len, progress=progress, within=covered, doc_key=doc_key)
    doc_offsets = np.asarray(doc_offsets, np.int64)
    # one separator id for all: no window holds a separator (``within`` is
    # False there, so no L-gram across one is even hashed), so it never
    # needs to differ
    compacted = K.compact_coverage(np.ascontiguousarray(tokens, np.int32), doc_offsets, covered)
    return _blocks_of_compacted(compacted, doc_offsets, sigma, min_len, doc_key, progress)


def find_blocks_in_ranges(tokens: np.ndarray, doc_offsets: np.ndarray, sigma: int, min_len: int,
                          starts: np.ndarray, ends: np.ndarray, doc_key: np.ndarray | None = None,
                          progress=None, chunk_tokens: int | None = None, part_groups: int | None = None,
                          templates: TemplateOccurrences | None = None) -> Blocks:
    """:func:`find_blocks_in_coverage` of the coverage of the ranges
    ``[starts, ends)`` (global positions, by increasing start, none across a
    document end: a run's covered ranges), without a mask over the corpus:
    only the covered tokens are read (on a memory-mapped billion-token array,
    a tenth of its pages), and nothing of the corpus' size is held.  The
    blocks are computed a chunk of about ``chunk_tokens`` covered tokens at a
    time after grouping the L-grams (in parts of the hash range past ``part_groups`` texts; the
    defaults :data:`CHUNK_TOKENS`, :data:`PART_GROUPS`; tests make them
    small): about 18 bytes per covered token.  ``templates``: the run's template
    occurrences, if any: their tokens are covered too (the compacted
    coverage is the union of both), and their windows enter rules 2-6
    chunk by chunk (a template occurrence lies inside one document).  (At
    sigma 1, every token is covered: :func:`find_blocks` on the whole
    corpus.)"""
    tokens = np.asarray(tokens)
    doc_offsets = np.asarray(doc_offsets, np.int64)
    starts, ends = np.asarray(starts, np.int64), np.asarray(ends, np.int64)
    _check_params(sigma, min_len)
    if tokens.ndim != 1 or doc_offsets.ndim != 1 or doc_offsets.shape[0] < 1 or doc_offsets[0] != 0 \
            or doc_offsets[-1] != tokens.shape[0] or (np.diff(doc_offsets) < 0).any():
        raise BoilerscopeError("find_blocks: doc_offsets must rise from 0 to the number of tokens")
    if starts.shape != ends.shape or starts.ndim != 1:
        raise BoilerscopeError("find_blocks: the ranges need one start and one end each")
    bad = "find_blocks: the ranges must be non-empty, by increasing start, inside one document each"
    if starts.shape[0] and ((ends <= starts).any() or (np.diff(starts) < 0).any() or starts[0] < 0
                            or ends.max() > doc_offsets[-1]):
        raise BoilerscopeError(bad)
    if int(sigma) < 2 or tokens.shape[0] == 0:
        within = C.ranges_mask(tokens.shape[0], starts, ends)
        if templates is None:
            return find_blocks_in_coverage(tokens, doc_offsets, sigma, min_len, within, doc_key, progress)
        return find_blocks(np.ascontiguousarray(tokens, np.int32), doc_offsets, sigma, min_len, templates,
                           progress=progress, within=within, doc_key=doc_key)
    windows = _template_windows(doc_offsets, templates)
    if windows[0].shape[0]:  # the covered tokens: the phrases' ranges and the template occurrences
        starts, ends = np.concatenate((starts, windows[0])), np.concatenate((ends, windows[1]))
        o = np.argsort(starts, kind="stable")
        starts, ends = starts[o], ends[o]
    *compacted, ok = K.compact_ranges(np.ascontiguousarray(tokens, np.int32), doc_offsets, starts, ends)
    if not ok:
        raise BoilerscopeError(bad)
    if compacted[0].shape[0] and compacted[0].min() < 0:  # (only the covered tokens are read)
        raise BoilerscopeError("find_blocks: token ids must be >= 0")
    if windows[0].shape[0]:  # the template windows in the compacted positions (a covered run is whole there)
        c_start = K.compact_positions(doc_offsets, compacted[1], compacted[2], windows[0])
        if c_start.shape[0] and c_start.min() < 0:  # (every occurrence is one of the compacted ranges)
            raise BoilerscopeError("find_blocks: a template occurrence is not among the covered ranges")
        windows = (c_start, c_start + (windows[1] - windows[0]), windows[2], windows[3])
    return _blocks_of_compacted(compacted, doc_offsets, sigma, min_len, doc_key, progress, chunk_tokens,
                                part_groups, windows)


def _blocks_of_compacted(compacted, doc_offsets, sigma, min_len, doc_key, progress, chunk_tokens=None,
                         part_groups=None, windows=None) -> Blocks:
    compact, c_offsets, pos_in_doc, mask = compacted
    b = _blocks_by_chunks(compact, c_offsets, mask, int(sigma), int(min_len),
                          _doc_key(doc_key, c_offsets.shape[0] - 1), progress, chunk_tokens or CHUNK_TOKENS,
                          part_groups or PART_GROUPS, windows)
    n_docs = doc_offsets.shape[0] - 1
    return b.remapped(np.arange(n_docs, dtype=np.int64), pos_in_doc, doc_offsets)


def _blocks_by_chunks(tokens, doc_offsets, within, sigma: int, L: int, doc_key, progress,
                      chunk_tokens: int = CHUNK_TOKENS, part_groups: int = PART_GROUPS,
                      windows=None) -> Blocks:
    """:func:`find_blocks` (``within`` given; ``windows``: the template
    windows as :func:`_template_windows` gives them, or None) with memory in a
    few bytes per token: the L-grams are grouped by text (:func:`_group_grams`),
    each position keeping its group's id (4 bytes); then the
    levels, pieces and links of rule 2-6 are computed a chunk of documents
    at a time (they read one document's windows, and the links go into one
    union-find over the corpus' pieces), and the pieces numbered as
    :func:`find_blocks` numbers them.  Same answer (the tests compare)."""
    def step(fraction):
        if progress is not None:
            progress("blocks", fraction)

    step(0.0)
    n = tokens.shape[0]
    dt = np.int32 if n < WIDE_IDS_FROM else np.int64
    at = np.full(n, -1, dt)
    gdf, n_keys = _group_grams(tokens, doc_offsets, within, L, at, part_groups)
    step(0.4)
    none = np.zeros(0, np.int64)
    t_start, t_end, t_key, t_df = windows if windows is not None else (none, none, none, none)
    n_tkeys = int(t_key.max()) + 1 if t_key.shape[0] else 0
    first = np.full(max(n_keys + n_tkeys, 1), -1, np.int64)
    parent = np.empty(1 << 16, np.int64)
    n_pieces = 0
    ps_all, pe_all = [], []
    ranges = doc_chunks(doc_offsets, chunk_tokens)
    t_cut = np.searchsorted(t_start, doc_offsets[[d for d, _ in ranges] + [ranges[-1][1]]]) if ranges else none
    for ci, (d0, d1) in enumerate(ranges):
        lo, hi = int(doc_offsets[d0]), int(doc_offsets[d1])
        ws, wdf, wk = K.windows_at(at, gdf, sigma, lo, hi)
        ts, te, tk, tdf = (x[t_cut[ci]:t_cut[ci + 1]] for x in (t_start, t_end, t_key, t_df))
        m, b, minend = K.levels(hi - lo, L, ws - lo, wdf, ts - lo, te - lo, tdf)
        ps, pe, _ = K.pieces(doc_offsets[d0:d1 + 1] - lo, m, b, minend)
        del m, b, minend
        ps += lo
        pe += lo
        k = ps.shape[0]
        if n_pieces + k > parent.shape[0]:
            grown = np.empty(max(2 * parent.shape[0], n_pieces + k), np.int64)
            grown[:n_pieces] = parent[:n_pieces]
            parent = grown
        parent[n_pieces:n_pieces + k] = np.arange(n_pieces, n_pieces + k)
        keyed = np.zeros(k, np.bool_)
        K.link_windows(ps, pe, n_pieces, ws, none, wk, L, first, parent, keyed)
        if ts.shape[0]:
            K.link_templates(ps, pe, n_pieces, ts, te, tk, n_keys, first, parent, keyed)
        ps_all.append(ps)
        pe_all.append(pe)
        n_pieces += k
        step(0.4 + 0.45 * (ci + 1) / len(ranges))
    del at, gdf, first
    root = parent[:n_pieces]
    K.roots(root)
    ps = np.concatenate(ps_all) if ps_all else none
    pe = np.concatenate(pe_all) if pe_all else none
    blocks = _numbered(tokens, doc_offsets, ps, pe, root, doc_key)
    step(1.0)
    return blocks


def _group_grams(tokens, doc_offsets, within, L: int, at, part_groups: int):
    """The L-grams inside ``within`` grouped by text (:func:`K.group_grams_from`):
    each position's group id in ``at``; returns the groups' df and their
    number.  One pass, the table and the group arrays grown with the groups
    (boilerplate repeats: webdocs' 12.7M covered L-grams are 130k texts);
    when a pass would hold more than ``part_groups`` groups it is started
    again over twice as many parts of the hash range, each its own pass
    (the limit is checked when the arrays grow, so a part holds at most
    about twice ``part_groups`` groups; at most 2^``MAX_PART_BITS`` parts)."""
    n_docs = doc_offsets.shape[0] - 1
    bits = 0
    while True:
        at.fill(-1)
        gdfs, base, over = [], 0, False
        for part in range(1 << bits):
            cap = max(1, min(1 << 12, part_groups))
            table = np.full(1 << (2 * cap - 1).bit_length(), -1, at.dtype)  # a power of two
            gpos, ghash, glast = np.empty(cap, at.dtype), np.empty(cap, np.uint64), np.empty(cap, at.dtype)
            gdf = np.zeros(cap, at.dtype)
            d, ng = 0, 0
            while True:
                d, ng = K.group_grams_from(tokens, doc_offsets, within, L, 64 - bits, part, d, at, base, table,
                                           gpos, ghash, glast, gdf, ng)
                if d == n_docs:
                    break
                need = ng + int(doc_offsets[d + 1] - doc_offsets[d])
                if ng > part_groups and bits < MAX_PART_BITS:
                    over = True
                    break
                if need > gpos.shape[0]:
                    size = max(2 * gpos.shape[0], need)
                    gpos, ghash, glast = (np.concatenate((x[:ng], np.empty(size - ng, x.dtype)))
                                          for x in (gpos, ghash, glast))
                    gdf = np.concatenate((gdf[:ng], np.zeros(size - ng, gdf.dtype)))
                if 2 * need > table.shape[0]:
                    size = table.shape[0]
                    while size < 2 * need:
                        size *= 2
                    table = np.full(size, -1, at.dtype)
                    K.rehash(table, ghash, ng)
            if over:
                break
            gdfs.append(gdf[:ng].copy())
            base += ng
            del table, gpos, ghash, glast, gdf
        if not over:
            return (np.concatenate(gdfs) if gdfs else np.zeros(0, at.dtype)), base
        bits += 1
        log.info("blocks: more than %d L-gram texts, grouped again in %d parts of the hash range",
                 part_groups, 1 << bits)
