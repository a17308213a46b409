"""brain_ask: retrieve, pack, read, verify, stamp.

The reader may be a model; the stamp never is. Each quote is checked by the
pure verifier against the cited note's bytes at the served SHA, and the reply's
stamp is the weakest of the quotes, with a coverage line saying what was and
was not read.

A complete search, the condition for NOT IN BRAIN: every note of the scope that
holds a distinctive term of the question (`cortex.ask.pack.distinctive`: rare in the
scope, plural or singular alike) was read. The coverage line lists those terms with
their note counts ("wife: 0 notes, salary: 3 notes, all read"). A reader that is
cheap (`reads_all`, the offline reader) is given all of those notes at once; a
model reader gets the best `k`, and when it says not_in_brain while some remain
unread, up to `sweep` further packs of the next-ranked ones (CORTEX_ASK_SWEEP).

Who reads (`ReaderOrder`, CORTEX_READER): the server's model, the connected client's own
model (MCP sampling: one request an ask, bounded in tokens and time), or the offline
reader. A client's model reads the pack with credentials masked, and its quotes are
checked against the notes masked the same way; so are the quotes `verify` is given by a
client that answered from brain_read replies (brain_verify).
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, cast

import numpy as np

from cortex.ask.answer_cache import AnswerCache, MemoryCache, cache_key
from cortex.ask.focus import addressing
from cortex.ask.leads import LEADS, MEANING_NEAR, WORDS_NEAR, Lead, by_words, leads_line
from cortex.ask.neutralize import neutralize_answer
from cortex.ask.pack import Pack, build_pack, distinctive, passage_pack, rarity, variants
from cortex.ask.question import Question, owner_words, question_digest, read_question
from cortex.ask.quotes import check_quote
from cortex.ask.reader_order import ReaderOrder, joined
from cortex.ask.readers import CLIENT_TIMEOUT_S, ClientTurn, Reader, ReaderReply, client_request
from cortex.ask.replies import AskReply, VerifyReply, answered, coverage_line, lead_entry, quote_entry, words_only
from cortex.ask.stamps import UNVERIFIED, QuoteCheck, decide
from cortex.brain.brain import Brain
from cortex.errors import BadInput
from cortex.index.masked import masked
from cortex.index.ranking import hybrid, top
from cortex.index.snapshot import Snapshot, in_archive
from cortex.notes.blocks import blocks_of
from cortex.notes.note import Note
from cortex.notes.paths import check_path, check_text, in_scope
from cortex.notes.working import in_working

if TYPE_CHECKING:
    from cortex.meaning.closeness import Closeness

__all__ = [
    "DEFAULT_K",
    "DEFAULT_SWEEP",
    "MAX_ANSWER_CHARS",
    "NEAR_SAID",
    "MAX_CITATIONS",
    "MAX_QUOTE_CHARS",
    "Asker",
    "SampleNeeded",
    "check_citations",
    "evidence",
    "out_of_bounds",
    "usable",
]

DEFAULT_K = 8
# How many notes, by the hybrid ranking, a model reader's passage pack draws its passages
# from (the budget decides how many go in). Chosen on the eval's even lines of
# reworded.jsonl (DESIGN.md, "Meaning"): a gold note in the first pack for 56/61 at 40,
# 59/61 at 80; no cosine floor, since a reworded question's gold note sat under 0.25 for 11
# of its first 30.
PACK_NOTES = 80
MAX_CITATIONS = 20  # brain_verify: quotes in one call
MAX_QUOTE_CHARS = 2_000
MAX_ANSWER_CHARS = 20_000


@dataclass
class _Chosen:
    """Who reads an ask and at which commit (`Asker._choose`)."""

    reader: Reader | None  # None: the client's model, through `turn`
    passed_over: str  # why readers before it were passed over
    turn: ClientTurn | None
    snap: Snapshot
    day: dt.date  # the day claims are judged on
    dated: bool  # whether `as_of` dated them (an ISO time)


@dataclass
class _Retrieved:
    """What the scope holds for a question (`Asker._retrieve`)."""

    allowed: set[str]  # the notes that may be read
    scoped: bool
    guest: bool  # read masked, as a guest's replies show the notes
    in_scope: int
    weights: dict[str, float]  # each term's rarity weight
    holders: dict[str, frozenset[str]]  # each term's notes
    counts: dict[str, int]  # each distinctive term's number of notes
    matching: set[str]  # the notes holding a distinctive term
    order: list[str]  # the order they are read in
    close: Closeness | None
    scope_paths: list[str]


@dataclass
class _Plan:
    """How a reader reads (`Asker._plan`)."""

    pack: Pack
    reads_all: bool
    sweep: int


@dataclass
class _Read:
    """What the reader answered and what it read (`Asker._read`)."""

    reply: ReaderReply
    pack: Pack  # the last pack read
    read: set[str]
    left: set[str]  # notes packed in part by the budget
    packs: int
    reads_all: bool
    passed_over: str  # why readers before the one that read were passed over


@dataclass
class SampleNeeded:
    """brain_ask's first round when the client's model reads: the sampling request's
    parameters, and what the second round must find again (the SHA, the question, when)."""

    request: dict[str, Any]
    state: dict[str, Any]


def out_of_bounds(note: Note, day: dt.date, as_of: bool, scope: list[str] | None = None) -> str | None:
    """Why an ask never reads `note` to answer, its retirement aside (a retired note's
    quotes are SUPERSEDED, which says more), or None. brain_ask leaves such notes out of
    its pack and brain_verify refuses their quotes, so the two apply the same rules."""
    path = note.path
    if not in_scope(path, scope):
        return f"{path} is outside the scope of this door"
    if in_archive(path):
        return f"{path} is in archive/, which is never evidence (ask and search leave it out)"
    if in_working(path):  # working/ holds intentions, not facts
        return f"{path} is working state (working/: open items, intentions, not facts), which ask leaves out"
    if as_of and note.valid_from is not None and day < note.valid_from:
        return f"{path} is valid only from {note.valid_from.isoformat()}, after {day.isoformat()}"
    return None


def usable(snap: Snapshot, path: str, day: dt.date, as_of: bool, scope: list[str] | None = None) -> bool:
    """Whether a note may be read to answer: in scope, live, and valid on `day` when asked as of a date."""
    note = snap.notes[path]
    return out_of_bounds(note, day, as_of, scope) is None and not note.is_retired(day)


def evidence(
    brain: Brain, snap: Snapshot, question: Question, allowed: set[str], scoped: bool = False, masked: bool = False
) -> tuple[int, dict[str, float], dict[str, frozenset[str]], set[str]]:
    """What the scope (`allowed`: the notes that may be read) says about the question's terms.

    (notes in scope, term -> rarity weight, term -> notes of the scope holding it,
    the distinctive terms). `scoped` (a guest's scope): look only inside `allowed`, at a
    cost that follows its size, so how common a word is outside it takes no time to tell.
    `masked` (a guest): the notes as replies show them, so a masked word is held by none.
    """
    corpus = brain.corpus
    holders = {
        t: frozenset(
            corpus.matching(snap, set(variants(t)), allowed, masked)
            if scoped
            else corpus.matching(snap, set(variants(t)), masked=masked) & allowed
        )
        for t in question.focus
    }
    in_scope_count = len(allowed)
    counts = {t: len(h) for t, h in holders.items()}
    weights = rarity(counts, in_scope_count)
    return in_scope_count, weights, {t: holders[t] for t in weights}, distinctive(counts, in_scope_count)


DEFAULT_SWEEP = 2  # two more packs reached every matching note of the 176-note eval brain


# How a miss names its leads: passages near the question that the reader found no answer in.
NEAR_SAID = "the closest passages, which do not answer it, are"


class Asker:
    """Answers questions over one brain with one reader and one cache.

    `sweep`: further packs a model reader reads when it finds nothing while notes
    holding a distinctive term remain unread (CORTEX_ASK_SWEEP; None: the default, 2).
    """

    def __init__(
        self,
        brain: Brain,
        reader: Reader,
        cache: AnswerCache | None = None,
        pack_bytes: int = 60_000,
        sweep: int | None = None,
        order: ReaderOrder | None = None,
        client_timeout: float = CLIENT_TIMEOUT_S,
    ):
        self.brain = brain
        self.reader = reader
        self.order = order
        self.client_timeout = client_timeout
        self.cache = cache or MemoryCache()
        self.pack_bytes = pack_bytes
        self.sweep = max(0, DEFAULT_SWEEP if sweep is None else sweep)

    def ask(
        self,
        question: str,
        k: int = DEFAULT_K,
        as_of: str | None = None,
        *,
        scope: list[str] | None = None,
        door: str = "owner",
        turn: ClientTurn | None = None,
    ) -> AskReply | SampleNeeded:
        """The stamped answer; or, when the client's model is to read and has not yet,
        the sampling request to send it (`SampleNeeded`): the door asks, and calls again
        with `turn.reply` set. `turn`: the client session of a trusted door, else None.

        Three steps: choose the reader and the commit (`_choose`), retrieve what the scope
        holds for the question (`_retrieve`), read with the sweep (`_read`); then stamp."""
        chosen = self._choose(question, as_of, turn)
        snap, passed = chosen.snap, chosen.passed_over
        q = read_question(question, owner_words(snap))  # read once, handed to every step
        key = cache_key(q, snap.sha, self._how(chosen), k, door, scope, chosen.day.isoformat())
        cached = self.cache.get(key) if chosen.turn is None else None
        if cached is not None:
            return answered(cached, cached=True, passed=passed)
        found = self._retrieve(q, k, chosen, scope, guest=door.startswith("guest:"))
        done = self._read(q, k, chosen, found)
        if isinstance(done, SampleNeeded):
            return done
        reply = done.reply
        missed = reply.error is None and reply.not_in_brain and not reply.citations
        result = self._stamp(
            snap,
            chosen.day,
            q,
            done,
            found,
            top=k if done.reads_all else None,
            said=self._meaning_said(snap, found.close, found.scope_paths if found.scoped else None),
            leads=self._leads(snap, q, found) if missed else [],
        )
        result["sha"] = snap.sha
        if result["stamp"] != UNVERIFIED and not result["reader"].startswith("client:"):
            self.cache.set(key, result)
        return answered(result, cached=False, passed=done.passed_over)

    def _choose(self, question: str, as_of: str | None, offered: ClientTurn | None) -> _Chosen:
        """Who reads (`order`; None: the client's model, through the `offered` turn) and at which commit:
        a second round is pinned to the commit its first round packed."""
        reader, passed = self.order.pick(offered) if self.order is not None else (self.reader, "")
        turn = offered if reader is None else None
        resumed = turn.state if turn is not None else None
        pinned = resumed.get("sha") if resumed else None
        if pinned and resumed is not None and resumed.get("q") != question_digest(question):
            raise BadInput("the retry is not of the question the client's model was asked")
        day, dated = self.brain.day_of(as_of)
        snap = self.brain.corpus.at(pinned) if pinned else self.brain.snapshot(as_of)
        if turn is not None and turn.reply is not None:
            unused = turn.unused(time.time(), self.client_timeout)
            if unused:  # late, or with no sealed state to date it: the answer is not read
                reader, turn = self._after_client(), None
                passed = joined(passed, f"the client's model: {unused}")
        return _Chosen(reader, passed, turn, snap, day, dated)

    def _how(self, chosen: _Chosen) -> str:
        """Who reads and how, for the answer cache's key."""
        name = chosen.reader.name if chosen.reader is not None else "client"
        meaning = self.brain.meaning
        # A miss is judged by meaning only once the arm has embedded this commit: an answer
        # given by words alone must not outlive that.
        arm = meaning is not None and meaning.ready_for(chosen.snap)
        # While a first embed runs, meaning covers more with every note filed: keyed by how much.
        growing = f" meaning {meaning.coverage()[0]}" if meaning is not None and not arm else ""
        return f"{name} sweep {self.sweep}{' meaning' if arm else growing}"

    def _retrieve(
        self, question: Question, k: int, chosen: _Chosen, scope: list[str] | None, guest: bool
    ) -> _Retrieved:
        """The scope's notes, the question's terms and the notes holding them, and the order
        the notes are read in: the search's top k, then the closest by meaning, then every
        other note holding a distinctive term by how much of the question's rarity it holds.

        A guest is served from the notes as replies show them: what is masked can be neither
        found, counted nor read, so a guessed credential gets the reply a wrong guess gets."""
        snap = chosen.snap
        allowed = {p for p in snap.notes if usable(snap, p, chosen.day, chosen.dated, scope)}
        scoped = scope is not None
        in_scope, weights, holders, distinct = evidence(self.brain, snap, question, allowed, scoped, guest)
        matching: set[str] = set().union(*(holders[t] for t in distinct))
        within = allowed if scoped else None
        found = self.brain.corpus.search(snap, question.tokens, k, allowed.__contains__, within=within, masked=guest)
        order = [p for p, _ in found.hits]
        meaning = self.brain.meaning
        # Scored over the scope's own passages only (a guest's ranking, timing and coverage
        # owe nothing to notes outside it); None until the arm has embedded this commit.
        scope_paths = sorted(allowed)
        close = meaning.closeness(snap, question.text, scope_paths, private=scoped) if meaning is not None else None
        if close is not None:
            # paths are sorted, so a stable sort breaks ties by path, as everywhere else
            nearest = np.argsort(-close.best, kind="stable")[:k]
            order += [close.paths[i] for i in nearest if close.paths[i] not in order]
        if matching - set(order):
            # Everything else that holds a distinctive term, by how much of the question's
            # rarity weight it holds (a second BM25 pass over the whole scope cost ~70 ms a
            # question at 10,000 notes; this is a few set lookups).
            held = {p: sum(w for t, w in weights.items() if p in holders[t]) for p in matching - set(order)}
            order += sorted(held, key=lambda p: (-held[p], p))
        counts = {t: len(holders[t]) for t in distinct}
        return _Retrieved(
            allowed, scoped, guest, in_scope, weights, holders, counts, matching, order, close, scope_paths
        )

    def _read(self, question: Question, k: int, chosen: _Chosen, found: _Retrieved) -> _Read | SampleNeeded:
        """The reader's answer from its first pack, and the sweep's packs after a miss. A client's
        model that refuses or answers unreadably hands over to the next reader of the order."""
        reader, passed = chosen.reader, chosen.passed_over
        plan = self._plan(reader, question, k, chosen.snap, found)
        if reader is None:  # the client's model: asked in a first round, read in the second
            turn = chosen.turn
            assert turn is not None
            if turn.reply is None and not turn.state:
                state = {"sha": chosen.snap.sha, "q": question_digest(question.text), "t": time.time()}
                return SampleNeeded(client_request(question.text, plan.pack), state)
            reply = turn.read(plan.pack)
            if reply.error is None:
                return self._swept(question, chosen.snap, found, plan, reply, None, passed)
            reader = self._after_client()
            passed = joined(passed, f"the client's model: {reply.error}")
            plan = self._plan(reader, question, k, chosen.snap, found)
        return self._swept(question, chosen.snap, found, plan, reader.read(question, plan.pack), reader, passed)

    def _plan(self, reader: Reader | None, question: Question, k: int, snap: Snapshot, found: _Retrieved) -> _Plan:
        """How `reader` reads: its first pack, whether it is given every matching note at once
        (`reads_all`, the offline reader) and how many packs the sweep may add.

        On a guest door k is the owner's cap (max_k) on the notes read for one ask: no
        reading of every matching note and no sweep there, so a miss stays UNVERIFIED
        unless the k notes already hold every distinctive term's notes."""
        capped = found.guest
        reads_all = getattr(reader, "reads_all", False) and not capped
        sweep = 0 if capped or reader is None else self.sweep  # the client's model: one request an ask
        mask = found.guest or reader is None  # what leaves the server, or what a guest may learn from
        if found.close is not None and not reads_all:
            pack = self._passages(snap, found.close, found.weights, found.holders, mask)
        else:
            first = found.order if reads_all else found.order[:k]
            budget = float("inf") if reads_all else None
            pack = self._pack(snap, first, question, found.weights, found.holders, 0, budget, mask)
        return _Plan(pack, reads_all, sweep)

    def _swept(
        self,
        question: Question,
        snap: Snapshot,
        found: _Retrieved,
        plan: _Plan,
        reply: ReaderReply,
        reader: Reader | None,
        passed: str,
    ) -> _Read:
        """`reply` to the first pack, and after a miss up to `plan.sweep` further packs of the
        matching notes not read yet. A note packed only in part, while a passage left out
        holds a question term, is not read: the sweep packs it whole, and a miss cannot rest on it."""
        pack = plan.pack
        read, left, packs, tokens = set(pack.paths) - set(pack.partial), set(pack.left_for_budget), 1, reply.tokens_sent
        files = len(pack.files)
        while reader is not None and reply.error is None and reply.not_in_brain and not reply.citations:
            if packs > plan.sweep or plan.reads_all:
                break
            rest = [p for p in found.order if p in found.matching and p not in read]
            if not rest:
                break
            pack = self._pack(snap, rest, question, found.weights, found.holders, files, None, found.guest)
            if not pack.files:
                break
            reply = reader.read(question, pack)
            files += len(pack.files)
            read |= set(pack.paths)
            left |= set(pack.left_for_budget)
            packs += 1
            tokens += reply.tokens_sent
        reply.tokens_sent = tokens
        return _Read(reply, pack, read, left, packs, plan.reads_all, passed)

    def verify(
        self, answer: str, citations: list[dict[str, Any]], question: str | None = None, as_of: str | None = None
    ) -> VerifyReply:
        """Stamp an answer some other reader wrote (brain_verify): each `{path, quote}` is
        checked as brain_ask's quotes are, against the note at the served SHA masked as
        replies show it (a quote copied from a masked reply verifies, and no quote can
        confirm a secret); then the answer's specifics, retirement and the overall stamp.
        `as_of`: a commit SHA or an ISO time, as brain_read takes it (`Brain.day_of`). With
        `question`, whether the quotes mention its focus terms (`addresses_question`).
        A note brain_ask would never read (`out_of_bounds`: archive/, working/, not yet
        valid on an `as_of` time) gives UNVERIFIED quotes: brain_verify is no way around those
        rules. It serves only the trusted doors, whose scope is the whole brain."""
        wanted = check_citations(answer, citations, question)
        snap = self.brain.snapshot(as_of)
        day, dated = self.brain.day_of(as_of)
        cited: dict[str, Note] = {}
        for path, _ in wanted:
            name = self.brain.stored_path(path, snap.sha)
            if name in snap.notes:
                cited[path] = masked(snap.notes[name])
        # The stock-phrase test (a quote in 3 or more notes is too generic) looks at the
        # cited notes and, with the question, at its retrieval top k, as a pack would hold.
        among = {n.path: n for n in cited.values()}
        if question:
            readable = lambda p: usable(snap, p, day, dated)  # noqa: E731
            for p, _ in self.brain.corpus.search(snap, question, DEFAULT_K, readable).hits:
                among.setdefault(p, masked(snap.notes[p]))
        checks, quotes = [], []
        for path, quote in wanted:
            note = cited.get(path)
            why = out_of_bounds(note, day, dated) if note is not None else None
            if note is None:
                check = QuoteCheck(UNVERIFIED, f"no note at {path} in commit {snap.sha[:12]}", path=path)
            elif why:
                check = QuoteCheck(UNVERIFIED, f"{why}: brain_ask never answers from it", path=path)
            else:
                check = check_quote(quote, note, among, day, self._successor(snap, note, day, dated))
            checks.append(check)
            quotes.append(quote_entry(quote, check))
        verdict = decide(checks, False, 0, answer)
        stamp, why = verdict.stamp, verdict.reason
        flag, why = _addressing(read_question(question, owner_words(snap)), checks, why) if question else ({}, why)
        notes = len(cited)
        reply: dict[str, Any] = {
            "answer": neutralize_answer(answer),
            "stamp": stamp,
            "stamp_reason": why,
            "rule": verdict.rule,
            **({"verified_answer": verdict.verified_answer} if verdict.verified_answer else {}),
            **flag,
            "quotes": quotes,
            "coverage": (
                f"checked {len(quotes)} quote{'' if len(quotes) == 1 else 's'} against {notes} "
                f"note{'' if notes == 1 else 's'} at sha {snap.sha[:12]}, masked as replies show them; "
                "reader: the caller's own model"
            ),
            "reader": "caller",
            "sha": snap.sha,
        }
        return cast(VerifyReply, reply)  # the fields VerifyReply names, each of its type

    def _successor(self, snap: Snapshot, note: Note, day: dt.date, dated: bool) -> Note | None:
        """The note `note.superseded_by` names at `snap`, masked, when brain_ask could read it
        (so a SUPERSEDED quote can name the sentence that replaced it); else None."""
        name = (note.superseded_by or "").strip().lstrip("/")
        for path in (name, name + ".md") if name else ():
            try:
                stored = self.brain.stored_path(check_path(path, for_write=False), snap.sha)
            except BadInput:
                return None
            if stored in snap.notes:
                successor = snap.notes[stored]
                return masked(successor) if out_of_bounds(successor, day, dated) is None else None
        return None

    def _after_client(self) -> Reader:
        """The reader after the client's model in the order, when it could not be used."""
        reader = self.order.pick(None)[0] if self.order is not None else self.reader
        assert reader is not None  # with no client turn, the order ends at a server-side reader
        return reader

    def _pack(
        self,
        snap: Snapshot,
        paths: list[str],
        question: Question,
        weights: dict[str, float],
        holders: dict[str, frozenset[str]],
        first: int,
        budget: float | None,
        mask: bool = False,
    ) -> Pack:
        """The notes of `paths` packed for a reader; `mask`: as replies show them (a reader
        outside the server, the client's model, never sees a credential, and a guest's reader
        never reads one, so it can neither quote nor confirm it)."""
        notes = [masked(snap.notes[p]) if mask else snap.notes[p] for p in paths]
        pack = build_pack(snap.sha, notes, question.tokens, self.pack_bytes if budget is None else budget, first)
        pack.weights, pack.holders = weights, holders
        return pack

    def _passages(
        self,
        snap: Snapshot,
        close: Closeness,
        weights: dict[str, float],
        holders: dict[str, frozenset[str]],
        mask: bool = False,
    ) -> Pack:
        """A model reader's first pack (`pack.passage_pack`): the best passages of the scope's
        `PACK_NOTES` best notes by the hybrid ranking, as brain_search fuses it (the note's
        closest passage, plus the share of the question's rarity weight it holds, squared,
        plus its rare terms), however far: the budget, not a floor, bounds what is read."""
        index = close.index()
        terms = ((w, [index[p] for p in holders[t] if p in index], len(holders[t])) for t, w in weights.items())
        best = top(hybrid(close.best, terms)[0], PACK_NOTES)
        show = masked if mask else (lambda note: note)
        ranked = [(show(snap.notes[close.paths[i]]), close.spans_of(close.paths[i])) for i in best]
        pack = passage_pack(snap.sha, ranked, self.pack_bytes, weights)
        pack.weights, pack.holders = weights, holders
        return pack

    def _meaning_said(
        self, snap: Snapshot, close: Closeness | None, scope: list[str] | None
    ) -> tuple[str, tuple[str, float] | None]:
        """(the coverage line's meaning part, the closest passage's note and cosine or None)."""
        meaning = self.brain.meaning
        if meaning is None:
            return "", None
        if close is None:
            return meaning.line(snap, scope), None
        nearest = close.closest()
        if nearest is None:
            return "meaning: no passage in scope", None
        side = "under" if nearest[1] < MEANING_NEAR else "at or over"
        in_part = meaning.in_part(snap, scope)
        if not meaning.ready_for(snap):  # a first embed under way: how much of the scope meaning covers
            in_part = meaning.line(snap, scope, close.matrix)
        return (
            f"closest passage {nearest[1]:.2f}, {side} {MEANING_NEAR:.2f}{'; ' + in_part if in_part else ''}",
            nearest,
        )

    def _stamp(
        self,
        snap: Snapshot,
        day: dt.date,
        question: Question,
        done: _Read,
        found: _Retrieved,
        *,
        top: int | None,
        said: tuple[str, tuple[str, float] | None] = ("", None),
        leads: list[Lead] | None = None,
    ) -> dict[str, Any]:
        """The reply to an ask: each quote checked and stamped, the overall stamp and why,
        and the coverage line saying what was searched and read."""
        pack, reply, read = done.pack, done.reply, done.read
        notes_by_tag = pack.notes_by_tag
        # The verifier counts how many notes of the pack hold a quote (a stock phrase is
        # in 3 or more). A reader given every matching note (`top` set) is judged against
        # the retrieval top `top` and the cited note, as a model reader's pack would be:
        # indexing hundreds of notes for that count cost ~60 ms an ask at 10,000 notes.
        among = notes_by_tag if top is None else {f.tag: f.note for f in pack.files[:top]}
        checks = []
        quotes = []
        if reply.error is None:
            for tag, quote in reply.citations:
                note = notes_by_tag.get(tag)
                check = check_quote(quote, note, {**among, tag: note} if note is not None else among, day)
                checks.append(check)
                quotes.append(quote_entry(quote, check))
        unread = found.matching - read
        near = [lead for lead in leads or () if lead.near()]
        close = (
            f"not found in your notes: the reader read all {len(read)} note(s) holding the question's terms "
            f"and none answers it; {NEAR_SAID} {leads_line(near[:LEADS])}: NOT IN BRAIN needs every "
            f"passage of the scope under {WORDS_NEAR:.0%} of the question's words and under cosine "
            f"{MEANING_NEAR:.2f}, so the notes may still hold the answer in other words"
        )
        verdict = decide(
            checks,
            reply.not_in_brain,
            len(unread),
            reply.answer,
            reader_error=reply.error,
            near=close if near else None,
        )
        stamp, why = verdict.stamp, verdict.reason
        missed = verdict.rule in ("absence-proven", "absence-near")
        if missed and said[1] is None:
            why += f"; judged by words only ({words_only(said[0])})"
        elif missed and said[0].endswith("; lexical for the rest"):
            why += "; the notes not embedded yet judged by words only"
        flag, why = _addressing(question, checks, why)
        return {
            "answer": neutralize_answer(reply.answer),
            "stamp": stamp,
            "stamp_reason": why,
            "rule": verdict.rule,
            **({"verified_answer": verdict.verified_answer} if verdict.verified_answer else {}),
            **flag,
            "quotes": quotes,
            "coverage": coverage_line(
                found.in_scope,
                found.counts,
                matching=len(found.matching),
                read=len(read),
                unread=len(unread),
                by_budget=len(unread & done.left),
                packs=done.packs,
                sha=snap.sha,
                reader=reply.reader,
                tokens=reply.tokens_sent,
            )
            + (f"; {said[0]}" if said[0] else ""),
            "reader": reply.reader,
            "notes_read": len(read),
            "unread_matching": len(unread),
            **({"leads": [lead_entry(lead) for lead in near[:LEADS]]} if stamp == UNVERIFIED and near else {}),
        }

    def _leads(self, snap: Snapshot, question: Question, found: _Retrieved) -> list[Lead]:
        """The scope's passages closest to a question no reader answered, by its words and by
        meaning (`near`), one per note, closest first: what NOT IN BRAIN must rule out. A
        guest's are read masked, as its pack is: how close a passage comes is no oracle either."""
        weights, holders, close = found.weights, found.holders, found.close
        show = masked if found.guest else (lambda note: note)
        notes = {p: show(snap.notes[p]) for p in set().union(*holders.values()) & found.allowed} if holders else {}
        closest = np.argsort(-close.best, kind="stable")[:LEADS].tolist() if close is not None else []
        also = [close.paths[i] for i in closest] if close is not None else []
        leads = {lead.path: lead for lead in by_words(question, weights, holders, notes, top=LEADS, also=also)}
        if close is not None:
            for i in closest:
                path, cos = close.paths[i], float(close.best[i])
                spans = close.spans_of(path)
                blocks = blocks_of(show(snap.notes[path]))
                heading = " > ".join(blocks[spans[0][1]].heading_path) if spans and spans[0][1] < len(blocks) else ""
                lead = leads.get(path)
                leads[path] = (
                    Lead(path, lead.heading, lead.words, cos) if lead is not None else Lead(path, heading, cosine=cos)
                )
        return sorted(leads.values(), key=lambda x: (not x.near(), -x.words, -(x.cosine or 0.0), x.path))


def _addressing(question: Question, checks: list[QuoteCheck], why: str) -> tuple[dict[str, Any], str]:
    """(`addresses_question` and `missing_terms` for the reply, the stamp's reason with the
    warning added when the quotes miss a focus term of the question: `focus.addressing`)."""
    flag, clause = addressing(question, question.focus, checks)
    return flag, f"{why}; {clause}" if clause else why


def check_citations(answer: Any, citations: Any, question: Any) -> list[tuple[str, str]]:
    """brain_verify's input as (path, quote) pairs, or BadInput saying in one line what is wrong."""
    if not isinstance(answer, str):
        raise BadInput("answer must be a string")
    check_text(answer, "answer")
    if len(answer) > MAX_ANSWER_CHARS:
        raise BadInput(f"answer is longer than {MAX_ANSWER_CHARS} characters")
    if question is not None:
        check_text(question, "question")
    if not isinstance(citations, list) or not citations:
        raise BadInput("citations must list at least one {path, quote}: the sentences the answer relied on")
    if len(citations) > MAX_CITATIONS:
        raise BadInput(f"at most {MAX_CITATIONS} citations in one call, not {len(citations)}")
    out = []
    for i, c in enumerate(citations, 1):
        if not isinstance(c, dict) or not isinstance(c.get("path"), str) or not isinstance(c.get("quote"), str):
            raise BadInput(f"citation {i} must be an object with a string path and a string quote")
        path, quote = c["path"], c["quote"]
        check_path(path, for_write=False)
        check_text(quote, "quote")
        if not quote.strip():
            raise BadInput(f"citation {i}'s quote is empty")
        if len(quote) > MAX_QUOTE_CHARS:
            raise BadInput(f"citation {i}'s quote is longer than {MAX_QUOTE_CHARS} characters")
        out.append((path, quote))
    return out
