#!/usr/bin/env bash
# Stops and removes the compose stack of tools/compose/up.sh: containers, the project's network and
# its volumes (Postgres data included), then checks that nothing of the project is left.
#   bash tools/compose/down.sh
set -euo pipefail
# shellcheck source=tools/compose/lib.sh
source "$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/lib.sh"
cc_require

label="label=io.podman.compose.project=$COMPOSE_PROJECT"
# Anonymous volumes (the images' VOLUME lines: Kafka's data, Redis' /data) go with their containers,
# as with `docker compose down -v`; podman-compose removes only the named ones.
anonymous=()
mapfile -t anonymous < <(podman ps -a -q --filter "$label" |
  xargs -r podman inspect --format '{{range .Mounts}}{{if eq .Type "volume"}}{{println .Name}}{{end}}{{end}}' | sed '/^$/d' | sort -u)
cc_compose down -v -t 10 >>"$COMPOSE_LOGS/down.log" 2>&1 || li_log "podman-compose down reported an error (see $COMPOSE_LOGS/down.log); removing by label"
# Whatever podman-compose left (a container created outside its file, a half-started run).
podman ps -a -q --filter "$label" | xargs -r podman rm -f -v -t 5 >/dev/null
podman pod ps -q --filter "name=pod_$COMPOSE_PROJECT" | xargs -r podman pod rm -f >/dev/null
podman volume ls -q --filter "$label" | xargs -r podman volume rm -f >/dev/null
podman network ls -q --filter "$label" | xargs -r podman network rm -f >/dev/null
for volume in "${anonymous[@]}"; do
  if podman volume exists "$volume"; then podman volume rm -f "$volume" >/dev/null; fi
done
rm -f "$COMPOSE_LOGS/kafka-host-listener"

left="$(podman ps -a -q --filter "$label"; podman volume ls -q --filter "$label"; podman network ls -q --filter "$label"
  for volume in "${anonymous[@]}"; do if podman volume exists "$volume"; then echo "$volume"; fi; done)"
[ -z "$left" ] || li_die "left behind: $left"
li_log "down: no container, volume or network of project $COMPOSE_PROJECT is left"
