"""Cleaning: cut the repeats an analyst marked as noise.

One rule decides what is cut, shared by the dashboard's Document view, the
export and ``boilerscope clean`` (:func:`decision_cut`).  A decision is on a
phrase (its tokens joined by spaces) or on a template (the same, with ``*``
for each slot: ``*`` is never a token, so the text says which it is).

1. Phrases: a token position is cut when it lies in an occurrence of an
   L-gram that occurs inside some phrase marked noise and inside no phrase
   marked keep (:func:`stop_grams`, :func:`cut_mask`).
2. Templates: a position is also cut when it lies in an occurrence (inside
   one document, each slot standing for 1 to W tokens, W the run's
   ``--max-slot``) of a template marked noise, unless it lies in an
   occurrence of an L-gram of a phrase marked keep.
3. Keep wins: no position inside an occurrence of a template marked keep is
   cut, by either rule.

So nothing an analyst kept is lost.  Cuts remove the original characters of
the cut tokens (from the first character of a run of cut tokens to the last)
and leave one space, so the words on both sides never merge into one token.

Complexity: O(n) for the phrase scan (a polynomial rolling hash of the
L-token window at each position, a bit-set filter over the stop L-grams'
hashes, and only where it passes a binary search confirmed token by token); O(n log k) for the template scan
plus a backtracking match (at most W ** slots steps) at each position whose
token begins one of the k templates; O(text) to rebuild the cut documents.
"""
from __future__ import annotations

import csv
import io
import json
import os

import numpy as np
import polars as pl

from .constants import DEFAULT_MAX_SLOT, SLOT_TEXT

#: Documents rewritten between two progress reports.
PROGRESS_DOCS = 2000
#: "No mask" for the kernels' optional uint8 arrays (nothing shielded, no mask wanted).
NONE = np.zeros(0, np.uint8)
from .errors import BoilerscopeError, first_line
from .kernels import clean as K


def known_runs(phrase: str, vocab_ids: dict[str, int]) -> list[np.ndarray]:
    """Token ids of a phrase's runs of known tokens: a token this snapshot
    never has cannot occur, so no L-gram holding it can; the others still can
    (a project-wide decision made on another snapshot keeps its L-grams)."""
    runs, cur = [], []
    for t in phrase.split(" "):
        i = vocab_ids.get(t)
        if i is None:
            if cur:
                runs.append(np.array(cur, np.int32))
            cur = []
        else:
            cur.append(i)
    if cur:
        runs.append(np.array(cur, np.int32))
    return runs


def stop_grams(noise: list[str], keep: list[str], vocab_ids: dict[str, int], L: int) -> np.ndarray:
    """The distinct L-grams (token-id rows, in hash order) inside a noise phrase and inside no keep phrase."""
    table = GramTable.build([noise], keep, vocab_ids, L)
    return table.grams[~table.kept]


def _filter_bits(m: int) -> int:
    """Bits of the hash filter for m grams: about 16 bits a gram, 2 ** 16 at least."""
    return max(16, int(m).bit_length() + 4)


