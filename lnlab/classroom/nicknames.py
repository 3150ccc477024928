"""Students' nicknames: checked as plain text, and shown apart when two look alike.

A nickname is stored NFC-normalised (the same letters typed on two keyboards are the same
text), trimmed, at most MAX_NICKNAME characters as a reader counts them (an emoji sequence
joined by zero-width joiners, a flag or a skin tone is one), with no control or format
characters except those emoji sequences need (a right-to-left override could make a name
read as another). It is never interpreted: pages show it as text.

`shown_apart` numbers names that a teacher could not tell apart on the roster: the same
text, or text that only differs by case, accents, width or letters from another script that
look the same ("Ana" in Latin and "Аna" with a Cyrillic А): "Ana", "Ana (2)".
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence

from lnlab.core.errors import InputError

MAX_NICKNAME = 20  # characters as a reader counts them
MAX_CODE_POINTS = 240  # 20 emoji families of 7 code points fit; storage stays bounded

ZWJ = "\u200d"  # zero-width joiner: glues emoji into one (a family, a profession)
# Format characters that emoji sequences need: the joiner, variation selectors, and the tag
# characters of subdivision flags (England, Scotland, Wales).
_EMOJI_FORMAT = {ZWJ, "\ufe0e", "\ufe0f"} | {chr(c) for c in range(0xE0020, 0xE0080)}
_SKIN_TONES = {chr(c) for c in range(0x1F3FB, 0x1F400)}
_REGIONAL = range(0x1F1E6, 0x1F200)  # two regional indicators make a flag

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
    for c in nickname:
        kind = unicodedata.category(c)
        if kind in ("Cc", "Zl", "Zp"):
            raise NicknameError("a nickname cannot contain line breaks or control characters")
        if kind in ("Cf", "Co", "Cs", "Cn") and c not in _EMOJI_FORMAT:
            raise NicknameError(f"a nickname cannot contain the invisible character U+{ord(c):04X}")
    if visible_length(nickname) > MAX_NICKNAME or len(nickname) > MAX_CODE_POINTS:
        raise NicknameError(f"a nickname has at most {MAX_NICKNAME} characters")
    return nickname


def visible_length(text: str) -> int:
    """How many characters a reader counts: combining marks, emoji joiners, the characters
    they join, variation selectors, skin tones and tags add nothing; a flag's two regional
    indicators count once."""
    count, joined, regional = 0, False, False
    for c in text:
        if c == ZWJ:
            joined = True
            continue
        if c in _EMOJI_FORMAT or c in _SKIN_TONES or unicodedata.combining(c):
            continue
        if joined:
            joined = False
            continue
        if ord(c) in _REGIONAL:
            regional = not regional
            if not regional:
                continue  # the second half of a flag
        else:
            regional = False
        count += 1
    return count


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
