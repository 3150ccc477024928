"""Hard inputs, shared by the labs' claim checks (tests/claims/<lab>.py).

Tokens at every scale from 1e-8 to 1e8, with offsets far from their spread, constant and
all-zero tokens, one and two features, realistic 0.02-scale embeddings, and the settings that
break careless words: ε = 0 and ε = 1 (the largest a page takes), γ away from 1, β away
from 0, negative γ.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from lnlab.core.numbers import DEFAULT_EPS


@dataclass(frozen=True, eq=False)
class Tokens:
    """A prompt (tokens x features), the token a lesson is told for, and ε, γ, β."""

    name: str
    x: np.ndarray
    token: int = 0
    eps: float = DEFAULT_EPS
    gamma: float = 1.0
    beta: float = 0.0
    labels: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        x = np.atleast_2d(np.asarray(self.x, np.float64))
        object.__setattr__(self, "x", x)
        if not self.labels:
            object.__setattr__(self, "labels", tuple(f"t{i + 1}" for i in range(x.shape[0])))

    @property
    def row(self) -> np.ndarray:
        return self.x[self.token]

    def __repr__(self) -> str:
        return self.name


def _tokens() -> list[Tokens]:
    rng = np.random.default_rng(36)
    base = np.array([1.0, 2.0, 3.0, 4.0])
    cases = [
        Tokens("default 2 4 6 8", [2.0, 4.0, 6.0, 8.0]),
        Tokens("0.01 scale", 0.01 * base),
        Tokens("1e-3 scale", 1e-3 * base),
        Tokens("1e-4 scale", 1e-4 * base),
        Tokens("1e-6 scale", 1e-6 * base),
        Tokens("1e-8 scale", 1e-8 * base),
        Tokens("1e4 scale", 1e4 * base),
        Tokens("1e8 scale", 1e8 * base),
        Tokens("100 + x/10", 100 + 0.1 * base),
        Tokens("1e6 + x", 1e6 + base),
        Tokens("1e8 + x", 1e8 + base),
        Tokens("constant", [[3.0, 3.0, 3.0, 3.0], [1.0, 2.0, 4.0, 8.0]]),
        Tokens("constant, eps 0", [[3.0, 3.0, 3.0, 3.0], [1.0, 2.0, 4.0, 8.0]], eps=0.0),
        Tokens("all zero", [[0.0, 0.0, 0.0], [1.0, -1.0, 2.0]]),
        Tokens("D = 1", [[5.0], [-2.0]]),
        Tokens("D = 2", [1.0, 3.0]),
        Tokens("eps 0", [2.0, 4.0, 6.0, 8.0], eps=0.0),
        Tokens("eps 1", [2.0, 4.0, 6.0, 8.0], eps=1.0),
        Tokens("eps 1 at 0.01 scale", 0.01 * base, eps=1.0),
        Tokens("gamma 2 beta 1.5", [2.0, 4.0, 6.0, 8.0], gamma=2.0, beta=1.5),
        Tokens("gamma -0.5 beta -3", [2.0, 4.0, 6.0, 8.0], gamma=-0.5, beta=-3.0),
        Tokens("embeddings 0.02", 0.02 * rng.standard_normal((3, 16)), token=1),
        Tokens("embeddings 0.02, beta 0.1", 0.02 * rng.standard_normal((2, 8)), beta=0.1),
        Tokens("unit normal", rng.standard_normal((3, 6)), token=2),
        Tokens("one outlier", [0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 100.0]),
    ]
    return cases


TOKENS = _tokens()
