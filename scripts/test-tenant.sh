#!/usr/bin/env bash
# `npm run test:tenant`: the journeys (jest.tenant.config.js): the local processes' (test/journeys:
# kills, freezes, `npm start`, the quick start, the built tree, the operator, a re-index,
# releasing) and the users' on a tenant run from the kit's rendered manifests (test/tenant: trades
# through /tx, a drained replica, the k6 scripts, alerts paged through a real Prometheus and
# Alertmanager, the dashboards' queries, a release rolled out and back). About 30 minutes of real
# time, so it is not part of `npm test`; CI runs both (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-services.sh
npx tsc --noEmit -p tsconfig.json
results=$(mktemp)
trap 'rm -f "$results"' EXIT
status=0
npx jest -c jest.tenant.config.js --json --outputFile="$results" "$@" || status=$?
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  if (r.numRuntimeErrorTestSuites) console.log(`${r.numRuntimeErrorTestSuites} test suite(s) failed to run`);
  console.log(`tenant suite: ${r.numPassedTests} passed, ${r.numFailedTests} failed`);
' "$results" || true
exit "$status"
