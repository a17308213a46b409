"""`cortex eval`: retrieval and ask figures on the public sample brain in eval/.

Retrieval: recall@1/5/10 and MRR of brain_search's default results against each
question's gold notes (a hit is any gold note; a multi-note question counts at
k only when all its gold notes are in the top k). Ask, twice: with the offline
reader, with the model reader (`AnthropicReader`, the real `anthropic` SDK)
pointed at a local stub of the Messages API whose "model" picks a passage the way
the offline reader does but sees only the packs it is sent (so the pack, the
budget and the sweep of further packs are what differ), and with the same stub as
the client's own model: the MCP SDK's Python client over real HTTP, answering
brain_ask's sampling requests (`ClientAsks`: one request an ask, no sweep). For each: the stamp
distribution, absent questions stamped NOT IN BRAIN (and VERIFIED), answerable
questions VERIFIED with a gold note cited, and how many cited notes are gold; with the
gold answers (eval/answers.jsonl, `eval_answers`), how many certified answers hold the
fact asked for and how many hold none of it. Then the offline reader on each half of the
split the reader's rules are chosen by (`halves`), and the ideal reader's row: a stub that
quotes the packed gold line holding the fact.

Claims (eval/claims.jsonl, with or without the ask part): each case is a small note, quotes of
it and an answer, by issue 32's items (`CLAIM_ITEMS`): an answer that keeps the quotes' words
but contradicts them (polarity, comparison, ordinal, range, quantifier, roles, column, sign);
one from retired, hidden or unusable text (struck-html, hidden-html, was, superseded-by,
duplicate-key, unusable-folder); a quote as the editor shows the note, or altered (shown,
shown-altered); or a control that must stay VERIFIED (CORRECTED for a `(was: …)`'s current
claim). Each is stamped through `brain_verify` (`Asker.verify`) and counted per class against
the stamp a person reading the note expects, the held-out cases (`split: held-out`) apart.
"""

from __future__ import annotations

import collections
import datetime as dt
import json
import tempfile
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from cortex.app.brain_setup import data_dir
from cortex.app.eval_doubles import ClientAsks, StubMessagesServer, stub_model
from cortex.tools.ask import AskRequest, answer
from cortex.tools.search import SearchRequest, search_notes

if TYPE_CHECKING:  # imported where used: `cortex eval` loads only what its parts need
    import argparse

    from cortex.ask.pack import Pack
    from cortex.ask.question import Question
    from cortex.ask.readers import ReaderReply
    from cortex.brain.brain import Brain
    from cortex.tools.toolset import Tools

__all__ = [
    "EVAL_DAY",
    "ROOT",
    "ask_line",
    "ask_part",
    "attach_meaning",
    "CLAIM_ITEMS",
    "claim_note",
    "claim_path",
    "claim_right",
    "claims_lines",
    "claims_part",
    "fusion_table",
    "halves",
    "held_out_lines",
    "gold_note_line",
    "ideal_line",
    "load",
    "main",
    "near_rows",
    "near_table",
    "retrieval",
]

ROOT = data_dir("eval_data", "eval")  # shipped in the wheel; the repository's eval/ in a clone
# The eval brain's dates are written against this day (see eval/README.md).
EVAL_DAY = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.UTC)


def _brain(files: dict[str, bytes], name: str) -> Brain:
    """A brain of `files` in a fresh bare repository, at the eval's day."""
    from cortex.brain.brain import Brain
    from cortex.store.git import GitStore

    tmp = tempfile.mkdtemp(prefix="cortex-eval-")
    store = GitStore.init(Path(tmp) / f"{name}.git", files, bare=True, message=f"eval: {name}")
    return Brain(store, clock=lambda: EVAL_DAY)


def load(brain_dir: Path, questions: Path) -> tuple[Brain, list[dict[str, Any]]]:
    from cortex.brain.contents_page import render_contents_page
    from cortex.notes.note import parse_note
    from cortex.notes.paths import is_note_path

    files = {p.relative_to(brain_dir).as_posix(): p.read_bytes() for p in sorted(brain_dir.rglob("*.md"))}
    files["INDEX.md"] = render_contents_page(
        {p: parse_note(p, d.decode()) for p, d in files.items() if is_note_path(p)}
    )
    brain = _brain(files, "eval")
    qs = [json.loads(line) for line in questions.read_text().splitlines() if line.strip()]
    return brain, qs


