"""Which memory the benchmark measures (lnlab.labs.gpu.memory) and the sizes it takes from the
device: the CPU's last-level cache read from a fake sysfs tree, a GPU's from torch's device
properties (faked, as tests/core/test_backend.py fakes CUDA), the free memory checked when a run
starts, and the peak memory where torch tells it. No GPU is needed."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import torch

from lnlab.core.errors import InputError
from lnlab.labs.gpu import benchmark, memory, parity
from lnlab.labs.gpu.lesson import SCALE, slides
from lnlab.teach.presets import token_preset

DEVICE_MEMORY = memory.device_memory.__wrapped__  # the real reading, uncached (conftest fakes it)
MiB, GiB = 2**20, 2**30
# An NVIDIA H100 80GB as torch describes it: a 50 MiB L2 and 79.6 GiB of memory.
H100 = SimpleNamespace(
    name="NVIDIA H100 80GB HBM3", L2_cache_size=50 * MiB, total_memory=85_520_809_984
)


def _sysfs(root, caches) -> None:
    for k, (level, kind, size) in enumerate(caches):
        index = root / f"index{k}"
        index.mkdir(parents=True)
        (index / "level").write_text(f"{level}\n")
        (index / "type").write_text(f"{kind}\n")
        (index / "size").write_text(f"{size}\n")


def test_the_cpus_last_level_cache_is_read_from_the_os(tmp_path):
    _sysfs(
        tmp_path,
        [
            (1, "Data", "32K"),
            (1, "Instruction", "32K"),
            (2, "Unified", "1024K"),
            (3, "Unified", "32768K"),
        ],
    )
    assert memory.cpu_cache(tmp_path) == ("L3 cache", 32 * MiB)
    assert memory.cpu_cache(tmp_path / "none") is None
    only_l2 = tmp_path / "l2"
    _sysfs(only_l2, [(1, "Data", "48K"), (2, "Unified", "2M"), (3, "Instruction", "1G")])
    assert memory.cpu_cache(only_l2) == ("L2 cache", 2 * MiB)  # an instruction cache is not it
    info = tmp_path / "meminfo"
    info.write_text("MemTotal:       24684096 kB\nMemFree: 1 kB\nMemAvailable:   21854532 kB\n")
    assert memory.meminfo("MemAvailable", info) == 21854532 * 1024
    assert memory.meminfo("Nothing", info) is None
    assert memory.meminfo("MemTotal", tmp_path / "missing") is None


def test_a_gpus_l2_and_memory_come_from_torchs_device_properties(monkeypatch):
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: H100)
    h100 = DEVICE_MEMORY("cuda:0")
    assert (h100.cache_name, h100.cache_bytes, h100.total_bytes) == (
        "L2 cache",
        50 * MiB,
        H100.total_memory,
    )
    older = SimpleNamespace(name="old", total_memory=8 * GiB)  # a torch without L2_cache_size
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: older)
    assert DEVICE_MEMORY("cuda:0").cache_bytes is None
    assert DEVICE_MEMORY("mps").cache_bytes is None  # torch does not tell Apple's


@pytest.fixture
def h100(described_devices, monkeypatch):
    monkeypatch.setattr(torch.cuda, "get_device_properties", lambda device: H100)
    described_devices["cuda:0"] = DEVICE_MEMORY("cuda:0")


def test_the_issues_h100_run_was_the_cache_s_and_the_sized_run_is_the_memorys(h100):
    """The page's old cap, 2^23 bfloat16 elements (16 MiB), fits with its copy in the H100's
    50 MiB L2: those timings were the cache's. Sized from the device, x is twice the L2."""
    old = memory.level(2**23 * 2, memory.device_memory("cuda:0"))
    assert old.kind == "cache"
    assert old.text.startswith("x (16 MiB) and its copy fit in the 50 MiB L2 cache: these")
    shape = benchmark.suggested_shape("cuda:0", "bfloat16")
    assert shape == (100, 512, 1024)  # 51,200 rows of 1,024: 100 MiB
    assert benchmark.check_size(*shape, "cuda:0", "bfloat16") == 100 * 512 * 1024
    sized = memory.level(100 * MiB, memory.device_memory("cuda:0"))
    assert sized.kind == "memory" and "2.0 times the 50 MiB L2 cache" in sized.text
    assert benchmark.suggested_shape("cuda:0", "float32") == (50, 512, 1024)


def test_a_gpus_cap_is_a_share_of_its_memory(h100):
    """A quarter of 79.6 GiB over 8 tensors of x's size: 2.49 GiB of x, in float32; in
    bfloat16 that would be 1.34e9 elements, over the shape caps' 2^16 rows x 2^14 features."""
    cap = benchmark.element_cap("cuda:0", "float32")
    assert cap == int(0.25 * H100.total_memory / (8 * 4))
    assert benchmark.element_cap("cuda:0", "bfloat16") == 2**30
    with pytest.raises(InputError, match="over the GPU cap of"):
        benchmark.check_size(1024, 64, 16384, "cuda:0", "float32")  # 2^30 elements


