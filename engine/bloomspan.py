"""BloomSpan: exact mining of Maximal Contiguous Frequent Phrases.

Definitions (the contract)
--------------------------
A phrase is a contiguous run of tokens inside one document; its support df is
the number of distinct documents that contain it.  It is frequent when
``df >= sigma`` and maximal when it is frequent and neither one-token
extension (left or right) is frequent.  A run answers every maximal frequent
phrase of length ``>= L`` (``min_len``), and the coverage mask: a token
position is covered when it lies inside an occurrence of any frequent phrase
of length ``>= L``.

The pipeline (the steps of the BloomSpan paper)
-----------------------------------------------
1. Word filter: exact df of every token (one pass, ``last seen document`` per
   token); a phrase can only be frequent if all its words are.
2. Counting filter: one linear pass over all bigrams of frequent words into
   saturating byte counters indexed by FNV-1a of the two ids.  Counters count
   occurrences, an upper bound of df, so a frequent bigram always reaches
   ``min(sigma, 255)``: no frequent phrase is lost.  With ``workers`` threads
   each counts a slice of the documents into its own counters, merged by a
   saturating sum (numba has no atomics: a shared racy counter would lose
   increments, and a lost increment can lose a frequent phrase).
3. Second pass: a position is kept when the L-1 bigrams starting there all
   pass both filters (a run-length test, one backward scan per document),
   then when its L-gram passes a second counting filter (a rolling window
   hash into the same saturating counters, reused); the survivors are
   bucketed by first token with a counting sort (the paper sorts packed
   (bigram, doc, pos) entries; the counting sort gives the same grouping in
   O(n), in parallel over document slices with per-slice offsets).
4. Exact seeds: each bucket is regrouped by second token, df is counted
   exactly and the filters' false positives are dropped; the left-neighbour
   prune (step 7) is applied to the seeds here, from left neighbours recorded
   sequentially in step 3.
5. Seeds are ordered by Ψ = length × df (ties: by token ids), so output is
   deterministic and the largest work is scheduled first.
6. Depth-first right growth directly on the token array: a node is an
   occurrence list of one phrase; its occurrences are grouped by their next
   token (a stable counting sort through per-token scratch arrays) and every
   group reaching sigma documents becomes a child.  A chain (all occurrences
   continue with one token) advances in place without copying.
7. Left-neighbour prune (below).
8. Maximality check: a right-maximal node (no frequent child) is maximal when
   no group of its occurrences by left neighbour reaches sigma documents.
   This exact local check replaces the paper's inverted index on the rarest
   token.
9. Coverage: every occurrence that stops growing at a node of length ``>= L``
   contributes the range of that node's phrase; the union of the ranges is
   the mask (:mod:`engine.coverage`).

Departures from the paper, and why they are exact
-------------------------------------------------
The paper skips a seed whose occurrences all lie in already-marked positions.
That rule loses phrases (minimal case: sigma 2, L 2, documents «x p q m»,
«z p q m», «x p q», «z p q», six «x p wI», six «z p vI»; the literal rule
drops «p q m»), so it is not used.  What is used instead:

*Left-neighbour prune.*  If every occurrence of a node N (a seed or deeper)
has the same left token ``a`` and none starts its document, the subtree of N
is skipped.  Proof: call L(X) the left closure of a frequent phrase X (extend
X to the left while all its occurrences share the left token).  L(X) has the
same occurrences as X, shifted, and the same df.  (i) L(X) is visited: no
prefix of L(X) of length >= 2 is prunable, since a prefix's occurrence starts
include L(X)'s, so a uniform left token for the prefix would be one for L(X);
all prefixes are frequent, so the DFS from L(X)'s first bigram reaches it.
(ii) A maximal phrase X has no frequent left extension, so X = L(X) is
visited and found.  (iii) Coverage: for an occurrence of a frequent X with
``|X| >= L``, follow the matching occurrence of L(X) down the tree until it
stops at a node Z (|Z| >= |X| >= L): Z's range contains X's occurrence; if it
stops because its child C is pruned, repeat from L(C), which is longer, so
this ends.  Hence the union of reported ranges is exactly the mask.

*Start filter (run-length test and L-gram counting filter).*  Only positions
that may start a frequent L-gram enter the seeds.  Every occurrence of a
frequent phrase of length >= L starts a frequent L-gram (its prefix), whose
L-1 bigrams are frequent and whose occurrence count reaches sigma, so both
tests keep it: the occurrence sets of all nodes of length >= L stay
complete, and their df, maximality and ranges are exact.  Nodes shorter than
L may lose occurrences; they are never reported, and the prune stays safe on
them: in (i) the kept occurrences of a prefix of L(X) still include all of
L(X)'s, so the prefix is not prunable; nodes pruned in (iii) are longer than
L(X) >= L, so their sets are complete.

*Chain skip.*  When all occurrences of a node continue with the same tokens,
the node advances by their longest common extension in one step (read along
each occurrence) instead of one level at a time; each skipped level has a
single child holding every occurrence, so nothing is reported there.

Complexity
----------
Steps 1-4: O(n L) time (O(n) with the rolling hash).  Growth: O(sum over
visited branching nodes of their occurrences); on natural text a fraction of
n; on densely nested repeats (long runs of one token: a run of k copies costs
k^2/2 occurrence visits, about 10 ns each: k = 16,000 in two documents at
sigma 2 takes 2.5 s) it grows quadratically, where the suffix-array baseline
is the better choice and ``--algo auto`` takes it (measured: one seed of 800k
occurrences in runs of "0" tokens takes 0.6 s of webdocs' growth).  At sigma
1 nothing prunes such runs, so sigma 1 is answered by :mod:`engine.sigma1`
(whole documents, O(n log n)).  The chain skip first bounds the extension by
the room left in every document, so a node costs O(its occurrences) even when
one of them sits at its document's end.  Memory: the token array (4 bytes per
token), one byte per token of start flags, 16 bytes per kept start (position,
document, next and previous token; 20 past 2^31 - 2 tokens, where positions
are int64: :func:`engine.result.pos_dtype`), the filter (``filter_bytes`` per worker),
and per worker scratch of O(vocabulary + largest seed): a node's children are
moved down onto its own dead slice of the work buffer, so a path of nested
nodes never stacks their occurrence lists (it took k^2/2 entries on a run of
k copies).  When this does not fit the run's memory budget
(:mod:`engine.memory`), the same steps run out of core
(:mod:`engine.outofcore`: chunks of documents, one group of first tokens
bucketed and grown at a time), with the same answer.  Which path runs (and
whether sigma 1 or the suffix-array baseline answers instead) is decided
once, by :mod:`engine.planner`; the steps themselves are in
:mod:`engine.steps`, shared by both paths.

References
----------
.. [1] The BloomSpan article (the method this module implements: counting
   filter of bigrams, seeds grown depth-first on the token array, coverage
   mask), whose published implementation is not exact (see "Departures").
.. [2] B. H. Bloom. Space/Time Trade-offs in Hash Coding with Allowable
   Errors. CACM 13(7), 1970; L. Fan, P. Cao, J. Almeida, A. Z. Broder.
   Summary Cache. IEEE/ACM ToN 8(3), 2000 (counting filters).
.. [3] J. Fischer, V. Heun, S. Kramer. Optimal String Mining Under Frequency
   Constraints. PKDD 2006 (the suffix-array baseline, :mod:`engine.fhk`).
"""