# The issue 32 item each class of eval/claims.jsonl checks, in the order `claims_lines` prints them.
CLAIM_ITEMS = {
    "polarity": 1,
    "comparison": 1,
    "ordinal": 1,
    "range": 1,
    "quantifier": 1,
    "roles": 1,
    "column": 1,
    "sign": 1,
    "struck-html": 2,
    "hidden-html": 2,
    "was": 2,
    "superseded-by": 2,
    "duplicate-key": 2,
    "unusable-folder": 2,
    "shown": 3,
    "shown-altered": 3,
    "words": 4,
    "condition": 4,
    "bound": 4,
    "span": 4,
    "pairing": 4,
    "voice": 4,
    "code": 4,
}
_ITEM_TITLES = {
    1: "claims the answer contradicts",
    2: "retired and hidden text",
    3: "quotes as the editor shows the note",
    4: "what the answer says beyond its quotes (issue 41)",
}


def claim_path(case: dict) -> str:
    """Where a claims case's note sits: its own `path`, else notes/claims/<id>.md."""
    return case.get("path") or f"notes/claims/{case['id']}.md"


def claim_note(case: dict) -> str:
    """A claims case's note: as written when it opens with its own frontmatter, else under `title: <id>`."""
    note = case["note"]
    return note if note.startswith(("---\n", "---\r\n")) else f"---\ntitle: {case['id']}\n---\n{note}"


def claims_part(cases: list[dict[str, Any]]) -> list[tuple[dict[str, Any], str, str]]:
    """(case, stamp, reason) for each case of eval/claims.jsonl, stamped by brain_verify: every
    case's note in one brain at `claim_path`, its answer with its quotes cited. A case whose
    reply offers its units (`verified_answer`) is verified again with those as the answer, as
    case `<id>+units` of class `units`: they must be VERIFIED (or CORRECTED) as they stand."""
    from cortex.ask.asker import Asker
    from cortex.ask.readers import OfflineReader

    files = {claim_path(c): claim_note(c).encode() for c in cases}
    asker = Asker(_brain(files, "claims"), OfflineReader())
    out: list[tuple[dict[str, Any], str, str]] = []
    for c in cases:
        cites = [{"path": claim_path(c), "quote": q} for q in c["quotes"]]
        reply = asker.verify(c["answer"], cites)
        out.append((c, reply["stamp"], reply["stamp_reason"]))
        offered = reply.get("verified_answer")
        if offered:
            again = asker.verify(offered, cites)
            units = {**c, "id": f"{c['id']}+units", "class": "units", "answer": offered, "expected": "VERIFIED"}
            out.append((units, again["stamp"], again["stamp_reason"]))
    return out


def claim_right(case: dict[str, Any], stamp: str) -> bool:
    """Whether a claims case's stamp keeps the promise (issue 63): a wrong answer of items 1 and
    4 is not VERIFIED (UNVERIFIED only where a value conflicts, else BEYOND QUOTES); a faithful
    answer is never refused (VERIFIED, or BEYOND QUOTES in other words); retired and hidden
    text keeps its exact stamp; offered units are VERIFIED (or CORRECTED)."""
    expected = case["expected"]
    if case["class"] == "units":
        return stamp in ("VERIFIED", "CORRECTED")
    if expected in ("VERIFIED", "CORRECTED"):
        return stamp in (expected, "BEYOND QUOTES")
    if CLAIM_ITEMS.get(case["class"]) in (1, 4):
        return stamp not in ("VERIFIED", "CORRECTED")
    return bool(stamp == expected)


def claims_lines(results: list[tuple[dict, str, str]]) -> list[str]:
    """The three figures of the promise, then by issue 32's item: one line a class, one for the
    controls of its classes, then each miss."""
    wrong = [(c, s) for c, s, _ in results if c["class"] not in ("control", "units") and c["expected"] != "VERIFIED"]
    faithful = [(c, s) for c, s, _ in results if c["expected"] in ("VERIFIED", "CORRECTED") and c["class"] != "units"]
    units = [(c, s) for c, s, _ in results if c["class"] == "units"]
    lines = [
        f"claims (eval/claims.jsonl through brain_verify): {len(wrong) + len(faithful)} cases",
        f" wrong answers VERIFIED: {sum(s in ('VERIFIED', 'CORRECTED') for _, s in wrong)} of {len(wrong)}; "
        f"faithful answers UNVERIFIED or SUPERSEDED: {sum(s in ('UNVERIFIED', 'SUPERSEDED') for _, s in faithful)} "
        f"of {len(faithful)}; offered units VERIFIED: {sum(s in ('VERIFIED', 'CORRECTED') for _, s in units)} "
        f"of {len(units)}",
    ]
    item = lambda c: CLAIM_ITEMS.get(c["of"] if c["class"] == "control" else c["class"], 0)  # noqa: E731
    for number in sorted({item(c) for c, _, _ in results if c["class"] != "units"}):
        mine = [r for r in results if item(r[0]) == number and r[0]["class"] != "units"]
        classes = list(dict.fromkeys(c["class"] for c, _, _ in mine if c["class"] != "control")) + ["control"]
        lines.append(f" item {number}, {_ITEM_TITLES.get(number, 'other')}:")
        for klass in classes:
            cases = [(c, stamp) for c, stamp, _ in mine if c["class"] == klass]
            if not cases:
                continue
            right = [c for c, stamp in cases if claim_right(c, stamp)]
            held = [c for c, _ in cases if c.get("split") == "held-out"]
            held_right = [c for c in right if c.get("split") == "held-out"]
            wanted = "/".join(dict.fromkeys(c["expected"] for c, _ in cases))
            if number in (1, 4):
                what = "faithful answers not refused" if klass == "control" else "not VERIFIED"
            else:
                what = f"{'controls ' if klass == 'control' else ''}{wanted}"
            lines.append(
                f"  {klass:<15} {what} {len(right)}/{len(cases)} ({len(right) / len(cases):.0%}); "
                f"held out {len(held_right)}/{len(held)}"
            )
    for c, stamp, why in results:
        if not claim_right(c, stamp):
            lines.append(
                f"  miss {c['id']} {c['class']}{'/' + c['of'] if c.get('of') else ''}: "
                f"{stamp}, expected {c['expected']}: {why}"
            )
    return lines


