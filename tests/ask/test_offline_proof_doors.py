"""The offline reader answers only what it can prove (issue 41, item 3), through a real server.

No model key, so the offline reader answers: a question whose words a note holds only in a
link's address, in a stand-in for the thing, in someone else's thing, in a definition, a
rule, a side remark or retired text, or that two notes answer differently, is never VERIFIED; it is a miss that names the passage as a lead, for the client's own model
to read. The notes that do say it are still quoted and VERIFIED.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from serverkit import call, serve

pytestmark = pytest.mark.slow  # a server and a dozen writes

NOTES = {
    "notes/reading.md": "# Reading\n\n- Saved [a long read](https://example.org/my-tyre-pressure-guide) for the "
    "train, 12 pages.\n",
    "notes/family.md": "# Family\n\n- [[Anna]]'s shoe size is 38; she wants boots for her birthday.\n",
    "notes/biology.md": "# Biology course\n\nBlood type is a classification of blood by the antigens on red cells.\n",
    "notes/tax.md": "# Tax return\n\n- [ ] Export the bank statements for their accountant in CSV format.\n",
    "projects/german-b2.md": "# German B2 exam\n\n- [ ] Do one full mock exam per month from December.\n"
    "- The exam is on 13 March 2027 at the Goethe-Institut.\n",
    "notes/bees.md": "# Bees\n\n1. Clear supers with clearer boards 48 hours before.\n"
    "2. I own 11 supers, 6 of them drawn.\n",
    "notes/health.md": "# Health\n\n- My GP is Dr Mira Holt, Lindenstrasse 4.\n",
    # This session's classes: a rule, a glossary, someone else, a parenthesis, retired text,
    # a measure's units, the kind before another thing, two notes that disagree.
    "projects/apiary.md": "# Apiary\n\n- Cap at five hives on plot 23; the committee allows six.\n",
    "notes/glossary.md": "# Glossary\n\n- **Cholesterol**: a waxy fat carried in the blood by lipoproteins.\n",
    "people/erik.md": "# Erik\n\n- Nora, born 2019 — birthday 9 February\n",
    "notes/car.md": "# Car\n\n- MOT rebooked to 26 November (the 19th clashed with the late shift)\n",
    "work/offsite.md": "# Offsite\n\nThe offsite is in Braga on 3 June (was: Porto, 2 June).\n",
    "recipes/flapjack.md": "# Flapjack\n\nFlapjack: 200 g oats and 90 g butter, bake until golden.\n",
    "notes/bike.md": "# My bike\n\n- Lock: Abus Bordo folding lock with a cable.\n",
    "log/2026-10-08.md": "# 8 October\n\n- Booked the dentist appointment for 2 November.\n",
    "health/dentist.md": "# Dentist\n\n## Next appointment\nMoved to 3 November (was: 2 November).\n",
}
UNPROVEN = {  # each shares words with one note, which does not say it: (the note, how)
    "What is my tyre pressure?": ("notes/reading.md", "only inside a link's address"),
    "What is my shoe size?": ("notes/family.md", "someone else's"),
    "What is my blood type?": ("notes/biology.md", "a definition"),
    "Who is my accountant?": ("notes/tax.md", "their accountant"),
    "Where are my hives?": ("projects/apiary.md", "a rule, not where they are"),
    "What is my cholesterol?": ("notes/glossary.md", "a glossary's entry"),
    "When is Erik's birthday?": ("people/erik.md", "someone else opens the sentence"),
    "When is my late shift?": ("notes/car.md", "only in a parenthesis"),
    "When is the offsite in Porto?": ("work/offsite.md", "only in the old wording"),
    "What temperature do I bake the flapjack at?": ("recipes/flapjack.md", "grams, not degrees"),
    "What folding bike do I own?": ("notes/bike.md", "a folding lock"),
    "When is my dentist appointment?": ("log/2026-10-08.md", "two notes give two dates"),
}
PROVEN = {  # the sentence that says it, and a word of its answer
    "When is the German B2 exam?": "13 March 2027",
    "How many supers do I own?": "11 supers",
    "Who is my GP?": "Dr Mira Holt",
}


def test_the_offline_reader_verifies_only_what_one_sentence_proves(tmp_path: Path, brain_path: Path) -> None:
    with serve(tmp_path, brain_path) as running:
        url = f"{running.url}/mcp"
        for path, text in NOTES.items():
            assert call(url, "brain_write", path=path, mode="create", content=text).error is None
        for question, (note, why) in UNPROVEN.items():
            reply = call(url, "brain_ask", question=question)
            assert reply.error is None, reply.error
            r = reply.data
            assert r["stamp"] == "UNVERIFIED", (question, why, r)
            assert r["stamp_reason"].startswith("not found in your notes: "), r["stamp_reason"]
            assert note in [lead["path"] for lead in r["leads"]], (question, r["leads"])
        for question, said in PROVEN.items():
            r = call(url, "brain_ask", question=question).data
            assert r["stamp"] == "VERIFIED", (question, r["stamp_reason"])
            assert said in r["quotes"][0]["quote"], (question, r["quotes"])
