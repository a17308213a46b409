"""What one sentence must hold before the offline reader answers (cortex.ask.proof): pure, no I/O.

Each rule is shown failing on the shape it guards against and holding on its faithful twin.
"""

from __future__ import annotations

import pytest

from cortex.ask.pack import variants
from cortex.ask.proof import disagree, personal, proving_sentence
from cortex.ask.question import expects, focus_terms
from cortex.notes.shown import visible

OWNER = {"nils", "ambry"}


def _proves(question: str, quote: str, names: tuple[str, ...] = ()) -> str | None:
    focus = focus_terms(question, OWNER)
    forms = {t: variants(t) for t in focus}
    return proving_sentence(
        question, quote, focus=focus, forms=forms, names=names, wants=expects(question), owner=OWNER
    )


def test_visible_text_leaves_out_link_targets_paths_comments_and_tags() -> None:
    assert visible("See [the guide](https://x.org/tyre-pressure) now") == "See the guide now"
    assert "blood" not in visible("![scan](img/blood_type.png) and ![[blood type.png]]")
    assert "pressure" not in visible("a <!-- tyre pressure --> b %%pressure%% c <span title='pressure'>d</span>")
    assert visible("[[people/anna|Anna]] and [[Jonas]]") == "Anna and Jonas"
    assert visible("https://example.org/pressure") == "https://example.org/pressure"  # shown as written


