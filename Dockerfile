# The Object Network Service as a container image (docs/self-hosting.md, "Container image").
#
#   docker build -t ons .
#   docker build --build-arg BASE_IMAGE=ons-local/node:24 -t ons .   # no registry reachable
#
# BASE_IMAGE is any Debian-based image with Node 24 and npm (the official one by default;
# scripts/docker/base-images.sh builds one locally from Debian's packages and the npm
# registry). One image runs every role: ONS_ROLE=all|api|worker (default all).
ARG BASE_IMAGE=node:24-slim

# ---- build: install everything, compile the service (dist/) and the console (console/dist),
# then keep only the production dependencies.
FROM ${BASE_IMAGE} AS build
WORKDIR /app
ENV npm_config_update_notifier=false npm_config_fund=false npm_config_audit=false
COPY . .
# `npm ci` runs `prepare`, which builds the service and the console.
RUN npm ci && test -f dist/main.js && test -f console/dist/index.html \
  && npm prune --omit=dev && rm -rf node_modules/.cache

# ---- runtime: the built files, production dependencies, tini, a non-root user.
FROM ${BASE_IMAGE} AS runtime
# tini is PID 1: it forwards SIGTERM to node (which drains requests and stops the loops) and
# reaps zombies. The locally built base image has it; the official one gets it from Debian.
RUN command -v tini >/dev/null || (apt-get update \
  && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends tini \
  && rm -rf /var/lib/apt/lists/*)
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/sdk ./sdk
COPY --from=build /app/dist ./dist
COPY --from=build /app/console/package.json ./console/package.json
COPY --from=build /app/console/dist ./console/dist
# The code belongs to root and cannot be changed by the service; only /data is writable.
# The official Node images have a `node` user (uid 1000); the local base image makes one too.
RUN mkdir -p /data && chown node:node /data
ENV NODE_ENV=production DATA_DIR=/data PORT=8080 HOST=0.0.0.0 ONS_ROLE=all
USER node
VOLUME ["/data"]
EXPOSE 8080
# Ready means the database (and Redis, when configured) answer: see /readyz in
# docs/self-hosting.md. The worker role serves /readyz too.
HEALTHCHECK --interval=10s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8080) + '/readyz').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
# The flags of `npm start` (package.json): a 32 MB young generation (docs/decisions.md, "V8 new
# space of 32 MB").
CMD ["node", "--max-semi-space-size=32", "--enable-source-maps", "dist/main.js"]
