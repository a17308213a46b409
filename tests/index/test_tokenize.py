"""The tokenizer: what a word becomes, for notes and queries alike."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cortex.index import tokenize as tokmod
from cortex.index.tokenize import tokenize


def _reference(text: str) -> list[str]:
    """The slow definition: the chunk regex over the whole casefolded text."""
    out: list[str] = []
    for chunk in tokmod._CHUNK.findall(text.casefold()):
        if chunk.isalnum() and chunk.isascii():
            out.append(chunk)
        else:
            tokmod._chunk_terms(chunk, out)
    return out


# ----- case, digits, no compatibility folding ---------------------------------


def test_casefold_letters_and_keep_digits():
    assert tokenize("Hello WORLD 42 Straße") == ["hello", "world", "42", "strasse"]


def test_superscript_is_not_a_digit():
    assert tokenize("x⁶") == ["x⁶"]
    assert tokenize("x6") == ["x6"]
    assert tokenize("²") == ["²"]
    assert set(tokenize("area m²")).isdisjoint({"m2", "2"})


def test_fullwidth_is_not_folded_to_ascii():
    assert tokenize("ＡＢＣ") == ["ａｂｃ"]


def test_empty_and_punctuation_only():
    assert tokenize("") == []
    assert tokenize("   \n\t ") == []
    assert tokenize("## ** > ` [ ] ( ) | ~ --- ***") == []


# ----- accents -----------------------------------------------------------------


def test_accented_word_gives_itself_and_stripped_form():
    assert tokenize("Café") == ["café", "cafe"]
    assert tokenize("naïve Tiếng") == ["naïve", "naive", "tiếng", "tieng"]


def test_query_without_accent_matches_accented_note_and_back():
    assert set(tokenize("cafe")) <= set(tokenize("au café"))
    assert set(tokenize("café")) & set(tokenize("the cafe"))


def test_decomposed_spelling_equals_composed():
    assert tokenize("cafe\u0301") == tokenize("caf\u00e9")


def test_marks_of_other_scripts_are_not_stripped():
    assert tokenize("йод") == ["йод"]  # й is a letter of its own, not и
    assert tokenize("ά") == ["ά"]
    assert tokenize("हिन्दी") == ["हिन्दी"]  # vowel signs stay inside the word


def test_dotted_capital_i():
    assert "istanbul" in tokenize("İstanbul")


# ----- scripts without spaces ----------------------------------------------------


def test_chinese_bigrams_find_a_word_in_a_sentence():
    sentence = tokenize("我喜欢学习中文。")
    assert sentence == ["我喜", "喜欢", "欢学", "学习", "习中", "中文"]
    assert set(tokenize("学习")) <= set(sentence)


def test_japanese_mixed_scripts():
    sentence = set(tokenize("私は東京に住んでいます"))
    assert set(tokenize("東京")) <= sentence
    assert set(tokenize("住んで")) <= sentence
    assert tokenize("2025年の東京") == ["2025", "年の", "の東", "東京"]


def test_single_character_run_is_a_unigram():
    assert tokenize("猫") == ["猫"]
    assert tokenize("a 猫 b") == ["a", "猫", "b"]


def test_korean_particles():
    assert set(tokenize("학교")) <= set(tokenize("학교에서 공부"))


def test_thai_bigrams_keep_marks_with_their_letter():
    sentence = "ฉันชอบเรียนภาษาไทย"
    assert set(tokenize("ภาษา")) <= set(tokenize(sentence))
    assert set(tokenize("ไทย")) <= set(tokenize(sentence))
    # ง่าย: the tone mark stays with ง, so no term starts with a bare mark
    for term in tokenize("ง่ายนิดเดียว"):
        assert unicodedata.category(term[0]) not in ("Mn", "Mc")


@pytest.mark.slow
@settings(max_examples=200)
@given(
    st.text(alphabet=st.sampled_from("東京大阪学习中文日本語のにはでカタナ한국어학교"), min_size=2),
    st.data(),
)
def test_any_cjk_substring_matches_its_sentence(sentence, data):
    i = data.draw(st.integers(0, len(sentence) - 2))
    j = data.draw(st.integers(i + 2, len(sentence)))
    assert set(tokenize(sentence[i:j])) <= set(tokenize(sentence))


# ----- technical tokens ----------------------------------------------------------


@pytest.mark.parametrize(
    "text, terms",
    [
        ("c++", ["c++"]),
        ("I like C#.", ["i", "like", "c#"]),
        ("g++ and F#", ["g++", "and", "f#"]),
        (".NET", [".net", "net"]),
        ("snake_case_names", ["snake_case_names", "snake", "case", "names"]),
        ("file-names.md", ["file-names.md", "file", "names", "md"]),
        ("Python 3.11.7", ["python", "3.11.7", "3", "11", "7"]),
        ("me@example.com", ["me@example.com", "me", "example", "com"]),
        ("https://ex.org/a", ["https://ex.org/a", "https", "ex", "org", "a"]),
        ("2025-01-15 14:30", ["2025-01-15", "2025", "01", "15", "14:30", "14", "30"]),
        ("don’t", ["don't", "don", "t"]),
        ("node.js", ["node.js", "node", "js"]),
    ],
)
def test_technical_tokens(text, terms):
    assert tokenize(text) == terms


def test_version_query_finds_longer_version():
    assert set(tokenize("3.11")) & set(tokenize("upgraded to 3.11.7"))
    assert "3.11.7" in tokenize("upgraded to 3.11.7.")


def test_plus_and_hash_only_as_suffix_after_a_letter():
    assert tokenize("a+b 1+1 issue#42 #tag") == ["a", "b", "1", "1", "issue", "42", "tag"]


# ----- Markdown ------------------------------------------------------------------


def test_markdown_syntax_is_not_part_of_terms():
    md = (
        "# Title\n## Sub *em* **bold** _it_ __strong__ `code`\n"
        "> quote\n- [link](notes/x-y.md) | cell | ~~gone~~ ![img](a.png) [[wiki]]"
    )
    assert tokenize(md) == [
        "title", "sub", "em", "bold", "it", "strong", "code", "quote", "link",
        "notes/x-y.md", "notes", "x", "y", "md", "cell", "gone", "img",
        "a.png", "a", "png", "wiki",
    ]  # fmt: skip


_MD_ALPHABET = st.sampled_from(
    list("ab_cZ9.#*->`[]()|~!?,:;'\"/@+ \n\t") + ["é", "東", "京", "\u0301", "ไ", "\u0e48", "’"]
)


@pytest.mark.slow
@settings(max_examples=500)
@given(st.text(alphabet=_MD_ALPHABET, max_size=60))
def test_markdown_punctuation_never_inside_terms(text):
    for term in tokenize(text):
        assert term
        assert not set(term) & set('*>`[]()|~!?,;"\n\t ')
        assert "#" not in term[:-1] and "+" not in term.rstrip("+")
        assert not term.startswith("_") and not term.endswith("_")


# ----- robustness and the fast path ------------------------------------------------

_ANY_TEXT = st.text(alphabet=st.characters(codec=None), max_size=80)
_SURROGATES = st.text(
    alphabet=st.one_of(st.characters(categories=["Cs"]), st.sampled_from("ab .é_")),
    max_size=30,
)


@pytest.mark.slow
@settings(max_examples=500)
@given(st.one_of(_ANY_TEXT, _SURROGATES))
def test_never_raises_and_is_deterministic(text):
    first = tokenize(text)
    assert first == tokenize(text)
    assert all(isinstance(t, str) and t for t in first)


def test_lone_surrogates():
    assert tokenize("a\ud800b \udfff") == ["a", "b"]


@pytest.mark.slow
@settings(max_examples=1000)
@given(st.one_of(st.text(alphabet=_MD_ALPHABET, max_size=60), _ANY_TEXT))
def test_fast_path_equals_whole_text_regex(text):
    assert tokenize(text) == _reference(text)


@pytest.mark.slow
@settings(max_examples=500)
@given(st.one_of(st.text(alphabet=_MD_ALPHABET, max_size=40), _ANY_TEXT))
def test_every_term_typed_as_a_query_finds_itself(text):
    for term in tokenize(text):
        assert term in tokenize(term), term


@pytest.mark.slow
def test_marks_table_matches_this_python():
    """_MARKS is a literal for a fast import; it must equal Unicode's M* categories."""
    in_table = tokmod.re.compile(f"[{tokmod._MARKS}]")
    for cp in range(0x110000):
        ch = chr(cp)
        is_mark = unicodedata.category(ch) in ("Mn", "Mc", "Me")
        assert bool(in_table.match(ch)) == is_mark, (
            f"U+{cp:04X}: regenerate _MARKS for Unicode {unicodedata.unidata_version}"
        )


@pytest.mark.slow
@settings(max_examples=500, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=80))
def test_every_term_of_ascii_text_is_a_substring_of_its_casefold(text):
    """What a search hit's passage relies on to skip a block without tokenizing it
    (tools._passage_score): in ASCII text, no term is made that the text does not spell."""
    folded = text.casefold()
    assert all(term in folded for term in tokenize(text))
