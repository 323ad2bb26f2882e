# The gateway as a container: what `npm start` runs, for self-hosting one or several replicas
# (docs/self-hosting.md; compose.yaml runs two on MariaDB behind a load balancer).
# Stage 1 builds dist/ (the web console and the server bundle) with the repo's own build (scripts/build.ts);
# stage 2 runs it on Node 24 with the production dependencies only (the native addons ship prebuilt).
FROM node:24-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
# Vite (the console) is a dev dependency; no install scripts: nothing is compiled.
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY core ./core
COPY console ./console
COPY scripts ./scripts
RUN node scripts/build.ts

FROM node:24-slim
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund && npm cache clean --force
COPY --from=build /src/dist ./dist
# The environment and Node flags of `npm start` (package.json; test/e2e/container-command.test.ts holds the two
# together). The embedded store by default; GATEWAY_STORE=mysql for several replicas (compose.yaml).
ENV NODE_ENV=production \
    MALLOC_ARENA_MAX=2 \
    HOST=0.0.0.0 \
    PORT=8787 \
    GATEWAY_DATA_DIR=/data
RUN mkdir -p /data && chown node:node /data
VOLUME /data
USER node
EXPOSE 8787
HEALTHCHECK --interval=10s --timeout=3s --start-period=20s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8787)+'/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "--max-semi-space-size=4", "--heap-growing-percent=60", "--no-maglev", "dist/main.mjs"]
