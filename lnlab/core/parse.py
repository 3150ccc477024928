"""Read typed or pasted numbers (embeddings, gamma, beta) and token labels.

Accepted embedding text, one row per token:

* numbers separated by commas and/or spaces or tabs; rows separated by new lines or ";"
  (blank lines are ignored, a trailing comma on a row is fine): ``1, 2\\n3 4`` or ``1 2; 3 4``
* a pasted Python, NumPy or torch literal or printout: ``[[0.1, 0.3], [0.2, 0.4]]``,
  ``np.array([...])``, ``tensor([...], grad_fn=<AddBackward0>)``, ``[[0.1 0.3]\\n [0.2 0.4]]``.
  A 3-D literal of shape (1, S, D) or (S, 1, D) is read as (S, D).
* numbers in ASCII: ``-1.5``, ``+2``, ``.5``, ``5.``, ``1e-3``; the Unicode minus sign also
  counts as "-". Other digits (``٣``, ``３``), ``1_000``, ``nan`` and ``inf`` are rejected, and
  so are numbers too large for a float64 (``1e309``) or too small to be told from 0 (``1e-400``:
  not 0, but below about 5e-324 in size). Tiny numbers a float64 still holds (``1e-310``) are
  fine.
* a leading byte-order mark (U+FEFF, which some editors put at the start of a file) is
  dropped; a token in parentheses, ``(1, 2, 3)``, reads as in square brackets (a text with
  no square brackets that starts with "(": ``(1, 2)\\n(3, 4)`` and ``((1, 2), (3, 4))`` too).

Literals are read by a small bracket scanner, never by ``eval``, so nothing pasted can run.

Decimal commas and grouped digits are never guessed at: a text that could mean two different
lists of numbers is refused with a message that says what it saw and how to write it.
"Tight" below means a comma with an ASCII digit right before and right after it (``1,5``);
a comma next to a space, a bracket or the end of a row is "loose" (``1, 5``, ``1 ,5``, ``5,``).

* Outside brackets, commas separate numbers when the text has a loose comma or a word (a run
  without spaces) with two or more commas: ``1, 5`` is [1, 5], ``2,4, 6 8`` [2, 4, 6, 8],
  ``1,2,3`` [1, 2, 3]. Otherwise a tight comma between two runs of digits (``1,5``,
  ``-0,25``, ``1,5e3``) could be a decimal comma, so the text is refused: ``1,5`` (1.5, or 1
  and 5?), ``1,5 2,5 3,5`` and ``1,2\\n3,4`` alike. Where commas do separate, a text every
  one of whose numbers is such a pair (``1,5, 2,5``) is refused too.
* Digits grouped by commas are refused anywhere outside brackets: a word ``1,000``,
  ``12,345,678`` or ``1,000.5`` (one to three digits, then groups of exactly three after
  each comma) could be one number, and so could ``1.000,5`` (dots grouping, a decimal comma).
* Digits grouped by spaces are refused anywhere: a whole number of one to three digits, then
  a space and a group of three digits starting with 0 (``1 000 000``, ``2 050``), or then one
  no-break, figure, thin or narrow no-break space (U+00A0, U+2007, U+2009, U+202F: spaces
  made for grouping) and any three digits (``1\\u202f500``). ``100 200 300`` is three numbers.
* Inside brackets (or parentheses) commas and spaces separate numbers as in Python and NumPy
  (``[1,5]`` is [1, 5]), except that a list whose items are separated by spaces alone and
  which also holds a tight comma (``[1,5 2,5]``) is refused, as decimal commas.
* Text written by a program that always separates with commas (a shared link's ``1,5``)
  passes ``commas="separate"``: every comma then separates numbers, and only grouped digits
  with spaces are refused.

Caps, checked before any number is converted:

* ``MAX_TOKENS`` = 64 rows (tokens) and ``MAX_FEATURES`` = 64 numbers per row (features);
* ``MAX_CHARS`` = 110,000 characters of text: longer text is rejected before any parsing;
* ``MAX_LABEL_CHARS`` = 40 characters per token label.

Every problem raises :class:`~lnlab.core.errors.InputError` with a plain-text message that says
where it is (``row 2, column 3: "0..4" is not a number``) and quotes at most 20 characters
of the offending text, with control and other invisible characters escaped.
"""