def attach_meaning(brain: Brain, log: Callable[[str], None] = print) -> str:
    """Embed the eval brain (in worker processes, as the server does) and attach the arm;
    returns the line that says how it went (or why it is off)."""
    import time

    from cortex.meaning.closeness import Meaning
    from cortex.settings import Settings

    settings = Settings.from_env()
    meaning = Meaning(settings.embed_model, settings.model_cache or settings.home / "models", None, "eval", log=log)
    started = time.monotonic()
    if not meaning.prepare():
        return f"meaning: off ({meaning.reason})"
    snap = brain.snapshot()
    meaning.catch_up(snap)
    brain.meaning = meaning
    spent = time.monotonic() - started
    assert meaning.files is not None and meaning.store is not None  # prepared
    return (
        f"meaning: {meaning.files.model_id}, {meaning.store.passages:,} passages of {len(snap.notes)} notes "
        f"embedded in {spent:.1f} s ({meaning.store.passages / spent:.0f} passages/s, model load included)"
    )


def fusion_table(brain: Brain, tools: Tools, groups: dict[str, list[dict[str, Any]]]) -> list[str]:
    """recall@5 of the fusion rules weighed for the meaning arm's ranking (DESIGN.md, "Meaning"),
    on each half of each question set (even lines chose the rule in use; odd lines are held out)."""
    import numpy as np

    from cortex.index import ranking
    from cortex.index.bm25 import idf
    from cortex.index.snapshot import is_live
    from cortex.index.tokenize import tokenize

    snap, corpus, meaning = brain.snapshot(), brain.corpus, brain.meaning
    assert meaning is not None, "the fusion table needs the meaning arm"
    day = EVAL_DAY.date()
    live = {p for p, n in snap.notes.items() if is_live(n, day) and not p.startswith("archive/")}

    def rules(q: dict) -> dict[str, list[str]]:
        found = corpus.search(snap, q["question"], 50, live.__contains__)
        lex = [p for p, _ in found.hits]
        lex_score = dict(found.hits)
        close = meaning.closeness(snap, q["question"])
        cos = {p: c for p, c in close.by_note().items() if p in live} if close is not None else {}
        dense = sorted(cos, key=lambda p: (-cos[p], p))
        dr = {p: i for i, p in enumerate(dense)}
        lr = {p: i for i, p in enumerate(lex)}
        terms = {}
        for t in set(tokenize(q["question"])):
            holders = corpus.matching(snap, {t})
            if holders:
                terms[t] = (idf(len(snap.notes), len(holders)), holders)
        top = max(lex_score.values(), default=1.0) or 1.0

        def by(score: Callable[[str], float]) -> list[str]:
            return sorted(cos, key=lambda p: (-score(p), p))

        def rare(p: str) -> int:
            return sum(1 for _, h in terms.values() if len(h) <= ranking.RARE_DF and p in h)

        return {
            "BM25 alone": lex,
            "dense alone": dense,
            "RRF k=60": by(lambda p: ranking.rrf((dr.get(p), lr.get(p)))),
            "RRF k=10, dense x2": by(lambda p: 2 / (11 + dr[p]) + (1 / (11 + lr[p]) if p in lr else 0)),
            "blend 0.6 cos + 0.4 BM25/max": by(lambda p: 0.6 * cos[p] + 0.4 * lex_score.get(p, 0.0) / top),
            "blend 0.8 cos + 0.2 BM25/max": by(lambda p: 0.8 * cos[p] + 0.2 * lex_score.get(p, 0.0) / top),
            "dense + rare-term boost 0.1": by(lambda p: cos[p] + 0.1 * rare(p)),
            # brain_search itself: names first, then cos + 0.3 covered^2 + 0.03 rare terms
            "in use (brain_search)": [
                h["path"] for h in search_notes(tools, SearchRequest(query=q["question"], k=10))["hits"]
            ],
        }

    def hit(q: dict, ranked: list[str]) -> bool:
        top5, gold = set(ranked[:5]), set(q["gold"])
        return gold <= top5 if q.get("kind") == "multi" else bool(gold & top5)

    names: list[str] = []
    cells: dict[tuple[str, str], list[bool]] = {}
    for label, qs in groups.items():
        for i, q in enumerate(qs, 1):
            if not q["gold"]:
                continue
            half = f"{label} {'even' if i % 2 == 0 else 'odd'}"
            for name, ranked in rules(q).items():
                if name not in names:
                    names.append(name)
                cells.setdefault((name, half), []).append(hit(q, ranked))
    halves = [f"{label} {h}" for label in groups for h in ("even", "odd")]
    rows = ["fusion (recall@5)".ljust(42) + "".join(h.rjust(16) for h in halves)]
    for name in names:
        rows.append(name.ljust(42) + "".join(f"{np.mean(cells[(name, h)]):16.3f}" for h in halves))
    return rows


