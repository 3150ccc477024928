# lnlab's server in a container: `python -m lnlab.ui.serve` on port 8501 (README, "Running for a
# whole course"). torch comes from PyTorch's CPU index by default: the small CPU build, no CUDA
# libraries. The CUDA variant: build with
#   --build-arg TORCH_INDEX=https://download.pytorch.org/whl/cu128
# (the wheel brings its own CUDA runtime) and run with the NVIDIA container toolkit
# (`docker run --gpus all ...`, or a GPU resource limit in Kubernetes).
FROM python:3.11-slim-bookworm

ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
# requirements.txt holds every pin, torch's included; the index only decides which build of it
# (2.13.0+cpu or +cu128 sorts above PyPI's 2.13.0 and satisfies ==2.13.0).
COPY requirements.txt .
RUN pip install --extra-index-url "${TORCH_INDEX}" -r requirements.txt

COPY . .
# Not root. The default class store (a SQLite file in .lnlab-data/) must be writable; with
# LNLAB_DATABASE_URL set (compose, Kubernetes) it is not used.
RUN useradd --create-home --uid 10001 lnlab \
    && mkdir -p /app/.lnlab-data \
    && chown lnlab /app/.lnlab-data
USER 10001

EXPOSE 8501
HEALTHCHECK --interval=10s --timeout=3s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=2).read() != b'ok')"]
CMD ["python", "-m", "lnlab.ui.serve", "--server.port", "8501", "--server.address", "0.0.0.0", "--server.fileWatcherType", "none"]