from __future__ import annotations

import math
import re
import unicodedata

import numpy as np

from lnlab.core.errors import InputError

MAX_TOKENS = 64
MAX_FEATURES = 64
MAX_CHARS = 110_000  # a 64 x 64 matrix of full-precision floats fits
MAX_LABEL_CHARS = 40

_MAX_DEPTH = 3  # [[[...]]]: a batch of one sequence
_QUOTE_CHARS = 20

Node = str | list["Node"]  # a number's text, or a bracketed list of nodes

# Every pattern runs in time linear in the text: no two quantifiers that can take the same
# characters sit next to each other or one inside another (tests/core/test_parse_growth.py).
_MINUS = re.compile(r"\u2212|[\u2013\ufe63\uff0d](?=\.?[0-9])")
_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_NON_FINITE = re.compile(r"[+-]?(?:nan|inf(?:inity)?)", re.IGNORECASE)
_ROW_SEP = re.compile(r"[\r\n;]")
# Spaces, then an optional comma (not "\s*,\s*|\s+", whose alternatives scan the same spaces).
_CELL_SEP = re.compile(r"\s+(?:,\s*)?|,\s*")
_ATOM = re.compile(r"[^\[\],\s]+")
_HEAD = re.compile(
    r"\s*(?:Parameter containing:\s*)?"  # torch's print of an nn.Parameter
    r"(?:[A-Za-z_]\w*\s*=\s*)?"  # x = ...
    r"(?:(?:[A-Za-z_][\w.]*\s*)?(?P<paren>\())?",  # np.array( / tensor( / (
    re.ASCII,
)
# dtype=torch.float16. No "\s*" after "=": the value's own class matches spaces too, and two
# quantifiers over the same characters backtrack quadratically on "a=" + spaces + "=".
_KEYWORD_ARG = re.compile(r"[A-Za-z_]\w*\s*=[^()\[\]=]+", re.ASCII)
_LABEL_SEP = re.compile(r"[,\r\n]")
_LINE_SEP = re.compile(r"\r\n|[\r\n]")
_BAD_IN_LABELS = {"Cc", "Cs", "Zl", "Zp"}  # control characters, lone surrogates, line breaks

# Decimal commas and grouped digits (see the module docstring). Linear: each repeated group
# starts with a character ("," or ".") that the group before it cannot take.
_COMMA_PAIR = re.compile(r"[+-]?[0-9]+,[0-9]+(?:[eE][+-]?[0-9]+)?")
_COMMA_GROUPS = re.compile(r"[+-]?[0-9]{1,3}(?:,[0-9]{3})+(?:\.[0-9]*)?")
_DOT_GROUPS_DECIMAL_COMMA = re.compile(r"[+-]?[0-9]{1,3}(?:\.[0-9]{3})+,[0-9]+")
_TIGHT_COMMA = re.compile(r"(?<=[0-9]),(?=[0-9])")
_LOOSE_CELL_SEP = re.compile(r"\s+|(?<![0-9]),|,(?![0-9])")
_GROUP_WORD = re.compile(r"[^\s,;\[\]()]+")
_GROUP_HEAD = re.compile(r"[+-]?[0-9]{1,3}")
_ZERO_GROUP = re.compile(r"0[0-9]{2}(?:[.,][0-9]+)?")
_ANY_GROUP = re.compile(r"[0-9]{3}(?:[.,][0-9]+)?")
_GROUPING_SPACES = "\u00a0\u2007\u2009\u202f"
_BOM = "\ufeff"
_SHORT = 20  # suggestions quote the text they rewrite only up to this length
COMMA_MODES = ("ask", "separate")

_EMPTY = "Enter at least one number, for example: 2, 4, 6, 8"
_TOO_DEEP = f"the brackets are nested too deeply: use at most {_MAX_DEPTH} levels, like [[[1, 2]]]"
_UNEVEN = "the brackets are nested unevenly: write rows like [[1, 2], [3, 4]]"