def retrieval(tools: Tools, qs: list[dict[str, Any]]) -> dict[str, Any]:
    ks = (1, 5, 10)
    hits = {k: 0 for k in ks}
    rr = 0.0
    scored = [q for q in qs if q["gold"]]
    for q in scored:
        request = SearchRequest(query=q["question"], k=10, prefix=q.get("prefix"))
        ranked = [h["path"] for h in search_notes(tools, request)["hits"]]
        gold = set(q["gold"])
        need_all = q.get("kind") == "multi"
        for k in ks:
            top = set(ranked[:k])
            if (gold <= top) if need_all else bool(gold & top):
                hits[k] += 1
        rank = next((i + 1 for i, p in enumerate(ranked) if p in gold), None)
        rr += 1 / rank if rank else 0
    n = len(scored)
    return {"questions": n, **{f"recall@{k}": hits[k] / n for k in ks}, "MRR": rr / n}


class Asks(Protocol):
    """What `ask_part` asks: brain_ask in-process (`Asking`), or the replies a client's model gave over MCP."""

    def ask(self, question: str) -> Mapping[str, Any]: ...


class Asking:
    """brain_ask in-process, on the owner's door."""

    def __init__(self, tools: Tools):
        self.tools = tools

    def ask(self, question: str) -> Mapping[str, Any]:
        return answer(self.tools, AskRequest(question=question))


class Answered:
    """Replies already had, asked for by question (`ask_part` over `ClientAsks`' replies)."""

    def __init__(self, replies: dict[str, dict[str, Any]]):
        self.replies = replies

    def ask(self, question: str) -> dict[str, Any]:
        return self.replies[question]


