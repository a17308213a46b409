"""Replies under a size, pure: a text cut to fit a budget counted as sent (JSON, escapes included)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from cortex.tools.paging import cut_to_fit, json_size

TEXT = st.text(alphabet=st.sampled_from(["a", "é", "⟦", "\x01", "\x1f", "\n", '"', "\\", "\u2028"]), max_size=200)


@given(TEXT, st.integers(0, 600))
def test_a_cut_is_the_longest_start_whose_json_fits(text, cap):
    start = cut_to_fit(text, cap)
    assert text.startswith(start)
    if start:
        assert json_size(start) <= cap
    if start != text:
        assert json_size(text[: len(start) + 1]) > cap


@given(TEXT, st.integers(40, 600))
def test_a_cut_counts_what_wraps_it(text, cap):
    def wrap(start: str) -> dict:
        return {"page": f"BEGIN\n{start}\n[cut]\nEND"}

    start = cut_to_fit(text, cap, wrap)
    assert text.startswith(start) and json_size(wrap(start)) <= cap
