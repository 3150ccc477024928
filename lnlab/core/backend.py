"""Where a computation runs: numpy (float64) or torch on CUDA, Apple MPS or the CPU.

torch is imported lazily, once, behind a lock: the app starts without it, numpy-only use
never pays for it, and two sessions that ask for it in the same instant cannot see a
half-initialized module.
"""

from __future__ import annotations

import contextlib
import importlib.util
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from types import ModuleType
from typing import Any

import numpy as np

from lnlab.core.errors import InputError

BACKENDS = ("numpy", "torch")
DEVICES = ("auto", "cuda", "mps", "cpu")
DTYPES = ("float32", "float64", "float16", "bfloat16")
LOW_PRECISION = ("float16", "bfloat16")

_torch_lock = threading.Lock()
_torch: ModuleType | None = None


def torch_installed() -> bool:
    """True when torch can be imported (without importing it)."""
    return importlib.util.find_spec("torch") is not None


def get_torch() -> ModuleType:
    """Import torch once, under a lock, and return the module."""
    global _torch
    if _torch is None:
        with _torch_lock:
            if _torch is None:
                if not torch_installed():
                    raise InputError("torch is not installed: use the numpy backend")
                import torch

                _torch = torch
    return _torch


@dataclass(frozen=True)
class DeviceInfo:
    """One device torch can use: `name` for torch ('cuda:0'), `label` for people."""

    name: str
    kind: str
    label: str


@contextlib.contextmanager
def cpu_threads(count: int) -> Iterator[None]:
    """Run with torch limited to `count` CPU threads, then restore the previous count."""
    torch = get_torch()
    previous = torch.get_num_threads()
    torch.set_num_threads(count)
    try:
        yield
    finally:
        torch.set_num_threads(previous)


def _mps_available(torch: ModuleType) -> bool:
    mps = getattr(torch.backends, "mps", None)
    return bool(mps is not None and mps.is_available())


def available_devices() -> list[DeviceInfo]:
    """Every device torch can use here, GPUs first; the CPU is always last."""
    torch = get_torch()
    found = []
    if torch.cuda.is_available():
        for i in range(torch.cuda.device_count()):
            found.append(DeviceInfo(f"cuda:{i}", "cuda", torch.cuda.get_device_name(i)))
    if _mps_available(torch):
        found.append(DeviceInfo("mps", "mps", "Apple GPU (Metal)"))
    found.append(DeviceInfo("cpu", "cpu", "CPU"))
    return found


def resolve_device(device: str = "auto") -> str:
    """Turn 'auto' into CUDA, then MPS, then CPU; check that an explicit choice exists here."""
    get_torch()
    names = [d.name for d in available_devices()]
    if device == "auto":
        return names[0]
    resolved = "cuda:0" if device == "cuda" else device
    if resolved in names:
        return resolved
    kind = device.split(":")[0]
    if kind not in DEVICES or kind == "auto":
        raise InputError(f'unknown device "{device}": choose one of {", ".join(DEVICES)}')
    if kind == "cuda":
        raise InputError(f'no CUDA GPU "{device}" on this machine (found: {", ".join(names)})')
    if kind == "mps":
        raise InputError("Apple MPS is not available on this machine")
    raise InputError(f'unknown device "{device}": this machine has {", ".join(names)}')


def device_summary() -> str:
    """One line for a badge: the GPU torch would use, or that there is none."""
    if not torch_installed():
        return "numpy only: torch is not installed"
    first = available_devices()[0]
    if first.kind == "cpu":
        return "CPU: no GPU found"
    return f"{first.kind.upper()}: {first.label}"


def supported_dtypes(device: str) -> tuple[str, ...]:
    """The dtypes that the device can compute in."""
    torch = get_torch()
    if device.startswith("mps"):
        return ("float32", "float16")
    if device.startswith("cuda") and not torch.cuda.is_bf16_supported():
        return ("float32", "float64", "float16")
    return DTYPES


def torch_dtype(name: str) -> Any:
    """The torch dtype for a name in DTYPES."""
    if name not in DTYPES:
        raise InputError(f'unknown dtype "{name}": choose one of {", ".join(DTYPES)}')
    return getattr(get_torch(), name)


def check_backend(backend: str) -> None:
    """Raise InputError unless `backend` is one we know."""
    if backend not in BACKENDS:
        raise InputError(f'unknown backend "{backend}": choose "numpy" or "torch"')


@dataclass(frozen=True)
class Placement:
    """Where torch computes: device, storage dtype and arithmetic dtype.

    float16 and bfloat16 are storage types: the input is rounded to them, the arithmetic runs
    in float32 (as torch's own kernels do), and the outputs are rounded back."""

    device: str
    storage: Any
    compute: Any


def placement(backend: str, device: str, dtype: str) -> Placement | None:
    """Where to compute: None for numpy (float64), else torch's device and dtypes."""
    check_backend(backend)
    if backend == "numpy":
        return None
    torch = get_torch()
    resolved = resolve_device(device)
    if dtype not in supported_dtypes(resolved):
        raise InputError(f"{dtype} is not supported on {resolved}")
    storage = torch_dtype(dtype)
    compute = torch.float32 if dtype in LOW_PRECISION else storage
    return Placement(resolved, storage, compute)


def to_backend(a: Any, place: Placement | None) -> Any:
    """A float64 numpy array as the backend computes with it: float64 numpy, or a torch tensor
    rounded to the storage dtype and moved to the device in the arithmetic dtype."""
    if place is None:
        return np.asarray(a, dtype=np.float64)
    torch = get_torch()
    t = torch.as_tensor(a, dtype=torch.float64).to(place.storage)
    return t.to(device=place.device, dtype=place.compute)


def to_numpy(a: Any, place: Placement | None) -> Any:
    """A result back as a float64 numpy array, rounded to the storage dtype first."""
    if place is None:
        return np.asarray(a, dtype=np.float64)
    torch = get_torch()
    return a.to(place.storage).to(device="cpu", dtype=torch.float64).numpy()