class GramTable:
    """The distinct L-grams of groups of phrases, sorted by their rolling hash.

    ``grams`` (m, L) int32 rows, ``hashes`` sorted, ``kept`` (a gram of a keep
    phrase: nobody's), and the groups owning each gram
    (``owners[owner_ptr[g]:owner_ptr[g + 1]]``), a hash filter over them.
    """

    def __init__(self, grams, hashes, kept, owner_ptr, owners, L: int):
        self.grams, self.hashes, self.kept = grams, hashes, kept
        self.owner_ptr, self.owners, self.L = owner_ptr, owners, L
        self.bits = _filter_bits(hashes.shape[0])
        self.words = K.gram_filter(hashes, self.bits)

    def classes(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(class of each gram, -1 when kept; class_ptr; class_owners): grams
        with the same owners share a class."""
        seen: dict[bytes, int] = {}
        gram_class = np.full(self.hashes.shape[0], -1, np.int64)
        ptr, members = [0], []
        for g in np.flatnonzero(~self.kept).tolist():
            own = self.owners[self.owner_ptr[g]:self.owner_ptr[g + 1]]
            key = own.tobytes()
            c = seen.get(key)
            if c is None:
                c = seen[key] = len(ptr) - 1
                members.append(own)
                ptr.append(ptr[-1] + own.shape[0])
            gram_class[g] = c
        owners = np.concatenate(members) if members else np.zeros(0, np.int64)
        return gram_class, np.array(ptr, np.int64), owners

    @classmethod
    def build(cls, groups: list[list[str]], keep: list[str], vocab_ids: dict[str, int], L: int) -> "GramTable":
        """Grams of each group of phrases (owner = the group's index) and of the keep phrases (owner -1)."""
        rows, owner = [], []
        for o, phrases in [(-1, keep)] + list(enumerate(groups)):
            for ph in phrases:
                for ids in known_runs(ph, vocab_ids):
                    if ids.shape[0] < L:
                        continue
                    rows.append(np.lib.stride_tricks.sliding_window_view(ids, L))
                    owner.append(np.full(ids.shape[0] - L + 1, o, np.int64))
        grams = np.ascontiguousarray(np.concatenate(rows), np.int32) if rows else np.zeros((0, L), np.int32)
        owner = np.concatenate(owner) if owner else np.zeros(0, np.int64)
        hashes = K.gram_hashes(grams, L)
        order = np.lexsort((owner, hashes))
        grams, hashes, owner = np.ascontiguousarray(grams[order]), hashes[order], owner[order]
        rep = K.gram_groups(hashes, grams)
        order = np.lexsort((owner, rep))  # one gram's rows together, owner -1 (keep) first
        rep, owner = rep[order], owner[order]
        distinct = np.concatenate(([True], (rep[1:] != rep[:-1]) | (owner[1:] != owner[:-1])))[:rep.shape[0]]
        rep, owner = rep[distinct], owner[distinct]  # a gram twice in a phrase: one owner row
        first = np.flatnonzero(np.concatenate(([True], rep[1:] != rep[:-1]))[:rep.shape[0]])
        kept = owner[first] == -1
        owner_ptr = np.append(first, rep.shape[0]).astype(np.int64)
        return cls(np.ascontiguousarray(grams[rep[first]]), hashes[rep[first]], kept, owner_ptr,
                   owner.astype(np.int64), L)

    def mask(self, tokens, doc_offsets) -> np.ndarray:
        """uint8 mask of the positions inside an occurrence of a gram nobody keeps."""
        out = np.zeros(tokens.shape[0], np.uint8)
        one_class = np.where(self.kept, -1, 0).astype(np.int64)
        K.count_cut(tokens, doc_offsets, self.L, self.hashes, self.grams, self.words, self.bits, one_class,
                    np.array([0, 1], np.int64), np.zeros(1, np.int64), 1, NONE, out)
        return out

    def counts(self, tokens, doc_offsets, n_owners: int, shield: np.ndarray) -> np.ndarray:
        """Positions each owner's grams cover (each once per owner), outside ``shield``."""
        gram_class, class_ptr, class_owners = self.classes()
        return K.count_cut(tokens, doc_offsets, self.L, self.hashes, self.grams, self.words, self.bits,
                           gram_class, class_ptr, class_owners, n_owners, shield, NONE)


def cut_mask(tokens, doc_offsets, L: int, grams: np.ndarray) -> np.ndarray:
    """uint8 mask of the positions inside an occurrence of one of the L-gram rows ``grams``."""
    tokens = np.ascontiguousarray(tokens, dtype=np.int32)
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    grams = np.ascontiguousarray(grams, dtype=np.int32).reshape(-1, L)
    hashes = K.gram_hashes(grams, L)
    order = np.argsort(hashes, kind="stable")
    m = grams.shape[0]
    table = GramTable(np.ascontiguousarray(grams[order]), hashes[order], np.zeros(m, bool),
                      np.arange(m + 1, dtype=np.int64), np.zeros(m, np.int64), L)
    return table.mask(tokens, doc_offsets)


def is_template(text: str) -> bool:
    """True for a template decision (a ``*`` token stands for a slot)."""
    return SLOT_TEXT in text.split(" ")


def _patterns(templates: list[str], vocab_ids: dict[str, int]):
    """Template patterns for the kernels: (pats, pat_off, firsts sorted, order,
    index in ``templates`` of each pattern).  A template with a token the
    snapshot never has, or beginning or ending with a slot, cannot occur: it
    gets no pattern."""
    pats, off, used = [], [0], []
    for n, text in enumerate(templates):
        ids = [K.SLOT if t == SLOT_TEXT else vocab_ids.get(t) for t in text.split(" ")]
        if not ids or any(i is None for i in ids) or ids[0] == K.SLOT or ids[-1] == K.SLOT:
            continue
        pats.extend(ids)
        off.append(len(pats))
        used.append(n)
    pats_a = np.array(pats, np.int32)
    off_a = np.array(off, np.int64)
    firsts = pats_a[off_a[:-1]] if off_a.shape[0] > 1 else np.zeros(0, np.int32)
    order = np.argsort(firsts, kind="stable").astype(np.int64)
    return pats_a, off_a, np.ascontiguousarray(firsts[order]), order, np.array(used, np.int64)


def template_mask(tokens, doc_offsets, templates: list[str], vocab_ids: dict[str, int], max_slot: int) -> np.ndarray:
    """uint8 mask of the positions inside an occurrence of one of the
    templates (``*`` = 1 to ``max_slot`` tokens; occurrences stay in one document)."""
    tokens = np.ascontiguousarray(tokens, dtype=np.int32)
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    pats, off, firsts, order, _ = _patterns(templates, vocab_ids)
    starts, ends, _ = K.template_runs(tokens, doc_offsets, pats, off, firsts, order, int(max_slot))
    return K.mark_runs(tokens.shape[0], starts, ends)


def _split(decisions: list[str]) -> tuple[list[str], list[str]]:
    return [p for p in decisions if not is_template(p)], [p for p in decisions if is_template(p)]


def decision_cut(tokens, doc_offsets, L: int, noise: list[str], keep: list[str], vocab_ids: dict[str, int],
                 max_slot: int = DEFAULT_MAX_SLOT) -> np.ndarray:
    """uint8 mask of the positions the decisions cut (the module's rule)."""
    tokens = np.ascontiguousarray(tokens, dtype=np.int32)
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    (noise_p, noise_t), (keep_p, keep_t) = _split(noise), _split(keep)
    cut = GramTable.build([noise_p], keep_p, vocab_ids, L).mask(tokens, doc_offsets)
    if not noise_t and not keep_t:
        return cut
    kept = template_mask(tokens, doc_offsets, keep_t, vocab_ids, max_slot).astype(bool)
    out = cut.astype(bool) & ~kept
    if noise_t:
        shielded = _template_shield(tokens, doc_offsets, L, keep_p, kept, vocab_ids).astype(bool)
        out |= template_mask(tokens, doc_offsets, noise_t, vocab_ids, max_slot).astype(bool) & ~shielded
    return out.astype(np.uint8)


def _template_shield(tokens, doc_offsets, L: int, keep_p: list[str], kept: np.ndarray,
                     vocab_ids: dict[str, int]) -> np.ndarray:
    """uint8 mask of what a noise template may not cut (rule 2 and 3): the
    L-grams of the kept phrases and the occurrences of the kept templates
    (``kept``, empty when there are none)."""
    shield = GramTable.build([keep_p], [], vocab_ids, L).mask(tokens, doc_offsets)
    if kept.shape[0]:
        shield |= kept.astype(np.uint8)
    return shield


def decision_counts(tokens, doc_offsets, L: int, noise: list[str], keep: list[str], vocab_ids: dict[str, int],
                    max_slot: int = DEFAULT_MAX_SLOT) -> np.ndarray:
    """Tokens each noise decision cuts on its own, the keep decisions still
    winning: ``decision_counts(...)[i] == decision_cut(..., [noise[i]], keep, ...).sum()``.

    One rolling-hash scan of the tokens for all the noise phrases together
    (each L-gram knows the phrases it belongs to) and one template scan for
    all the noise templates, whatever the number of decisions: O(n + matches
    x decisions sharing the matched gram).
    """
    tokens = np.ascontiguousarray(tokens, dtype=np.int32)
    doc_offsets = np.ascontiguousarray(doc_offsets, dtype=np.int64)
    (keep_p, keep_t) = _split(keep)
    where_p = [i for i, p in enumerate(noise) if not is_template(p)]
    where_t = [i for i, p in enumerate(noise) if is_template(p)]
    out = np.zeros(len(noise), np.int64)
    kept = template_mask(tokens, doc_offsets, keep_t, vocab_ids, max_slot) if keep_t else NONE
    if where_p:
        table = GramTable.build([[noise[i]] for i in where_p], keep_p, vocab_ids, L)
        out[where_p] = table.counts(tokens, doc_offsets, len(where_p), kept)
    if where_t:
        shield = _template_shield(tokens, doc_offsets, L, keep_p, kept, vocab_ids)
        pats, off, firsts, order, used = _patterns([noise[i] for i in where_t], vocab_ids)
        starts, ends, which = K.template_runs(tokens, doc_offsets, pats, off, firsts, order, int(max_slot))
        counts = K.count_runs(starts, ends, which, used.shape[0], shield if shield.any() else NONE)
        out[np.array(where_t, np.int64)[used]] = counts
    return out


def cut_text(text: str, span_start, span_end, cut) -> str:
    """The text with the characters of each run of cut tokens replaced by a space."""
    cut = np.asarray(cut, bool)
    if not cut.any():
        return text
    parts = []
    last = 0
    idx = np.flatnonzero(cut)
    # runs of consecutive cut tokens
    breaks = np.flatnonzero(np.diff(idx) != 1)
    starts = np.concatenate(([idx[0]], idx[breaks + 1]))
    ends = np.concatenate((idx[breaks], [idx[-1]]))
    for a, b in zip(starts.tolist(), ends.tolist()):
        cs, ce = int(span_start[a]), int(span_end[b])
        parts.append(text[last:cs])
        parts.append(" ")
        last = ce
    parts.append(text[last:])
    return "".join(parts)


def read_stoplist(path: str) -> tuple[list[str], list[str]]:
    """A stop-phrase list exported by the dashboard (CSV or JSON): phrase and
    decision columns (decision one of noise, keep, unsure).  Returns (noise,
    keep).  Anything else (other columns, rows of another shape, an
    unterminated quote, an unknown decision) is refused with one line."""
    if not os.path.exists(path):
        raise BoilerscopeError(f"{path}: stop-phrase list not found; export it from the Decisions page")
    low = path.lower()
    if not low.endswith((".csv", ".json")):
        raise BoilerscopeError(f"{path}: a stop-phrase list is a .csv or .json file")
    what = f"{path} is not a stop-phrase list"
    try:
        with open(path, encoding="utf-8", newline="") as fh:
            if low.endswith(".json"):
                rows = json.load(fh)
            else:
                reader = csv.DictReader(fh, strict=True)
                if reader.fieldnames is None or not {"phrase", "decision"} <= set(reader.fieldnames):
                    raise BoilerscopeError(
                        f"{what}: it needs 'phrase' and 'decision' columns (found: "
                        f"{', '.join(reader.fieldnames or []) or 'none'})")
                rows = list(reader)
    except (ValueError, csv.Error, UnicodeDecodeError) as exc:
        raise BoilerscopeError(f"{what} ({first_line(exc)}); export it again from the Decisions page") from None
    if not isinstance(rows, list):
        raise BoilerscopeError(f"{what}: the JSON must be a list of objects with 'phrase' and 'decision'")
    noise, keep = [], []
    for i, r in enumerate(rows):
        if not isinstance(r, dict) or not isinstance(r.get("phrase"), str) or not isinstance(r.get("decision"), str):
            raise BoilerscopeError(f"{what}: entry {i + 1} has no text 'phrase' and 'decision'")
        if r["decision"] not in ("noise", "keep", "unsure"):
            raise BoilerscopeError(f"{what}: entry {i + 1} has decision '{r['decision']}' "
                                   "(noise, keep or unsure)")
        (noise if r["decision"] == "noise" else keep if r["decision"] == "keep" else []).append(r["phrase"])
    return noise, keep


def stoplist_frames(decisions: pl.DataFrame) -> tuple[bytes, bytes]:
    """CSV and JSON bytes of a decisions frame (phrase, decision, note)."""
    rows = decisions.select("phrase", "decision", "note").to_dicts()
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=["phrase", "decision", "note"])
    w.writeheader()
    w.writerows(rows)
    return buf.getvalue().encode("utf-8"), json.dumps(rows, ensure_ascii=False, indent=1).encode("utf-8")


def clean_store(store, snapshot_id: str, min_len: int, noise: list[str], keep: list[str],
                max_slot: int = DEFAULT_MAX_SLOT, progress=None):
    """Cleaned documents and before/after figures for one snapshot
    (``progress(stage, fraction)`` or None: "cutting", then "rewriting texts"
    every 2,000 documents).

    Returns
    -------
    (cleaned frame: doc_id, site, url, text, n_tokens, kept_tokens;
     figures frame per site plus an 'all' row)
    """
    arrays = store.arrays(snapshot_id)
    vocab = store.vocabulary(snapshot_id)
    ids = {t: i for i, t in enumerate(vocab)}
    tokens = np.asarray(arrays.tokens)
    offsets = np.asarray(arrays.doc_offsets)
    report = progress or (lambda stage, fraction: None)
    report("cutting", 0.0)
    cut = decision_cut(tokens, offsets, min_len, noise, keep, ids, max_slot)
    report("cutting", 1.0)
    docs = store.documents_text(snapshot_id)
    texts = docs["text"].to_list()
    per_doc_cut = np.add.reduceat(cut.astype(np.int64), offsets[:-1]) if tokens.shape[0] else np.zeros(len(texts), np.int64)
    per_doc_cut = np.where(np.diff(offsets) > 0, per_doc_cut, 0)
    new_texts = []
    for d, text in enumerate(texts):
        if d % PROGRESS_DOCS == 0:
            report("rewriting texts", d / max(len(texts), 1))
        a, b = int(offsets[d]), int(offsets[d + 1])
        if per_doc_cut[d]:
            new_texts.append(cut_text(text or "", arrays.span_start[a:b], arrays.span_end[a:b], cut[a:b]))
        else:
            new_texts.append(text)
    cleaned = docs.select("doc_id", "site", "url").with_columns(
        pl.Series("text", new_texts, pl.String),
        docs["n_tokens"].alias("n_tokens"),
        (docs["n_tokens"] - pl.Series(per_doc_cut)).alias("kept_tokens"))
    figures = before_after(cleaned)
    return cleaned, figures


def before_after(cleaned: pl.DataFrame) -> pl.DataFrame:
    """Total tokens and mean document length before and after, per site and overall."""
    agg = [pl.len().alias("documents"),
           pl.col("n_tokens").sum().alias("tokens_before"),
           pl.col("kept_tokens").sum().alias("tokens_after"),
           pl.col("n_tokens").mean().alias("mean_length_before"),
           pl.col("kept_tokens").mean().alias("mean_length_after")]
    per_site = cleaned.group_by("site").agg(agg).sort("site")
    total = cleaned.select(agg).with_columns(pl.lit("(all sites)").alias("site"))
    return pl.concat([total.select(per_site.columns), per_site]).with_columns(
        (1 - pl.col("tokens_after") / pl.col("tokens_before")).fill_nan(0.0).alias("cut_share"))