def ask_part(
    tools: Asks,
    qs: list[dict[str, Any]],
    answers: dict[str, Any] | None = None,
    notes: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """Stamp figures of brain_ask over `qs` (absent questions have no gold).

    With the gold `answers` (eval_answers.load_answers) and the snapshot's `notes`, also how
    many answerable questions got a certified answer that holds the fact asked for (right),
    one that does not (wrong VERIFIED: VERIFIED or CORRECTED, the fact in no quote), NOT IN
    BRAIN, and a miss whose leads name a gold note. Half of a two-part answer is neither right
    nor wrong."""
    from cortex.app.eval_answers import CERTIFIED, certified_quotes, held_groups

    stamps: collections.Counter[str] = collections.Counter()
    cited, cited_gold = 0, 0
    quotes, quotes_gold = 0, 0
    verified_gold = 0
    absent_nib = 0
    right, wrong, answerable_nib, facts, led = 0, 0, 0, 0, 0
    absent_stamps: collections.Counter = collections.Counter()
    for q in qs:
        r = tools.ask(q["question"])
        stamps[str(r["stamp"])] += 1
        if not q["gold"]:
            absent_nib += r["stamp"] == "NOT IN BRAIN"
            absent_stamps[str(r["stamp"])] += 1
            continue
        answerable_nib += r["stamp"] == "NOT IN BRAIN"
        led += bool({x["path"] for x in r.get("leads", ())} & set(q["gold"]))
        entry = (answers or {}).get(q.get("id", ""))
        if entry is not None and notes is not None:
            facts += 1
            if r["stamp"] in CERTIFIED:
                held = held_groups(entry, certified_quotes(r, notes))
                right += held == len(entry["answer"])
                wrong += held == 0
        paths = {x["path"] for x in r["quotes"] if x.get("path")}
        quotes += len(paths)
        quotes_gold += len(paths & set(q["gold"]))
        if paths:
            cited += 1
            cited_gold += bool(paths & set(q["gold"]))
        verified_gold += r["stamp"] == "VERIFIED" and bool(paths & set(q["gold"]))
    absent = sum(1 for q in qs if not q["gold"])
    answerable = len(qs) - absent
    return {
        "stamps": dict(stamps.most_common()),
        "answers_citing_a_gold_note": f"{cited_gold}/{cited}",
        "cited_notes_that_are_gold": f"{quotes_gold}/{quotes}",
        "cited_gold_share": quotes_gold / quotes if quotes else 0.0,
        "absent_questions_stamped_not_in_brain": f"{absent_nib}/{absent}",
        "absent_nib_share": absent_nib / absent if absent else 0.0,
        "absent_verified": absent_stamps["VERIFIED"],
        "absent_corrected": absent_stamps["CORRECTED"],
        "answerable_verified_with_gold": f"{verified_gold}/{answerable}",
        "answerable_verified_gold_share": verified_gold / answerable if answerable else 0.0,
        "answerable_not_in_brain": answerable_nib,
        "answerable_led_to_gold": led,
        "answerable": answerable,
        **({"right": right, "wrong_verified": wrong, "with_facts": facts} if facts else {}),
    }


def ask_line(label: str, a: dict) -> str:
    facts = (
        f"; answerable right (certified, holding the gold fact) {a['right']}/{a['with_facts']} "
        f"({a['right'] / a['with_facts']:.0%}), wrong VERIFIED {a['wrong_verified']}/{a['with_facts']} "
        f"({a['wrong_verified'] / a['with_facts']:.1%}), answerable NOT IN BRAIN {a['answerable_not_in_brain']}, "
        f"not answered but led to a gold note {a['answerable_led_to_gold']}"
        if a.get("with_facts")
        else ""
    )
    return (
        f"ask ({label}): absent NOT IN BRAIN {a['absent_questions_stamped_not_in_brain']} "
        f"({a['absent_nib_share']:.0%}), absent VERIFIED {a['absent_verified']} "
        f"(CORRECTED {a['absent_corrected']}); "
        f"answerable VERIFIED citing a gold note {a['answerable_verified_with_gold']} "
        f"({a['answerable_verified_gold_share']:.0%}){facts}; cited notes that are gold "
        f"{a['cited_notes_that_are_gold']} ({a['cited_gold_share']:.0%}); answers citing a gold "
        f"note {a['answers_citing_a_gold_note']}; stamps {a['stamps']}"
    )


def ideal_line(brain: Brain, qs: list[dict[str, Any]], answers: dict[str, Any]) -> str:
    """The ideal reader's row: how often the packs a model reader is given hold a gold
    note's line with the gold fact, and how often that line, quoted verbatim, is VERIFIED."""
    from cortex.app.eval_answers import IdealReader
    from cortex.ask.asker import Asker
    from cortex.tools.toolset import Tools

    gold = {q["question"]: (q["gold"], answers[q["id"]]) for q in qs if q["gold"] and q.get("id") in answers}
    reader = IdealReader(gold)
    tools = Tools(brain, Asker(brain, reader))
    stamps: collections.Counter = collections.Counter()
    for question in gold:
        r = answer(tools, AskRequest(question=question))
        if question in reader.found:
            stamps[str(r["stamp"])] += 1
    held, n = len(reader.found), len(gold)
    return (
        f"ask (ideal reader: quotes the packed gold line holding the gold fact): the packs held one for "
        f"{held}/{n} ({held / n:.0%}); its quote VERIFIED {stamps['VERIFIED']}/{held} "
        f"({stamps['VERIFIED'] / held if held else 0:.0%}), stamps {dict(stamps.most_common())}"
    )


class _GoldNoteReader:
    """A stub model reader for questions without gold answers (eval/reworded.jsonl): it notes
    whether the first pack it is given holds a gold note (whole or in part) and its size, and
    answers nothing."""

    name = "gold-note-eval-stub"
    reads_all = False

    def __init__(self, gold: dict[str, list[str]]):
        self.gold = gold
        self.found: set[str] = set()
        self.sizes: list[int] = []

    def read(self, question: str | Question, pack: Pack) -> ReaderReply:
        question = question if isinstance(question, str) else question.text
        from cortex.ask.readers import ReaderReply

        self.sizes.append(sum(len(f.text.encode("utf-8")) for f in pack.files))
        if set(pack.paths) & set(self.gold.get(question, ())):
            self.found.add(question)
        reply = ReaderReply(reader=self.name)
        reply.not_in_brain, reply.answer = True, "The notes read do not answer this."
        return reply


def gold_note_line(brain: Brain, qs: list[dict[str, Any]]) -> str:
    """The ideal reader's row where no gold answer is written (reworded.jsonl): how often a
    model reader's first pack holds a gold note, and the packs' mean size."""
    from cortex.ask.asker import Asker
    from cortex.tools.toolset import Tools

    reader = _GoldNoteReader({q["question"]: q["gold"] for q in qs if q["gold"]})
    tools = Tools(brain, Asker(brain, reader, sweep=0))
    for question in reader.gold:
        answer(tools, AskRequest(question=question))
    held, n = len(reader.found), len(reader.gold)
    mean = sum(reader.sizes) / len(reader.sizes) if reader.sizes else 0
    return (
        f"ask (ideal reader's pack, no gold answers: a model reader's first pack holds a gold note): "
        f"{held}/{n} ({held / n if n else 0:.0%}); mean pack {mean:,.0f} bytes"
    )


def held_out_lines(
    brain: Brain, qs: list[dict[str, Any]], answers: dict[str, Any], tools: Tools | None = None
) -> list[str]:
    """The offline reader's and the ideal reader's rows on each half of the split (`halves`);
    `tools`: the offline reader's, when the caller has them (their answers are cached)."""
    from cortex.ask.asker import Asker
    from cortex.ask.readers import OfflineReader
    from cortex.tools.toolset import Tools

    tools = tools or Tools(brain, Asker(brain, OfflineReader()))
    notes = brain.snapshot().notes
    rows = []
    for label, half in zip(("even half (chosen on)", "odd half (held out)"), halves(qs), strict=True):
        rows.append(ask_line(f"offline reader, {label}", ask_part(Asking(tools), half, answers, notes)))
        rows.append(f"  {label}: {ideal_line(brain, half, answers)}")
    return rows


def main(args: argparse.Namespace) -> int:
    """`cortex eval`: retrieval figures, then (unless --no-ask) the ask figures of each reader."""
    from cortex.ask.asker import Asker
    from cortex.ask.readers import OfflineReader
    from cortex.tools.toolset import Tools

    brain_dir = Path(args.brain_dir) if args.brain_dir else ROOT / "brain"
    questions = Path(args.questions) if args.questions else ROOT / "questions.jsonl"
    brain, qs = load(brain_dir, questions)
    tools = Tools(brain, Asker(brain, OfflineReader()))
    reworded_file = ROOT / "reworded.jsonl"
    reworded = (
        [json.loads(line) for line in reworded_file.read_text().splitlines() if line.strip()]
        if not args.questions and reworded_file.exists()
        else []
    )
    _retrieval_lines(brain, tools, qs, reworded)
    claims_file = ROOT / "claims.jsonl"
    if claims_file.exists():
        cases = [json.loads(line) for line in claims_file.read_text().splitlines() if line.strip()]
        print("\n".join(claims_lines(claims_part(cases))))
    if not getattr(args, "no_ask", False):
        _ask_lines(brain, tools, qs, reworded, questions.parent / "answers.jsonl")
    return 0


def _retrieval_lines(brain: Brain, tools: Tools, qs: list[dict[str, Any]], reworded: list[dict[str, Any]]) -> None:
    """The retrieval figures: lexical only, then with the meaning arm (unless off), by kind of
    question, on the reworded set, and the fusion rules weighed."""
    from cortex.settings import Settings

    by_kind = collections.Counter(q.get("kind", "?") for q in qs)
    print(f"eval brain: {len(brain.snapshot().notes)} notes; {len(qs)} questions {dict(by_kind)}")
    lexical = retrieval(tools, qs)
    print(
        "lexical only (CORTEX_MEANING=off): "
        + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in lexical.items())
        + (f"; reworded recall@5 {retrieval(tools, reworded)['recall@5']:.3f}" if reworded else "")
    )
    if (Settings.from_env().meaning or "on") != "off":
        print(attach_meaning(brain))
    r = retrieval(tools, qs)
    print(
        "retrieval (brain_search, default filters): "
        + ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in r.items())
    )
    for kind in sorted(by_kind):
        sub = [q for q in qs if q.get("kind") == kind and q["gold"]]
        if sub:
            rk = retrieval(tools, sub)
            print(
                f"  {kind:<11} n={rk['questions']:<4} recall@1 {rk['recall@1']:.3f}  recall@5 "
                f"{rk['recall@5']:.3f}  recall@10 {rk['recall@10']:.3f}  MRR {rk['MRR']:.3f}"
            )
    if reworded:
        # The reworded set, kept apart so the figures above stay comparable from one run to the next.
        rk = retrieval(tools, reworded)
        print(
            f"reworded (no content word shared with the gold note; eval/reworded.jsonl) n={rk['questions']}  "
            f"recall@1 {rk['recall@1']:.3f}  recall@5 {rk['recall@5']:.3f}  recall@10 {rk['recall@10']:.3f}  "
            f"MRR {rk['MRR']:.3f}"
        )
    if brain.meaning is not None:
        print("\n".join(fusion_table(brain, tools, {"questions": qs, **({"reworded": reworded} if reworded else {})})))
    _chats_and_coverage_lines(brain, tools, qs, reworded)


