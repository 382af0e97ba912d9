# One image for both processes:
#   API      docker run … market-indexer                        (node dist/server/main.js)
#   indexer  docker run … market-indexer node --max-semi-space-size=64 dist/indexer/main.js --source rpc
#   operator docker run … market-indexer node dist/operator/main.js
#   check    docker run … market-indexer node dist/check/main.js --url http://<API> (helm test)
# Runs as a numeric non-root uid and writes nothing outside /tmp, so it works with a read-only
# root filesystem (mount an emptyDir or tmpfs at /tmp). The build steps are `npm ci` and
# `npm run build`, the same commands the test suite's build test runs.

FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json .npmrc ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts ./scripts
COPY core ./core
COPY db ./db
COPY embedded ./embedded
COPY indexer ./indexer
COPY simulator ./simulator
COPY server ./server
COPY operator ./operator
COPY check ./check
COPY cdk8s/lib ./cdk8s/lib
COPY cdk8s/imports ./cdk8s/imports
COPY api-reference ./api-reference
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production \
    DATA_DIR=/tmp/market-indexer \
    HOME=/tmp \
    API_PORT=3000 \
    INDEXER_PORT=3001
WORKDIR /app
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
USER 10001:10001
EXPOSE 3000 3001
STOPSIGNAL SIGTERM
CMD ["node", "dist/server/main.js"]
