#!/usr/bin/env bash
# The containers tier (`npx nx run deploy:containers`, run by tools/test-all.sh): the deployment
# material run for real with podman, not only validated offline.
#   1. images: the stand-ins (deploy/local-images/build.sh: node, postgres, redis, kafka and the
#      gateway's nginx) and the seven app images from the root Dockerfile (build-apps.sh: size per
#      app, uid 1000, health check kept, the app starts);
#   2. docker-compose.yml: tools/compose/up.sh (every service healthy, every one-shot done, the nginx
#      gateway last), the hardening of every long-running container, the whole end-to-end suite
#      against http://localhost:8080 (apps/platform-e2e with E2E_BASE_URL), then tools/compose/down.sh,
#      which checks that nothing is left;
#   3. the Kubernetes dev overlay with podman kube play (deploy/kube-play/play.sh).
# It runs wherever the tools are: tools/test-all.sh installs them first (bash tools/setup.sh
# --containers: podman, runc, podman-compose, buildah and debootstrap from apt). Skipped, saying
# why, only on a machine where they are still missing after that (no apt-get, no root, no mirror).
# Image layers are cached by podman: an unchanged tree rebuilds in seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

missing=()
for tool in podman "${PODMAN_RUNTIME:-runc}" podman-compose debootstrap; do
  command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "containers tier: skipped: ${missing[*]} not installed, so nothing can be built or run in containers here." \
    "bash tools/setup.sh --containers installs podman, runc, podman-compose, buildah and debootstrap with apt-get" \
    "(it needs apt-get, root or sudo, and a Debian mirror; it says what failed)."
  exit 0
fi

started=$SECONDS
step() { echo "containers tier: $1 ($((SECONDS - started)) s)"; }

bash tools/compose/down.sh >/dev/null 2>&1 || true
step "images"
bash deploy/local-images/build.sh
bash deploy/local-images/build-apps.sh

step "docker-compose.yml up"
trap 'bash tools/compose/down.sh || true' EXIT
env_file="$(mktemp)"
bash tools/compose/up.sh --no-build --kafka-host-port >"$env_file"
set -a
# shellcheck disable=SC1090  # KEY=VALUE lines printed by up.sh
source <(sed 's/^\([A-Z0-9_]*\)=\(.*\)$/\1="\2"/' "$env_file")
set +a
rm -f "$env_file"
# x-hardening of docker-compose.yml, as podman-compose applied it to every long-running container
# (the app services and the nginx gateway, which all run as 1000:1000).
step "hardening of the app containers and the gateway"
for app in $(node -e '
  const c = require("yaml").parse(require("fs").readFileSync("docker-compose.yml", "utf8"));
  console.log(Object.keys(c.services).filter((n) => c.services[n].read_only && c.services[n].restart !== "no").join(" "))'); do
  name="invoicing_${app}_1"
  # CapBnd, not CapEff: a uid-1000 process has no effective capability anyway; cap_drop empties the
  # bounding set. PID 1 is podman's init (init: true), which reaps and forwards signals to node.
  got="$(podman inspect --format '{{.HostConfig.ReadonlyRootfs}} {{.Config.User}}' "$name") $(podman exec "$name" sh -c 'id -u; grep -E "^(CapBnd|NoNewPrivs)" /proc/self/status | tr -s "\t " " "; tr "\0" " " </proc/1/cmdline | cut -d" " -f1' | tr '\n' ' ')"
  want="true 1000:1000 1000 CapBnd: 0000000000000000 NoNewPrivs: 1 /run/podman-init "
  if [ "$got" != "$want" ]; then
    echo "containers tier: $app is not hardened as compose says: '$got' (want '$want')" >&2
    exit 1
  fi
done
echo "containers tier: every app container and the gateway: read-only root, uid 1000, no-new-privileges, no capability, init as PID 1"

step "end-to-end suite against $E2E_BASE_URL"
e2e_status=0
npx jest -c apps/platform-e2e/jest.config.js --runInBand || e2e_status=1
step "docker-compose.yml down"
trap - EXIT
bash tools/compose/down.sh
unset E2E_BASE_URL E2E_AUTH_CLI E2E_KAFKA_BROKERS E2E_KAFKA_CTL

step "Kubernetes dev overlay with podman kube play"
bash deploy/kube-play/play.sh
step "done, end-to-end status $e2e_status"
exit "$e2e_status"