def _chats_and_coverage_lines(
    brain: Brain, tools: Tools, qs: list[dict[str, Any]], reworded: list[dict[str, Any]]
) -> None:
    """The chats set (eval/chats/) by words alone and with meaning, then recall@5 at each
    coverage of meaning against words alone, on every set (`eval_chats`)."""
    from cortex.app.eval_chats import chats_brain, coverage_line
    from cortex.ask.asker import Asker
    from cortex.ask.readers import OfflineReader
    from cortex.tools.toolset import Tools

    chats = None
    if (ROOT / "chats" / "haystacks.json").exists():
        chats, chat_qs = chats_brain(ROOT / "chats", _brain)
        chat_tools = Tools(chats, Asker(chats, OfflineReader()))
        kinds = collections.Counter(q["kind"] for q in chat_qs)
        lexical = retrieval(chat_tools, chat_qs)
        stacks = len({q["prefix"] for q in chat_qs})
        line = f"chats (eval/chats: {len(chats.snapshot().notes)} sessions in {stacks} haystacks, "
        line += f"{len(chat_qs)} questions {dict(kinds)}, each searched in its haystack): words alone "
        line += " ".join(f"{k} {v:.3f}" for k, v in lexical.items() if k != "questions")
        if brain.meaning is not None:
            print(attach_meaning(chats, log=lambda _: None).replace("meaning:", "  chats meaning:", 1))
            line += "; with meaning " + " ".join(
                f"{k} {v:.3f}" for k, v in retrieval(chat_tools, chat_qs).items() if k != "questions"
            )
        print(line)
    if brain.meaning is None:
        return
    print("coverage of meaning (recall@5 with meaning on a share of the notes, as a first embed leaves it):")

    def recall(t: Tools, part: list[dict[str, Any]]) -> float:
        return float(retrieval(t, part)["recall@5"])

    print(coverage_line("questions", brain, tools, qs, recall))
    if reworded:
        print(coverage_line("reworded", brain, tools, reworded, recall))
    if chats is not None and chats.meaning is not None:
        print(coverage_line("chats", chats, chat_tools, chat_qs, recall))


