"""Nicknames: plain text, normalised, emoji sequences counted as a reader counts them, and
look-alikes shown apart on the teacher's roster."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from lnlab.classroom.nicknames import (
    MAX_CLUSTER,
    MAX_CODE_POINTS,
    MAX_MARKS,
    MAX_NICKNAME,
    MAX_WIDTH,
    NicknameError,
    characters,
    check_nickname,
    shown_apart,
    visible_length,
    width,
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
        ("👩🏻\u200d❤\ufe0f\u200d💋\u200d👨🏼", 1),  # a kiss with two skin tones: 10 code points
        ("❤\ufe0f\u200d🔥", 1),  # a heart on fire: the joiner after a variation selector
        ("🏃\u200d♀\ufe0f", 1),  # a woman running: ♀ is in the BMP
        ("1\ufe0f\u20e3", 1),  # a keycap
        ("ချွေး", 1),  # Burmese: a letter with four marks
        ("क्षत्रिय", 5),  # Devanagari: a virama's consonant counts on its own
        ("ශ්\u200dරී", 2),  # Sinhala's "Sri": a joiner after a virama
        ("קָדוֹשׁ", 4),  # Hebrew with its points
    ],
)
def test_emoji_sequences_count_as_one_character(name: str, length: int) -> None:
    assert visible_length(name) == length
    assert check_nickname(name) == unicodedata.normalize("NFC", name)


def test_nicknames_are_normalised_and_trimmed() -> None:
    assert check_nickname("  Zoe\u0301 ") == "Zoé"  # NFC: one code point, as typed elsewhere
    assert check_nickname("👨\u200d👩\u200d👧\u200d👦" * (MAX_WIDTH // 2))  # 15 families fit
    assert check_nickname("Ana \u3000\u2003 Bo\u00a0Li") == "Ana Bo Li"  # spaces of any width


def test_a_character_holds_at_most_so_many_marks_and_code_points() -> None:
    five = "Z\u0308\u0301\u0300\u0323\u0330"
    assert check_nickname(five) == unicodedata.normalize("NFC", five)
    assert len(characters("Z" + "\u0301" * 99)) == 1  # what a reader counts: one
    assert MAX_MARKS == 5 and MAX_CLUSTER >= 10
    assert characters("a\u200db") == ["a\u200d", "b"]  # a joiner between letters joins nothing


@given(st.text(max_size=60))
def test_whatever_is_kept_is_within_every_cap(name: str) -> None:
    try:
        kept = check_nickname(name)
    except NicknameError:
        return
    assert visible_length(kept) <= MAX_NICKNAME and len(kept) <= MAX_CODE_POINTS
    assert width(kept) <= MAX_WIDTH
    for character in characters(kept):
        assert len(character) <= MAX_CLUSTER
        assert sum(unicodedata.category(c).startswith("M") for c in character) <= MAX_MARKS
    assert check_nickname(kept) == kept  # stored as it would be checked again


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
        # issue 38: 40 letters joined by zero-width joiners, and a Z with 99 combining marks
        ("\u200d".join("abcdefghijklmnopqrstuvwxyzabcdefghijklmn"), r"invisible character U\+200D"),
        ("Z" + "\u0301" * 99, "at most 5 accents or marks on one character"),
        ("Z" + "\u0308\u0301\u0300" * 2, "at most 5 accents"),  # 6: one too many
        ("Z" + "\ufe0f" * 99, "at most 5 accents"),  # variation selectors are marks too
        ("Z" + "\U000e0067" * 99, f"at most {MAX_CLUSTER} parts"),  # tag characters
        ("\u200d".join("😀" * 40), f"at most {MAX_CLUSTER} parts"),  # a chain of 40 emoji
        ("a\u200d", r"invisible character U\+200D"),  # a joiner with nothing after it
        ("\u200d😀", r"invisible character U\+200D"),
        ("→\u200d→", r"invisible character U\+200D"),  # arrows are not emoji
        ("\u3164\u3164\u3164", r"invisible character U\+3164"),  # Hangul fillers look blank
        ("\u2800", r"invisible character U\+2800"),  # the blank Braille pattern
        ("a\u034fb", r"invisible character U\+034F"),  # the combining grapheme joiner
        ("\u0301abc", "cannot start with an accent"),
        (7, "is text"),
    ],
)
def test_bad_nicknames_say_why(name: object, message: str) -> None:
    with pytest.raises(NicknameError, match=message):
        check_nickname(name)


@pytest.mark.parametrize(
    ("name", "columns"),
    [
        ("Ana", 3),
        ("李小龙", 6),  # East Asian wide: 2 each
        ("한국어", 6),
        ("Ｚｏｅ", 6),  # full-width letters
        ("ｱｲｳ", 3),  # half-width katakana: 1 each
        ("😀", 2),
        ("👨\u200d👩\u200d👧", 2),  # one character, drawn as one emoji
        ("🇫🇷", 2),  # a flag
        ("❤\ufe0f", 2),  # a symbol shown as an emoji
        ("e\u0301", 1),  # a letter with its accent
        ("\u3392", 3),  # ㎒: "MHz" in one code point
        ("\ufdfa", 18),  # an 18-letter phrase in one ligature
        ("\ufdfd", 22),  # the bismillah: no compatibility form, listed
        ("\u2e3b", 3),  # the three-em dash
    ],
)
def test_width_counts_columns_as_a_screen_draws_them(name: str, columns: int) -> None:
    assert width(name) == columns


def test_a_nickname_is_at_most_so_wide() -> None:
    """Issue 38's note: one code point (U+FDFD) could be drawn as wide as a sentence, and 20
    wide characters took twice a Latin name's room."""
    assert check_nickname("李" * (MAX_WIDTH // 2)) and check_nickname("x" * MAX_NICKNAME)
    assert check_nickname("Ana " + "😀" * 5) and check_nickname("\ufdfd")
    for wide in ("李" * (MAX_WIDTH // 2 + 1), "Ｚ" * MAX_NICKNAME, "\ufdfd" * 2, "😀" * 16):
        with pytest.raises(NicknameError, match="too wide to show: at most 20 letters, or 15"):
            check_nickname(wide)


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