def test_a_run_needs_its_share_of_the_memory_free_now(monkeypatch):
    """Checked where the run happens: 8 x 256 MiB at its peak is over a quarter of 1 GiB."""
    monkeypatch.setattr(memory, "free_bytes", lambda device: GiB)
    with pytest.raises(
        InputError, match=r"needs about 2 GiB at its peak, over the 25% of the 1 GiB free"
    ):
        benchmark.check_free_memory(64 * MiB, "cuda:0", "float32")
    assert benchmark.check_free_memory(8 * MiB, "cuda:0", "float32") == GiB
    monkeypatch.setattr(memory, "free_bytes", lambda device: None)  # unknown: not refused
    assert benchmark.check_free_memory(64 * MiB, "mps", "float32") is None


def test_the_cpu_is_sized_from_its_last_level_cache(described_devices):
    """A 32 MiB L3: x of 64 MiB suggested, up to 128 MiB (in float32 elements for the narrow
    dtypes, which the CPU computes in float32)."""
    described_devices["cpu"] = memory.Memory(
        "cpu", "L3 cache", 32 * MiB, 24 * GiB, "main memory", "t"
    )
    assert benchmark.suggested_shape("cpu", "float32") == (32, 512, 1024)
    assert benchmark.element_cap("cpu", "float32") == 32 * MiB
    assert benchmark.element_cap("cpu", "bfloat16") == 32 * MiB
    assert benchmark.element_cap("cpu", "float64") == 16 * MiB
    assert benchmark.suggested_shape("cpu", "float64") == (16, 512, 1024)
    assert memory.level(64 * MiB, described_devices["cpu"]).kind == "memory"
    assert memory.level(32 * MiB, described_devices["cpu"]).kind == "partly"
    assert memory.level(16 * MiB, described_devices["cpu"]).kind == "cache"


def test_a_large_cache_is_sized_with_wider_rows(described_devices):
    """2 x 256 MiB of float32 in rows of 1,024 would pass the 65,536-row cap: 4,096 features."""
    described_devices["cuda:0"] = memory.Memory(
        "cuda:0", "L2 cache", 256 * MiB, 192 * GiB, "x", "t"
    )
    batch, seq, features = benchmark.suggested_shape("cuda:0", "float32")
    assert features == 4096 and batch * seq <= benchmark.MAX_ROWS
    assert batch * seq * features * 4 >= 2 * 256 * MiB


def test_an_unknown_cache_suggests_nothing_and_says_it_cannot_tell(described_devices):
    described_devices["mps"] = DEVICE_MEMORY("mps")
    assert benchmark.suggested_shape("mps") is None
    unknown = memory.level(GiB, described_devices["mps"])
    assert unknown.kind == "unknown" and unknown.text == (
        "The size of mps's cache is not known (read from torch, which does not tell it), so it "
        "cannot be told whether these timings are the cache's or the memory's."
    )


def _scale_words(result: benchmark.ScaleUp) -> str:
    """The scale-up figure's caption, as the page's lesson writes it about `result`."""
    x = token_preset("hello").x
    run = parity.parity(x, "cpu", result.dtype)
    lesson = slides(run, [f"t{i}" for i in range(len(x))], 0, "CPU", result.shape, result)
    caption = lesson.sections[lesson.index(SCALE)].figure.caption
    return caption.replace("\\", "")  # plain's escapes


def test_a_result_says_which_memory_it_describes_and_its_peak(h100):
    result = benchmark.run_scale_up(1, 8, 16, "cpu", deadline_s=0.01)
    assert result.memory is not None and result.free_bytes is not None
    assert result.level is not None and result.peak_text() == ""  # torch does not tell
    assert result.memory_text().endswith("torch does not report peak memory on cpu.")
    assert "torch does not report peak memory on cpu." in _scale_words(result)
    on_gpu = benchmark.dataclasses.replace(
        result,
        device="cuda:0",
        dtype="bfloat16",
        shape=(100, 512, 1024),
        memory=memory.device_memory("cuda:0"),
        peak_bytes=7 * 100 * MiB,
    )
    said = (
        "x (100 MiB) is 2.0 times the 50 MiB L2 cache: every pass streams from the GPU's "
        "memory, so these timings are its. Peak memory: torch held at most 700 MiB on cuda:0 "
        "during the run (7.0 times x)."
    )
    assert on_gpu.memory_text() == said
    assert said in _scale_words(on_gpu)


def test_binary_sizes():
    assert [memory.binary_size(n) for n in (512, 1536, 50 * MiB, 2.49 * GiB, 150 * GiB)] == [
        "512 B", "1.5 KiB", "50 MiB", "2.49 GiB", "150 GiB"
    ]  # fmt: skip
