"""The left-maximality test both miners share (step 8 of BloomSpan; FHK's
explicit left maximality)."""
from __future__ import annotations

from numba import njit

from ..config import NJIT


@njit(**NJIT)
def left_maximal(seq, doc_first, pos, doc, a, b, sigma, cnt, dfc, lastd, touched):
    """True when no group of the occurrences ``pos[a:b]`` (documents
    ``doc[a:b]``), grouped by their left neighbour ``seq[p - 1]``, covers
    ``sigma`` distinct documents.

    ``doc_first[d]`` is where document ``d`` starts in ``seq`` (an occurrence
    there has no left neighbour).  Occurrences of one document must be
    adjacent (both miners keep them in position order).  ``cnt``, ``dfc``,
    ``lastd`` (-1) and ``touched`` are scratch arrays indexed by token id,
    left as they were found.  O(b - a).
    """
    nt = 0
    ok = True
    for i in range(a, b):
        p = pos[i]
        d = doc[i]
        if p == doc_first[d]:
            continue
        w = seq[p - 1]
        if cnt[w] == 0:
            touched[nt] = w
            nt += 1
            cnt[w] = 1
        if lastd[w] != d:
            lastd[w] = d
            dfc[w] += 1
            if dfc[w] >= sigma:
                ok = False
                break
    for j in range(nt):
        w = touched[j]
        cnt[w] = 0
        dfc[w] = 0
        lastd[w] = -1
    return ok
