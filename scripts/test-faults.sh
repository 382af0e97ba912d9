#!/usr/bin/env bash
# `npm run test:faults`: the fault suite (test/faults, jest.faults.config.js) against real
# processes, a Redis it starts itself and a TCP proxy in front of PostgreSQL; it ends with the
# table of scenarios (requests, errors, data lost, recovery time). FAULT_OUTAGE_SECONDS sets how
# long each outage lasts (default 10; the issue's figure is 30).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-services.sh
command -v redis-server >/dev/null || { echo 'the fault suite starts its own redis-server: install Redis (apt-get install redis-server)' >&2; exit 1; }
exec npx jest -c jest.faults.config.js "$@"
