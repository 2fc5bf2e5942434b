#!/usr/bin/env bash
# Validates the EN 16931 e-invoices (*.xml, CII or UBL) of a directory with the Mustang project's
# validator and prints one line per file (valid/invalid, errors, warnings, notices) with each error
# and warning below it, then a summary line; --json FILE also writes the verdicts and messages, and
# --notices adds the XRechnung notices the validator gives an EN 16931 invoice (a second, slow pass).
# Exit status: 0 when every file is valid, 1 otherwise, 2 on a usage or setup error.
#
#   bash tools/einvoice-validator/validate.sh DIR [--json FILE] [--notices]
#
# The first run resolves org.mustangproject:validator from Maven Central (pom.xml, about 50 MB into
# ~/.m2) and compiles Validate.java; both are cached in tmp/einvoice-validator/build/<hash of the
# two files>/ (EINVOICE_VALIDATOR_CACHE overrides the directory; older builds in it are removed).
# Needs Java 11+ and Maven.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
cache="${EINVOICE_VALIDATOR_CACHE:-$root/tmp/einvoice-validator/build}"
key="$(cat "$here/pom.xml" "$here/Validate.java" | sha256sum | cut -c1-16)"
build="$cache/$key"

if [ $# -lt 1 ]; then
  echo "usage: $0 DIR [--json FILE] [--notices]" >&2
  exit 2
fi

# A cached build whose jars were removed from ~/.m2 since is built again.
if [ -f "$build/.complete" ]; then
  # (no newline at the end of the file: read answers 1 at its end)
  IFS=: read -r -a jars <"$build/classpath.txt" || true
  for jar in "${jars[@]}"; do
    [ -f "$jar" ] || { rm -rf "$build"; break; }
  done
fi

if [ ! -f "$build/.complete" ]; then
  for tool in java javac mvn; do
    command -v "$tool" >/dev/null 2>&1 || { echo "einvoice-validator: $tool is required (a JDK 11+ and Maven)" >&2; exit 2; }
  done
  echo "einvoice-validator: resolving org.mustangproject:validator and compiling Validate.java into $build" >&2
  tmp="$build.tmp.$$"
  rm -rf "$tmp"
  mkdir -p "$tmp/classes"
  trap 'rm -rf "$tmp"' EXIT
  if ! mvn -q -B -Dstyle.color=never -s "$here/maven-settings.xml" -f "$here/pom.xml" dependency:build-classpath \
    -Dmdep.outputFile="$tmp/classpath.txt" </dev/null >"$tmp/maven.log" 2>&1; then
    tail -n 30 "$tmp/maven.log" >&2
    echo "einvoice-validator: Maven could not resolve the validator (mvn -X with the command above tells more)" >&2
    exit 2
  fi
  javac -nowarn -d "$tmp/classes" -cp "$(cat "$tmp/classpath.txt")" "$here/Validate.java"
  touch "$tmp/.complete"
  rm -rf "$build"
  mv "$tmp" "$build"
  trap - EXIT
  # Builds of an earlier pom.xml or Validate.java.
  find "$cache" -mindepth 1 -maxdepth 1 -type d ! -name "$key" ! -name "*.tmp.*" -exec rm -rf {} +
fi

# Serial GC and a bounded heap: a 500-line invoice through Saxon fits in 512 MB on 2 cores.
exec java -Xmx768m -XX:+UseSerialGC -Djava.awt.headless=true \
  -cp "$build/classes:$(cat "$build/classpath.txt")" Validate "$@"
