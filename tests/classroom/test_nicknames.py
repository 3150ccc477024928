"""Nicknames: plain text, normalised, emoji sequences counted as a reader counts them, and
look-alikes shown apart on the teacher's roster."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lnlab.classroom.nicknames import (
    MAX_CODE_POINTS,
    MAX_NICKNAME,
    NicknameError,
    check_nickname,
    shown_apart,
    visible_length,
)


@pytest.mark.parametrize(
    ("name", "length"),
    [
        ("Ana", 3),
        ("👨\u200d👩\u200d👧\u200d👦", 1),  # a family: four emoji and three joiners
        ("👩🏽\u200d💻", 1),  # a woman technologist with a skin tone
        ("🇫🇷", 1),  # a flag: two regional indicators
        ("🇫🇷🇩🇪", 2),
        ("🏴\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f", 1),  # Scotland
        ("❤\ufe0f", 1),
        ("e\u0301", 1),  # e and a combining acute accent
    ],
)
def test_emoji_sequences_count_as_one_character(name: str, length: int) -> None:
    assert visible_length(name) == length
    assert check_nickname(name) == unicodedata.normalize("NFC", name)


def test_nicknames_are_normalised_and_trimmed() -> None:
    assert check_nickname("  Zoe\u0301 ") == "Zoé"  # NFC: one code point, as typed elsewhere
    assert check_nickname("👨\u200d👩\u200d👧\u200d👦" * MAX_NICKNAME)  # 20 families fit


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("a\nb", "line breaks"),
        ("a\x00b", "control characters"),
        ("ab\u202ecba", r"invisible character U\+202E"),  # right-to-left override
        ("a\u200bb", r"invisible character U\+200B"),  # zero-width space
        ("x" * (MAX_NICKNAME + 1), "at most 20 characters"),
        ("e\u0301" * (MAX_NICKNAME + 1), "at most 20 characters"),
        ("🇫" * (MAX_CODE_POINTS + 2), "at most 20 characters"),  # bounded storage
        (7, "is text"),
    ],
)
def test_bad_nicknames_say_why(name: object, message: str) -> None:
    with pytest.raises(NicknameError, match=message):
        check_nickname(name)


def test_look_alikes_are_shown_apart() -> None:
    names = ["Ana", "Bo", "ana", "\u0410na", "Ａｎａ", "Ána", "A na", "Bob", "Ana"]
    assert shown_apart(names) == [
        "Ana",
        "Bo",
        "ana (2)",
        "\u0410na (3)",  # a Cyrillic А
        "Ａｎａ (4)",  # full-width letters
        "Ána (5)",
        "A na (6)",
        "Bob",
        "Ana (7)",
    ]


@given(st.lists(st.text(max_size=8), max_size=12))
def test_shown_apart_keeps_order_and_makes_every_name_distinct(names: list[str]) -> None:
    shown = shown_apart(names)
    assert len(shown) == len(names)
    assert all(s.startswith(n) for s, n in zip(shown, names, strict=True))
    assert len({s for s, n in zip(shown, names, strict=True) if s != n}) == sum(
        s != n for s, n in zip(shown, names, strict=True)
    )
