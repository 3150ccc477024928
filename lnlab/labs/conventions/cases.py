"""The checker's ready-made cases: each tutorial's worked example and its claims, exactly as
the tutorial wrote them (some of their arithmetic is wrong: that is what the checker shows).

A tutorial is named by its own title (lnlab.teach.tutorials.TITLES), in short in a case's title.
Case keys are what links carry (`case=`); OLD_KEYS maps older links' keys to the same cases.
"""

from __future__ import annotations

from dataclasses import dataclass

from lnlab.teach.tutorials import ACTION, ADD_NORM, EXPLAINED, LECTURE_5, TITLES, WHY_NOT_BN


@dataclass(frozen=True)
class CheckCase:
    """A tutorial's worked example: its input and its claims, exactly as it wrote them."""

    key: str
    title: str
    source: str
    x: str
    mean: str = ""
    std: str = ""
    var: str = ""
    out: str = ""
    labels: tuple[str, ...] | None = None


CHECK_CASES: tuple[CheckCase, ...] = (
    CheckCase(
        "action-2468",
        f"{ACTION}: one token [2, 4, 6, 8]",
        f'"{TITLES[ACTION]}", step by step with eps = 1e-5.',
        "2.0, 4.0, 6.0, 8.0",
        mean="5.0",
        std="2.23607",
        var="5.0",
        out="-1.3416, -0.4472, 0.4472, 1.3416",
    ),
    CheckCase(
        "explained-hello",
        f'{EXPLAINED}: the "Hello" token',
        f'"{TITLES[EXPLAINED]}", steps 2 to 5 for Hello.',
        "0.1, 0.3, -0.2, 0.8",
        mean="0.25",
        std="0.364",
        var="0.1325",
        out="-0.412, 0.137, -1.236, 1.511",
    ),
    CheckCase(
        "explained-prompt",
        f'{EXPLAINED}: "Hello, how are you?" per token',
        f'"{TITLES[EXPLAINED]}", its expected output: per-token means and stds (printed from '
        "x.std(), which is unbiased) and the normalized embeddings.",
        "[[0.1, 0.3, -0.2, 0.8],\n [0.0, 0.1, 0.4, -0.1],\n [0.5, -0.3, 0.2, 0.6],\n"
        " [0.2, 0.7, -0.4, 0.3],\n [-0.1, 0.4, 0.8, -0.2],\n [0.3, -0.1, 0.1, 0.5]]",
        mean="tensor([0.2500, 0.1000, 0.2500, 0.2000, 0.2250, 0.2000])",
        std="tensor([0.3640, 0.2082, 0.3742, 0.4243, 0.4240, 0.2449])",
        out="tensor([[-0.4124,  0.1375, -1.2371,  1.5120],\n"
        "        [-0.4804,  0.0000,  1.4414, -0.9610],\n"
        "        [ 0.6682, -1.4706, -0.1336,  0.9360],\n"
        "        [ 0.0000,  1.1785, -1.4142,  0.2357],\n"
        "        [-0.7660,  0.4123,  1.3540, -1.0003],\n"
        "        [ 0.4082, -1.2247, -0.4082,  1.2247]])",
        labels=("Hello", ",", "how", "are", "you", "?"),
    ),
    CheckCase(
        "add-norm-notebook",
        f"{ADD_NORM}: the PyTorch notebook, two tokens",
        f'"{TITLES[ADD_NORM]}", its notebook\'s printed mean, std (sqrt(var + 1e-5)) and y.',
        "torch.Tensor([[[0.2, 0.1, 0.3], [0.5, 0.1, 0.1]]])",
        mean="tensor([[[0.2000]],\n\n        [[0.2333]]])",
        std="tensor([[[0.0817]],\n\n        [[0.1886]]])",
        out="tensor([[[ 0.0000, -1.2238,  1.2238]],\n\n        [[ 1.4140, -0.7070, -0.7070]]])",
    ),
    CheckCase(
        "lecture5-numpy",
        f"{LECTURE_5}: the NumPy LayerNorm class",
        f'"{TITLES[LECTURE_5]}", its class\'s printed output for two sample rows.',
        "[[0.2, 0.8, 1.0, 1.2],\n [1.0, 0.0, 0.5, 1.5]]",
        out="[[-1.60356317  0.          0.53452106  1.06904211]\n"
        " [ 0.4472128  -1.34163839 -0.4472128   1.34163839]]",
    ),
    CheckCase(
        "why-not-bn-rows",
        f"{WHY_NOT_BN}: Layer Norm row statistics of the 5 x 3 table",
        f'"{TITLES[WHY_NOT_BN]}": mu and sigma of each sample\'s z1, z2, z3.',
        "7, 5, 4\n2, 3, 4\n1, 2, 3\n7, 5, 6\n3, 3, 4",
        mean="5.33, 3.0, 2.0, 6.0, 3.33",
        std="1.25, 0.82, 0.82, 0.82, 0.47",
        labels=("sample 1", "sample 2", "sample 3", "sample 4", "sample 5"),
    ),
    CheckCase(
        "why-not-bn-sample1",
        f"{WHY_NOT_BN}: Layer Norm of sample 1, [7, 5, 4]",
        f'"{TITLES[WHY_NOT_BN]}": the normalization calculation for row 1.',
        "7, 5, 4",
        mean="5.33",
        std="1.25",
        out="1.34, -0.26, -1.06",
    ),
    CheckCase(
        "why-not-bn-columns",
        f"{WHY_NOT_BN}: Batch Norm column statistics (z1, z2, z3)",
        f'"{TITLES[WHY_NOT_BN]}": Batch Norm reads the table down the columns, so here each '
        "row is one column.",
        "7, 2, 1, 7, 3\n5, 3, 2, 5, 3\n4, 4, 3, 6, 4",
        mean="4.0, 3.6, 4.2",
        std="2.65, 1.36, 1.09",
        labels=("z1", "z2", "z3"),
    ),
    CheckCase(
        "why-not-bn-contextual",
        f"{WHY_NOT_BN}: the contextual Hi and How tokens",
        f'"{TITLES[WHY_NOT_BN]}": Layer Norm statistics of two self-attention outputs.',
        "6.5, 2.1, 8.3\n5.7, 9.2, 1.8",
        mean="5.63, 5.57",
        std="2.51, 3.04",
        labels=("Hi", "How"),
    ),
)


def check_case(key: str) -> CheckCase:
    """The ready-made case called `key` (KeyError if none)."""
    return {c.key: c for c in CHECK_CASES}[key]


OLD_KEYS = {  # the keys links carried before cases were named after their tutorials
    "seed000-2468": "action-2468",
    "seed002-hello": "explained-hello",
    "seed002-prompt": "explained-prompt",
    "seed001-notebook": "add-norm-notebook",
    "seed004-numpy": "lecture5-numpy",
    "seed003-ln-rows": "why-not-bn-rows",
    "seed003-ln-sample1": "why-not-bn-sample1",
    "seed003-bn-columns": "why-not-bn-columns",
    "seed003-contextual": "why-not-bn-contextual",
}


def case_key(key: str) -> str:
    """The current key of a case named by a link, old or new (unknown keys pass through)."""
    return OLD_KEYS.get(key, key)
