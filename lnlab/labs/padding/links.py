"""The padding page's link: its fields (URL parameter <-> session-state key), their defaults,
and the formats of its sentences and edited embeddings (lnlab.teach.links does the rest: versions,
bounds, caps). Old links' `slide` (the page's eight former sections) opens the same content.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from lnlab.core.errors import InputError
from lnlab.core.numbers import DEFAULT_EPS
from lnlab.core.parse import short_number
from lnlab.labs.padding.batch import (
    DEFAULT_REPLACEMENT,
    DEFAULT_STEPS,
    DIM,
    MAX_BETA,
    MAX_CALC_BATCH,
    MAX_CALC_LONGEST,
    MAX_EPS,
    MAX_OVERRIDES,
    MAX_SENTENCES,
    MAX_STEPS,
    MAX_TEXT_CHARS,
    MAX_WORD_CHARS,
    MAX_WORDS,
    PICK_NAIVE,
    PICKS,
    Sentences,
    Vector,
    embedding_value,
    parse_sentence,
    parse_sentences,
    words_of,
)
from lnlab.labs.padding.lesson import OLD_SLIDES, SECTION_KEYS
from lnlab.teach.links import Field, Param
from lnlab.teach.presets import BATCH_PRESETS, PADDING_COUNT, batch_preset

# Entries are "word:f1,f2,f3" joined by spaces: a word never holds whitespace, and the
# numbers never hold ":", so the last ":" of an entry ends its word.
MAX_SENTENCE_CHARS = MAX_WORDS * (MAX_WORD_CHARS + 1)  # the edited sentence
MAX_OVERRIDES_CHARS = MAX_OVERRIDES * (MAX_WORD_CHARS + 1 + DIM * 26)


def format_sentences(sentences: Sentences) -> str:
    """The sentences as the page's text: one per line, words joined by one space."""
    return "\n".join(" ".join(words) for words in sentences)


def canonical_sentences(text: str) -> str:
    """The text box as the link writes it: blank lines and repeated spaces dropped."""
    return format_sentences(parse_sentences(text))


def canonical_sentence(text: str) -> str:
    return " ".join(parse_sentence(text))


def format_overrides(overrides: Mapping[str, Vector]) -> str:
    """Edited embeddings as compact text: "Hi:9,1,8 today:0.5,-2,3"."""
    return " ".join(
        f"{word}:{','.join(short_number(v) for v in vector)}" for word, vector in overrides.items()
    )


def overrides_param(overrides: Mapping[str, Vector]) -> str | None:
    """The link's `w`: the edits, or None (no parameter) without any."""
    return format_overrides(overrides) or None


def parse_overrides(text: str) -> dict[str, Vector]:
    """The inverse of format_overrides, with the grid's checks: at most MAX_OVERRIDES words,
    each a valid word with DIM numbers in -MAX_ABS_VALUE..MAX_ABS_VALUE."""
    if len(text) > MAX_OVERRIDES_CHARS:
        raise InputError(f"{len(text):,} characters: at most {MAX_OVERRIDES_CHARS:,}")
    entries = text.split()
    if len(entries) > MAX_OVERRIDES:
        raise InputError(f"{len(entries)} edited words: at most {MAX_OVERRIDES}")
    overrides: dict[str, Vector] = {}
    for entry in entries:
        word, colon, numbers = entry.rpartition(":")
        if not colon or not word:
            raise InputError(f'"{entry[:20]}" is not word:number,number,number')
        (word,) = words_of(word, "an edited word")
        if word in overrides:
            raise InputError(f'"{word[:20]}" is edited twice')
        vector = tuple(embedding_value(v, word, j) for j, v in enumerate(numbers.split(",")))
        if len(vector) != DIM:
            raise InputError(f'"{word[:20]}" has {len(vector)} numbers: it needs {DIM}')
        overrides[word] = vector
    return overrides


