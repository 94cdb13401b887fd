"""Brute-force oracles: the definitions, written as plainly as possible.

Nothing here imports the engine.  Used by the tests only, on small inputs.
"""
from __future__ import annotations

from collections import defaultdict

import regex

TOKEN_RE = regex.compile(r"[\p{L}\p{M}\p{N}]+")


def tokenize(text: str) -> tuple[list[str], list[tuple[int, int]]]:
    """Tokens (lowercased with str.lower) and their code-point spans."""
    toks, spans = [], []
    for m in TOKEN_RE.finditer(text):
        toks.append(m.group().lower())
        spans.append((m.start(), m.end()))
    return toks, spans


def phrase_docs(docs: list[list[str]]) -> dict[tuple, set[int]]:
    """Every phrase (tuple of tokens, length >= 1) -> set of documents."""
    out: dict[tuple, set[int]] = defaultdict(set)
    for d, toks in enumerate(docs):
        n = len(toks)
        for i in range(n):
            for j in range(i + 1, n + 1):
                out[tuple(toks[i:j])].add(d)
    return out


def mine(docs: list[list[str]], sigma: int, min_len: int):
    """Maximal frequent phrases (phrase tuple -> (df, occurrences)) and the
    covered-token count of each document."""
    pd = phrase_docs(docs)
    frequent = {p for p, s in pd.items() if len(s) >= sigma}
    vocab = {t for toks in docs for t in toks}
    answer = {}
    for p in frequent:
        if len(p) < min_len:
            continue
        ext = any((w,) + p in frequent or p + (w,) in frequent for w in vocab)
        if not ext:
            occ = sum(
                1
                for toks in docs
                for i in range(len(toks) - len(p) + 1)
                if tuple(toks[i:i + len(p)]) == p
            )
            answer[p] = (len(pd[p]), occ)
    masks = window_masks(docs, min_len, frequent)
    return answer, [sum(m) for m in masks], masks


def window_masks(docs: list[list[str]], min_len: int, grams) -> list[list[bool]]:
    """Per document: True at every token inside an occurrence of an L-gram of ``grams``."""
    masks = []
    for toks in docs:
        mask = [False] * len(toks)
        for i in range(len(toks) - min_len + 1):
            if tuple(toks[i:i + min_len]) in grams:
                for k in range(i, i + min_len):
                    mask[k] = True
        masks.append(mask)
    return masks


def cut_mask(docs: list[list[str]], min_len: int, noise: list[list[str]], keep: list[list[str]]):
    """The cut rule: a token is cut when it lies in an occurrence of an L-gram
    that occurs inside some noise phrase and inside no keep phrase."""
    def grams(phrases):
        return {tuple(p[i:i + min_len]) for p in phrases for i in range(len(p) - min_len + 1)}

    return window_masks(docs, min_len, grams(noise) - grams(keep))


def cut_text(text: str, spans: list[tuple[int, int]], mask: list[bool]) -> str:
    """Each maximal run of cut tokens loses its characters, from the first
    character of its first token to the last of its last, for one space."""
    out, last, i = [], 0, 0
    while i < len(mask):
        if not mask[i]:
            i += 1
            continue
        j = i
        while j + 1 < len(mask) and mask[j + 1]:
            j += 1
        out.append(text[last:spans[i][0]])
        out.append(" ")
        last = spans[j][1]
        i = j + 1
    out.append(text[last:])
    return "".join(out)