@pytest.mark.parametrize(
    ("question", "quote", "names", "proves"),
    [
        # Every focus term the names do not give, in one sentence, and the value with them.
        (
            "How many vans does the Harbourline nightly solver plan?",
            "The nightly solver ran twice and wrote two plans. 9 vans left late.",
            ("Harbourline incident",),
            False,
        ),
        (
            "How many vans does the Harbourline nightly solver plan?",
            "The nightly solver plans 41 vans. It ran twice.",
            ("Harbourline",),
            True,
        ),
        # A key word only inside a link's address is not in the note as its owner reads it.
        ("What is my tyre pressure?", "Read [this guide](https://example.org/tyre-pressure): 4 bar.", (), False),
        ("What is my tyre pressure?", "Tyre pressure: 4.5 bar front, 5 bar rear.", (), True),
        # A count of the things asked, not an amount of something else.
        ("How many supers does Nils own?", "Clear supers with clearer boards 48 hours before.", (), False),
        ("How many supers does Nils own?", "Nils owns 11 supers.", (), True),
        # A count of the things in a state is no count of those held.
        ("How many kayaks do I own?", "Kayaks out: 2, on loan to the club.", (), False),
        ("How many chairs do we have?", "Chairs needed: 12, for the party.", (), False),
        ("How many hives does Ana keep?", "Ana keeps 9 hives on the allotment.", (), True),
        ("How many kayaks do I own?", "Kayaks: 3, all in the boathouse.", (), True),
        ("How many kayaks are out on loan?", "Kayaks out: 2, on loan to the club.", (), True),
        ("How many kilometres is the commute?", "The commute is 12 km each way.", (), True),
        ("How many kilometres is the commute?", "The commute takes 40 minutes.", (), False),
        # Why wants a reason.
        ("Why is the banner job the hardest to port?", "Port 5 job types; the hardest is the banner job.", (), False),
        (
            "Why is the banner job the hardest to port?",
            "The banner job is the hardest to port because it drives the plotter through COM.",
            (),
            True,
        ),
        # A stand-in for the thing asked is not the thing.
        ("When is the German B2 exam?", "- [ ] Do one full mock exam per month from December.", ("German B2",), False),
        ("When is the German B2 exam?", "The exam is on 13 March 2027 in Hamburg.", ("German B2 exam",), True),
        ("When is the mock exam?", "One mock exam per month from December.", (), True),
        # A personal question: not someone else's thing, not a definition, not another note's subject.
        ("Who is Nils's accountant?", "- [ ] Export for their accountant in DATEV CSV format.", (), False),
        ("Who is my accountant?", "My accountant is Marcus Dunmore.", (), True),
        ("What is my shoe size?", "[[Anna]]'s shoe size is 38.", (), False),
        ("What is my shoe size?", "Anna's shoe size is 38.", (), False),
        ("What is my shoe size?", "Shoe size: 44 (EU).", (), True),
        ("What is my blood type?", "Blood type is a classification of blood by antigens.", (), False),
        ("What is my blood type?", "Blood type: 0 negative, on the donor card.", (), True),
        ("What is my blood type?", "[[Marta]] has blood type A and gave blood in May.", (), False),
        ("What is my blood type?", "I found out my blood type is 0 negative.", (), True),
        # "What is my <thing>" wants the thing with a value, not a sentence that mentions it.
        ("What is my blood type?", "I should ask the GP about blood type tests.", (), False),
        ("What payment terms are on Nils's invoices?", "Invoices carry payment terms of 14 days.", (), True),
        ("What is Nils's hourly rate?", "The hourly rate for small jobs is 95 EUR.", (), True),
        # A rule, a limit, a permission or a plan says what may or will be, not what is.
        ("Where are the hives?", "Cap at five hives on plot 23; the committee allows six.", (), False),
        ("Where is the canoe kept?", "The canoe may be kept in the boathouse over winter.", (), False),
        ("How many guests are in the hall?", "At most 40 guests in the hall, by the lease.", (), False),
        ("Where does the choir rehearse?", "The choir will rehearse in the crypt from January.", (), False),
        ("Where is the trailer parked?", "If the drive is blocked, park the trailer at Ola's.", (), False),
        ("Where are the hives?", "The hives stand on plot 23; the committee caps them at six.", (), True),
        ("How many guests does the hall allow?", "The hall allows at most 40 guests.", (), True),
        ("Where will the choir rehearse?", "The choir will rehearse in the crypt from January.", (), True),
        ("Which metaheuristic does the solver use?", "Solver with GLS as metaheuristic, time limit 90 s.", (), True),
        ("What is my hourly rate?", "My hourly rate is 95 EUR, minimum one hour.", (), True),
        # A glossary's entry describes the thing; it is no value of the owner's.
        (
            "What is my cholesterol?",
            "**Cholesterol**: a waxy fat carried in the blood by lipoproteins, checked by a test.",
            (),
            False,
        ),
        ("What is my resting pulse?", "Resting pulse: beats per minute when sitting still, 60–100.", (), False),
        ("What is my cholesterol?", "Cholesterol: 4.8 mmol/L at the March check.", (), True),
        ("Where does Nils get sacking?", "Good: hessian sacking from the coffee roaster on Quay Street.", (), True),
        # Someone the question does not name opens the sentence: it is about them.
        ("When is Erik's birthday?", "- Nora, born 2019 — birthday 9 February", ("Erik Holt",), False),
        ("When is my birthday?", "Lena (my sister) has her birthday on 4 May.", (), False),
        ("When is Erik's birthday?", "- Erik, born 1958 — birthday 2 March", ("Erik Holt",), True),
        # Names as people write them: accented, and in NFD as some editors save them.
        ("When is Søren's birthday?", "- Élodie, born 2019 — birthday 9 February", ("Søren",), False),
        ("When is Søren's birthday?", "- E\u0301lodie, born 2019 — birthday 9 February", ("Søren",), False),
        ("When is Søren's birthday?", "- Søren, born 1958 — birthday 2 March", ("Søren",), True),
        ("How many books is Nils's goal?", "Goal: 20 books; at 14 by November.", (), True),
        # A glossary's table row, or any sentence of a glossary, answers no personal question.
        ("What is my HbA1c?", "| HbA1c | glycated haemoglobin, an average of blood sugar over weeks |", (), False),
        ("What is my INR?", "INR: International Normalised Ratio, target 2.0–3.0.", ("Pharmacy glossary",), False),
        ("What is my INR?", "INR: 2.6 on Monday's test.", ("Warfarin",), True),
        # "What <thing> number …" wants the thing's number, not any number.
        ("What plot number is our allotment?", "Garlic planted 25 October: 3 rows.", ("Allotment plot",), False),
        ("What plot number is our allotment?", "We rent plot 17 at the allotment.", (), True),
        ("What is the invoice number?", "Invoice numbers: AS-2026-### (currently AS-2026-041).", (), True),
        # A focus term only in a parenthesis with no value of its own is a side remark.
        (
            "When is my late shift in May?",
            "Boiler service moved to 20 May (the 13th clashed with the late shift).",
            (),
            False,
        ),
        ("Who is Ana's coach?", "Ana swims at Bayside Club (new coach this term).", (), False),
        ("When is my late shift in May?", "Late shift in May: 12–16 May (nights on the 17th).", (), True),
        # A measure wants an amount in its own units: a temperature no grams.
        ("What temperature do I bake the flapjack at?", "Flapjack: 200 g oats + 90 g butter.", (), False),
        ("What temperature do I bake the flapjack at?", "Bake the flapjack at 170 °C for 25 min.", (), True),
        ("How tall is the pear tree?", "The pear tree gets 20 litres a week.", (), False),
        ("How tall is the pear tree?", "The pear tree is 3.5 m now.", (), True),
        # A date the question names must be the passage's, not its day and month apart.
        ("What did I do on 3 October?", "Packed 3 orders.", ("Monday 19 October 2026",), False),
        ("What did I do on 3 October?", "Packed 3 orders in October.", (), False),
        ("What did I do on 3 October?", "Packed 3 orders.", ("Saturday 3 October 2026",), True),
        # "What <kind> <thing> …": the kind before another thing names another thing.
        ("What electric bike do I have?", "Pump: Lezyne electric pump + spare tube.", ("My bike",), False),
        ("What electric bike do I have?", "I have a Riese electric bike.", ("My bike",), True),
        ("Which Python version is the default?", "Python 3.12 is the default.", (), True),
        # "What year is <thing>" wants a year of the thing, not a weekday nor a date of a deed.
        ("What year is my Vespa?", "Rides happen on the Vespa on Sunday mornings.", (), False),
        ("What year is my Vespa?", "Bought the Vespa from a dealer in Cork, May 2023.", (), False),
        ("What year is my Vespa?", "My Vespa is a 1979 P200E, bought in May 2023.", (), True),
        # A key word only in retired text is not in the note as it stands.
        (
            "When is the team offsite in Porto?",
            "The team offsite is in Braga on 3 June (was: Porto, 2 June).",
            (),
            False,
        ),
        ("When is the Porto offsite?", "The ~~Porto~~ Braga offsite is on 3 June.", (), False),
        ("When is the team offsite?", "The team offsite is in Braga on 3 June (was: Porto, 2 June).", (), True),
        ("Where was the team offsite before?", "The team offsite is in Braga (was: Porto).", (), True),
        # "May" the month is no modal "may".
        ("When is the team offsite?", "The team offsite is on 3 May in Braga.", (), True),
        # "Where on/in the <place>" asks for a position within it, not the place again.
        ("Where on the allotment are the hives?", "Keeps five hives at the allotment, plot 23.", (), False),
        ("Where in the flat is the fuse box?", "The flat's fuse box is in the flat at no. 4.", (), False),
        ("Where on the allotment are the hives?", "The hives stand along the east side.", ("Allotment",), True),
        ("Where in the flat is the fuse box?", "The fuse box is behind the coats, by the door.", ("Flat",), True),
        ("Where is the fuse box?", "The fuse box is in the flat at no. 4.", (), True),
    ],
)
def test_a_sentence_proves_an_answer_only_by_every_rule(
    question: str, quote: str, names: tuple[str, ...], proves: bool
) -> None:
    assert (_proves(question, quote, names) is not None) is proves