def parse_embeddings(
    text: str,
    *,
    max_tokens: int = MAX_TOKENS,
    max_features: int = MAX_FEATURES,
    commas: str = "ask",
) -> np.ndarray:
    """Read token embeddings: a float64 array with one row per token.

    `commas`: "ask" (typed or pasted text) refuses a comma that could be a decimal comma;
    "separate" (text a program wrote, like a shared link) reads every comma as a separator.
    """
    rows = _read_rows(text, _EMPTY, commas=commas)
    if len(rows) > max_tokens:
        raise InputError(f"too many tokens: {len(rows)} rows, but the limit is {max_tokens}")
    width = len(rows[0])
    if width > max_features:
        raise InputError(
            f"too many features: row 1 has {width} numbers, but the limit is {max_features}"
        )
    for r, row in enumerate(rows[1:], start=2):
        if len(row) != width:
            raise InputError(
                f"row {r} has {_count(len(row), 'number')} but row 1 has {width}; "
                "every token needs the same number of features"
            )
    values = [
        [parse_number(atom, f"row {r}, column {c}") for c, atom in enumerate(row, start=1)]
        for r, row in enumerate(rows, start=1)
    ]
    return np.array(values, dtype=np.float64)


def parse_vector(
    text: str, n: int | None = None, *, name: str = "vector", commas: str = "ask"
) -> np.ndarray:
    """Read one vector (gamma, beta); with `n`, it must have n values or 1 (repeated n times).

    `commas` as in `parse_embeddings`."""
    empty = f"Enter at least one number for {name}"
    atoms = _single_list(_read_rows(text, empty, commas=commas, where=f"{name}: "), name)
    if len(atoms) > MAX_FEATURES:
        raise InputError(f"{name} has {len(atoms)} values, but the limit is {MAX_FEATURES}")
    if n is not None and len(atoms) not in (1, n):
        raise InputError(
            f"{name} has {_count(len(atoms), 'value')} but the token has {_count(n, 'feature')}"
        )
    vector = np.array(
        [parse_number(atom, f"{name}, position {i}") for i, atom in enumerate(atoms, start=1)],
        dtype=np.float64,
    )
    return np.full(n, vector[0]) if n is not None and len(vector) == 1 else vector


def default_labels(n: int) -> list[str]:
    """t1..tn: the labels of tokens nobody named (a blank labels box, a new grid row)."""
    return [f"t{i}" for i in range(1, n + 1)]


def parse_labels(text: str, n: int) -> list[str]:
    """Read `n` token labels; blank text gives t1..tn.

    One label per line when the text has several lines (so a label may be a comma, as in
    "Hello, how are you?"); otherwise labels are separated by commas.
    """
    _check_length(text)
    text = text.removeprefix(_BOM)
    separator = _LINE_SEP if "\n" in text or "\r" in text else _LABEL_SEP
    labels = [part.strip() for part in separator.split(text)]
    labels = [label for label in labels if label]
    if not labels:
        return default_labels(n)
    if len(labels) != n:
        raise InputError(
            f"{_count(len(labels), 'label')} for {_count(n, 'token')}; "
            "give one label per token, separated by commas or new lines"
        )
    for i, label in enumerate(labels, start=1):
        if len(label) > MAX_LABEL_CHARS:
            raise InputError(
                f"label {i} ({_quote(label)}) is {len(label)} characters long; "
                f"the limit is {MAX_LABEL_CHARS}"
            )
        if any(unicodedata.category(ch) in _BAD_IN_LABELS for ch in label):
            raise InputError(
                f"label {i} ({_quote(label)}) contains a control character or line break"
            )
    return labels


def short_number(v: float) -> str:
    """The shortest text that reads back as exactly `v` ("2.0" -> "2")."""
    text = repr(float(v))
    return text[:-2] if text.endswith(".0") else text


def format_embeddings(x: np.ndarray) -> str:
    """Write finite embeddings as text that `parse_embeddings` reads back exactly.

    One token per line, numbers separated by ", ", each the shortest text that round-trips.
    A number takes at most 24 characters, so a large array can need more than MAX_CHARS.
    """
    rows = np.atleast_2d(np.asarray(x, dtype=np.float64))
    if rows.ndim != 2:
        raise ValueError(f"expected a 1-D or 2-D array, got {rows.ndim}-D")
    return "\n".join(", ".join(map(short_number, row)) for row in rows.tolist())


