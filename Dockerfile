# syntax=docker/dockerfile:1
# Lamina's server image: one image for every role (ROLES=api, tiles, worker), serving the built
# web app from the api processes. docs/DEPLOYMENT.md, "Container images and compose".

# ── Build: dependencies from the lockfile, the web app, the native sendfile module ───────────
FROM node:20-bookworm AS build
WORKDIR /app
# The manifests first, so that the dependency layer is reused while only sources change.
COPY package.json package-lock.json ./
COPY packages/domain/package.json packages/domain/
COPY packages/test-support/package.json packages/test-support/
COPY packages/server/package.json packages/server/
COPY packages/web/package.json packages/web/
COPY packages/e2e/package.json packages/e2e/
# The install's postinstall builds the native module (node-gyp, the image's compiler and headers).
COPY scripts/build-native.mjs scripts/
COPY packages/server/native packages/server/native
RUN npm ci --no-audit --no-fund
COPY . .
RUN npm run build -w @lamina/web \
 && node scripts/build-native.mjs \
 && test -f packages/server/native/sendfile/build/Release/lamina_sendfile.node
# Production dependencies only. The server runs its TypeScript through tsx (a root dev
# dependency): it and its esbuild (its one dependency, with the platform's binary) are kept, at
# the lockfile's versions.
RUN mkdir /keep \
 && cp -a node_modules/tsx node_modules/esbuild node_modules/@esbuild /keep/ \
 && npm prune --omit=dev --no-audit --no-fund \
 && cp -a /keep/tsx /keep/esbuild node_modules/ \
 && mkdir -p node_modules/@esbuild && cp -a /keep/@esbuild/. node_modules/@esbuild/ \
 && rm -rf /keep \
 && mkdir -p packages/server/node_modules

# ── Runtime: slim Debian, no compiler, not root ─────────────────────────────────────────────
FROM node:20-bookworm-slim AS runtime
ENV NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    DATA_DIR=/data \
    WEB_DIST=/app/packages/web/dist \
    MALLOC_ARENA_MAX=2
WORKDIR /app
# OpenSlide reads the vendor slide formats (Hamamatsu, MIRAX, Leica, Ventana, Philips, Sakura;
# issue 31): the worker opens Debian's libopenslide0 through koffi, the API offers those formats
# only where it loads. Without it the image still runs and refuses them at upload.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libopenslide0 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /app/package.json /app/package-lock.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/packages/domain/package.json ./packages/domain/package.json
COPY --from=build /app/packages/domain/src ./packages/domain/src
COPY --from=build /app/packages/domain/tsconfig.json ./packages/domain/tsconfig.json
COPY --from=build /app/packages/server/package.json /app/packages/server/tsconfig.json ./packages/server/
COPY --from=build /app/packages/server/node_modules ./packages/server/node_modules
COPY --from=build /app/packages/server/src ./packages/server/src
COPY --from=build /app/packages/server/migrations ./packages/server/migrations
COPY --from=build /app/packages/server/native/sendfile/build/Release/lamina_sendfile.node ./packages/server/native/sendfile/build/Release/
COPY --from=build /app/packages/web/package.json ./packages/web/package.json
COPY --from=build /app/packages/web/dist ./packages/web/dist
COPY --from=build /app/tsconfig.base.json ./
# The node image's unprivileged user (uid 1000); /data holds scratch files and, without
# DATABASE_URL/STORAGE=s3, the embedded database and objects (mount a volume there).
RUN mkdir -p /data/anchors && chown -R node:node /data
USER node
VOLUME ["/data"]
EXPOSE 8080 9464
HEALTHCHECK --interval=15s --timeout=5s --start-period=120s --retries=3 \
  CMD node -e "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/api/health').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
ENTRYPOINT ["node", "--import", "tsx", "packages/server/src/main.ts"]
