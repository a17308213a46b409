"""A model reader's first pack: the best passages across notes, not whole notes first."""

from cortex.ask.pack import passage_pack
from cortex.notes.blocks import blocks_of
from cortex.notes.note import parse_note


def _note(path: str, sections: list[tuple[str, str]]):
    body = "\n\n".join(f"## {h}\n\n{text}" for h, text in sections)
    return parse_note(path, f"---\ntitle: {path}\n---\n{body}\n")


def _spans(note, cosines: dict[str, float]):
    """(cosine, first block, last block) of each section's paragraph, as the meaning arm gives them."""
    blocks = blocks_of(note)
    out = []
    for i, b in enumerate(blocks):
        if b.kind == "paragraph":
            out.append((cosines.get(b.heading, 0.0), i, i))
    return sorted(out, reverse=True)


def test_the_best_passage_of_a_second_note_goes_in_before_a_long_first_note_whole():
    filler = " ".join(["padding words about nothing much"] * 40)
    long = _note("long.md", [("Intro", "The hive stands by the hedge."), *[(f"S{i}", filler) for i in range(8)]])
    other = _note("other.md", [("Rent", "The cello rental costs 32 EUR a month."), ("Misc", filler)])
    ranked = [(long, _spans(long, {"Intro": 0.5})), (other, _spans(other, {"Rent": 0.45}))]
    pack = passage_pack("a" * 40, ranked, 3_000, {"cello": 3.0, "rental": 3.0})
    assert pack.paths == ["other.md", "long.md"]  # the passage holding the question's words ranks first
    assert "32 EUR a month" in pack.render()
    texts = {f.path: f.text for f in pack.files}
    assert texts["long.md"].startswith("## Intro") and "The hive stands" in texts["long.md"]
    assert pack.files[1].parts is not None and sum(len(t.encode()) for t in texts.values()) <= 3_000


def test_a_note_packed_in_part_is_partial_only_when_a_left_out_passage_holds_a_question_term():
    filler = " ".join(["padding words about nothing much"] * 40)
    note = _note("bees.md", [("Count", "Gideon keeps 22 hives."), ("A", filler), ("B", filler + " hives again")])
    ranked = [(note, _spans(note, {"Count": 0.6}))]
    pack = passage_pack("b" * 40, ranked, 400, {"hives": 2.0})
    assert pack.paths == ["bees.md"] and "22 hives" in pack.files[0].text
    assert pack.partial == ["bees.md"]  # section B holds "hives" and was left out: not read in full
    whole = passage_pack("b" * 40, ranked, 100_000, {"hives": 2.0})
    assert whole.partial == [] and whole.files[0].parts is None