# -- text to rows of number strings --------------------------------------------------------


def _read_rows(
    text: str, empty_message: str, *, commas: str = "ask", where: str = ""
) -> list[list[str]]:
    """Split text into rows of number strings (not yet checked to be numbers).

    Refuses, before splitting, text whose commas or spaces could group digits or mark
    decimals (see the module docstring); `where` starts those messages."""
    if commas not in COMMA_MODES:
        raise ValueError(f"commas must be one of {COMMA_MODES}, not {commas!r}")
    _check_length(text)
    text = _MINUS.sub("-", text.removeprefix(_BOM))
    _check_space_groups(text, where)
    if "[" in text or "]" in text:
        rows = _literal_rows(text, ask=commas == "ask", where=where)
    elif text.lstrip().startswith("("):  # a tuple: read as a list, its messages say "(" / ")"
        square = text.translate(_PARENS_TO_SQUARE)
        rows = _literal_rows(square, ask=commas == "ask", where=where, shown=text)
    else:
        if commas == "ask":
            _check_plain_commas(text, where)
        rows = _plain_rows(text)
    if not any(rows):
        raise InputError(empty_message)
    return rows


_PARENS_TO_SQUARE = str.maketrans("()", "[]")


def _check_space_groups(text: str, where: str) -> None:
    """Refuse digits grouped by spaces: ``1 000 000``, ``2 050``, ``1`` U+202F ``500``."""
    words = list(_GROUP_WORD.finditer(text))
    for i in range(len(words) - 1):
        if not _GROUP_HEAD.fullmatch(words[i].group()):
            continue
        j = i
        while j + 1 < len(words) and _is_group(text, words[j], words[j + 1]):
            j += 1
        if j > i:
            chain = text[words[i].start() : words[j].end()]
            parts = [w.group() for w in words[i : j + 1]]
            one = "".join(parts).replace(",", ".")
            apart = ", ".join(parts)
            hint = (
                f'write {one} for one number, or separate numbers with ", " as in {apart}'
                if len(chain) <= _SHORT
                else 'write one number without spaces, or separate numbers with ", "'
            )
            raise InputError(
                f"{where}{_quote(chain)} looks like one number with its digits grouped by "
                f"spaces: {hint}"
            )


def _is_group(text: str, before: re.Match[str], word: re.Match[str]) -> bool:
    """Whether `word` continues the digits of `before` as a group of three after a space."""
    gap = text[before.end() : word.start()]
    if not gap or any(not ch.isspace() or ch in "\r\n" for ch in gap):
        return False
    if not before.group()[-1].isdigit() or not before.group().lstrip("+-").isdigit():
        return False
    if _ZERO_GROUP.fullmatch(word.group()):
        return True
    return len(gap) == 1 and gap in _GROUPING_SPACES and bool(_ANY_GROUP.fullmatch(word.group()))


def _check_plain_commas(text: str, where: str) -> None:
    """Refuse commas that could be decimal commas or group digits (module docstring)."""
    lines = [line for line in _ROW_SEP.split(text) if line.strip()]
    row = (lambda r: f"row {r}: ") if len(lines) > 1 else (lambda r: "")
    words = [(r, line, w) for r, line in enumerate(lines, start=1) for w in line.split()]
    for r, _, w in words:
        core = w.strip(",")
        if _COMMA_GROUPS.fullmatch(core) or _DOT_GROUPS_DECIMAL_COMMA.fullmatch(core):
            raise InputError(f"{where}{row(r)}{_grouped_message(core)}")
    pairs = [(r, line, w.strip(",")) for r, line, w in words if _COMMA_PAIR.fullmatch(w.strip(","))]
    if not pairs:
        return
    separating = any(w.count(",") > 1 or _has_loose_comma(w) for _, _, w in words)
    if separating:
        cells = [c for line in lines for c in _LOOSE_CELL_SEP.split(line) if c]
        if not all(_COMMA_PAIR.fullmatch(c) for c in cells):
            return
    r, line, w = pairs[0]
    raise InputError(f"{where}{row(r)}{_pair_message(w, line.strip(), len(line.split()) > 1)}")


