# PostgreSQL 15 from Debian's package, for where the official postgres image cannot be pulled:
# the same interface as postgres:15 for what deploy/compose.yaml uses (POSTGRES_USER,
# POSTGRES_PASSWORD and POSTGRES_DB make the database on first start; data in
# /var/lib/postgresql/data, PGDATA to move it; pg_isready for the health check; not root).
# Built by `make compose-check` on scripts/debian-base's image; deploy/compose.debian.yaml names it.
ARG BASE_IMAGE=lnlab-base:bookworm
# hadolint ignore=DL3006
FROM ${BASE_IMAGE}
# Debian 12's postgresql-15 with its security updates: a version pin would break at each one.
# Its user gets the official image's uid (999), so a data volume moves between the two.
# hadolint ignore=DL3008
RUN groupadd --system --gid 999 postgres \
    && useradd --system --uid 999 --gid postgres --home-dir /var/lib/postgresql postgres \
    && apt-get update \
    && apt-get install -y --no-install-recommends postgresql-15 \
    && rm -rf /var/lib/apt/lists/* \
    && mkdir -p /var/lib/postgresql/data /var/run/postgresql \
    && chown -R postgres:postgres /var/lib/postgresql /var/run/postgresql \
    && chmod 700 /var/lib/postgresql/data
COPY postgres-entrypoint /usr/local/bin/postgres-entrypoint
ENV PATH=/usr/lib/postgresql/15/bin:$PATH \
    PGDATA=/var/lib/postgresql/data
USER 999
EXPOSE 5432
# PostgreSQL's fast shutdown (what the official image does too).
STOPSIGNAL SIGINT
ENTRYPOINT ["postgres-entrypoint"]
