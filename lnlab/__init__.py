"""lnlab: Layer Normalization, step by step, on numpy or torch. No Streamlit in here.

The math's public names, from lnlab.core; the rest of the package is laid out by purpose
(README, "Layout").
"""

from lnlab.core.backend import available_devices, device_summary, resolve_device, supported_dtypes
from lnlab.core.backward import LayerNormGrads, layer_norm_backward
from lnlab.core.errors import InputError
from lnlab.core.norms import (
    BatchNormTrace,
    LayerNormTrace,
    Spec,
    batch_norm,
    batch_norm_trace,
    layer_norm,
    layer_norm_trace,
    rms_norm,
)
from lnlab.core.parse import (
    MAX_CHARS,
    MAX_FEATURES,
    MAX_TOKENS,
    format_embeddings,
    parse_embeddings,
    parse_labels,
    parse_vector,
)

__all__ = [
    "MAX_CHARS",
    "MAX_FEATURES",
    "MAX_TOKENS",
    "BatchNormTrace",
    "InputError",
    "LayerNormGrads",
    "LayerNormTrace",
    "Spec",
    "available_devices",
    "batch_norm",
    "batch_norm_trace",
    "device_summary",
    "format_embeddings",
    "layer_norm",
    "layer_norm_backward",
    "layer_norm_trace",
    "parse_embeddings",
    "parse_labels",
    "parse_vector",
    "resolve_device",
    "rms_norm",
    "supported_dtypes",
]
