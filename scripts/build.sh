#!/usr/bin/env bash
# `npm run build`: the production build the Dockerfile runs. Compiles the processes to dist/
# and puts beside them what they read at run time (migrations, API reference).
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf dist
npx tsc -p tsconfig.build.json
mkdir -p dist/db
cp -r db/migrations dist/db/
cp -r api-reference dist/
echo "built dist/: node dist/server/main.js (API), node dist/indexer/main.js (indexer), node dist/embedded/main.js (single process)"
