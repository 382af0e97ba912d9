#!/usr/bin/env bash
# Makes PostgreSQL and Redis reachable for the test suite and says what it did:
#   1. uses them where they already answer (TEST_DATABASE_URL / TEST_REDIS_URL, or the
#      defaults postgres://postgres@127.0.0.1:5432/postgres and redis://127.0.0.1:6379);
#   2. otherwise starts local ones from installed binaries;
#   3. otherwise, as root with apt-get, installs Debian's packages and starts them.
# It never stops a service it did not start and never touches a running one.
set -euo pipefail

PG_HOST=127.0.0.1
PG_PORT=5432
REDIS_HOST=127.0.0.1
REDIS_PORT=6379
STATE_DIR="${TMPDIR:-/tmp}/market-indexer-test-services"
say() { printf '[services] %s\n' "$*"; }

port_open() { (exec 3<>"/dev/tcp/$1/$2") 2>/dev/null; }

wait_port() {
  for _ in $(seq 1 60); do port_open "$1" "$2" && return 0; sleep 0.5; done
  return 1
}

apt_install() {
  if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null; then
    say "cannot install $*: not root or no apt-get. Install them, or set TEST_DATABASE_URL / TEST_REDIS_URL."
    exit 1
  fi
  say "installing $* with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >/dev/null
  apt-get install -y -qq "$@" >/dev/null
}

pg_bin_dir() { ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1; }

start_postgres() {
  # A Debian cluster that exists but is down: start it as the packaging intends.
  if command -v pg_ctlcluster >/dev/null && ls /etc/postgresql/*/main >/dev/null 2>&1; then
    local ver
    ver=$(ls /etc/postgresql | sort -V | tail -n 1)
    say "starting the installed PostgreSQL $ver cluster (pg_ctlcluster $ver main start)"
    pg_ctlcluster --skip-systemctl-redirect "$ver" main start || true
    if wait_port "$PG_HOST" "$PG_PORT"; then
      # Debian's default pg_hba asks for a password over TCP: give the postgres role one,
      # matching the default test URL (a trust setup ignores it).
      su postgres -c "psql -q -c \"ALTER ROLE postgres PASSWORD 'postgres'\"" >/dev/null 2>&1 || true
      return 0
    fi
  fi
  # Binaries without a cluster: a private throwaway cluster with trust auth.
  local bin
  bin=$(pg_bin_dir)
  if [ -n "$bin" ]; then
    local data="$STATE_DIR/pgdata" owner
    owner=$(id -un)
    if [ "$(id -u)" = 0 ]; then
      id postgres >/dev/null 2>&1 || useradd --system --home "$STATE_DIR" postgres
      owner=postgres
    fi
    mkdir -p "$STATE_DIR" && chown "$owner" "$STATE_DIR"
    if [ ! -f "$data/PG_VERSION" ]; then
      say "initialising a private PostgreSQL cluster in $data"
      su "$owner" -s /bin/sh -c "$bin/initdb -D '$data' -U postgres --auth=trust >/dev/null"
    fi
    say "starting private PostgreSQL on $PG_HOST:$PG_PORT"
    su "$owner" -s /bin/sh -c "$bin/pg_ctl -D '$data' -l '$STATE_DIR/postgres.log' -o \"-h $PG_HOST -p $PG_PORT -k '$STATE_DIR'\" start >/dev/null"
    wait_port "$PG_HOST" "$PG_PORT" && return 0
  fi
  return 1
}

start_redis() {
  if command -v redis-server >/dev/null; then
    mkdir -p "$STATE_DIR"
    say "starting redis-server on $REDIS_HOST:$REDIS_PORT (no persistence)"
    redis-server --daemonize yes --bind "$REDIS_HOST" --port "$REDIS_PORT" --save '' --appendonly no \
      --dir "$STATE_DIR" --logfile "$STATE_DIR/redis.log"
    wait_port "$REDIS_HOST" "$REDIS_PORT" && return 0
  fi
  return 1
}

if [ -n "${TEST_DATABASE_URL:-}" ]; then
  say "PostgreSQL: using TEST_DATABASE_URL as given"
elif port_open "$PG_HOST" "$PG_PORT"; then
  say "PostgreSQL: already running on $PG_HOST:$PG_PORT, using it"
else
  if ! start_postgres; then
    apt_install postgresql
    start_postgres || { say "PostgreSQL did not start"; exit 1; }
  fi
fi

if [ -n "${TEST_REDIS_URL:-}" ]; then
  say "Redis: using TEST_REDIS_URL as given"
elif port_open "$REDIS_HOST" "$REDIS_PORT"; then
  say "Redis: already running on $REDIS_HOST:$REDIS_PORT, using it"
else
  if ! start_redis; then
    apt_install redis-server
    start_redis || { say "Redis did not start"; exit 1; }
  fi
fi

# The /docs page test opens the page in a real headless browser (playwright-core drives it).
if [ -n "${CHROMIUM_PATH:-}" ]; then
  say "Chromium: using CHROMIUM_PATH as given"
elif command -v chromium >/dev/null; then
  say "Chromium: $(command -v chromium)"
else
  apt_install chromium
  say "Chromium: installed $(command -v chromium)"
fi

# promtool checks and unit-tests the kit's alert rules; the tenant suite (npm run test:tenant)
# runs the Prometheus server and Alertmanager. Debian's prometheus and prometheus-alertmanager
# packages ship them; nothing is started here (the packages' services need systemd).
if command -v promtool >/dev/null && command -v prometheus >/dev/null && command -v prometheus-alertmanager >/dev/null; then
  say "Prometheus: $(command -v prometheus), $(command -v prometheus-alertmanager), $(command -v promtool)"
else
  apt_install --no-install-recommends prometheus prometheus-alertmanager
  say "Prometheus: installed $(command -v prometheus), $(command -v prometheus-alertmanager), $(command -v promtool)"
fi

# The tenant suite's HA PostgreSQL (local/tenant/ha-postgres.ts, standing for CloudNativePG):
# Patroni, etcd and HAProxy from Debian's packages. Nothing is started here: the harness runs
# them per test as an unprivileged user (the packages' services need systemd).
if command -v patroni >/dev/null && command -v etcd >/dev/null && command -v haproxy >/dev/null; then
  say "HA PostgreSQL: $(command -v patroni), $(command -v etcd), $(command -v haproxy)"
else
  apt_install --no-install-recommends patroni etcd-server haproxy
  say "HA PostgreSQL: installed $(command -v patroni), $(command -v etcd), $(command -v haproxy)"
fi

# The tenant harness's edge (local/tenant/edge-nginx.ts) is Debian's nginx, run by the tests in a
# prefix of their own; nothing is started here.
if command -v nginx >/dev/null || [ -x /usr/sbin/nginx ]; then
  say "nginx: $(command -v nginx || echo /usr/sbin/nginx)"
else
  apt_install --no-install-recommends nginx
  say "nginx: installed $(command -v nginx || echo /usr/sbin/nginx)"
fi