def _has_loose_comma(word: str) -> bool:
    """Whether `word` (no spaces) has a comma without a digit on each side."""
    return any(
        ch == "," and not (0 < i < len(word) - 1 and _digit(word[i - 1]) and _digit(word[i + 1]))
        for i, ch in enumerate(word)
    )


def _digit(ch: str) -> bool:
    return "0" <= ch <= "9"


def _pair_rewrites(word: str) -> tuple[str, str]:
    """A number pair like 1,5 written with a decimal point, and as two numbers."""
    if len(word) > _SHORT:
        return "1.5", "1, 5"
    a, b = word.split(",")
    return f"{a}.{b}", f"{a}, {b}"


def _pair_message(word: str, line: str, spaced: bool) -> str:
    """What to write instead of a number pair like 1,5 that may hold a decimal comma."""
    point, apart = _pair_rewrites(word)
    if spaced and len(line) <= _SHORT:  # rewrite the whole row
        point = _TIGHT_COMMA.sub(".", line)
        apart = ", ".join(part for part in re.split(r"[\s,]+", line) if part)
        return (
            f"{_quote(line)} looks like decimal commas: write {point}, "
            f'or separate numbers with ", " as in {apart}'
        )
    if spaced:
        return (
            f"{_quote(line)} looks like decimal commas: write {point} for {_quote(word)}, "
            f'or separate numbers with ", " as in {apart}'
        )
    if len(word) > _SHORT:
        return (
            f"{_quote(word)} could be one number with a decimal comma or two numbers: "
            f'write a decimal point, as in 1.5, or separate numbers with ", " as in 1, 5'
        )
    a, b = word.split(",")
    return (
        f"{_quote(word)} could be one number ({point}, with a decimal comma) or two "
        f"({a} and {b}): write {point} or {apart}"
    )


def _grouped_message(core: str) -> str:
    """What to write instead of digits grouped by commas (or dots, with a decimal comma)."""
    short = len(core) <= _SHORT
    if "," in core and "." in core and core.index(".") < core.index(","):  # 1.000,5
        one = core.replace(".", "").replace(",", ".") if short else "1000.5"
        return (
            f"{_quote(core)} looks like one number with a decimal comma: write {one}, "
            'or separate numbers with ", "'
        )
    digits = core.replace(",", "") if short else "1000"
    if core.count(",") == 1 and "." not in core:  # 1,000: decimal comma, grouping or two
        a, b = core.split(",")
        if short:
            return (
                f"{_quote(core)} could be {a}.{b} (a decimal comma), {digits} (digits grouped "
                f"by a comma) or two numbers: write {a}.{b}, {digits} or {a}, {b}"
            )
    return (
        f"{_quote(core)} looks like one number with its digits grouped by commas: write "
        f'{digits} for one number, or separate numbers with ", "'
    )


def _check_length(text: str) -> None:
    if len(text) > MAX_CHARS:
        raise InputError(f"the text is {len(text):,} characters long; the limit is {MAX_CHARS:,}")


def _plain_rows(text: str) -> list[list[str]]:
    """Rows split on new lines or ";", numbers on commas and/or whitespace."""
    rows = []
    for line in _ROW_SEP.split(text):
        if line.strip():
            cells = _CELL_SEP.split(line.strip())
            if len(cells) > 1 and cells[-1] == "":  # a trailing comma
                cells.pop()
            rows.append(cells)
    return rows


def _literal_rows(
    text: str, *, ask: bool = True, where: str = "", shown: str | None = None
) -> list[list[str]]:
    """Rows of a bracketed literal, optionally wrapped as in ``tensor([...], dtype=...)``.

    `shown`: the text as typed, when `text` is a tuple with its parentheses made square (the
    messages then name "(" and ")"). `ask`: refuse a list spaced like NumPy's with a tight
    comma in it, as decimal commas."""
    opener, closer = ("(", ")") if shown is not None else ("[", "]")
    _check_brackets(text, shown if shown is not None else text)
    head = _HEAD.match(text)
    assert head is not None  # every part of the pattern is optional
    top, end = _scan_lists(text, head.end(), ask=ask, where=where)
    if not top:
        before = text[head.end() : text.index("[")].strip()
        raise InputError(f'unexpected text before the first "{opener}": {_quote(before)}')
    _check_tail(text[end:], wrapped=head.group("paren") is not None, closer=closer)
    return _tree_rows(top[0] if len(top) == 1 else top)


