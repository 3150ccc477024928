"""lnlab.core.backend: backends, devices and dtypes, here and on GPUs faked with monkeypatch."""

import threading

import pytest
import torch
from helpers import HAS_CUDA

from lnlab import InputError
from lnlab.core import backend as bk

HAS_MPS = bk._mps_available(torch)


@pytest.fixture
def fake_cuda(monkeypatch):
    """Two CUDA GPUs without bfloat16, whatever this machine has."""
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "device_count", lambda: 2)
    monkeypatch.setattr(torch.cuda, "get_device_name", lambda i: f"Fake GPU {i}")
    monkeypatch.setattr(torch.cuda, "is_bf16_supported", lambda *a, **k: False)
    monkeypatch.setattr(bk, "_mps_available", lambda torch: False)


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    monkeypatch.setattr(bk, "_mps_available", lambda torch: False)


def test_get_torch_returns_one_module_to_every_thread(monkeypatch):
    monkeypatch.setattr(bk, "_torch", None)
    found = []
    threads = [threading.Thread(target=lambda: found.append(bk.get_torch())) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()

    assert bk.torch_installed()
    assert len(found) == 8 and all(m is torch for m in found)


def test_without_torch(monkeypatch):
    monkeypatch.setattr(bk, "_torch", None)
    monkeypatch.setattr(bk, "torch_installed", lambda: False)

    with pytest.raises(InputError, match="torch is not installed"):
        bk.get_torch()
    assert bk.device_summary() == "numpy only: torch is not installed"


@pytest.mark.parametrize("backend", bk.BACKENDS)
def test_known_backends_pass(backend):
    bk.check_backend(backend)


@pytest.mark.parametrize("backend", ["jax", "Torch", "", "cuda"])
def test_unknown_backend_raises(backend):
    with pytest.raises(InputError, match="unknown backend"):
        bk.check_backend(backend)


@pytest.mark.parametrize("name", bk.DTYPES)
def test_torch_dtype(name):
    assert bk.torch_dtype(name) is getattr(torch, name)


@pytest.mark.parametrize("name", ["int8", "float8", "double", ""])
def test_unknown_dtype_raises(name):
    with pytest.raises(InputError, match="unknown dtype"):
        bk.torch_dtype(name)


def test_this_machine():
    devices = bk.available_devices()

    assert devices[-1] == bk.DeviceInfo("cpu", "cpu", "CPU")
    assert bk.resolve_device("auto") == devices[0].name
    assert bk.resolve_device("cpu") == "cpu"
    assert bk.supported_dtypes("cpu") == bk.DTYPES
    if devices[0].kind == "cpu":
        assert bk.device_summary() == "CPU: no GPU found"
    else:
        assert bk.device_summary() == f"{devices[0].kind.upper()}: {devices[0].label}"


def test_no_gpu(no_gpu):
    assert bk.available_devices() == [bk.DeviceInfo("cpu", "cpu", "CPU")]
    assert bk.resolve_device("auto") == "cpu"
    assert bk.device_summary() == "CPU: no GPU found"


@pytest.mark.parametrize(
    ("device", "match"), [("cuda", "CUDA"), ("cuda:1", "CUDA"), ("mps", "MPS")]
)
def test_missing_gpu_raises(no_gpu, device, match):
    with pytest.raises(InputError, match=match):
        bk.resolve_device(device)


@pytest.mark.parametrize("device", ["tpu", "gpu", "", "CPU", "xla:0"])
def test_unknown_device_raises(device):
    with pytest.raises(InputError, match="unknown device"):
        bk.resolve_device(device)


def test_fake_cuda(fake_cuda):
    assert [d.name for d in bk.available_devices()] == ["cuda:0", "cuda:1", "cpu"]
    assert bk.available_devices()[1].label == "Fake GPU 1"
    assert bk.resolve_device("auto") == "cuda:0"
    assert bk.resolve_device("cuda") == "cuda:0"
    assert bk.resolve_device("cuda:1") == "cuda:1"
    assert bk.device_summary() == "CUDA: Fake GPU 0"
    assert bk.supported_dtypes("cuda:0") == ("float32", "float64", "float16")


@pytest.mark.parametrize("device", ["cuda:2", "auto:1"])
def test_device_that_does_not_exist_raises(fake_cuda, device):
    with pytest.raises(InputError):
        bk.resolve_device(device)


def test_mps_dtypes():
    assert bk.supported_dtypes("mps") == ("float32", "float16")


@pytest.mark.skipif(HAS_CUDA, reason="this machine has a CUDA GPU")
def test_real_cuda_is_missing_here():
    with pytest.raises(InputError, match="no CUDA GPU"):
        bk.resolve_device("cuda")


@pytest.mark.skipif(HAS_MPS, reason="this machine has Apple MPS")
def test_real_mps_is_missing_here():
    with pytest.raises(InputError, match="MPS"):
        bk.resolve_device("mps")


@pytest.mark.skipif(not HAS_CUDA, reason="no CUDA GPU on this machine")
def test_real_cuda():
    assert bk.resolve_device("auto").startswith("cuda")
    assert bk.resolve_device("cuda") == "cuda:0"
    assert "bfloat16" not in bk.supported_dtypes("cuda:0") or torch.cuda.is_bf16_supported()
