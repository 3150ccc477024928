"""Shareable links: a page's state <-> URL query parameters, versioned and validated.

A link is untrusted input. Each page declares its parameters as a tuple of `Param`; decoding
checks every one (type, bounds, size, finiteness) and raises one InputError that lists every
problem, so the page can open on its default example with a clear notice.

Matrices (token embeddings) travel as text: rows joined by ";", numbers by ",", each number in
the shortest form that reads back to the same float64 (`2`, `0.1`, `-1e-05`). Readable, exact,
and compact enough for the size caps: `?v=1&x=2,4,6,8`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from lnlab.core.errors import InputError
from lnlab.core.parse import parse_embeddings, parse_vector, short_number

LINK_VERSION = "1"
VERSION_KEY = "v"
MAX_PARAM_CHARS = 40_000  # one parameter; a 64 x 64 matrix of short numbers fits easily
MAX_LINK_PARAMS = 32
_WHOLE_NUMBER = re.compile(r"[+-]?[0-9]{1,9}")


def encode_matrix(x: np.ndarray) -> str:
    """Rows joined by ';', numbers by ','."""
    rows = np.atleast_2d(np.asarray(x, dtype=np.float64))
    return ";".join(",".join(short_number(v) for v in row) for row in rows)


def decode_matrix(text: str) -> np.ndarray:
    """The inverse of encode_matrix, with the parser's checks and caps."""
    return parse_embeddings(text.replace(";", "\n"), commas="separate")


@dataclass(frozen=True)
class Param:
    """One query parameter of a page.

    kind: "float" and "int" (bounded by lo..hi), "choice" (one of `choices`), "bool" ("1"/"0"),
    "matrix" (token embeddings), "vector" (numbers joined by ','), "text" (at most
    `max_chars` characters; `max_lines` lines joined by newlines).
    """

    name: str
    kind: str
    lo: float = -np.inf
    hi: float = np.inf
    choices: tuple[str, ...] = ()
    max_chars: int = 2_000
    max_lines: int = 64

    @property
    def limit(self) -> int:
        """The most characters this parameter may hold."""
        return self.max_chars if self.kind in ("text", "choice") else MAX_PARAM_CHARS

    def encode(self, value: Any) -> str:
        """The parameter's text for `value`."""
        if self.kind == "matrix":
            return encode_matrix(value)
        if self.kind == "vector":
            return ",".join(short_number(v) for v in np.ravel(value))
        if self.kind == "float":
            return short_number(value)
        if self.kind == "bool":
            return "1" if value else "0"
        return str(value)

    def decode(self, raw: str) -> Any:
        """The value in `raw`, or InputError saying what is wrong with it."""
        if len(raw) > self.limit:
            raise InputError(
                f"{self.name}: {len(raw):,} characters is over the {self.limit:,} limit"
            )
        decoder = getattr(self, f"_decode_{self.kind}")
        return decoder(raw)

    def _decode_matrix(self, raw: str) -> np.ndarray:
        try:
            return decode_matrix(raw)
        except InputError as err:
            raise InputError(f"{self.name}: {err}") from err

    def _decode_vector(self, raw: str) -> np.ndarray:
        return parse_vector(raw, name=self.name, commas="separate")

    def _decode_float(self, raw: str) -> float:
        value = float(parse_vector(raw, 1, name=self.name)[0])
        return self._in_bounds(value)

    def _decode_int(self, raw: str) -> int:
        if not _WHOLE_NUMBER.fullmatch(raw):
            raise InputError(f'{self.name}: "{raw[:20]}" is not a whole number')
        return int(self._in_bounds(int(raw)))

    def _decode_bool(self, raw: str) -> bool:
        if raw not in ("0", "1", "true", "false"):
            raise InputError(f'{self.name}: "{raw[:20]}" is not 0 or 1')
        return raw in ("1", "true")

    def _decode_choice(self, raw: str) -> str:
        if raw not in self.choices:
            raise InputError(f'{self.name}: "{raw[:20]}" is not one of {", ".join(self.choices)}')
        return raw

    def _decode_text(self, raw: str) -> str:
        if raw.count("\n") >= self.max_lines:
            raise InputError(f"{self.name}: more than {self.max_lines} lines")
        if any(not ch.isprintable() and ch not in "\n\t" for ch in raw):
            raise InputError(f"{self.name}: contains control characters")
        return raw

    def _in_bounds(self, value: float) -> float:
        if not self.lo <= value <= self.hi:
            raise InputError(f"{self.name}: {value} is outside {self.lo}..{self.hi}")
        return value