@dataclass(frozen=True)
class CheckedText(Param):
    """A text link parameter that must also pass `check` (a parser raising InputError), so a
    link with, say, a 17-word sentence is refused as a whole instead of half-opened."""

    check: Callable[[str], object] = str

    def decode(self, raw: str) -> Any:
        text = super().decode(raw)
        try:
            self.check(text)
        except InputError as err:
            raise InputError(f"{self.name}: {err}") from err
        return text


# ---------------------------------------------------------------- the page's link


def _one_based(i: int) -> int:
    return i + 1


def _zero_based(i: int) -> int:
    return i - 1


def _index(name: str, key: str, most: int) -> Field:
    """A 1-based link parameter for a 0-based choice."""
    return Field(Param(name, "int", lo=1, hi=most), key, _zero_based, _one_based)


def _text(name: str, chars: int, lines: int, check: Callable[[str], object]) -> Param:
    return CheckedText(name, "text", max_chars=chars, max_lines=lines, check=check)


def defaults(preset: str) -> dict[str, Any]:
    """The page's state where a link sets nothing (the sentences follow the preset)."""
    return {
        "pad_sentences": "\n".join(batch_preset(preset).sentences),
        "pad_overrides": {},
        "pad_table_epoch": 0,
        "pad_eps": DEFAULT_EPS,
        "pad_beta": 0.0,
        "pad_pick": PICK_NAIVE,
        "pad_feature": 0,
        "pad_token": 0,
        "pad_focus": 0,
        "pad_other": 1,
        "pad_other_text": DEFAULT_REPLACEMENT,
        "pad_cf_feature": 0,
        "pad_batch": PADDING_COUNT.batch,
        "pad_longest": PADDING_COUNT.longest,
        "pad_average": float(PADDING_COUNT.average),
        "pad_steps": DEFAULT_STEPS,
        "pad_quiz": False,
        "pad_slide": 0,
    }


FIELDS = (
    Field(Param("preset", "choice", choices=tuple(p.key for p in BATCH_PRESETS)), "pad_preset"),
    Field(
        _text("s", MAX_TEXT_CHARS, MAX_SENTENCES, parse_sentences),
        "pad_sentences",
        from_widget=canonical_sentences,
    ),
    Field(
        _text("w", MAX_OVERRIDES_CHARS, 1, parse_overrides),
        "pad_overrides",
        parse_overrides,
        overrides_param,
    ),
    Field(Param("eps", "float", lo=0.0, hi=MAX_EPS), "pad_eps"),
    Field(Param("beta", "float", lo=-MAX_BETA, hi=MAX_BETA), "pad_beta"),
    Field(Param("stat", "choice", choices=tuple(PICKS)), "pad_pick"),
    _index("feat", "pad_feature", DIM),
    _index("tok", "pad_token", MAX_SENTENCES * MAX_WORDS),
    _index("focus", "pad_focus", MAX_SENTENCES),
    _index("other", "pad_other", MAX_SENTENCES),
    Field(
        _text("edit", MAX_SENTENCE_CHARS, 1, parse_sentence),
        "pad_other_text",
        from_widget=canonical_sentence,
    ),
    Field(Param("batch", "int", lo=1, hi=MAX_CALC_BATCH), "pad_batch"),
    Field(Param("longest", "int", lo=1, hi=MAX_CALC_LONGEST), "pad_longest"),
    Field(Param("avg", "float", lo=1.0, hi=MAX_CALC_LONGEST), "pad_average"),
    _index("cf", "pad_cf_feature", DIM),
    Field(Param("steps", "int", lo=1, hi=MAX_STEPS), "pad_steps"),
    Field(Param("q", "bool"), "pad_quiz"),
    # Old links name one of the page's eight former sections: open the section now holding it.
    Field(
        Param("slide", "int", lo=1, hi=len(OLD_SLIDES)),
        "pad_slide",
        lambda old: OLD_SLIDES[old - 1],
        lambda _: None,  # never written: new links use `section`
    ),
    _index("section", "pad_slide", len(SECTION_KEYS)),
    Field(Param("all", "bool"), "padding_all"),
)
