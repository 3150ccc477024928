"""Students' nicknames: checked as plain text, and shown apart when two look alike.

A nickname is stored NFC-normalised (the same letters typed on two keyboards are the same
text), trimmed, its runs of spaces (of any width) made one plain space, at most MAX_NICKNAME
characters as a reader counts them (`characters`: a letter with its accents, an emoji sequence
joined by zero-width joiners, a flag or a skin tone is one), at most MAX_WIDTH columns wide as
a screen draws them (`width`: a Chinese character, a full-width letter or an emoji takes two,
a ligature standing for a phrase such as U+FDFD as many as its letters), and at most
MAX_CODE_POINTS code points. It has no control or format characters except where an emoji
sequence needs them (a zero-width joiner between two emoji, variation selectors, a subdivision
flag's tags) or a joiner after a virama (Indic scripts), no character made to look blank (a
Hangul filler), at most MAX_MARKS accents or other marks on one character and at most
MAX_CLUSTER code points in one: issue 38 had 40 letters joined by zero-width joiners counted
as one character and a "Z" with 99 combining marks, both shown on the roster. A right-to-left
override could make a name read as another. It is never interpreted: pages show it as text.

`shown_apart` numbers names that a teacher could not tell apart on the roster: the same
text, or text that only differs by case, accents, width or letters from another script that
look the same ("Ana" in Latin and "Аna" with a Cyrillic А): "Ana", "Ana (2)".
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from lnlab.core.errors import InputError

MAX_NICKNAME = 20  # characters as a reader counts them
MAX_CODE_POINTS = 240  # 20 emoji families of 7 code points; storage stays bounded
MAX_MARKS = 5  # on one character: Burmese stacks 4 (ချွေး), Tibetan 3, Hebrew with points 3
MAX_WIDTH = 30  # columns (`width`): 20 Latin letters and 5 emoji, 15 Chinese characters; a
# roster line or a picker's label never holds a name wider than half again the widest Latin one
# (20 full-width letters were 40; one U+FDFD is 22)
MAX_CLUSTER = 12  # code points in one character: the longest emoji sequences have 10 (a kiss
# with two skin tones), a subdivision flag 7, a family 7

ZWJ = "\u200d"  # zero-width joiner: glues emoji into one (a family, a profession)
# Format characters that emoji sequences need: the joiner, variation selectors, and the tag
# characters of subdivision flags (England, Scotland, Wales).
_EMOJI_FORMAT = {ZWJ, "\ufe0e", "\ufe0f"} | {chr(c) for c in range(0xE0020, 0xE0080)}
_SKIN_TONES = {chr(c) for c in range(0x1F3FB, 0x1F400)}
_REGIONAL = range(0x1F1E6, 0x1F200)  # two regional indicators make a flag
# Characters drawn much wider than a letter that no width property says so of: the two-em and
# three-em dashes, and U+FDFD, the 22 letters of a phrase in one glyph (with no compatibility
# form to count, unlike U+FDFA's 18)
_DRAWN_WIDE = {"\u2e3a": 2, "\u2e3b": 3, "\ufdfd": 22}
# Characters drawn as nothing that are neither format characters nor spaces: the Hangul
# fillers (a "blank" name in games), the blank Braille pattern, the combining grapheme joiner
# and Khmer's two invisible vowels.
_BLANK = {"\u115f", "\u1160", "\u3164", "\uffa0", "\u2800", "\u034f", "\u17b4", "\u17b5"}


# Letters of other scripts that print like Latin ones: enough to catch the usual look-alikes
# on a roster (Cyrillic and Greek capitals and small letters).
_LOOK_ALIKE = str.maketrans(
    {
        **dict.fromkeys("АаΑα", "a"),
        **dict.fromkeys("ВΒβ", "b"),
        **dict.fromkeys("СсϹϲ", "c"),
        **dict.fromkeys("ЕеΕε", "e"),
        **dict.fromkeys("НΗ", "h"),
        **dict.fromkeys("ІіΙι", "i"),
        **dict.fromkeys("Јј", "j"),
        **dict.fromkeys("КкΚκ", "k"),
        **dict.fromkeys("МΜ", "m"),
        **dict.fromkeys("ΝΝ", "n"),
        **dict.fromkeys("ОоΟο0", "o"),
        **dict.fromkeys("РрΡρ", "p"),
        **dict.fromkeys("Ѕѕ", "s"),
        **dict.fromkeys("ТΤτ", "t"),
        **dict.fromkeys("ХхΧχ", "x"),
        **dict.fromkeys("УуΥυ", "y"),
        **dict.fromkeys("ΖΖ", "z"),
        "1": "l",
        "|": "l",
    }
)


class NicknameError(InputError):
    """A nickname refused, with the reason for the student."""


def check_nickname(nickname: object) -> str:
    """The nickname as stored (see the module docstring), or NicknameError saying why not."""
    if not isinstance(nickname, str):
        raise NicknameError("a nickname is text")
    if len(nickname) > 10 * MAX_CODE_POINTS:
        raise NicknameError(f"a nickname has at most {MAX_NICKNAME} characters")
    nickname = unicodedata.normalize("NFC", nickname.strip())
    for i, c in enumerate(nickname):
        kind = unicodedata.category(c)
        if kind in ("Cc", "Zl", "Zp"):
            raise NicknameError("a nickname cannot contain line breaks or control characters")
        invisible = kind in ("Cf", "Co", "Cs", "Cn") and c not in _EMOJI_FORMAT
        if invisible or c in _BLANK or (c == ZWJ and not _joins(nickname, i)):
            raise NicknameError(f"a nickname cannot contain the invisible character U+{ord(c):04X}")
    nickname = " ".join(nickname.split())  # a run of spaces of any width: one plain space
    clusters = characters(nickname)
    if clusters and _mark(clusters[0][0]):
        raise NicknameError("a nickname cannot start with an accent or a mark")
    for cluster in clusters:
        if sum(_mark(c) for c in cluster) > MAX_MARKS:
            raise NicknameError(
                f"a nickname has at most {MAX_MARKS} accents or marks on one character"
            )
        if len(cluster) > MAX_CLUSTER:
            raise NicknameError(f"an emoji in a nickname has at most {MAX_CLUSTER} parts")
    if len(clusters) > MAX_NICKNAME or len(nickname) > MAX_CODE_POINTS:
        raise NicknameError(f"a nickname has at most {MAX_NICKNAME} characters")
    if sum(_width(cluster) for cluster in clusters) > MAX_WIDTH:
        raise NicknameError(
            f"this nickname is too wide to show: at most {MAX_NICKNAME} letters, or "
            f"{MAX_WIDTH // 2} Chinese, Japanese or Korean characters or emoji"
        )
    return nickname


def characters(text: str) -> list[str]:
    """`text` cut into the characters a reader counts (Unicode's grapheme clusters, closely
    enough: UAX 29's rules for marks, joiners, emoji sequences and flags; a letter, its virama
    and the next letter count two, as most fonts of those scripts may draw them). A joiner
    joins two emoji into one; anywhere else it only extends the character before it."""
    found: list[str] = []
    for c in text:
        if found and _extends(found[-1], c):
            found[-1] += c
        else:
            found.append(c)
    return found


def visible_length(text: str) -> int:
    """How many characters a reader counts (`characters`)."""
    return len(characters(text))


def width(text: str) -> int:
    """How many columns a screen gives `text` (a Latin letter's width each; see _width)."""
    return sum(_width(cluster) for cluster in characters(text))


def _width(cluster: str) -> int:
    """Columns of one character as a reader counts it, by its first code point: 2 for East
    Asian wide and full-width characters (Unicode's East_Asian_Width W or F) and emoji (a
    flag, a symbol shown as an emoji); as many as the letters a compatibility character
    stands for when that is more (U+FDFA, one code point, is an 18-letter phrase; U+3392
    "㎒" is "MHz"); _DRAWN_WIDE's as listed; else 1."""
    first = cluster[0]
    if first in _DRAWN_WIDE:
        return _DRAWN_WIDE[first]
    emoji = _pictographic(first) or ord(first) in _REGIONAL or "\ufe0f" in cluster
    columns = 2 if emoji or unicodedata.east_asian_width(first) in ("W", "F") else 1
    spelled = unicodedata.normalize("NFKC", first)
    if len(spelled) > 1:
        return max(columns, sum(_width(c) for c in spelled))
    return columns


def _mark(c: str) -> bool:
    """A combining mark (an accent, a vowel sign, a variation selector, an enclosing keycap)."""
    return unicodedata.category(c).startswith("M")


def _pictographic(c: str) -> bool:
    """An emoji that joiners combine: a symbol in the emoji planes, or among the BMP's symbols
    and dingbats (❤, ♀, ⚕, ✈, ⬛)."""
    o = ord(c)
    emoji_range = o >= 0x1F000 or 0x2600 <= o <= 0x27BF or 0x2B00 <= o <= 0x2BFF
    return emoji_range and unicodedata.category(c) == "So" and o not in _REGIONAL


def _base(cluster: str) -> str:
    """The character a cluster's marks, selectors and skin tones attach to (its last emoji)."""
    for c in reversed(cluster):
        if c not in _EMOJI_FORMAT and c not in _SKIN_TONES and not _mark(c):
            return c
    return ""


def _extends(cluster: str, c: str) -> bool:
    if _mark(c) or c in _EMOJI_FORMAT or c in _SKIN_TONES:
        return True
    if cluster.endswith(ZWJ):  # an emoji joined to the emoji before it
        return _pictographic(c) and _pictographic(_base(cluster[:-1]))
    regional = [ord(x) in _REGIONAL for x in cluster]
    return ord(c) in _REGIONAL and regional == [True]  # a flag's second half


def _joins(text: str, i: int) -> bool:
    """Whether the zero-width joiner at `i` does a joiner's work: between two emoji, or after
    a virama (a consonant cluster's form in Indic scripts)."""
    before, after = text[:i], text[i + 1 : i + 2]
    if not before or not after:
        return False
    if unicodedata.combining(before[-1]) == 9:  # a virama: its next letter's joined form
        return unicodedata.category(after).startswith("L")
    return _pictographic(_base(before)) and _pictographic(after)


def look_alike_key(name: str) -> str:
    """What two names share when a reader cannot tell them apart: compatibility-normalised
    (full-width letters, ligatures), accents dropped, case folded, look-alike letters of
    other scripts read as Latin, spaces and invisible characters dropped."""
    folded = unicodedata.normalize("NFKD", name).casefold()
    letters = "".join(c for c in folded if not unicodedata.combining(c) and c not in _EMOJI_FORMAT)
    return "".join(letters.translate(_LOOK_ALIKE).split())


def shown_apart(names: Sequence[str]) -> list[str]:
    """The names in order, the second and later of each look-alike group numbered:
    ["Ana", "Bo", "ana"] -> ["Ana", "Bo", "ana (2)"]."""
    seen: dict[str, int] = {}
    shown = []
    for name in names:
        key = look_alike_key(name)
        seen[key] = seen.get(key, 0) + 1
        shown.append(name if seen[key] == 1 else f"{name} ({seen[key]})")
    return shown
