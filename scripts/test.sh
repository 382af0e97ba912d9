#!/usr/bin/env bash
# `npm test`: make PostgreSQL and Redis available, type-check, run every Jest suite, and end
# with the plain line "N passed, N failed" that CI reads.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/ensure-services.sh
# The committed lock must install with `npm ci` everywhere (npm run lock refreshes it).
node scripts/complete-lock.mjs --check
if ! npm ci --dry-run --ignore-scripts >/dev/null 2>&1; then
  echo 'package-lock.json is out of step with package.json for npm ci: run npm run lock' >&2
  exit 1
fi
npx tsc --noEmit -p tsconfig.json
results=$(mktemp)
trap 'rm -f "$results"' EXIT
status=0
npx jest --json --outputFile="$results" "$@" || status=$?
node -e '
  const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
  if (r.numRuntimeErrorTestSuites) console.log(`${r.numRuntimeErrorTestSuites} test suite(s) failed to run`);
  const skipped = r.numPendingTests + r.numTodoTests;
  console.log(`${r.numPassedTests} passed, ${r.numFailedTests} failed` + (skipped ? `, ${skipped} skipped` : ""));
' "$results" || true
exit "$status"