from __future__ import annotations

from . import steps as S
from .config import KERNEL_LOCK
from .result import MiningResult


def mine_bloomspan(tokens, doc_offsets, vocab_size: int, sigma: int, min_len: int, *, workers: int,
                   filter_bytes: int, memory: dict, progress=None, chunks: int | None = None,
                   buffer_start: int | None = None) -> MiningResult:
    """Steps 1-9 in memory (inputs checked and planned by :mod:`engine.planner`).

    Parameters
    ----------
    tokens, doc_offsets : arrays
        Token ids, documents concatenated; ``doc_offsets`` has one more entry
        than documents.
    vocab_size : int
    sigma : int
        Minimum number of documents (>= 2).
    min_len : int
        Minimum phrase length L (>= 2).
    workers : int
        Threads for the counting filter and the growth (1 = the serial twin).
    filter_bytes : int
        Counters per worker (a power of two).
    memory : dict
        The memory plan, reported in the stats.
    progress : callable(str, float) or None
        Called with a stage name and the fraction done.
    chunks, buffer_start : int, optional
        The number of growth chunks (default: one per 64 seeds, at most 256)
        and the initial growth buffer sizes (tests make them small so that
        every merge and regrowth path runs).

    Returns
    -------
    MiningResult
    """
    stats: dict = {"workers": workers, "filter_bytes": filter_bytes, "memory": memory}
    stage = S.Stages()
    report = progress or (lambda name, frac: None)
    parts = S.split_docs(doc_offsets, workers)
    with KERNEL_LOCK:
        with stage("word_filter"):
            frequent_word = S.word_filter(tokens, doc_offsets, vocab_size, sigma, stats)
        report("filter", 0.2)
        with stage("counting_filter"):
            counters = S.bigram_filter(tokens, doc_offsets, parts, frequent_word, filter_bytes)
        report("filter", 0.5)
        with stage("second_pass"):
            keep, first_counts = S.start_filter(tokens, doc_offsets, parts, frequent_word, counters,
                                                sigma, min_len, vocab_size, stats, stage)
            del counters
            with stage("bucket"):
                buckets = S.buckets(tokens, doc_offsets, parts, keep, first_counts, vocab_size, stats)
            del keep, first_counts
        report("filter", 0.7)
        with stage("seeds"):
            seeds, order = S.seeds(buckets, sigma, vocab_size, workers, stats)
        report("filter", 1.0)
        with stage("grow"):
            parts_out = S.grow(tokens, doc_offsets, seeds, order, sigma, min_len, vocab_size, workers,
                               report, chunks, buffer_start)
        with stage("coverage"):
            merged, covered, kept = S.coverage(parts_out, tokens.shape[0], doc_offsets)
    return S.to_result(merged, covered, kept, stats, stage)