def test_the_proving_sentence_is_the_one_that_holds_it_as_shown() -> None:
    quote = "The solver ran at [night](https://x.org). The nightly solver plans 41 vans."
    assert _proves("How many vans does the nightly solver plan?", quote) == "The nightly solver plans 41 vans."


def test_a_question_is_personal_by_my_i_our_or_the_owner_s_name() -> None:
    assert personal("What is my blood type?") and personal("When did I last see the GP?")
    assert personal("Who is Nils's accountant?", OWNER) and personal("Where is our spare key?")
    assert not personal("Who is Anna's accountant?", OWNER) and not personal("What is the capital of Australia?")
    assert not personal("Which MY-42 part fits?")


def test_two_notes_that_give_different_dates_prove_neither() -> None:
    wants = expects("When is my dentist appointment?")
    log = "Booked dentist appointment for Monday 2 November, 8:30."
    moved = "Dentist moved to Tuesday 3 November, 8:30 (was: Monday 2 November)."
    assert disagree(log, moved, wants)  # the old wording is no value; the same time is no agreement
    assert not disagree(log, "Dentist appointment: Monday 2 November.", wants)
    assert not disagree(log, "Dentist appointment on 2 November at 8:30.", wants)  # one covers the other
    counts = expects("How many supers does Nils own?")
    assert not disagree("Nils owns 11 supers.", "Juniper has 2 supers on.", counts)  # counts may differ
