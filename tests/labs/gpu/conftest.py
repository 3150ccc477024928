"""The GPU lab's tests describe the device themselves: what the page sizes and caps from (the
CPU's last-level cache and memory, a GPU's properties) differs from machine to machine."""

from __future__ import annotations

import pytest

from lnlab.labs.gpu import benchmark, memory

# A CPU whose 1 MiB last-level cache keeps the CPU's cap at its fallback, 2^21 elements.
SMALL_CPU = memory.Memory("cpu", "L3 cache", 2**20, 16 * 2**30, "main memory", "a test")


@pytest.fixture(autouse=True)
def patient_worker(monkeypatch: pytest.MonkeyPatch) -> None:
    """No test of the lab may fail because a loaded machine kept the worker from its tiny runs
    for 2 s: the grace before the worker is stopped is tested in tests/serving/test_worker.py."""
    monkeypatch.setattr(benchmark, "STOP_GRACE_S", 120.0)


@pytest.fixture(autouse=True)
def described_devices(monkeypatch: pytest.MonkeyPatch) -> dict[str, memory.Memory]:
    """memory.device_memory answers from this dict (device name -> Memory), SMALL_CPU for the
    CPU; a test adds a GPU to it. A real GPU the dict does not name (on a machine with one, the
    page picks it by default) is described as torch describes it."""
    devices = {"cpu": SMALL_CPU}
    real = memory.device_memory
    monkeypatch.setattr(memory, "device_memory", lambda device: devices.get(device) or real(device))
    return devices
