# syntax=docker/dockerfile:1
#
# One image per app of the monorepo, chosen with the APP build argument:
#
#   docker build --build-arg APP=invoice-service --build-arg PORT=3002 -t invoicing/invoice-service .
#   docker run --rm invoicing/invoice-service env-spec        # the variables it reads
#   docker run --rm invoicing/invoice-service migrate         # the migration Job's command
#
# APP is a project under apps/ (auth-service, invoice-service, ..., settings-web); PORT is its port in
# libs/contracts/src/platform.ts, used by EXPOSE and HEALTHCHECK. The gateway is not built here: it is
# nginx with the configuration libs/gateway renders (docker-compose.yml, deploy/compose/gateway.nginx.conf).

ARG NODE_IMAGE=node:20-bookworm-slim

# ---- build: every dependency, then every app's Nx build target (tsc + tsc-alias) -------------------
# No build argument is read in this stage, so its layers are the same for every app: building the
# eight images (docker compose build, deploy/local-images/build-apps.sh) installs and compiles once.
FROM ${NODE_IMAGE} AS build
WORKDIR /repo
ENV NX_DAEMON=false NX_NO_CLOUD=true NX_TUI=false CI=true
# The lock file alone first: this layer is reused until dependencies change. npm can end with
# "Exit handler never called!" and status 0 without installing anything: stop here, not at npx.
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund --loglevel=error && test -x node_modules/.bin/nx
COPY . .
# Each app's build compiles the libraries it imports from source (tsconfig paths).
RUN npx nx run-many -t build --projects=tag:type:app --parallel=2 --skipNxCache --outputStyle=static

# ---- runtime: production dependencies and the compiled app, nothing else ----------------------------
FROM ${NODE_IMAGE} AS runtime
WORKDIR /app
# Before any build argument: a RUN after an ARG has the argument in its cache key, and this layer
# is the same for every app.
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --no-audit --no-fund --loglevel=error && test -d node_modules && npm cache clean --force
ARG APP
ARG PORT
# Safe defaults: production refuses the development key ring and placeholder secrets; listen on all
# interfaces of the container. docker-compose sets NODE_ENV=development for its obvious dev secrets.
ENV NODE_ENV=production HOST=0.0.0.0 PORT=${PORT}
COPY --from=build /repo/dist/apps/${APP} ./dist/apps/${APP}
# ENTRYPOINT's exec form expands no variables, so a fixed name points at this app's entry point.
# Node resolves the link, so the compiled relative imports work from the real location.
RUN ln -s "apps/${APP}/apps/${APP}/src/main.js" dist/main.js && test -n "${APP}" && test -n "${PORT}" && test -f dist/main.js \
    || { echo "build arguments APP and PORT must name a project under apps/ and its port (got '${APP}', '${PORT}')" >&2; exit 1; }
# The node image's unprivileged user, by number so that Kubernetes can verify runAsNonRoot.
USER 1000:1000
EXPOSE ${PORT}
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.PORT+'/health/live').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["node", "dist/main.js"]
CMD ["serve"]
