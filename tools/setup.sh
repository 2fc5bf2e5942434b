#!/usr/bin/env bash
# Installs what the project needs on a fresh clone: npm dependencies (exactly the lock file), and from
# Debian: Chromium for the browser tests, kcat, poppler-utils for the invoice PDF specs, a JDK and
# Maven for the e-invoice validator, nginx for the gateway, and with --containers podman and what the
# containers tier needs.
# Idempotent: skips work that is already done.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -d node_modules ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "setup: installing npm dependencies (npm ci)"
  # Exactly the lock file. package.json pins unrs-resolver (overrides) to a release whose optional
  # platform packages all exist on the registry reachable here; with a newer one the lock file could
  # not list them and npm 11's `ci` refused it as out of sync.
  npm ci --no-audit --no-fund --loglevel=error
fi

# Debian packages, installed only when absent, with one `apt-get update` for all of them.
apt_updated=false
apt_install() {
  local as_root=()
  [ "$(id -u)" -eq 0 ] || as_root=(sudo)
  if ! $apt_updated; then
    "${as_root[@]}" apt-get update -q && apt_updated=true
  fi
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "$@"
}

# Browser tests (apps/platform-e2e, playwright-core) drive Debian's Chromium; never a downloaded browser.
if [ ! -x /usr/bin/chromium ]; then
  echo "setup: installing chromium (apt-get) for the browser tests"
  apt_install chromium
fi

# The OAuth interop e2e (apps/platform-e2e) reads auth.revocations.v1 with kcat, as a non-Node subscriber would.
if ! command -v kcat >/dev/null 2>&1; then
  echo "setup: installing kcat (apt-get) for the end-to-end tests"
  apt_install kcat
fi

# The invoice PDF specs read their text back with pdftotext and draw pages with pdftoppm.
if ! command -v pdftotext >/dev/null 2>&1 || ! command -v pdftoppm >/dev/null 2>&1; then
  echo "setup: installing poppler-utils (apt-get) for the invoice PDF specs"
  apt_install poppler-utils
fi

# The e-invoice validator tier compiles a small Java program against the Mustang validator, which
# Maven fetches (tools/einvoice-validator/validate.sh): a JDK (javac) and Maven.
if ! command -v javac >/dev/null 2>&1 || ! command -v mvn >/dev/null 2>&1; then
  echo "setup: installing a JDK and Maven (apt-get) for the e-invoice validator tier"
  apt_install default-jdk-headless maven
fi

# The gateway is nginx (libs/gateway renders its configuration): the local stack, the gateway's
# integration tests and the end-to-end tests run Debian's.
if [ ! -x /usr/sbin/nginx ] && ! command -v nginx >/dev/null 2>&1; then
  echo "setup: installing nginx-light (apt-get) for the gateway"
  apt_install nginx-light
  # Debian's package starts a system nginx on port 80: not ours, and it would hold port 80.
  { command -v systemctl >/dev/null 2>&1 && systemctl disable --now nginx >/dev/null 2>&1; } || true
  [ -f /run/nginx.pid ] && kill "$(cat /run/nginx.pid)" 2>/dev/null || true
fi

# deploy/tests render the Kubernetes overlays with `kubectl kustomize` (offline, no cluster). The base
# applies one patch set to the seven Deployments by target selector, which needs kustomize 3.1 or
# later (kubectl 1.21+). The machine images ship kubectl 1.32; Debian's kubernetes-client (1.20,
# kustomize v2) is too old, so there is nothing to install from apt: say so instead.
if ! command -v kubectl >/dev/null 2>&1; then
  echo "setup: kubectl is not installed; the deploy tests need kubectl 1.21 or later (kustomize 3.1+), e.g. the Kubernetes apt repository's kubectl"
fi

# With `--containers` (tools/test-all.sh passes it, so CI runs the containers tier on a fresh machine):
# podman (run with runc), podman-compose, buildah and debootstrap, which deploy/local-images uses to
# build and run the images without a registry. Skips what is installed; never fails the setup (no apt,
# no root, no mirror: it says so, and the containers tier says it was skipped and why).
if [ "${1:-}" = "--containers" ]; then
  missing=()
  for tool in podman runc podman-compose buildah debootstrap; do
    command -v "$tool" >/dev/null 2>&1 || missing+=("$tool")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "setup: container tools present (podman, runc, podman-compose, buildah, debootstrap)"
  elif ! command -v apt-get >/dev/null 2>&1; then
    echo "setup: apt-get is not available; install ${missing[*]} yourself (deploy/local-images/README.md)"
  else
    echo "setup: installing ${missing[*]} (apt-get) for the containers tier (deploy/local-images)"
    if ! apt_install "${missing[@]}"; then
      echo "setup: could not install ${missing[*]}; deploy/local-images needs them (continuing)"
    fi
  fi
fi