def encode_link(state: Mapping[str, Any], spec: tuple[Param, ...]) -> dict[str, str]:
    """Query parameters for `state` (only the names in `spec`; None values are left out)."""
    params = {VERSION_KEY: LINK_VERSION}
    for p in spec:
        if state.get(p.name) is not None:
            text = p.encode(state[p.name])
            if len(text) <= p.limit:  # what would not open again is left out of the link
                params[p.name] = text
    return params


def decode_link(params: Mapping[str, str | list[str]], spec: tuple[Param, ...]) -> dict[str, Any]:
    """The state in `params`: only the names in `spec` that are present.

    Raises one InputError listing every problem: an unknown version, unknown or repeated
    parameters, and each parameter that fails its own checks.
    """
    problems = []
    if len(params) > MAX_LINK_PARAMS:
        raise InputError(f"the link has {len(params)} parameters; at most {MAX_LINK_PARAMS}")
    version = params.get(VERSION_KEY, LINK_VERSION)
    if version != LINK_VERSION:
        problems.append(f'link version "{str(version)[:10]}" is unknown (this app reads "1")')
    known = {p.name: p for p in spec}
    state: dict[str, Any] = {}
    for name, raw in params.items():
        if name == VERSION_KEY:
            continue
        if name not in known:
            problems.append(f'unknown parameter "{name[:20]}"')
            continue
        if not isinstance(raw, str):
            problems.append(f"{name}: given more than once")
            continue
        try:
            state[name] = known[name].decode(raw)
        except InputError as err:
            problems.append(str(err))
    if problems:
        raise InputError("this link could not be opened: " + "; ".join(problems))
    return state


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class Field:
    """A link parameter bound to a widget's session-state key.

    `to_widget` turns the decoded link value into the widget's value (a matrix into the text
    of a text area, say); `from_widget` does the reverse for the link.
    """

    param: Param
    key: str
    to_widget: Callable[[Any], Any] = _same
    from_widget: Callable[[Any], Any] = _same


def link_state(widgets: Mapping[str, Any], fields: tuple[Field, ...]) -> dict[str, Any]:
    """The link's state from the widgets' current values (fields whose key is absent are left
    out; a value that fails `from_widget` with InputError is left out too)."""
    state = {}
    for f in fields:
        if f.key in widgets:
            try:
                state[f.param.name] = f.from_widget(widgets[f.key])
            except InputError:
                continue
    return state


def widget_values(state: Mapping[str, Any], fields: tuple[Field, ...]) -> dict[str, Any]:
    """Session-state values for the widgets, from a decoded link state."""
    return {f.key: f.to_widget(state[f.param.name]) for f in fields if f.param.name in state}


def link_with(
    params: Mapping[str, str], fields: tuple[Field, ...], key: str, value: Any
) -> dict[str, str]:
    """The link `params` with widget `key` set to `value`: the parameters of its fields encoded
    again, in their places (one that is new goes last, one now empty is left out)."""
    changed: dict[str, str | None] = {}
    for f in (f for f in fields if f.key == key):
        encoded = encode_link(link_state({key: value}, (f,)), (f.param,))
        changed[f.param.name] = encoded.get(f.param.name)
    out = {name: changed.pop(name, text) for name, text in params.items()}
    out |= changed
    return {name: text for name, text in out.items() if text is not None}
