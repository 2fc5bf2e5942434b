#!/bin/sh
# Second step of the Postgres bootstrap Job: sets each service role's password from the connection
# URLs the services themselves use (their <service>-database Secrets), so that a password lives in
# one place. The Job passes them as <SERVICE>_DATABASE_URL and <SERVICE>_MIGRATION_DATABASE_URL.
# Only the roles bootstrap.sql creates (<svc>_app, <svc>_owner, <svc> from its `services` list beside
# this file) are touched. Passwords must be URL-safe (hex or base62, for example): they are taken as
# written, not percent-decoded.
set -eu
stems=$(sed -n "s/^  ('\([a-z_]*\)', '[a-z_]*'),\{0,1\}\$/\1/p" "$(dirname "$0")/bootstrap.sql" | tr '\n' '|')
stems=${stems%|}
[ -n "$stems" ] || { echo "set-passwords: no service list in bootstrap.sql" >&2; exit 1; }
count=0
for var in $(env | sed -n 's/^\([A-Z0-9_]*DATABASE_URL\)=.*/\1/p' | sort); do
  url=$(printenv "$var")
  role=$(printf '%s' "$url" | sed -n 's#^postgres\(ql\)\{0,1\}://\([^:/@]*\):\([^@]*\)@.*#\2#p')
  password=$(printf '%s' "$url" | sed -n 's#^postgres\(ql\)\{0,1\}://\([^:/@]*\):\([^@]*\)@.*#\3#p')
  if ! printf '%s' "$role" | grep -Eq "^($stems)_(app|owner)\$"; then
    echo "set-passwords: $var names role '$role', not a service role; refusing" >&2
    exit 1
  fi
  case "$password" in
    '' | *%*) echo "set-passwords: $var has an empty or percent-encoded password; use a URL-safe one" >&2; exit 1 ;;
  esac
  # The password reaches psql through its environment (\getenv), never through its command line.
  ROLE_PASSWORD="$password" psql -X -q -v ON_ERROR_STOP=1 -d postgres -v role="$role" <<'SQL'
\getenv pw ROLE_PASSWORD
ALTER ROLE :"role" WITH PASSWORD :'pw';
SQL
  echo "set-passwords: password of $role set (from $var)"
  count=$((count + 1))
done
[ "$count" -gt 0 ] || { echo "set-passwords: no *DATABASE_URL variable given" >&2; exit 1; }