def _ask_lines(
    brain: Brain, tools: Tools, qs: list[dict[str, Any]], reworded: list[dict[str, Any]], answers_file: Path
) -> None:
    """The ask figures: the offline reader, a model reader (a stub model over the real SDK),
    and the client's own model through MCP sampling (the same stub)."""
    from cortex.app.eval_answers import load_answers
    from cortex.ask.asker import Asker
    from cortex.ask.readers import AnthropicReader, OfflineReader
    from cortex.tools.toolset import Tools

    answers = load_answers(answers_file)
    notes = brain.snapshot().notes
    print(ask_line("offline reader", ask_part(Asking(tools), qs, answers, notes)))
    if answers:
        print("\n".join(held_out_lines(brain, qs, answers, tools)))
    if reworded:
        print(ask_line("offline reader, reworded", ask_part(Asking(tools), reworded)))
        for label, half in zip(("even half (chosen on)", "odd half (held out)"), halves(reworded), strict=True):
            print(f"  reworded, {label}: {gold_note_line(brain, half)}")
    model_asker = Asker(brain, OfflineReader())  # replaced below, once the stub runs
    stub = StubMessagesServer(lambda body: (500, {}))
    try:
        model_asker.reader = AnthropicReader("stub-model", "eval-key-not-real", timeout=30.0, base_url=stub.url)
        stub.respond = stub_model(brain)
        print(ask_line("model reader, stub model", ask_part(Asking(Tools(brain, model_asker)), qs, answers, notes)))
        model_asker.sweep, model_asker.cache = 0, type(model_asker.cache)()
        print(ask_line("model reader, stub model, CORTEX_ASK_SWEEP=0", ask_part(Asking(Tools(brain, model_asker)), qs)))
    finally:
        stub.close()
    client = ClientAsks(brain)
    try:
        replies = client.ask_all([q["question"] for q in qs])
    finally:
        client.close()
    answered = dict(zip((q["question"] for q in qs), replies, strict=True))
    readers = collections.Counter(r["reader"].split("/")[0] for r in replies)
    print(
        ask_line(
            f"client's model through MCP sampling, stub model; {client.requests} sampling requests, "
            f"readers {dict(readers)}",
            ask_part(Answered(answered), qs, answers, notes),
        )
    )
    if answers:
        print(ideal_line(brain, qs, answers))


