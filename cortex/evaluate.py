"""`cortex eval`: retrieval and ask figures on the public sample brain in eval/.

Retrieval: recall@1/5/10 and MRR of brain_search's default results against each
question's gold notes (a hit is any gold note; a multi-note question counts at
k only when all its gold notes are in the top k). Ask: the offline reader's
stamp distribution and how often a cited note is a gold note.
"""

from __future__ import annotations

import collections
import datetime as dt
import json
import tempfile
from pathlib import Path

from .brains import data_dir

ROOT = data_dir("eval_data", "eval")  # shipped in the wheel; the repository's eval/ in a clone
# The eval brain's dates are written against this day (see eval/README.md).
EVAL_DAY = dt.datetime(2026, 11, 30, 12, 0, tzinfo=dt.timezone.utc)


def load(brain_dir: Path, questions: Path):
    from .brain import Brain, render_index
    from .corpus import is_note_path
    from .gitstore import GitStore
    from .notes import parse_note

    files = {p.relative_to(brain_dir).as_posix(): p.read_bytes() for p in sorted(brain_dir.rglob("*.md"))}
    files["INDEX.md"] = render_index({p: parse_note(p, d.decode()) for p, d in files.items() if is_note_path(p)})
    tmp = tempfile.mkdtemp(prefix="cortex-eval-")
    store = GitStore.init(Path(tmp) / "eval.git", files, bare=True, message="eval: sample brain")
    brain = Brain(store, clock=lambda: EVAL_DAY)
    qs = [json.loads(line) for line in questions.read_text().splitlines() if line.strip()]
    return brain, qs


def retrieval(tools, qs) -> dict:
    ks = (1, 5, 10)
    hits = {k: 0 for k in ks}
    rr = 0.0
    scored = [q for q in qs if q["gold"]]
    for q in scored:
        ranked = [h["path"] for h in tools.search(q["question"], k=10)["hits"]]
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


def ask_part(tools, qs) -> dict:
    stamps = collections.Counter()
    cited, cited_gold = 0, 0
    quotes, quotes_gold = 0, 0
    absent_nib = 0
    for q in qs:
        r = tools.ask(q["question"])
        stamps[r["stamp"]] += 1
        if not q["gold"]:
            absent_nib += r["stamp"] == "NOT IN BRAIN"
            continue
        paths = {x["path"] for x in r["quotes"] if x.get("path")}
        quotes += len(paths)
        quotes_gold += len(paths & set(q["gold"]))
        if paths:
            cited += 1
            cited_gold += bool(paths & set(q["gold"]))
    absent = sum(1 for q in qs if not q["gold"])
    return {"stamps": dict(stamps.most_common()),
            "answers_citing_a_gold_note": f"{cited_gold}/{cited}",
            "cited_notes_that_are_gold": f"{quotes_gold}/{quotes}",
            "absent_questions_stamped_not_in_brain": f"{absent_nib}/{absent}"}


def main(args) -> int:
    from .ask import Asker
    from .readers import OfflineReader
    from .tools import Tools

    brain_dir = Path(args.brain_dir) if args.brain_dir else ROOT / "brain"
    questions = Path(args.questions) if args.questions else ROOT / "questions.jsonl"
    brain, qs = load(brain_dir, questions)
    tools = Tools(brain, Asker(brain, OfflineReader()))
    by_kind = collections.Counter(q.get("kind", "?") for q in qs)
    print(f"eval brain: {len(brain.snapshot().notes)} notes; {len(qs)} questions {dict(by_kind)}")
    r = retrieval(tools, qs)
    print("retrieval (brain_search, default filters): " +
          ", ".join(f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}" for k, v in r.items()))
    for kind in sorted(by_kind):
        sub = [q for q in qs if q.get("kind") == kind and q["gold"]]
        if sub:
            rk = retrieval(tools, sub)
            print(f"  {kind:<11} n={rk['questions']:<4} recall@1 {rk['recall@1']:.3f}  recall@5 "
                  f"{rk['recall@5']:.3f}  recall@10 {rk['recall@10']:.3f}  MRR {rk['MRR']:.3f}")
    if not getattr(args, "no_ask", False):
        a = ask_part(tools, qs)
        print(f"ask (offline reader): stamps {a['stamps']}; answers citing a gold note "
              f"{a['answers_citing_a_gold_note']}; cited notes that are gold {a['cited_notes_that_are_gold']}; absent questions stamped NOT IN BRAIN "
              f"{a['absent_questions_stamped_not_in_brain']}")
    return 0
