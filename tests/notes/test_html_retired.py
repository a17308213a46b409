"""HTML that strikes or hides text (cortex.notes.html_elements, read by cortex.notes.structure).

Each note is what a person might write; the words marked OLD are the ones their editor
shows struck through, HIDE the ones it does not show at all, LIVE the rest. A word is
read as the editor shows it: `structure(body).struck()` / `.hidden()`, and each block's
`marks()`, which the verifier reads.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cortex.notes.blocks import blocks_of
from cortex.notes.html_elements import HIDDEN, STRUCK, effect, tags
from cortex.notes.note import parse_note
from cortex.notes.structure import inside, line_spans, parsed, simple_leaves, structure

WORD = re.compile(r"\b(OLD|HIDE|LIVE)\d*\b")


def reading(body: str) -> dict[str, list[str]]:
    """Each kind of word of `body` (by its name: OLD, HIDE, LIVE) as the structure reads it."""
    st_ = structure(body)
    struck, hidden = st_.struck(), st_.hidden()
    out: dict[str, list[str]] = {}
    for m in WORD.finditer(body):
        seen = "hidden" if inside(hidden, m.start()) else "struck" if inside(struck, m.start()) else "live"
        out.setdefault(m.group(1), []).append(seen)
    return out


def expect(body: str) -> None:
    got = reading(body)
    want = {"OLD": "struck", "HIDE": "hidden", "LIVE": "live"}
    for name, seen in got.items():
        assert set(seen) == {want[name]}, (body, got)


RETIRED = {
    "inline del": "The boiler LIVE is serviced <del>OLD every OLD2 months</del> LIVE2.\n",
    "inline s and strike": "Plan: <s>OLD</s> LIVE, then <strike>OLD2 OLD3</strike> LIVE2.\n",
    "upper case": "Plan: <DEL>OLD</DEL> LIVE <S>OLD2</s> LIVE2 <Strike>OLD3</STRIKE>.\n",
    "del HTML block": "<del>\nOLD is serviced every OLD2 months.\n</del>\n\nLIVE\n",
    "del around paragraphs": "<del>\n\nOLD is serviced.\n\n## OLD2 heading\n\n- OLD3 item\n\n</del>\n\nLIVE after.\n",
    "unclosed del block": "LIVE first.\n\n<del>\n\nOLD to the end.\n\nOLD2 too.\n",
    "unclosed inline del ends with its paragraph": "LIVE <del>OLD runs on\nOLD2 wrapped\n\nLIVE2 next.\n",
    "unclosed inline s runs on": "LIVE <s>OLD here\n\nOLD2 next, as a browser opens it again.\n\n</s>\n\nLIVE2\n",
    "nested": "<del>OLD <b>OLD2</b> <del>OLD3</del> OLD4</del> LIVE\n",
    "line-through style": '<span style="color: red; text-decoration: line-through">OLD</span> LIVE\n',
    "in a block quote": "> <del>\n>\n> OLD quoted.\n\nLIVE outside.\n",
    "in a list item": "- <del>\n\n  OLD in the item\n- LIVE next item\n",
    "self-closing slash ignored": "LIVE <del/>OLD runs to the paragraph's end\n\nLIVE2\n",
    "a table cell": "| a | b |\n|---|---|\n| <del>OLD | LIVE |\n",
    "heading": "## <del>OLD</del> LIVE\n\nLIVE2\n",
}
HIDDEN_CASES = {
    "div hidden block": "<div hidden>\nHIDE every 18 months.\n</div>\n\nLIVE\n",
    "span hidden inline": "LIVE <span hidden>HIDE</span> LIVE2\n",
    "hidden with a value": 'LIVE <span hidden="until-found">HIDE</span> <p hidden=false>HIDE2</p>\n',
    "display none": 'LIVE <span style="display: none">HIDE</span> <span style="DISPLAY:NONE !important">HIDE2</span>\n',
    "display none by a character reference": 'LIVE <span style="display&#58; none">HIDE</span>\n',
    "visibility hidden": "LIVE <span style='visibility:hidden'>HIDE</span>\n",
    "script block": "<script>\nHIDE = 1; // </del> is no tag here\n</script>\n\nLIVE\n",
    "style block": "<style>\np { HIDE: 0 }\n</style>\n\nLIVE\n",
    "template": "<template>\n\nHIDE in a template.\n\n</template>\n\nLIVE\n",
    "hidden around paragraphs": "<div hidden>\n\nHIDE one.\n\nHIDE2 two.\n\n</div>\n\nLIVE\n",
    "unclosed inline script hides the rest": "LIVE <script>HIDE\n\nHIDE2 even the next paragraph\n",
    "hidden wins over struck": "<del>OLD <span hidden>HIDE</span> OLD2</del> LIVE\n",
    "multi-line tag": "<div\n  hidden>\nHIDE\n</div>\n\nLIVE\n",
    "an unclosed comment in an HTML block": "<div>\n<!-- HIDE\n\nHIDE2 after the blank line\n",
    "comment": "LIVE <!-- HIDE --> LIVE2\n",
}
CONTROLS = {
    "bold": "LIVE <b>LIVE2</b> and <strong>LIVE3</strong>.\n",
    "span": 'LIVE <span class="note" style="color: grey">LIVE2</span>\n',
    "div": "<div>\n\nLIVE inside a plain div.\n\n</div>\n",
    "details": "<details>\n<summary>LIVE</summary>\n\nLIVE2 body\n\n</details>\n",
    "ins": "Now <ins>LIVE</ins>.\n",
    "tags in code": "Write `<del>LIVE</del>` or\n\n```html\n<div hidden>LIVE2</div>\n```\n\nLIVE3\n",
    "escaped": "A \\<del>LIVE\\</del> and 3 < 5 > 2 LIVE2\n",
    "a closed del ends": "<del>OLD</del>\n\nLIVE after it.\n",
    "an end tag that closes nothing": "LIVE </del> LIVE2\n\n</div>\n\nLIVE3\n",
    "display block": '<span style="display: block">LIVE</span>\n',
}


@pytest.mark.parametrize("name", sorted(RETIRED))
def test_html_that_strikes_text_retires_it(name: str) -> None:
    expect(RETIRED[name])


@pytest.mark.parametrize("name", sorted(HIDDEN_CASES))
def test_html_that_hides_text_hides_it(name: str) -> None:
    expect(HIDDEN_CASES[name])


@pytest.mark.parametrize("name", sorted(CONTROLS))
def test_html_that_neither_strikes_nor_hides_is_live(name: str) -> None:
    expect(CONTROLS[name])


def test_a_block_carries_what_reaches_into_it_from_an_earlier_html_block() -> None:
    body = "<del>\n\nThe boiler is serviced every 18 months.\n\n</del>\n\nNow every 12 months.\n"
    note = parse_note("n.md", body)
    para, live = (b for b in blocks_of(note) if b.kind == "paragraph")
    assert [note.text[a:b] for a, b in para.marks().struck] == [body[: body.index("</del>") + 6]]
    assert live.marks().struck == () and live.marks().hidden == ()


def test_tags_and_their_effect() -> None:
    found = tags('<DIV Hidden>a <del>b</del> <br> <span style="x:y">c</span><!-- <s> --></div>')
    assert [(t.name, t.closing, t.effect) for t in found] == [
        ("div", False, HIDDEN),
        ("del", False, STRUCK),
        ("del", True, None),
        ("span", False, None),
        ("span", True, None),
        ("div", True, None),
    ]
    assert effect("del", [("hidden", None)]) == HIDDEN
    assert effect("span", [("style", "display : none ;")]) == HIDDEN
    assert effect("span", [("style", "display: nonesuch")]) is None
    assert effect("span", [("style", "text-decoration-line: underline line-through")]) == STRUCK


_HTML_LINE = st.sampled_from(
    [
        "word <del>old</del> word",
        "a <s>b",
        "c </s> d",
        "x <span hidden>y</span> z",
        "text <b>bold</b>",
        "text <script>s</script> more",
        "plain words",
        "- item <del>x</del>",
        "# Head <strike>x</strike>",
        "",
        "*em* <template>t",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_HTML_LINE, max_size=10), st.sampled_from(["\n", "\r\n"]))
def test_the_shortcut_reads_inline_html_as_the_parser_does(lines: list[str], eol: str) -> None:
    """A plain body with inline HTML (no line starts with `<`) may skip the block parser;
    it then strikes and hides exactly what the parser's reading does."""
    body = eol.join(lines)
    spans = line_spans(body)
    simple = simple_leaves(body, spans)
    assert simple is not None
    full = parsed(body, spans)
    assert (structure(body).struck(), structure(body).hidden()) == (full.struck(), full.hidden())