def _check_brackets(text: str, shown: str) -> None:
    """Raise unless the square brackets balance and nest at most _MAX_DEPTH deep; `shown`
    (the same length) is the text as typed, for the messages."""
    open_at: list[int] = []
    for i, ch in enumerate(text):
        if ch == "[":
            if len(open_at) == _MAX_DEPTH:
                raise InputError(_TOO_DEEP)
            open_at.append(i)
        elif ch == "]":
            if not open_at:
                raise InputError(
                    f'unbalanced brackets: the "{shown[i]}" at {_location(text, i)} has no '
                    f'matching "{"(" if shown[i] == ")" else "["}"'
                )
            open_at.pop()
    if open_at:
        i = open_at[-1]
        raise InputError(
            f'unbalanced brackets: the "{shown[i]}" at {_location(text, i)} is never closed'
        )


def _scan_lists(
    text: str, start: int, *, ask: bool = False, where: str = ""
) -> tuple[list[Node], int]:
    """Read bracketed lists from text[start:], whose brackets are known to balance.

    Items are separated by commas and/or whitespace. Stops at the first character outside
    all brackets that is not "[", "," or whitespace; returns the lists and that position.
    With `ask`, a list with items separated by whitespace alone and a tight comma is refused.
    """
    top: list[Node] = []
    stack = [top]
    comma_ok = [False]  # per open list: an item came since the last comma or the "["
    spaced = [False]  # per open list: two items with no comma between them
    tight = [-1]  # per open list: where its first comma between two digits is, or -1
    i = start
    while i < len(text):
        ch = text[i]
        if ch == "[":
            child: list[Node] = []
            stack[-1].append(child)
            comma_ok[-1] = True
            stack.append(child)
            comma_ok.append(False)
            spaced.append(False)
            tight.append(-1)
        elif ch == "]":
            if ask and spaced[-1] and tight[-1] >= 0:
                raise InputError(f"{where}{_spaced_list_message(text, tight[-1])}")
            stack.pop()
            comma_ok.pop()
            spaced.pop()
            tight.pop()
        elif ch == ",":
            if not comma_ok[-1]:
                raise InputError(f'unexpected "," at {_location(text, i)}')
            comma_ok[-1] = False
            between_digits = 0 < i < len(text) - 1 and _digit(text[i - 1]) and _digit(text[i + 1])
            if tight[-1] < 0 and between_digits:
                tight[-1] = i
        elif not ch.isspace():
            if len(stack) == 1:
                break
            atom = _ATOM.match(text, i)
            assert atom is not None  # ch is none of the characters an atom excludes
            spaced[-1] = spaced[-1] or comma_ok[-1]
            stack[-1].append(atom.group())
            comma_ok[-1] = True
            i = atom.end()
            continue
        i += 1
    return top, i


def _spaced_list_message(text: str, comma: int) -> str:
    """The message for a list like [1,5 2,5]: the number pair around text[comma] quoted."""
    left = comma
    while left > 0 and _digit(text[left - 1]):
        left -= 1
    right = comma + 1
    while right < len(text) and _digit(text[right]):
        right += 1
    pair = text[left:right]
    point, apart = _pair_rewrites(pair)
    return (
        f"{_quote(pair)} looks like a decimal comma, in a list whose numbers are separated by "
        f'spaces: write {point}, or separate every number with ", " as in {apart}'
    )


