"""Tests for lnlab.core.parse: every accepted form, many rejected ones, and two properties."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lnlab.core.errors import InputError
from lnlab.core.parse import (
    MAX_CHARS,
    MAX_FEATURES,
    MAX_LABEL_CHARS,
    MAX_TOKENS,
    format_embeddings,
    parse_embeddings,
    parse_labels,
    parse_vector,
)

TWO_BY_TWO = [[1.0, 2.0], [3.0, 4.0]]

ACCEPTED = [
    # separators
    ("2, 4, 6, 8", [[2, 4, 6, 8]]),
    ("2 4 6 8", [[2, 4, 6, 8]]),
    ("2,4, 6 8", [[2, 4, 6, 8]]),
    ("2\t4\t6\t8", [[2, 4, 6, 8]]),
    ("2 , 4 ,6", [[2, 4, 6]]),
    ("1 2; 3 4", TWO_BY_TWO),
    ("1 2;3 4;", TWO_BY_TWO),
    ("1, 2\n3, 4", TWO_BY_TWO),
    ("1, 2,\n3, 4,\n", TWO_BY_TWO),
    ("\n\n  1 2\n\n   \n3 4\n\n", TWO_BY_TWO),
    ("1 2\r\n3 4\r\n", TWO_BY_TWO),
    ("7", [[7]]),
    ("1\n2\n3", [[1], [2], [3]]),
    ("1\u30002", [[1, 2]]),  # an ideographic space is whitespace too
    # Python / NumPy / torch literals and printouts
    ("[[0.1, 0.3], [0.2, 0.4]]", [[0.1, 0.3], [0.2, 0.4]]),
    ("[0.1, 0.2]", [[0.1, 0.2]]),
    ("[1, 2,]", [[1, 2]]),
    ("[[1, 2,], [3, 4,],]", TWO_BY_TWO),
    ("[1, 2]\n[3, 4]", TWO_BY_TWO),
    ("[1, 2], [3, 4]", TWO_BY_TWO),
    ("[[1 2]\n [3 4]]", TWO_BY_TWO),
    ("[[0.1 0.3]\n [0.2 0.4]]", [[0.1, 0.3], [0.2, 0.4]]),
    ("[ 1.  2.  3.]", [[1, 2, 3]]),
    ("tensor([[1., 2.], [3., 4.]])", TWO_BY_TWO),
    ("array([1, 2])", [[1, 2]]),
    ("np.array([1, 2])", [[1, 2]]),
    ("numpy.array([1, 2])", [[1, 2]]),
    ("torch.tensor([1, 2])", [[1, 2]]),
    ("x = torch.tensor([1, 2])", [[1, 2]]),
    ("([1, 2], [3, 4])", TWO_BY_TWO),
    ("tensor([1., 2.], grad_fn=<AddBackward0>)", [[1, 2]]),
    ("tensor([1., 2.], dtype=torch.float64)", [[1, 2]]),
    ("tensor([1., 2.], device='cuda:0')", [[1, 2]]),
    ("tensor([1, 2], dtype=torch.float16)", [[1, 2]]),
    ("tensor([1., 2.], device='cuda:0', dtype=torch.float64, requires_grad=True)", [[1, 2]]),
    ("tensor([1, 2],)", [[1, 2]]),
    (
        "tensor([[ 0.1000,  0.3000],\n        [ 0.2000,  0.4000]], grad_fn=<AddBackward0>)",
        [[0.1, 0.3], [0.2, 0.4]],
    ),
    ("array([[1., 2.],\n       [3., 4.]], dtype=float32)", TWO_BY_TWO),
    ("Parameter containing:\ntensor([1., 1.], requires_grad=True)", [[1, 1]]),
    # 3-D with one axis of size 1
    ("[[[1, 2], [3, 4]]]", TWO_BY_TWO),
    ("[[[1, 2]], [[3, 4]]]", TWO_BY_TWO),
    ("[[[1, 2]]]", [[1, 2]]),
    ("tensor([[[1., 2.],\n         [3., 4.]]])", TWO_BY_TWO),
    # number syntax
    ("1e-3 2.5E+2 +3 .5 5.", [[0.001, 250, 3, 0.5, 5]]),
    ("-1.5, -.5, +0.25, 1E3, 1e+0", [[-1.5, -0.5, 0.25, 1000, 1]]),
    ("1e-310 -5e-324 2.5e-324", [[1e-310, -5e-324, 5e-324]]),  # subnormals a float64 holds
    ("0e-400 -0.000e999 0.0000", [[0, 0, 0]]),  # zero written any way is zero, never too small
    ("−1, −2.5", [[-1, -2.5]]),  # U+2212 minus sign
    ("1e−3", [[0.001]]),
    ("\u20131 \ufe632 \uff0d3 \u2013.5", [[-1, -2, -3, -0.5]]),
    ("[−1, −2]", [[-1, -2]]),
    # a leading byte-order mark is dropped
    ("\ufeff1, 2, 3", [[1, 2, 3]]),
    ("\ufeff[1, 2]\n", [[1, 2]]),
    ("\ufeff(1, 2)", [[1, 2]]),
    # a token in parentheses reads as in square brackets
    ("(1, 2, 3)", [[1, 2, 3]]),
    ("  (1 2 3)  ", [[1, 2, 3]]),
    ("(1, 2)\n(3, 4)", TWO_BY_TWO),
    ("(1, 2), (3, 4)", TWO_BY_TWO),
    ("((1, 2), (3, 4))", TWO_BY_TWO),
    ("(1,5)", [[1, 5]]),  # a Python tuple: its comma separates
    ("[1,5]", [[1, 5]]),  # a Python list, likewise
    # commas that separate: a loose comma anywhere, or a word with two or more commas
    ("1, 5", [[1, 5]]),
    ("1 ,5", [[1, 5]]),
    ("1,2,3", [[1, 2, 3]]),
    ("1,2,3\n4,5,6", [[1, 2, 3], [4, 5, 6]]),
    ("1,2,3 4,5", [[1, 2, 3, 4, 5]]),
    ("0.5,1.5", [[0.5, 1.5]]),  # a comma next to a decimal point cannot be a decimal comma
    ("1,.5", [[1, 0.5]]),
    # spaces between whole numbers that are not digit groups
    ("100 200 300", [[100, 200, 300]]),
    ("1 234", [[1, 234]]),  # a plain space separates; only a group starting with 0 is asked
    ("1 0 0", [[1, 0, 0]]),
    ("12.5 000", [[12.5, 0]]),  # not a whole number before the group
    ("1, 000", [[1, 0]]),  # a comma between: two numbers
]


@pytest.mark.parametrize(("text", "expected"), ACCEPTED)
def test_accepted_forms(text: str, expected: list[list[float]]) -> None:
    got = parse_embeddings(text)
    assert got.dtype == np.float64
    np.testing.assert_array_equal(got, np.array(expected, dtype=np.float64))


def test_negative_zero_keeps_its_sign() -> None:
    assert np.signbit(parse_embeddings("-0")[0, 0])


def test_caps_are_as_documented() -> None:
    assert (MAX_TOKENS, MAX_FEATURES, MAX_CHARS, MAX_LABEL_CHARS) == (64, 64, 110_000, 40)


def test_exactly_at_the_caps_is_accepted() -> None:
    text = "\n".join(" ".join(["1"] * MAX_FEATURES) for _ in range(MAX_TOKENS))
    assert parse_embeddings(text).shape == (MAX_TOKENS, MAX_FEATURES)


def test_custom_caps() -> None:
    with pytest.raises(InputError, match="limit is 2"):
        parse_embeddings("1 2 3", max_features=2)
    with pytest.raises(InputError, match="limit is 1"):
        parse_embeddings("1\n2", max_tokens=1)


REJECTED = [
    # (text, substrings the message must contain)
    ("1|2", ['row 1, column 1: "1|2" is not a number', "commas or spaces"]),
    ("1 2 abc", ['row 1, column 3: "abc" is not a number']),
    ("1 2 3\n4 5 0..4", ['row 2, column 3: "0..4" is not a number']),
    ("1 2\n3 abc", ['row 2, column 2: "abc" is not a number']),
    ("[[1, 2], [3, 0..4]]", ['row 2, column 2: "0..4" is not a number']),
    ("[1, x]", ['row 1, column 2: "x" is not a number']),
    ("[[[1, 2]], [[3, y]]]", ['row 2, column 2: "y" is not a number']),
    ("", ["Enter at least one number"]),
    ("   \n\t \n", ["Enter at least one number"]),
    ("[]", ["Enter at least one number"]),
    ("[[], []]", ["Enter at least one number"]),
    (
        "1 2 3 4\n5 6 7 8\n1 2",
        ["row 3 has 2 numbers but row 1 has 4; every token needs the same number of features"],
    ),
    ("[[1, 2], [3]]", ["row 2 has 1 number but row 1 has 2"]),
    (" ".join(["1"] * 1000), ["too many features", "1000", "64"]),
    ("\n".join(["1"] * 65), ["too many tokens", "65", "64"]),
    ("1e309", ['row 1, column 1: "1e309" is not finite', "not allowed"]),
    ("-1e999", ['"-1e999" is not finite']),
    ("nan", ['row 1, column 1: "nan" is not finite']),
    ("1, -inf", ['row 1, column 2: "-inf" is not finite']),
    ("Infinity", ['"Infinity" is not finite']),
    ("[1, NaN]", ['row 1, column 2: "NaN" is not finite']),
    ("−inf", ['"-inf" is not finite']),
    ("1e-400", ['row 1, column 1: "1e-400" is too small to represent', "5e-324"]),
    ("2.4e-324", ['row 1, column 1: "2.4e-324" is too small']),  # rounds to 0, not 5e-324
    ("1 2\n3 0." + "0" * 400 + "1", ['row 2, column 2: "0.00000', "too small to represent"]),
    ("[[1, 2], [3, −1e-999]]", ['row 2, column 2: "-1e-999" is too small']),
    ("٣", ['row 1, column 1: "٣" is not a number', "0-9"]),  # Arabic-Indic three
    ("1 ３", ['row 1, column 2: "３" is not a number', "0-9"]),  # full-width three
    ("1 ²", ['"²" is not a number']),  # superscript two
    ("1_000", ['"1_000" is not a number', '"_"']),
    ("😀", ['row 1, column 1: "😀" is not a number']),
    ("<script>alert(1)</script>", ['"<script>alert(1)</sc…" is not a number']),
    ("a" * 50, ['"' + "a" * 20 + '…" is not a number']),
    ("1" * 200_000, ["200,000 characters", "110,000"]),
    ("[[[[[[[[1]]]]]]]]", ["nested too deeply"]),
    ("[[[[1]]]]", ["nested too deeply"]),
    ("[[[1]]], [[[2]]]", ["nested too deeply"]),
    ("[1, 2", ['unbalanced brackets: the "[" at line 1, character 1 is never closed']),
    ("1, 2]", ['unbalanced brackets: the "]" at line 1, character 5 has no matching "["']),
    ("[1]\n]", ['the "]" at line 2, character 1']),
    ("[[1, 2], 3]", ["nested unevenly"]),
    ("[[1, 2], [[3, 4]]]", ["nested unevenly"]),
    ("[[[1, 2], [3, 4]], [[5, 6], [7, 8]]]", ["3-D array", "(2, 2, ...)"]),
    ("[1,,2]", ['unexpected "," at line 1, character 4']),
    ("[,1]", ['unexpected "," at line 1, character 2']),
    ("1,,2", ["row 1, column 2: a number is missing"]),
    (",1", ["row 1, column 1: a number is missing"]),
    ("[1, 2] foo", ['unexpected text after the last "]": "foo"']),
    ("[1, 2] 3", ['unexpected text after the last "]": "3"']),
    ("abc [1]", ['unexpected text before the first "[": "abc"']),
    ("tensor([1, 2]", ['a "(" is never closed']),
    ("tensor([1, 2]) + 1", ['unexpected text after ")": "+ 1"']),
    ("tensor([1, 2], names=('a',))", ['unexpected text after the last "]": "names=(\'a\'"']),
    ("tensor([1, 2], dtype=x, [3])", ['unexpected text after the last "]": "[3]"']),
    ("tensor([1, 2], [3])", ["row 2 has 1 number but row 1 has 2"]),
    ("[1 2; 3 4]", ['row 1, column 2: "2;" is not a number']),
    ("0x1p3", ['"0x1p3" is not a number']),
    ("1.2.3", ['"1.2.3" is not a number']),
    ("1e", ['"1e" is not a number']),
    ("e5", ['"e5" is not a number']),
    ("--1", ['"--1" is not a number']),
    ("+-1", ['"+-1" is not a number']),
    (".", ['"." is not a number']),
    ("1 2 ... 9", ['row 1, column 3: "..." is not a number', "shortened"]),
    ("1 \x00", ['row 1, column 2: "\\x00" is not a number']),
    ("1 a\u202eb", ['"a\\u202eb" is not a number']),
    ("1 2\n3 4 5 ⁵", ["row 2 has 4 numbers but row 1 has 2"]),
    # parentheses: the messages name them
    ("(1, 2", ['unbalanced brackets: the "(" at line 1, character 1 is never closed']),
    ("(1, 2))", ['the ")" at line 1, character 7 has no matching "("']),
    ("(1, 2) foo", ['unexpected text after the last ")": "foo"']),
    ("((((1))))", ["nested too deeply"]),
    ("(1,5 2,5)", ['"1,5" looks like a decimal comma', "write 1.5", "1, 5"]),
]

# Text that could be read two ways: refused with what was seen and how to write it.
AMBIGUOUS = [
    (
        "1,5",
        [
            '"1,5" could be one number (1.5, with a decimal comma) or two (1 and 5)',
            "write 1.5 or 1, 5",
        ],
    ),
    ("0,5", ["0.5", "0, 5"]),
    ("-0,25", ['"-0,25" could be one number (-0.25']),
    ("1,5e3", ["1.5e3"]),
    ("1,5,", ['"1,5" could be one number']),
    (
        "1,5 2,5 3,5",
        [
            '"1,5 2,5 3,5" looks like decimal commas: write 1.5 2.5 3.5',
            'separate numbers with ", " as in 1, 5, 2, 5, 3, 5',
        ],
    ),
    ("1,5 2", ['"1,5 2" looks like decimal commas: write 1.5 2,']),
    ("1,5, 2,5", ['"1,5, 2,5" looks like decimal commas: write 1.5, 2.5,']),
    ("1,2\n3,4", ['row 1: "1,2" could be one number (1.2']),
    ("1,5;2,5", ['row 1: "1,5" could be one number']),
    ("1 2\n3,5 4", ['row 2: "3,5 4" looks like decimal commas']),
    (" ".join(["1,5"] * 10), ['looks like decimal commas: write 1.5 for "1,5"']),
    (
        "1,000",
        [
            '"1,000" could be 1.000 (a decimal comma), 1000 (digits grouped by a comma) '
            "or two numbers"
        ],
    ),
    (
        "12,345,678",
        ['"12,345,678" looks like one number with its digits grouped by commas', "write 12345678"],
    ),
    ("1,000.5", ["grouped by commas", "write 1000.5"]),
    ("1, 2, 3,000", ['"3,000" could be 3.000']),  # where commas separate too
    ("1.000,5", ['"1.000,5" looks like one number with a decimal comma: write 1000.5']),
    (
        "1 000 000",
        [
            '"1 000 000" looks like one number with its digits grouped by spaces',
            'write 1000000 for one number, or separate numbers with ", " as in 1, 000, 000',
        ],
    ),
    ("2 050", ['"2 050" looks like one number', "write 2050"]),
    ("5, 1 000", ['"1 000" looks like one number']),
    ("1\u202f500", ['"1\\u202f500" looks like one number', "write 1500"]),
    ("1\xa0234\xa0567", ["write 1234567"]),
    ("1\u2009500", ["write 1500"]),
    ("[1 000]", ['"1 000" looks like one number']),
]


@pytest.mark.parametrize(("text", "fragments"), AMBIGUOUS)
def test_ambiguous_commas_and_spaces_are_asked_about(text: str, fragments: list[str]) -> None:
    with pytest.raises(InputError) as caught:
        parse_embeddings(text)
    message = str(caught.value)
    for fragment in fragments:
        assert fragment in message


@pytest.mark.parametrize(("text", "fragments"), REJECTED)
def test_rejected_inputs(text: str, fragments: list[str]) -> None:
    with pytest.raises(InputError) as caught:
        parse_embeddings(text)
    message = str(caught.value)
    for fragment in fragments:
        assert fragment in message


def test_error_quotes_are_short() -> None:
    with pytest.raises(InputError) as caught:
        parse_embeddings("x" * 5000)
    assert len(str(caught.value)) < 80


def test_script_tag_is_not_quoted_whole() -> None:
    with pytest.raises(InputError) as caught:
        parse_embeddings("<script>alert(1)</script>")
    assert "</script>" not in str(caught.value)


# -- parse_vector --------------------------------------------------------------------------

VECTORS = [
    ("1, 2, 3", None, [1, 2, 3]),
    ("1 2 3", 3, [1, 2, 3]),
    ("[1., 1.]", 2, [1, 1]),
    ("[[1, 2]]", None, [1, 2]),
    ("tensor([1., 2.], requires_grad=True)", None, [1, 2]),
    ("Parameter containing:\ntensor([0.5, 0.5], requires_grad=True)", 2, [0.5, 0.5]),
    ("1\n2\n3", None, [1, 2, 3]),
    ("2", 4, [2, 2, 2, 2]),
    ("[2]", 1, [2]),
    ("−0.5", None, [-0.5]),
    ("(1, 2)", None, [1, 2]),
    ("\ufeff0.5", 2, [0.5, 0.5]),
]


@pytest.mark.parametrize(("text", "n", "expected"), VECTORS)
def test_vectors(text: str, n: int | None, expected: list[float]) -> None:
    got = parse_vector(text, n, name="gamma")
    assert got.dtype == np.float64
    assert got.ndim == 1
    np.testing.assert_array_equal(got, np.array(expected, dtype=np.float64))


BAD_VECTORS = [
    ("1 2 3", 4, ["gamma has 3 values but the token has 4 features"]),
    ("1 2", 1, ["gamma has 2 values but the token has 1 feature"]),
    ("1, 2, x", None, ['gamma, position 3: "x" is not a number']),
    ("1\n2\nx", None, ['gamma, position 3: "x" is not a number']),
    ("1, inf", None, ['gamma, position 2: "inf" is not finite']),
    ("1, 1e-400", None, ['gamma, position 2: "1e-400" is too small to represent']),
    ("1,,2", None, ["gamma, position 2: a number is missing"]),
    ("", 3, ["Enter at least one number for gamma"]),
    ("1 2\n3 4", None, ["gamma must be a single list of numbers", "2 rows"]),
    (" ".join(["1"] * 65), None, ["gamma has 65 values", "limit is 64"]),
    ("[1, 2", None, ["unbalanced brackets"]),
    ("1" * 200_000, None, ["200,000 characters"]),
    ("0,5", 1, ['gamma: "0,5" could be one number (0.5']),
    ("1,5", 2, ['gamma: "1,5" could be one number']),
    ("1 000", None, ['gamma: "1 000" looks like one number']),
]


@pytest.mark.parametrize(("text", "n", "fragments"), BAD_VECTORS)
def test_bad_vectors(text: str, n: int | None, fragments: list[str]) -> None:
    with pytest.raises(InputError) as caught:
        parse_vector(text, n, name="gamma")
    for fragment in fragments:
        assert fragment in str(caught.value)


def test_separate_commas_read_every_comma_as_a_separator() -> None:
    """Text a program wrote with "," between numbers (a shared link) means what it says."""
    np.testing.assert_array_equal(parse_embeddings("1,5", commas="separate"), [[1, 5]])
    np.testing.assert_array_equal(
        parse_embeddings("1,2\n3,4", commas="separate"), np.array(TWO_BY_TWO)
    )
    np.testing.assert_array_equal(parse_vector("1,5", commas="separate"), [1, 5])
    np.testing.assert_array_equal(parse_vector("1,000", commas="separate"), [1, 0])
    with pytest.raises(InputError, match="grouped by spaces"):
        parse_embeddings("1 000", commas="separate")
    with pytest.raises(ValueError, match="commas"):
        parse_embeddings("1", commas="guess")


def test_labels_drop_a_leading_byte_order_mark() -> None:
    assert parse_labels("\ufeffthe, cat", 2) == ["the", "cat"]


decimals = st.tuples(st.integers(0, 10**6), st.integers(1, 10**6))


@given(st.lists(decimals, min_size=1, max_size=8), st.sampled_from([" ", "  ", "\t", "; ", "\n"]))
def test_decimal_commas_are_never_read_silently(pairs, separator) -> None:
    """Numbers written with a decimal comma, apart by spaces, tabs or rows: always asked."""
    text = separator.join(f"{a},{b}" for a, b in pairs)
    with pytest.raises(InputError, match="decimal comma"):
        parse_embeddings(text)


@given(st.integers(1000, 10**15), st.sampled_from([",", "\u00a0", "\u2007", "\u2009", "\u202f"]))
def test_grouped_digits_are_never_read_silently(n, group) -> None:
    """A whole number of four or more digits, grouped by threes with a comma or a grouping
    space: always asked, never read as several numbers."""
    text = f"{n:,}".replace(",", group)
    with pytest.raises(InputError, match="grouped"):
        parse_embeddings(text)
    with pytest.raises(InputError, match="grouped"):
        parse_embeddings(f"7, {text}, 8")


@given(st.integers(1, 999), st.lists(st.integers(0, 99), min_size=1, max_size=4))
def test_space_groups_with_a_leading_zero_are_never_read_silently(head, groups) -> None:
    text = " ".join([str(head), *(f"{g:03d}" for g in groups)])
    with pytest.raises(InputError, match="grouped by spaces"):
        parse_embeddings(text)


def test_vector_default_name() -> None:
    with pytest.raises(InputError, match=r'^vector, position 1: "x"'):
        parse_vector("x")


# -- parse_labels --------------------------------------------------------------------------

LABELS = [
    ("", 3, ["t1", "t2", "t3"]),
    ("  \n ", 2, ["t1", "t2"]),
    ("the, cat, sat", 3, ["the", "cat", "sat"]),
    ("the\ncat\nsat\n", 3, ["the", "cat", "sat"]),
    (" the \ncat\n\nsat ", 3, ["the", "cat", "sat"]),
    ("the, the", 2, ["the", "the"]),
    ("<b>x</b>, 😀", 2, ["<b>x</b>", "😀"]),
    ("a b c", 1, ["a b c"]),
    ("x" * MAX_LABEL_CHARS, 1, ["x" * MAX_LABEL_CHARS]),
]


@pytest.mark.parametrize(("text", "n", "expected"), LABELS)
def test_labels(text: str, n: int, expected: list[str]) -> None:
    assert parse_labels(text, n) == expected


BAD_LABELS = [
    ("a, b", 3, ["2 labels for 3 tokens"]),
    ("a, b, c", 1, ["3 labels for 1 token"]),
    ("x" * 41, 1, ["label 1", "41 characters", "limit is 40", '"' + "x" * 20 + '…"']),
    ("ok, a\tb", 2, ["label 2", "control character"]),
    ("ok, a\u2028b", 2, ["label 2", "line break"]),
    ("a," * 60_000, 1, ["120,000 characters"]),
]


@pytest.mark.parametrize(("text", "n", "fragments"), BAD_LABELS)
def test_bad_labels(text: str, n: int, fragments: list[str]) -> None:
    with pytest.raises(InputError) as caught:
        parse_labels(text, n)
    for fragment in fragments:
        assert fragment in str(caught.value)


# -- format_embeddings ---------------------------------------------------------------------


def test_format_examples() -> None:
    x = np.array([[0.1, -2.0], [1e-300, 12345678.9]])
    assert format_embeddings(x) == "0.1, -2\n1e-300, 12345678.9"
    assert format_embeddings(np.array([1.5, 2.0, -0.0, 1e22])) == "1.5, 2, -0, 1e+22"


def test_format_rejects_3d() -> None:
    with pytest.raises(ValueError, match="3-D"):
        format_embeddings(np.zeros((1, 2, 2)))


# repr of a float64 takes at most 24 characters ("-2.2250738585072014e-308"), 26 with ", ",
# so arrays of up to MAX_CHARS // 26 numbers always fit in MAX_CHARS when formatted.
MAX_NUMBERS_THAT_FIT = MAX_CHARS // 26
shapes = st.integers(1, MAX_TOKENS).flatmap(
    lambda rows: st.tuples(
        st.just(rows), st.integers(1, min(MAX_FEATURES, MAX_NUMBERS_THAT_FIT // rows))
    )
)
embeddings = hnp.arrays(
    np.float64, shapes, elements=st.floats(allow_nan=False, allow_infinity=False, width=64)
)


def test_longest_float_text() -> None:
    x = np.full((1, MAX_NUMBERS_THAT_FIT), -2.2250738585072014e-308)
    text = format_embeddings(x)
    assert len(text) <= MAX_CHARS
    np.testing.assert_array_equal(parse_embeddings(text, max_features=MAX_NUMBERS_THAT_FIT), x)


@given(embeddings)
def test_format_round_trips_exactly(x: np.ndarray) -> None:
    back = parse_embeddings(format_embeddings(x))
    assert back.shape == x.shape
    assert np.array_equal(back.view(np.int64), x.view(np.int64))  # bit for bit, -0.0 too


# -- any text: a result or an InputError, nothing else -------------------------------------

texts = st.text() | st.text(alphabet="0123456789.,;[]() \n\te+-−_nafitorchsy=<>'٣３…")


@settings(max_examples=300)
@given(texts)
def test_parse_embeddings_never_crashes(text: str) -> None:
    try:
        x = parse_embeddings(text)
    except InputError:
        return
    assert x.dtype == np.float64
    assert x.ndim == 2
    assert 1 <= x.shape[0] <= MAX_TOKENS
    assert 1 <= x.shape[1] <= MAX_FEATURES
    assert np.isfinite(x).all()


@settings(max_examples=300)
@given(texts, st.none() | st.integers(1, MAX_FEATURES))
def test_parse_vector_never_crashes(text: str, n: int | None) -> None:
    try:
        v = parse_vector(text, n, name="beta")
    except InputError:
        return
    assert v.dtype == np.float64
    assert v.ndim == 1
    assert n is None or len(v) == n
    assert np.isfinite(v).all()


@settings(max_examples=300)
@given(st.text(), st.integers(1, MAX_TOKENS))
def test_parse_labels_never_crashes(text: str, n: int) -> None:
    try:
        labels = parse_labels(text, n)
    except InputError:
        return
    assert len(labels) == n
    assert all(isinstance(label, str) and 0 < len(label) <= MAX_LABEL_CHARS for label in labels)


def test_one_label_per_line_may_hold_a_comma():
    assert parse_labels("Hello\n,\n how\n are\n you\n?", 6) == [
        "Hello",
        ",",
        "how",
        "are",
        "you",
        "?",
    ]
