# lnlab's server in a container: `streamlit run app.py` on port 8501 (README, "Running for a
# whole course"). Needs BuildKit (Docker 23 and later by default; DOCKER_BUILDKIT=1 on 20.10).
#
# Build arguments:
# - BASE_IMAGE: any Debian 12 image with Python 3.11 and its venv module. Python's official
#   slim image by default; where no image registry can be reached, scripts/debian-base makes
#   one from Debian's archive (debootstrap) and `make compose-check` passes it here.
# - TORCH_INDEX: where torch comes from. PyTorch's CPU index by default: the small CPU build,
#   no CUDA libraries. The CUDA variant: --build-arg TORCH_INDEX=https://download.pytorch.org/whl/cu128
#   (the wheel brings its own CUDA runtime), run with the NVIDIA container toolkit
#   (`docker run --gpus all ...`, or a GPU resource limit in Kubernetes).
# - WHEELS: an image whose /wheels holds the requirements' wheels (scripts/wheelhouse makes
#   one); with PIP_NO_INDEX=1 nothing is downloaded. By default the wheels stage is empty and
#   pip downloads everything.
ARG BASE_IMAGE=python:3.11-slim-bookworm
ARG WHEELS=scratch

# hadolint ignore=DL3006
FROM ${WHEELS} AS wheels

# hadolint ignore=DL3006
FROM ${BASE_IMAGE}

ARG TORCH_INDEX=https://download.pytorch.org/whl/cpu
ARG PIP_NO_INDEX=
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PATH=/opt/venv/bin:$PATH

WORKDIR /app
# requirements.txt holds every pin, torch's included; the index only decides which build of it
# (2.13.0+cpu or +cu128 sorts above PyPI's 2.13.0 and satisfies ==2.13.0). The venv makes the
# same `python` on either base (the slim image's is in /usr/local, Debian's in /usr).
COPY requirements.txt .
RUN --mount=type=bind,from=wheels,target=/wheels \
    python3 -m venv /opt/venv \
    && pip install --no-cache-dir --find-links /wheels --extra-index-url "${TORCH_INDEX}" \
        -r requirements.txt

COPY . .
# Not root. The default class store (a SQLite file in .lnlab-data/) must be writable; with
# LNLAB_DATABASE_URL set (compose, Kubernetes) it is not used.
RUN useradd --create-home --uid 10001 lnlab \
    && mkdir -p /app/.lnlab-data \
    && chown lnlab /app/.lnlab-data
USER 10001

EXPOSE 8501
HEALTHCHECK --interval=5s --timeout=3s --start-period=60s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=2).read() != b'ok')"]
CMD ["python", "-m", "streamlit", "run", "app.py", "--server.port", "8501", "--server.address", "0.0.0.0"]
