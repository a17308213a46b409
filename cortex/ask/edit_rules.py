"""The verifier's rules as a named table: the safe edits an answer may make to its quotes
and stay VERIFIED, the reasons it refuses, and the word lists each reads.

`cortex.ask.entail` applies them; a stamp's reason names the rule that decided it. Each
rule carries examples (quote, answer, question, VERIFIED or not) that run as tests
(`tests/ask/test_entail.py`). Adding a rule is one entry here, its examples, and, if it
needs a new kind of step, one function in `entail`.

Constants only, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["REFUSE", "RULES", "SAFE", "Rule"]


@dataclass(frozen=True)
class Rule:
    """One rule: its name, whether it keeps VERIFIED ("safe") or refuses it ("refuse"),
    what it says in one line, and examples as (quote, answer, question, verified)."""

    name: str
    kind: str
    says: str
    examples: tuple[tuple[str, str, str, bool], ...]


SAFE = (
    Rule(
        "same-word",
        "safe",
        "the same word, or another form of it in the same tense (lemmas: simplemma)",
        (
            ("I bought two bags of flour", "You bought two bags of flour.", "", True),
            ("My dogs sleep in the kitchen", "Your dogs sleep in the kitchen.", "", True),
            ("I lived in Leeds for six years", "You live in Leeds.", "", False),
        ),
    ),
    Rule(
        "synonym",
        "safe",
        "a word WordNet puts in one of the two commonest senses of the quote's word",
        (
            ("The shop shuts at 17:00 on Sundays", "The shop closes at 17:00 on Sundays.", "", True),
            ("Keep the starter in the fridge", "Keep the starter in the freezer.", "", False),
        ),
    ),
    Rule(
        "phrase",
        "safe",
        "a bound, quantifier or modal said in another of its phrases (PHRASES: 'at most' / 'up to', 'must' / 'has to')",
        (
            ("Guests may stay at most 3 nights", "Guests can stay up to 3 nights.", "", True),
            ("Hand luggage must weigh less than 8 kg", "Hand luggage has to weigh under 8 kg.", "", True),
            ("Hand luggage must weigh less than 8 kg", "Hand luggage can weigh under 8 kg.", "", False),
            ("You may need to book two weeks ahead", "You must book two weeks ahead.", "", False),
        ),
    ),
    Rule(
        "person",
        "safe",
        "the owner's words said to the owner: I, my, we, our as you, your",
        (
            ("My dentist is Dr Ahn", "Your dentist is Dr Ahn.", "", True),
            ("I was in Porto in May", "You were in Porto in May.", "", True),
            ("The router is under the stairs", "Your router is under the stairs.", "", True),
        ),
    ),
    Rule(
        "number-form",
        "safe",
        "a number, date, time or amount in another spelling (3 / three, 2 hrs / two hours)",
        (
            ("The course lasts three weeks", "The course lasts 3 weeks.", "", True),
            ("The course lasts three weeks", "The course lasts 4 weeks.", "", False),
            (
                "Leo | judo at the leisure centre | Thursday",
                "Leo does judo at the leisure centre on Thursday.",
                "",
                True,
            ),
            ("Rest the batter 30 minutes before frying", "Rest the batter for thirty minutes before frying.", "", True),
            ("We got married on 14/06/2014 in Whitby", "You got married on 14 June 2014 in Whitby.", "", True),
            ("We got married on 03/04/2014 in Whitby", "You got married on 3 April 2014 in Whitby.", "", False),
            ("Rent due: 1st", "Rent is due on the 1st.", "", True),
            ("Rent due: 1st", "Rent is due at the 1st.", "", False),
            ("Bake for 25 minutes at 180°C fan", "Bake 25 mins at 180°C fan.", "", True),  # and left out
            ("Wedding anniversary: 21st June", "The wedding anniversary is on June 21.", "", True),
            ("Fridge: Bosch, bought 2021", "The fridge is a Bosch, bought in 2021.", "", True),
            ("Fridge: Bosch, bought 2021", "The fridge is a Bosch, bought in 2022.", "", False),
            ("Rear brake pads ~50%", "The rear brake pads are at about 50%.", "", True),
            # A date is said with fewer parts only where no bound bears on it.
            ("The pool reopens on 3 June after repairs", "The pool reopens in June after repairs.", "", True),
            ("Book the MOT before 14 March", "Book the MOT before March.", "", False),
            ("Anna is on leave from 1 May to 31 August", "Anna is on leave from May to 31 August.", "", False),
            ("Anna is on leave from 1 May to 31 August", "Anna is on leave from 1 May to 31 Aug.", "", True),
            # A number alone with a full stop is a number, not an empty list item's marker.
            ("Bike lock code: 4817", "4817.", "What's the bike lock code?", True),
            ("Bike lock code: 4817", "4818.", "What's the bike lock code?", False),
            # An amount in another unit of its measure, exactly; a month or a span of months abbreviated.
            ("Simmer the lentils in 800ml water", "Simmer the lentils in 0.8 litres of water.", "", True),
            ("Simmer the lentils in 800ml water", "Simmer the lentils in 8 litres of water.", "", False),
            ("Keep the bedroom at 18°C", "Keep the bedroom at 18 degrees Celsius.", "", True),
            ("Window cleaner comes every 4 wks", "The window cleaner comes every four weeks.", "", True),
            ("Brown bin collected Mar–Nov only", "The brown bin is collected from March to November only.", "", True),
            ("Brown bin collected Mar–Nov only", "The brown bin is collected from March to October only.", "", False),
            ("Physio moved to 28/03 16:30", "Physio moved to 28 March at 4:30pm.", "", True),
            ("The helpline is open 24/7", "The helpline is open on 24 July.", "", False),
            # "Jan" alone is a month only where a word of time or a span says so: here a name.
            ("The boiler was serviced before 14 March by Jan", "Jan serviced the boiler before 14 March.", "", True),
            ("Keys from the agent after 12 noon", "Keys from the agent after midday.", "", True),
            ("Keys from the agent after 12 noon", "Keys from the agent after midnight.", "", False),
        ),
    ),
    Rule(
        "empty-word",
        "safe",
        "an article, 'and', a present 'is/are' or a colon added or left out",
        (("Spare key: under the blue pot", "The spare key is under the blue pot.", "", True),),
    ),
    Rule(
        "framing",
        "safe",
        "words that frame the answer ('your notes say', 'yes')",
        (
            (
                "The boiler was serviced in March 2025",
                "According to your notes, the boiler was serviced in March 2025.",
                "",
                True,
            ),
        ),
    ),
    Rule(
        "question-words",
        "safe",
        "words of the question restated, or left out of the answer",
        (
            (
                "Dr Ahn's surgery is open weekdays from 8 to 18",
                "Weekdays from 8 to 18.",
                "When is Dr Ahn's surgery open?",
                True,
            ),
            ("The pool is open on Saturdays from 9 to 12", "From 9 to 12.", "When is the pool open?", False),
            (
                "The ferry leaves at 07:40",
                "The ferry to Skye leaves at 07:40.",
                "When does the ferry to Skye leave?",
                True,
            ),
            ("My dentist is Dr Ahn", "Your dentist is Dr Ahn.", "Who is my dentist?", True),
            (
                "Mrs Patel at number 9 has our spare key",
                "Mrs Patel at number 9 has it.",
                "Who has our spare key?",
                True,
            ),
            ("Mrs Patel at number 9 has our spare key", "Mrs Patel has it.", "Who has our spare key?", False),
            # Left out only in the question's own form: "Is …?" leaves no "was" out.
            (
                "The boiler was under warranty until March 2024",
                "Yes, the boiler is under warranty until March 2024.",
                "Is the boiler under warranty?",
                False,
            ),
            ("Tom sells the car", "Tom sold the car.", "Did Tom sell the car?", False),
            ("Nothing in the shed is insured", "Nothing in the shed was insured.", "Was the shed insured?", False),
            ("The hive was requeened on 12 May", "On 12 May.", "When was the hive requeened?", True),
            # With the preposition the question strands after the same word.
            ("Escalate billing problems to Mark", "Mark.", "Who do I escalate billing problems to?", True),
            ("Give the spare keys to Ben on Fridays", "Ben.", "Who do I give the spare keys to?", False),
            # A table cell of the question's words alone claims nothing more: it may go unsaid.
            ("| Tue | Intervals 6×800m | 7 km |", "Intervals 6×800m, 7 km.", "What's my Tuesday session?", True),
            ("| Tue | Intervals 6×800m | 7 km |", "Intervals 6×800m, 7 km.", "What's my Wednesday session?", False),
            ("The boiler was insured until 2024", "It is insured until 2024.", "Was it insured?", False),
            ("The policy does not cover skiing", "The policy did not cover skiing.", "Does it cover skiing?", False),
            # Never a clause of their own: that claims what the question asks.
            (
                "Skin test on 4 June. Probably allergic to cats, the test was borderline",
                "You're allergic to cats; the test was borderline.",
                "Am I allergic to cats?",
                False,
            ),
        ),
    ),
    Rule(
        "context",
        "safe",
        "a name from the quoted note's title or headings (with its preposition), a word of a table's column heading",
        (),
    ),
    Rule(
        "pronoun",
        "safe",
        "a pronoun for words the question names",
        (
            ("Mum's operation is on 3 October", "Her operation is on 3 October.", "When is my mum's operation?", True),
            (
                "The pharmacy opens at 9 on Sundays",
                "It opens at 9 on Sundays.",
                "When does the pharmacy open on Sundays?",
                True,
            ),
            (
                "The Sunday ride leaves from the church at 8am",
                "It leaves at 8am.",
                "When does the Sunday ride leave?",
                False,
            ),
            (
                "The Sunday ride leaves from the church at 8am",
                "It leaves from the church at 8am.",
                "When does the Sunday ride leave?",
                True,
            ),
            ("Lessons with Mr Grant are £30", "They are £30.", "How much are Mr Grant's lessons?", True),
            ("The Saturday ride leaves at 8am", "It leaves at 8am.", "When does the Sunday ride leave?", False),
        ),
    ),
    Rule(
        "struck-text",
        "safe",
        "text struck through (~~£28~~ £30) is the owner's old value: the quote claims what stands beside it",
        (
            ("Lessons are now ~~£28~~ £30 per half hour", "Lessons are now £30 per half hour.", "", True),
            ("Lessons are now ~~£28~~ £30 per half hour", "Lessons are now £28 per half hour.", "", False),
        ),
    ),
    Rule(
        "whole-clause",
        "safe",
        "a whole sentence, a clause joined by ', and' / ', but' / ', which', or an aside in brackets "
        "or between commas ('X, which …, is') left out",
        (
            (
                "The bins go out on Tuesday. Recycling goes out every other Friday.",
                "The bins go out on Tuesday.",
                "",
                True,
            ),
            ("Dr Ahn (my dentist) is on Quay Street", "Dr Ahn is on Quay Street.", "", True),
            ("The bins go out on Tuesday (not in August)", "The bins go out on Tuesday.", "", False),
            ("The stopcock, which is quite stiff, is under the sink", "The stopcock is under the sink.", "", True),
            ("The van, which only runs on diesel, is in the yard", "The van is in the yard.", "", False),
            ("The van, which only runs on diesel, is in the yard", "The van runs on diesel.", "", False),
        ),
    ),
    Rule(
        "reorder-clauses",
        "safe",
        "the answer's clauses in another order than the quote's",
        (
            ("Ben walks the dog. Ana feeds the cat.", "Ana feeds the cat, and Ben walks the dog.", "", True),
            ("Ana walks the dog and Ben feeds the cat", "Ben feeds the cat, and Ana walks the dog.", "", True),
            ("Ana walks the dog and Ben feeds the cat", "Ben walks the dog, and Ana feeds the cat.", "", False),
            ("Ana walks the dog first and Ben feeds the cat", "Ben feeds the cat, and Ana walks the dog.", "", False),
        ),
    ),
    Rule(
        "reorder-items",
        "safe",
        "coordinated items said in another order, each kept whole, where no word claims an order",
        (
            ("We keep bees and chickens", "You keep chickens and bees.", "", True),
            ("Ana and Ben walk the dog", "Ben and Ana walk the dog.", "", True),
            # "and" between two clauses joins no list: the object and the next subject stay put.
            ("Ana walks the dog and Ben feeds the cat", "Ana walks Ben and the dog feeds the cat.", "", False),
            ("Ana feeds the cat and Ben walks the dog", "Ana feeds Ben and the cat walks the dog.", "", False),
            ("Take: waterproofs, midge net, head torch", "Take a head torch, a midge net and waterproofs.", "", True),
            ("Take: waterproofs, midge net, head torch", "Take a head net, a midge torch and waterproofs.", "", False),
            (
                "Ella needs goggles, a swim cap and a towel every Tuesday",
                "Ella needs a towel, goggles and a swim cap every Tuesday.",
                "",
                True,
            ),
            (
                "The landlord fixed the fan and replaced the lock",
                "The landlord replaced the lock and fixed the fan.",
                "",
                True,
            ),
            ("Ana feeds the cat and Ben walks the dog", "Ana walks the dog and Ben feeds the cat.", "", False),
            ("Pay £10 to Tom and £20 to Ann", "Pay £20 to Tom and £10 to Ann.", "", False),
            ("First boil the kettle and then add the rice", "First add the rice and then boil the kettle.", "", False),
        ),
    ),
    Rule(
        "reorder-adjuncts",
        "safe",
        "two runs of the phrases that end a clause, each opened by a preposition, swapped whole",
        (
            ("I sowed the parsnips on 12 April in Bed B", "You sowed the parsnips in Bed B on 12 April.", "", True),
            ("Dave trimmed the hedge in April", "The hedge was trimmed in April by Dave.", "", True),
            ("The train leaves Leeds at 9 for York", "The train leaves York at 9 for Leeds.", "", False),
        ),
    ),
    Rule(
        "only-moved",
        "safe",
        "an 'only' before the clause's verb said before the condition or phrase after it, never before a subject",
        (
            ("Mira feeds the cat only when we're away", "Mira only feeds the cat when you're away.", "", True),
            ("Add the third yolk only if the dough is dry", "Only add the third yolk if the dough is dry.", "", True),
            ("Ana walks the dog only on Sundays", "Only Ana walks the dog on Sundays.", "", False),
            ("Ben eats only fish on Fridays", "Ben eats fish only on Fridays.", "", False),
        ),
    ),
    Rule(
        "amount-moved",
        "safe",
        "an amount before the one to three words it measures said after them ('the £1,067 deposit')",
        (
            ("Deposit £1,067 held with DPS", "The £1,067 deposit is held with DPS.", "", True),
            ("Deposit £1,067 held with DPS", "The £1,076 deposit is held with DPS.", "", False),
            ("Tea £3, coffee £4 at the kiosk", "The £3 coffee at the kiosk.", "", False),
        ),
    ),
    Rule(
        "copula-swap",
        "safe",
        "'X is Y' as 'Y is X', each side kept whole",
        (
            ("Dr Ahn is my dentist", "Your dentist is Dr Ahn.", "", True),
            ("Ben is taller than Ana", "Ana is taller than Ben.", "", False),
        ),
    ),
    Rule(
        "possessive",
        "safe",
        "'X's Y' said 'the Y of X', 'the Y for X' or 'the Y belonging to X', either way round",
        (
            ("The car's MOT is due in May", "The MOT for the car is due in May.", "", True),
            ("The car's MOT is due in May", "The MOT for the van is due in May.", "", False),
            ("Grandad's medals are in the loft", "The medals belonging to Grandad are in the loft.", "", True),
            ("Payday is the last working day of the month", "Payday is the month's last working day.", "", True),
            ("Payday is the last working day of the month", "Payday is the month's first working day.", "", False),
        ),
    ),
    Rule(
        "converse",
        "safe",
        "'X is above Z' as 'Z is below X': one relation said from its other side (edit_rules.CONVERSE)",
        (
            (
                "The club race is the week after the Harbour 10k",
                "The Harbour 10k is the week before the club race.",
                "",
                True,
            ),
            ("The lodge is above the pass", "The pass is below the lodge.", "", True),
            ("The lodge is above the pass", "The pass is above the lodge.", "", False),
            ("Ben is older than Ana", "Ben is younger than Ana.", "", False),
            ("Ben is older than Ana", "Ana is younger than Ben.", "", True),
        ),
    ),
    Rule(
        "voice",
        "safe",
        "passive as active and back, the agent after 'by' made the subject",
        (
            # An unsaid agent stands for a subject, never for a plan's "going to" (held-out set E).
            ("Going to book The Olive Tree for 12", "The Olive Tree is booked for 12.", "", False),
            (
                "The boiler is serviced by Hughes Heating every March",
                "Hughes Heating services the boiler every March.",
                "",
                True,
            ),
            ("Anna lent Ben the ladder", "Ben lent Anna the ladder.", "", False),
            (
                "The warfarin dose was changed to 3mg by the clinic on 5 May",
                "The clinic changed the warfarin dose to 3mg on 5 May.",
                "",
                True,
            ),
            ("The shed roof was re-felted by Ken in April", "Ken re-felted the shed roof in April.", "", True),
            ("The laptop is backed up by the NAS", "The NAS backs up the laptop.", "", True),
            ("The dose was changed to 3mg by the clinic", "The clinic changed the dose to 5mg.", "", False),
        ),
    ),
    Rule(
        "fronted-clause",
        "safe",
        "a fronted 'if' or 'when' clause, or a phrase of time or place, moved behind its clause",
        (
            ("If it rains, the match moves to Sunday", "The match moves to Sunday if it rains.", "", True),
            ("If it rains, the match moves to Sunday", "The match moves to Sunday.", "", False),
            (
                "The NAS backs up the laptop every night at 01:00",
                "Every night at 01:00 the laptop is backed up by the NAS.",
                "",
                True,
            ),
        ),
    ),
)

REFUSE = (
    Rule(
        "word-left-out",
        "refuse",
        "a word of the quote's claim the answer drops, which may restrict it",
        (("I usually cycle to work on Tuesdays", "You cycle to work on Tuesdays.", "", False),),
    ),
    Rule(
        "word-changed",
        "refuse",
        "a word of the quote replaced by one no safe edit makes of it",
        (("Roast the peppers for 20 minutes", "Roast the onions for 20 minutes.", "", False),),
    ),
    Rule(
        "word-moved",
        "refuse",
        "a word of the quote put in another part of the sentence",
        (
            (
                "The spare key is under the blue pot by the back door",
                "The spare key is under the back pot by the blue door.",
                "",
                False,
            ),
        ),
    ),
    Rule(
        "word-added",
        "refuse",
        "a word the quote does not hold and no safe edit adds",
        (("The gym opens at 6", "The gym always opens at 6.", "", False),),
    ),
    Rule(
        "relative-time",
        "refuse",
        "a time said from the note's own day ('yesterday', 'next week'), which means another day today",
        (("Paid the plumber yesterday for the bathroom job", "You paid the plumber yesterday.", "", False),),
    ),
    Rule(
        "reply-word",
        "refuse",
        "a 'yes' or 'no' alone, or one the rest of the answer does not bear out: it claims what the question asks",
        (
            ("The Alpina policy does not cover skiing", "Yes.", "Does the Alpina policy cover skiing?", False),
            ("The Alpina policy covers skiing", "No, the Alpina policy covers skiing.", "Does it cover skiing?", False),
            # "No. 16" is a house number, no reply (the offline reader's answer of the eval's q117).
            ("No. 16: Mr Lusk keeps the back gate key", "No. 16: Mr Lusk keeps the back gate key.", "", True),
            (
                "The Alpina policy does not cover skiing",
                "No, the Alpina policy does not cover skiing.",
                "Does the Alpina policy cover skiing?",
                True,
            ),
            (
                "The pool is open on Sundays",
                "Yes, the pool is open on Sundays.",
                "Isn't the pool shut on Sundays?",
                False,
            ),
        ),
    ),
    Rule("too-long", "refuse", "an answer too long to align fails closed", ()),
)

RULES = {r.name: r for r in (*SAFE, *REFUSE)}

# --- the word lists the rules read -----------------------------------------------------------

# Marks the tokenizer keeps: a comma, a colon, brackets, a clause break ("|").
MARKS = frozenset({",", ":", "(", ")", "|"})
# Words whose adding or leaving out changes no claim (rule empty-word). "was" is not here:
# a past state is no present one.
ARTICLES = frozenset("a an the".split())
EMPTY = ARTICLES | frozenset("and is are am be that".split()) | MARKS
# The present copula and what stands for it ("Dentist: Dr Ahn").
COPULA = frozenset({"is", "are", "am", "be", ":"})
# The past copula: "was" and "were" are one word said to another person.
PAST_COPULA = {"was": "was", "were": "was"}
PASSIVE_AUX = frozenset("is are am be been being was were gets get got".split())
# Words that carry a clause's tense: never restated from the question, never left out for it.
TENSE_WORDS = PASSIVE_AUX | frozenset("has have had do does did".split())
# Where the agent after "by" ends in the voice rule.
AGENT_END = frozenset(
    "all as so because unless except only if and or but ≤ ≥ > < ~ in on via by "
    "at for from to with every each during until since before after when if , | ( ) :".split()
)
# The owner's words said to the owner.
PERSON = {
    "i": "you", "me": "you", "my": "your", "mine": "yours", "myself": "yourself",
    "we": "you", "us": "you", "our": "your", "ours": "yours", "ourselves": "yourselves",
}  # fmt: skip
PRONOUN = frozenset("it its they them their he him his she her this these those one which who".split())
FRAMING = frozenset(
    """according note notes brain say says said state states stated mention mentions mentioned write
    writes wrote written record records recorded yes quote quoted per""".split()
)
# Words that restrict a claim: never added from the question, never dropped because the
# question has them, and an aside holding one is no aside.
RESTRICTS = frozenset(
    """not no never none nothing nobody neither nor without except excluding unless only just
    usually always often sometimes mostly generally rarely seldom occasionally normally typically
    all every each both some any most many few several least more less fewer
    if when whenever while once until till before after since during between within except
    probably maybe perhaps possibly likely might may could should would must can will shall
    about around approximately roughly nearly almost over under above below than
    first last next previous former earlier later new old current currently still already yet
    planned plan plans want wants hope hopes intend intends think thinks says said""".split()
)
# A number's signs, as `entail.tokens` reads them before it ("−5 °C", "minus 5 °C").
SIGNS = frozenset("− + ± ~".split())
# Prepositions that may bring in a word of the question or a name of the context (rule context).
PREPOSITIONS = frozenset("to from in at on for of with".split())
# The preposition a date, time or quantity takes in a sentence, added to one the quote
# states bare ("Leo | judo | Thursday" said "on Thursday"; "rest 30 minutes", "for 30 minutes").
BEFORE_NUMBER = {
    "on": ("date", "ordinal"), "in": ("date", "year"), "at": ("time", "amount"), "for": ("number", "amount"),
}  # fmt: skip
# Words that say one relation from its other side (rule converse): "X is above Z" is "Z is
# below X". Each word's converses.
_CONVERSE_PAIRS = (
    ("above", "below"), ("before", "after"), ("earlier", "later"), ("older", "younger"),
    ("taller", "shorter"), ("bigger", "smaller"), ("larger", "smaller"), ("heavier", "lighter"),
    ("faster", "slower"), ("cheaper", "dearer"), ("nearer", "farther"), ("closer", "further"),
    ("higher", "lower"), ("north", "south"), ("east", "west"), ("left", "right"), ("ahead", "behind"),
)  # fmt: skip
CONVERSE: dict[str, tuple[str, ...]] = {}
for _a, _b in _CONVERSE_PAIRS:
    CONVERSE[_a] = (*CONVERSE.get(_a, ()), _b)
    CONVERSE[_b] = (*CONVERSE.get(_b, ()), _a)
# What opens a phrase that may trade places with the next one at a clause's end (rule
# reorder-adjuncts); "of" is not here: it binds to the word before it. At most ADJUNCTS.
ADJUNCT_OPENS = frozenset("to from in at on for with by via before after during until since under".split())
ADJUNCTS = 4
# Words a passive may hold between its verb and "by" ("changed to 3mg by the clinic").
ADJUNCT_WORDS = 4
# A verb's particle, which may stay with it ("backed up the laptop") or go behind its object.
PARTICLES = frozenset("up down out off in over back away".split())
# How many reorderings on top of another a clause is aligned in (a fronted phrase, then voice).
REORDERINGS = 12
# A coordinated list said in another order (rule reorder-items): at most ITEMS items of at
# most ITEM_WORDS words each.
ITEMS = 4
ITEM_WORDS = 6
# How many of a list's orderings (the first and last items' lengths tried) are aligned.
ITEM_TRIES = 36
# The "no" of a reply (rule reply-word): the rest of the answer must deny.
REPLY_NO = frozenset({"no", "nope"})
# Words whose time is the day they were written (rule relative-time).
DEICTIC = frozenset("yesterday today tomorrow tonight ago".split())
# The negations: never added, even as a column's heading.
NEGATIONS = frozenset("not no never none nothing nobody neither nor without except".split())
# Function words: never matched to another word by sense (a word matches only itself).
FUNCTION = frozenset(
    """a an the and or but nor so yet for of in on at to from by with without about into onto
    over under above below before after between through during until since than as if when
    while because although though unless whether which who whom whose that this these those
    there here it its they them their he him his she her we us our you your i me my not no""".split()
)
# "the Y of X" / "the Y for X": Y is X's (rule possessive).
OWNED_BY = frozenset({"of", "for"})
# A comma then one of these opens a relative clause; closed by a comma inside its sentence it is
# an aside (rule whole-clause: "The stopcock, which is quite stiff, is under the sink").
RELATIVES = frozenset("which who whose".split())
# A comma then one of these opens a clause of its own (rule whole-clause).
CLAUSE_JOINS = frozenset("and but so while whereas although though which who yet plus".split())
# "and"/"but" then one of these opens a clause with its own subject.
NEW_SUBJECT = frozenset("the a an my his her their our its your i he she we they it there this".split())
# The modals ("must" and "can" also as PHRASES read them): a verb's, after a list (rule reorder-items).
MODALS = frozenset("can could may might must shall should will would".split())
# What opens a verb's object: an imperative's verb stands before one (rule only-moved).
DETERMINERS = frozenset("the a an my your our his her their its this that these those some any".split())
# A clause with one of these relates its coordinated parts together: none may be left out.
COLLECTIVE = frozenset("between mix mixed mixing combine combined together both share shared shares compare".split())
# A fronted clause opening with one of these may move behind its clause (rule fronted-clause).
SUBORDINATE = frozenset("if when unless once after before while because since although though until whenever".split())
# Words that claim an order: coordinated items around them are not swapped.
ORDER = frozenset("then first second third last before after next followed finally".split())
# A front phrase opening with one of these may move to the clause's end (rule fronted-clause).
FRONTABLE = frozenset(
    "on in at during every each by after before under for from since until last next this except all ≤ ≥ > < ~".split()
)
# Words that bound a date or end a span of dates: such a date is said whole (rule number-form).
DATE_BOUNDS = frozenset("≤ ≥ < > – before after until since by from till".split())
# What joins the two ends of a span of numbers or dates ("6 to 9", "Monday through Thursday").
SPAN_JOIN = frozenset("to through thru till until and – - —".split())
# A bound said after its number, read as the bound before it ("£40 or more" is "≥ £40").
POST_BOUNDS = (
    (("at", "the", "latest"), "≤"), (("or", "earlier"), "≤"), (("or", "before"), "≤"), (("or", "less"), "≤"),
    (("or", "fewer"), "≤"), (("or", "under"), "≤"), (("or", "younger"), "≤"),
    (("or", "more"), "≥"), (("or", "over"), "≥"), (("and", "over"), "≥"), (("and", "up"), "≥"), (("or", "later"), "≥"),
    (("at", "the", "earliest"), "≥"), (("and", "older"), "≥"), (("or", "older"), "≥"), (("or", "above"), "≥"),
)  # fmt: skip

# Phrases that say one thing in several ways, each read as one word: the meaning's name.
# `True`: only right before a number, date, time or amount ("over 23 kg", not "over the bridge").
PHRASES: dict[str, tuple[tuple[str, ...], bool]] = {
    "≤": (
        ("at most", "no more than", "not more than", "up to", "a maximum of", "maximum", "max", "no later than", "by"),
        True,
    ),
    "≥": (("at least", "no less than", "not less than", "a minimum of", "minimum", "min", "no earlier than"), True),
    ">": (
        ("more than", "over", "above", "greater than", "higher than", "heavier than", "longer than", "older than"),
        True,
    ),
    "<": (
        ("less than", "fewer than", "under", "below", "lower than", "lighter than", "shorter than", "younger than"),
        True,
    ),
    "~": (("about", "around", "approximately", "roughly", "~", "circa", "ca"), True),
    "−": (("minus", "negative"), True),
    "±": (("plus or minus", "±"), True),
    "all": (("all of the", "all the", "all", "every", "each", "each of the"), False),
    "most": (("most of the", "most of", "most"), False),
    "some": (("some of the", "some of", "some"), False),
    "except": (("except", "but not", "excluding", "apart from", "other than"), False),
    "until": (("until", "till", "til", "up until", "up till"), False),
    # A modal and the verbs that say it ("has to" is "must"; "may" of leave is "can").
    "must": (("must", "have to", "has to", "need to", "needs to"), False),
    "can": (("can", "may", "is allowed to", "are allowed to"), False),
}
PHRASE_LIST = sorted(
    ((tuple(p.split()), meaning, before) for meaning, (phrases, before) in PHRASES.items() for p in phrases),
    key=lambda x: -len(x[0]),
)
