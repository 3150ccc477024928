# HAProxy from Debian's package, for where the official haproxy image cannot be pulled: the same
# interface as haproxy:2.6 (the config at /usr/local/etc/haproxy/haproxy.cfg, not root, the
# runtime socket's folder /var/lib/haproxy). Built by `make compose-check` on scripts/debian-base's
# image; deploy/compose.debian.yaml names it.
ARG BASE_IMAGE=lnlab-base:bookworm
# hadolint ignore=DL3006
FROM ${BASE_IMAGE}
# Debian 12's haproxy (2.6) with its security updates: a version pin would break at each one.
# Its user gets a fixed system uid (999), which the package then keeps.
# hadolint ignore=DL3008
RUN groupadd --system --gid 999 haproxy \
    && useradd --system --uid 999 --gid haproxy --home-dir /var/lib/haproxy haproxy \
    && apt-get update \
    && apt-get install -y --no-install-recommends haproxy \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /usr/local/etc/haproxy /var/lib/haproxy \
    && chown haproxy:haproxy /var/lib/haproxy
USER 999
# SIGUSR1 lets HAProxy finish its connections (the official image does the same).
STOPSIGNAL SIGUSR1
CMD ["haproxy", "-W", "-db", "-f", "/usr/local/etc/haproxy/haproxy.cfg"]
