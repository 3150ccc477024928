"""Which memory a benchmark measures: the device's last cache, or the memory behind it.

A tensor that fits in a cache is read back from the cache on every pass: an H100's 50 MiB L2
holds a 16 MiB bfloat16 tensor and its copy, and a "copy" of it then runs faster than the
H100's memory can move data. Only a tensor well past the cache measures the memory: each
pass over `x` then evicts what the next pass needs first (MEMORY_MULTIPLE says how far past).

What is known, and from where: a CUDA GPU's L2 size and memory from torch's device properties
(`L2_cache_size`, `total_memory`) and its free memory from `torch.cuda.mem_get_info`; the
CPU's last-level cache from the OS (Linux's /sys/devices/system/cpu/cpu0/cache) and its memory
from /proc/meminfo. torch tells neither for Apple's GPUs.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

from lnlab.core import backend as bk

MEMORY_MULTIPLE = 2  # x at least this many times the cache: every pass streams from memory
SYSFS_CACHE = Path("/sys/devices/system/cpu/cpu0/cache")
MEMINFO = Path("/proc/meminfo")
_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30}


@dataclass(frozen=True)
class Memory:
    """A device's last cache and its memory, as far as torch or the OS tell (None: unknown)."""

    device: str
    cache_name: str  # "L2 cache", "L3 cache"; "" when unknown
    cache_bytes: int | None
    total_bytes: int | None
    memory_name: str  # what lies behind the cache: "the GPU's memory", "main memory"
    source: str  # where the sizes come from, for people


@dataclass(frozen=True)
class Level:
    """Which memory timings on a tensor describe: "cache", "partly", "memory" or "unknown", a
    sentence that says why with the sizes, and what to do to time the memory ("" if nothing)."""

    kind: str
    finding: str
    advice: str = ""

    @property
    def text(self) -> str:
        return f"{self.finding} {self.advice}".rstrip()


def binary_size(n: float) -> str:
    """Bytes for people, in powers of 1024: '50 MiB', '1.2 GiB', '512 KiB'."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            value = n / scale
            return f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"
    return f"{n:.0f} B"


def _sysfs_size(text: str) -> int:
    """'32768K' -> 33554432."""
    text = text.strip()
    unit = text[-1] if text[-1] in "KMG" else ""
    return int(text[: len(text) - len(unit)]) * _UNITS[unit]


def cpu_cache(root: Path = SYSFS_CACHE) -> tuple[str, int] | None:
    """The CPU's last-level data (or unified) cache as ("L3 cache", bytes), from the OS."""
    found = []
    for index in sorted(root.glob("index*")):
        try:
            kind = (index / "type").read_text().strip()
            level = int((index / "level").read_text())
            size = _sysfs_size((index / "size").read_text())
        except (OSError, ValueError, IndexError, KeyError):
            continue
        if kind in ("Data", "Unified"):
            found.append((level, size))
    if not found:
        return None
    level, size = max(found)
    return f"L{level} cache", size


def meminfo(field: str, path: Path = MEMINFO) -> int | None:
    """A /proc/meminfo field in bytes ("MemTotal", "MemAvailable"), or None."""
    try:
        for line in path.read_text().splitlines():
            name, _, value = line.partition(":")
            if name == field:
                number, _, unit = value.strip().partition(" ")
                return int(number) * (1024 if unit.lower() == "kb" else 1)
    except (OSError, ValueError):
        return None
    return None


@functools.cache
def device_memory(device: str) -> Memory:
    """What torch (GPUs) or the OS (the CPU) tell about `device`'s cache and memory. Read
    once per process: the sizes do not change while it runs."""
    if device.startswith("cuda"):
        torch = bk.get_torch()
        props = torch.cuda.get_device_properties(device)
        l2 = getattr(props, "L2_cache_size", 0) or None
        return Memory(
            device,
            "L2 cache" if l2 else "",
            l2,
            props.total_memory,
            "the GPU's memory",
            "torch.cuda.get_device_properties",
        )
    if device.startswith("cpu"):
        cache = cpu_cache()
        name, size = cache if cache else ("", None)
        return Memory(
            device, name, size, meminfo("MemTotal"), "main memory", f"{SYSFS_CACHE}, {MEMINFO}"
        )
    return Memory(device, "", None, None, "the GPU's memory", "torch, which does not tell it")


def free_bytes(device: str) -> int | None:
    """The memory free now: the GPU's (torch.cuda.mem_get_info) or the OS's MemAvailable."""
    if device.startswith("cuda"):
        return bk.get_torch().cuda.mem_get_info(device)[0]
    if device.startswith("cpu"):
        return meminfo("MemAvailable")
    return None


def level(x_bytes: int, memory: Memory) -> Level:
    """Which memory a pass over `x` (and the copy beside it) is timed in.

    Cache: x and its copy fit in the cache together. Memory: x alone is MEMORY_MULTIPLE times
    the cache or more. Partly: in between, where some of each pass is the cache's.
    """
    if not memory.cache_bytes:
        return Level(
            "unknown",
            f"The size of {memory.device}'s cache is not known (read from {memory.source}), so "
            "it cannot be told whether these timings are the cache's or the memory's.",
        )
    cache = f"the {binary_size(memory.cache_bytes)} {memory.cache_name}"
    x = binary_size(x_bytes)
    ratio = x_bytes / memory.cache_bytes
    advice = f"Make x at least {MEMORY_MULTIPLE} times the cache to time {memory.memory_name}."
    if 2 * x_bytes <= memory.cache_bytes:
        return Level(
            "cache",
            f"x ({x}) and its copy fit in {cache}: these timings are the cache's, not "
            f"{memory.memory_name}'s.",
            advice,
        )
    if ratio >= MEMORY_MULTIPLE:
        return Level(
            "memory",
            f"x ({x}) is {ratio:.1f} times {cache}: every pass streams from "
            f"{memory.memory_name}, so these timings are its.",
        )
    return Level(
        "partly",
        f"x ({x}) is {ratio:.1f} times {cache}: part of each pass comes from the cache, so "
        "these timings are partly the cache's.",
        advice,
    )