def _check_tail(tail: str, *, wrapped: bool, closer: str = "]") -> None:
    """Allow only ``, dtype=..., device=...)`` after the lists of a wrapped literal."""
    rest = tail.strip()
    if wrapped:
        args, paren, after = rest.partition(")")
        if not paren:
            raise InputError('unbalanced brackets: a "(" is never closed')
        given = [arg for arg in map(str.strip, args.split(",")) if arg]
        rest = next((arg for arg in given if not _KEYWORD_ARG.fullmatch(arg)), "")
        if not rest and after.strip():
            raise InputError(f'unexpected text after ")": {_quote(after.strip())}')
    if rest:
        raise InputError(f'unexpected text after the last "{closer}": {_quote(rest)}')


def _tree_rows(tree: list[Node]) -> list[list[str]]:
    """The rows of a 1-D, 2-D or (1, S, D) / (S, 1, D) 3-D list."""
    depth = _depth(tree)
    if depth == 1:
        return [tree]
    if depth == 2:
        return tree
    if depth > 3:
        raise InputError(_TOO_DEEP)
    if len(tree) == 1:
        return tree[0]
    if all(len(block) == 1 for block in tree):
        return [block[0] for block in tree]
    raise InputError(
        "a 3-D array must have shape (1, tokens, features) or (tokens, 1, features), "
        f"but this one has shape ({len(tree)}, {len(tree[0])}, ...)"
    )


def _depth(node: list[Node]) -> int:
    """Nesting depth of a list (1 for a flat one); raise if its items differ in depth."""
    depths = {_depth(item) if isinstance(item, list) else 0 for item in node}
    if len(depths) > 1:
        raise InputError(_UNEVEN)
    return 1 + (depths.pop() if depths else 0)


def _single_list(rows: list[list[str]], name: str) -> list[str]:
    """A vector given as one row or as one number per row."""
    if len(rows) == 1:
        return rows[0]
    if all(len(row) == 1 for row in rows):
        return [row[0] for row in rows]
    raise InputError(f"{name} must be a single list of numbers, but it has {len(rows)} rows")


# -- one number ----------------------------------------------------------------------------


def parse_number(atom: str, where: str) -> float:
    """The value of one ASCII decimal number, read as in a text box (finite, and not so small
    that it would be read as 0); `where` starts the error message."""
    if not atom:
        raise InputError(f"{where}: a number is missing (check for extra commas)")
    if _NON_FINITE.fullmatch(atom):
        raise _not_finite(atom, where)
    if not _NUMBER.fullmatch(atom):
        raise InputError(f"{where}: {_quote(atom)} is not a number{_hint(atom)}")
    value = float(atom)
    if not math.isfinite(value):
        raise _not_finite(atom, where)
    if value == 0.0 and any(ch in "123456789" for ch in atom.lower().partition("e")[0]):
        raise InputError(
            f"{where}: {_quote(atom)} is too small to represent: it is not 0, but numbers "
            "below about 5e-324 in size would be read as 0"
        )
    return value


def _not_finite(atom: str, where: str) -> InputError:
    return InputError(
        f"{where}: {_quote(atom)} is not finite; NaN and infinite values are not allowed"
    )


def _hint(atom: str) -> str:
    """A suggestion for a common reason that `atom` is not a number, or ""."""
    if any(not ch.isascii() and ch.isnumeric() for ch in atom):
        return " (type the digits 0-9)"
    if "_" in atom:
        return ' (write numbers without "_")'
    if atom in ("...", "…"):
        return " (the printout was shortened; paste all the values)"
    if any(ch in "|/\\" for ch in atom):
        return " (separate numbers with commas or spaces)"
    return ""


# -- message helpers -----------------------------------------------------------------------


def _quote(text: str) -> str:
    """`text` in double quotes, cut to _QUOTE_CHARS with "…", invisible characters escaped."""
    cut = text[:_QUOTE_CHARS]
    shown = "".join(ch if ch.isprintable() else ascii(ch)[1:-1] for ch in cut)
    return f'"{shown}{"…" if len(text) > _QUOTE_CHARS else ""}"'


def _location(text: str, i: int) -> str:
    """Where index `i` is in `text`, as 1-based line and character."""
    line = text.count("\n", 0, i) + 1
    char = i - (text.rfind("\n", 0, i) + 1) + 1
    return f"line {line}, character {char}"


def _count(k: int, noun: str) -> str:
    return f"{k} {noun}" if k == 1 else f"{k} {noun}s"
