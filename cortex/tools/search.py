"""brain_search: live notes ranked for a query (by words, and by meaning when the meaning
arm is on), each hit with the passage that best matches and what of it is not live;
archive/ and retired notes left out and counted, an exact title, alias or file name first."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Annotated, Any, NamedTuple, NotRequired, cast

import numpy as np
from pydantic import Field
from typing_extensions import TypedDict

from cortex.index.bm25 import SearchResult, idf
from cortex.index.ranking import RELATED, hybrid, keep_word_ranks, name_key, top
from cortex.index.snapshot import Snapshot, in_archive, is_live
from cortex.index.tokenize import tokenize
from cortex.notes.note import Note
from cortex.notes.paths import check_text, in_scope
from cortex.notes.working import in_working
from cortex.tools.hit_passage import best_passage, passage_state
from cortex.tools.listing import prefix_note
from cortex.tools.tool import MAX_K, READ, Caller, Tool, When, check_k
from cortex.tools.toolset import Tools, note_uri

if TYPE_CHECKING:
    from cortex.meaning.closeness import Closeness
    from cortex.meaning.vectors import ScopeMatrix

__all__ = ["FilterKey", "SearchHit", "SearchReply", "SearchRequest", "TOOL", "search", "search_notes"]

Allow = Callable[[str], bool]  # a search filter: whether a note's path may be a hit
# When no hit holds a word of the query, they stand only if the closest comes this near in
# meaning; else the query found nothing (a nonsense query came to 0.41 on the eval brain).
ALONE_FLOOR = 0.45

# The README's row for it (`cortex tools` prints the table).
SUMMARY = (
    "hits with score, the passage that best matches the query and its heading, tags, aliases, status; "
    "counts what `archive/` and retired notes it left out; a `meaning` line says whether meaning search "
    "is on yet, each hit's `found_by` whether it holds a word of the query or is only close in meaning "
    "(`meaning_only` says when every hit is); a `prefix` that starts no note's path is said in "
    "`prefix_note`, with the nearest folders; `include_working` adds the open items of `working/`"
)


DESCRIPTION = (
    "Search live notes: path, title, score, best passage with its heading, tags, status. Each hit's "
    "passage_state says whether its passage is live, retired (under a banner, a retiring heading, or a "
    "retired note) or partly retired, and passage_marks names each part that is not live text (struck, the "
    "old wording of a (was: …) with the current claim, hidden in the note): do not answer from those. "
    "A hit's found_by is 'meaning only' when the note holds none of the query's words: it is only close in "
    "meaning, and may be unrelated. archive/ and retired notes are left out (and counted) unless "
    "include_retired. A prefix no note's path "
    "starts with is said in prefix_note, with the nearest folders."
)


@dataclass(frozen=True, kw_only=True)
class SearchRequest:
    query: Annotated[
        str,
        Field(
            description="Words to look for (BM25 over titles, aliases, paths, tags "
            "and text; a note's own title or alias ranks it first)"
        ),
    ]
    k: Annotated[int, Field(description=f"Hits to return, 1-{MAX_K}")] = 10
    prefix: Annotated[str | None, Field(description="Only paths starting with this, e.g. projects/")] = None
    include_retired: Annotated[bool, Field(description="Also archive/ and retired notes")] = False
    as_of: When = None
    include_working: Annotated[bool, Field(description="Also working/ (open items: intentions, not facts)")] = False


class SearchHit(TypedDict):
    """One note found: its summary, score, and the passage that best matches the query."""

    path: str
    uri: str  # the note as a resource (cortex://note/<path>)
    title: str
    status: str
    score: float
    heading: str
    passage: str
    passage_state: str  # live, retired or partly retired
    passage_marks: NotRequired[list[dict[str, Any]]]
    passage_marks_left_out: NotRequired[str]
    closeness: NotRequired[float]
    description: NotRequired[str]
    aliases: NotRequired[list[str]]
    tags: NotRequired[list[str]]
    superseded_by: NotRequired[str]
    valid_until: NotRequired[str]
    unreadable: NotRequired[str]
    retired: NotRequired[str]
    archived: NotRequired[bool]
    found_by: NotRequired[str]


class SearchReply(TypedDict):
    """brain_search: the hits, best first, and what was left out."""

    sha: str
    query: str
    total: int
    hits: list[SearchHit]
    meaning: NotRequired[str]
    prefix_note: NotRequired[str]
    left_out: NotRequired[str]
    more: NotRequired[str]
    meaning_only: NotRequired[str]


class FilterKey(NamedTuple):
    """What a search filter lets through, as the key its verdicts are kept under (the index's
    masks, the meaning arm's): the same key, the same verdicts."""

    day: dt.date
    prefix: str | None
    scope: tuple[str, ...] | None
    include_working: bool
    include_retired: bool


def search(tools: Tools, request: SearchRequest, caller: Caller) -> SearchReply:
    """brain_search on a trusted door (a guest's scope, were one to call it, bounds it)."""
    return search_notes(tools, request, scope=list(caller.guest.scopes) if caller.guest else None)


def search_notes(tools: Tools, request: SearchRequest, *, scope: list[str] | None = None) -> SearchReply:
    """The hits for `request`, only from `scope` (a guest's folders) when given."""
    query, prefix = request.query, request.prefix
    include_retired = request.include_retired
    check_text(query, "query")
    include_working = request.include_working and scope is None  # no guest ever reaches working/
    if prefix is not None:
        check_text(prefix, "prefix")
    k = check_k(request.k, 10)
    brain = tools.brain
    snap = brain.snapshot(request.as_of)
    day = brain.day_of(request.as_of)[0]  # the day the commit's claims are judged on
    terms = set(tokenize(query))
    weights = brain.corpus.idf(snap, terms)
    # A prefix or a scope: score only the notes under it, at a cost that follows their
    # number rather than the whole brain's posting lists (same results, to the bit).
    within = (
        [p for p in snap.notes if (not prefix or p.startswith(prefix)) and in_scope(p, scope)]
        if (prefix or scope is not None)
        else None
    )
    key = FilterKey(day, prefix, None if scope is None else tuple(scope), include_working, include_retired)
    allow = _allow(snap, day, prefix, scope, include_retired, include_working)
    wider = (
        None
        if include_retired
        else (_allow(snap, day, prefix, scope, True, include_working), key._replace(include_retired=True))
    )
    meaning = brain.meaning
    # A scope (a guest's) is scored over its own rows only: its timing owes nothing to the rest.
    close = meaning.closeness(snap, query, within, private=scope is not None) if meaning is not None else None
    worded: set[str] | None = None  # with the meaning arm: the hits holding a word of the query
    any_worded = True  # whether any match does, beyond the hits too
    if close is not None:
        found, worded, any_worded = _by_meaning(
            tools, snap, k, close, query=query, weights=weights, allow=allow, wider=wider, within=within, key=key
        )
    else:
        found = brain.corpus.search(snap, query, k, allow, within, key, wider)
    named = _named(tools, snap, query, allow, within)
    if named:  # an exact title, alias or file name comes first, whatever the scores say
        rest = [(p, sc) for p, sc in found.hits if p not in named]
        best = max((sc for _, sc in found.hits), default=0.0)
        first = ([(p, best) for p in sorted(named)] + rest)[: max(k, len(named))]
        found = replace(found, hits=first, total=max(found.total, len(named)))
    reply: dict[str, Any] = {"sha": snap.sha, "query": query, "total": found.total}
    if prefix and scope is None:  # a guest is never told of folders outside its scope
        nothing = prefix_note(snap, prefix)
        if nothing:
            reply["prefix_note"] = nothing
    if meaning is not None:
        reply["meaning"] = meaning.line(snap, within, close.matrix if close is not None else None)
    left = (found.reach or 0) - found.total
    if left:
        reply["left_out"] = (
            f"{left} matching note(s) in archive/ or retired were left out; pass include_retired=true to see them"
        )
    hits = [_hit(snap.notes[path], score, weights, close, day) for path, score in found.hits]
    if worded is not None:
        for hit in hits:
            hit["found_by"] = "words" if hit["path"] in worded or hit["path"] in named else "meaning only"
        if hits and all(h["found_by"] == "meaning only" for h in hits):
            best = max(h.get("closeness", 0.0) for h in hits)
            if best < ALONE_FLOOR and not any_worded:
                reply["meaning_only"] = (
                    f"nothing found: no note holds a word of the query, and none comes closer to it in meaning "
                    f"than cosine {best:.2f} (a hit found by meaning alone needs {ALONE_FLOOR:.2f})"
                )
                hits, reply["total"], found = [], 0, replace(found, total=0)  # nothing more to raise k for
            else:
                reply["meaning_only"] = (
                    f"no hit holds a word of the query: each is only close to it in meaning (a passage at cosine "
                    f"{RELATED:.2f} or more), and may be unrelated"
                )
    reply["hits"] = hits
    if found.total > len(hits):
        reply["more"] = f"{found.total - len(hits)} more matching note(s); raise k (max {MAX_K}) or narrow with prefix"
    return cast(SearchReply, reply)


def _hit(note: Note, score: float, weights: dict[str, float], close: Closeness | None, day: dt.date) -> dict[str, Any]:
    """One search hit: the note's summary, its score, and the passage that best matches the
    query (its closest by meaning, when the arm has it) with what of it is not live."""
    hit = note.summary()
    hit["uri"] = note_uri(note.path)  # its resource, to attach
    hit["score"] = round(score, 4)
    near = close.spans_of(note.path) if close is not None else []
    text = note.text  # read from Git once for the passage and its state
    heading, passage, block = best_passage(note, weights, near[0][1] if near else None, text)
    if near:
        hit["closeness"] = round(near[0][0], 4)
    hit["heading"] = heading
    hit["passage"] = passage
    retired = note.retired_reason(day)
    hit.update(passage_state(note, block, retired, text))
    if retired:
        hit["retired"] = retired
    if in_archive(note.path):
        hit["archived"] = True
    return hit


def _by_meaning(
    tools: Tools,
    snap: Snapshot,
    k: int,
    close: Closeness,
    *,
    query: str,
    weights: dict[str, float],
    allow: Allow,
    wider: tuple[Allow, FilterKey] | None,
    within: list[str] | None,
    key: FilterKey,
) -> tuple[SearchResult, set[str], bool]:
    """Hits ordered by `ranking.hybrid`, which of them hold a word of the query, and whether
    any match does (beyond the hits too). The order: the
    closest passage's cosine, plus the share of the query's words the note holds, plus its
    rare ones. A match is a note holding a query term or with a passage at RELATED or
    closer; `reach` counts those the default filters left out. Only `within` (a prefix or
    scope, when given) was scored. A note without vectors yet ranks no lower than words alone
    would rank it (`keep_word_ranks`)."""
    scope = set(within) if within is not None else None
    matrix = close.matrix
    # While a first embed runs, the notes not embedded yet follow the embedded ones: each
    # holding a query term scores as a passage at RELATED would (found by its words only).
    paths = close.paths + matrix.absent
    cos = np.concatenate([close.best, np.full(len(matrix.absent), RELATED, np.float32)])
    corpus = tools.brain.corpus
    found = corpus.with_index(snap, lambda index: matrix.term_rows(snap.sha, index, weights, scope))
    if scope is not None:  # a scope's own rarity: how common a word is outside it takes no part
        weights = {t: idf(len(scope), n) for t, (_, n) in found.items() if n}
    scores, cover = hybrid(cos, ((w, *found[t]) for t, w in weights.items()))
    embedded = np.arange(len(cos)) < len(close.paths)
    match = ((cos >= RELATED) & embedded) | (cover > 0)
    ok = _mask(tools, snap, matrix, paths, allow, key)
    kept = np.flatnonzero(match & ok)
    order = [int(i) for i in top(scores, k, kept)]
    if matrix.absent:
        words = [p for p, _ in corpus.search(snap, query, k, allow, within, key).hits]
        at = {p: i for i, p in enumerate(paths)}
        order = [at[p] for p in keep_word_ranks([paths[i] for i in order], words, set(matrix.absent))[:k]]
    reach = len(kept) if wider is None else int((match & _mask(tools, snap, matrix, paths, *wider)).sum())
    hits = [(paths[i], float(scores[i])) for i in order]
    worded = {paths[i] for i in order if cover[i] > 0}
    return SearchResult(hits, len(kept), reach), worded, bool((cover[kept] > 0).any())


def _mask(
    tools: Tools, snap: Snapshot, matrix: ScopeMatrix, paths: list[str], allow: Allow, key: FilterKey
) -> np.ndarray:
    """`allow`'s verdict on each note of `paths` (the matrix's, then those it lacks),
    kept per commit, matrix and filter key (asked once per note, not once per query: a
    live check is a date comparison)."""
    cache_key = (snap.sha, key, matrix.serial)
    masks = tools.masks
    found = masks.get(cache_key)
    if found is None:
        found = np.fromiter((allow(p) for p in paths), dtype=bool, count=len(paths))
        if len(masks) >= 16:
            masks.pop(next(iter(masks)))
        masks[cache_key] = found
    return found


def _named(tools: Tools, snap: Snapshot, query: str, allow: Allow, within: list[str] | None) -> set[str]:
    """Notes whose title, alias or file name is the query itself (case and punctuation aside)."""
    key = name_key(query)
    if not key:
        return set()
    found = tools.names.at(snap).get(key, frozenset())
    scope = set(within) if within is not None else None
    return {p for p in found if allow(p) and (scope is None or p in scope)}


def _allow(
    snap: Snapshot,
    day: dt.date,
    prefix: str | None,
    scope: list[str] | None,
    include_retired: bool,
    include_working: bool = False,
) -> Allow:
    """The search filter; the index keeps its verdicts per key (see `search_notes`), so each
    note is asked once per index version and day, not once per query. working/ holds
    intentions, not facts: left out unless asked for."""
    notes = snap.notes

    def allow(path: str) -> bool:
        if prefix and not path.startswith(prefix):
            return False
        if not include_working and in_working(path):
            return False
        if scope is not None and not in_scope(path, scope):
            return False
        if include_retired:
            return True
        return is_live(notes[path], day)

    return allow


TOOL = Tool("brain_search", DESCRIPTION, SUMMARY, READ, SearchRequest, SearchReply, search)