def halves(qs: list[dict]) -> tuple[list[dict], list[dict]]:
    """The fixed split used to choose the offline reader's rules: (even lines, odd lines).

    Lines are counted from 1 in questions.jsonl. The offline reader's recall tuning chose on
    the even half and held the odd half out; both are reported with the choice.
    """
    return [q for i, q in enumerate(qs, 1) if i % 2 == 0], [q for i, q in enumerate(qs, 1) if i % 2 == 1]


def near_rows(brain: Brain, qs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per question: its half, whether it is absent, whether the offline reader quoted nothing,
    and how near the scope's closest passages come by words (`leads.by_words`, unpruned) and
    by meaning (None without the arm): what NOT IN BRAIN's two bars are chosen from."""
    from cortex.ask.asker import Asker, evidence, usable
    from cortex.ask.leads import by_words
    from cortex.ask.question import owner_words, read_question
    from cortex.ask.readers import OfflineReader
    from cortex.tools.toolset import Tools

    tools, snap = Tools(brain, Asker(brain, OfflineReader())), brain.snapshot()
    allowed = {p for p in snap.notes if usable(snap, p, brain.today(), False)}
    even = {id(q) for q in halves(qs)[0]}
    rows = []
    for q in qs:
        question = read_question(q["question"], owner_words(snap))
        _, weights, holders, _ = evidence(brain, snap, question, allowed)
        notes = {p: snap.notes[p] for p in set().union(*holders.values()) & allowed} if holders else {}
        leads = by_words(question, weights, holders, notes, bar=0.0)
        close = brain.meaning.closeness(snap, q["question"], sorted(allowed)) if brain.meaning is not None else None
        nearest = close.closest() if close is not None else None
        rows.append(
            {
                "even": id(q) in even,
                "absent": not q["gold"],
                "missed": not answer(tools, AskRequest(question=q["question"]))["quotes"],
                "words": leads[0].words if leads else 0.0,
                "cosine": nearest[1] if nearest else None,
            }
        )
    return rows


def near_table(rows: list[dict], pairs: list[tuple[float, float]]) -> list[str]:
    """For each (words bar, cosine bar): on each half, the absent questions that would stay NOT IN
    BRAIN and the answerable ones the reader missed that would be NOT IN BRAIN."""
    out = ["words  cosine   even: absent NIB, answerable NIB   odd: absent NIB, answerable NIB"]
    for w, c in pairs:
        cells = []
        for even in (True, False):
            half = [r for r in rows if r["even"] == even]
            far = [r for r in half if r["missed"] and r["words"] < w and (r["cosine"] is None or r["cosine"] < c)]
            absent = sum(r["absent"] for r in half)
            cells.append(f"{sum(r['absent'] for r in far)}/{absent}, {sum(not r['absent'] for r in far)}")
        out.append(f"{w:<6.2f} {c:<6.2f}   {cells[0]:>20}   {cells[1]:>26}")
    return out


if __name__ == "__main__":  # python3 -m cortex.app.evaluate --held-out | --near: DESIGN.md (Stamps, Who reads)
    import sys

    from cortex.app.eval_answers import load_answers
    from cortex.settings import Settings

    if sys.argv[1:] in (["--held-out"], ["--near"]):  # meaning on, unless CORTEX_MEANING=off
        brain, qs = load(ROOT / "brain", ROOT / "questions.jsonl")
        if (Settings.from_env().meaning or "on") != "off":
            print(attach_meaning(brain, log=lambda *a: None))
        if sys.argv[1:] == ["--held-out"]:
            print("\n".join(held_out_lines(brain, qs, load_answers(ROOT / "answers.jsonl"))))
        else:
            words = (0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.5, 0.57, 1.01)
            grid = [(w, c) for w in words for c in (0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 1.01)]
            reworded = [json.loads(line) for line in (ROOT / "reworded.jsonl").read_text().splitlines() if line]
            # Both sets' answerable questions count: a reworded one is in the brain in other words.
            print("\n".join(near_table(near_rows(brain, qs) + near_rows(brain, reworded), grid)))
