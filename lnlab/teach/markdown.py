"""Make user text safe to show inside Streamlit markdown (messages, labels, sentences)."""

import re

_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>$~:])")


def plain(text: str) -> str:
    """Escape every markdown, HTML and LaTeX ($) character so `text` shows as typed."""
    return _SPECIAL.sub(r"\\\1", text).replace("\n", " ")
