-- Database / schema / role bootstrap for the invoicing services.
--
-- Idempotent: safe to run any number of times (local dev, CI, and later a
-- Kubernetes Job). Must be run by a superuser (or a role with CREATEROLE +
-- CREATEDB that can also grant on the database) connected to any database of
-- the cluster, e.g.
--
--   psql -h 127.0.0.1 -U postgres -d postgres -X -v ON_ERROR_STOP=1 \
--        -v dbname=invoicing -v dev_passwords=true -f deploy/k8s/base/platform/postgres/bootstrap.sql
--
-- The one copy: tools/infra/up.sh, docker-compose.yml (deploy/compose/postgres-init.sh) and the
-- Kubernetes bootstrap Job (a ConfigMap of base/kustomization.yaml; kustomize loads no file outside
-- its directory, hence this place) all run this file.
--
-- psql variables:
--   dbname         database to create/use                   (default: invoicing)
--   dev_passwords  true  -> (re)set every role's password to '<role>_dev'
--                  false -> leave passwords alone (a Kubernetes Job sets them
--                           from Secrets with ALTER ROLE ... PASSWORD)   (default: true)
--
-- Layout, one schema per service, two roles per service (the list below, `services`, is the only
-- place that names them; deploy/tests checks it against SERVICES of libs/contracts, and
-- `nx g ./tools/nx-plugin:resource-service` adds a line):
--   <svc> = auth, webhook, or a resource's kind; schema = auth, webhooks, or the resource's plural
--   owner role (migrations) <svc>_owner; runtime role (DML only) <svc>_app
--
-- <svc>_owner owns its schema (creates tables, runs migrations).
-- <svc>_app has USAGE on its own schema and, through default privileges of
-- <svc>_owner, SELECT/INSERT/UPDATE/DELETE on its tables and USAGE/SELECT on
-- its sequences. No role gets any privilege on another service's schema, and
-- nobody but superusers can create objects in schema public.

\if :{?dbname}
\else
  \set dbname invoicing
\endif
\if :{?dev_passwords}
\else
  \set dev_passwords true
\endif

-- The services: role stem and schema, one per line.
SELECT string_agg(svc || ':' || sch, ',') AS services FROM (VALUES
  ('auth', 'auth'),
  ('invoice', 'invoices'),
  ('client', 'clients'),
  ('payment', 'payments'),
  ('product', 'products'),
  ('expense', 'expenses'),
  ('webhook', 'webhooks')
) AS service(svc, sch) \gset

SET client_min_messages = warning;

-- Make the psql variables visible inside DO blocks (psql does not interpolate
-- inside dollar-quoted bodies).
SELECT set_config('invoicing_bootstrap.dbname', :'dbname', false),
       set_config('invoicing_bootstrap.dev_passwords', :'dev_passwords', false),
       set_config('invoicing_bootstrap.services', :'services', false) \gset ignored_

------------------------------------------------------------------------------
-- 1. Roles (cluster-wide)
------------------------------------------------------------------------------
DO $roles$
DECLARE
  entry text;
  svc text;
  r   text;
  set_pw boolean := current_setting('invoicing_bootstrap.dev_passwords')::boolean;
BEGIN
  FOREACH entry IN ARRAY string_to_array(current_setting('invoicing_bootstrap.services'), ',') LOOP
    svc := split_part(entry, ':', 1);
    FOREACH r IN ARRAY ARRAY[svc || '_owner', svc || '_app'] LOOP
      IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
        EXECUTE format('CREATE ROLE %I', r);
      END IF;
      EXECUTE format('ALTER ROLE %I WITH LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS INHERIT', r);
      IF set_pw THEN
        EXECUTE format('ALTER ROLE %I WITH PASSWORD %L', r, r || '_dev');
      END IF;
    END LOOP;
  END LOOP;
END
$roles$;

------------------------------------------------------------------------------
-- 2. Database (CREATE DATABASE cannot run inside a DO block / transaction)
------------------------------------------------------------------------------
SELECT format('CREATE DATABASE %I', :'dbname')
WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'dbname') \gexec

\connect :"dbname"

-- The settings are per session: set them again after \connect.
SET client_min_messages = warning;
SELECT set_config('invoicing_bootstrap.dbname', :'dbname', false),
       set_config('invoicing_bootstrap.services', :'services', false) \gset ignored_

------------------------------------------------------------------------------
-- 3. Database-level privileges
------------------------------------------------------------------------------
-- Nobody connects unless granted; nobody creates objects in public.
SELECT format('REVOKE CONNECT ON DATABASE %I FROM PUBLIC', :'dbname') \gexec
REVOKE CREATE ON SCHEMA public FROM PUBLIC;

------------------------------------------------------------------------------
-- 4. Schemas, ownership, grants
------------------------------------------------------------------------------
DO $schemas$
DECLARE
  db      text := current_setting('invoicing_bootstrap.dbname');
  entries text[] := string_to_array(current_setting('invoicing_bootstrap.services'), ',');
  entry   text;
  svc     text;
  sch     text;
  owner_r text;
  app_r   text;
  other   text;
  tbl     text;
BEGIN
  FOREACH entry IN ARRAY entries LOOP
    svc := split_part(entry, ':', 1);
    sch := split_part(entry, ':', 2);
    owner_r := svc || '_owner';
    app_r := svc || '_app';

    -- Connect to this database only.
    EXECUTE format('GRANT CONNECT ON DATABASE %I TO %I, %I', db, owner_r, app_r);

    -- Schema owned by the service's owner role.
    EXECUTE format('CREATE SCHEMA IF NOT EXISTS %I AUTHORIZATION %I', sch, owner_r);
    EXECUTE format('ALTER SCHEMA %I OWNER TO %I', sch, owner_r);
    EXECUTE format('REVOKE ALL ON SCHEMA %I FROM PUBLIC', sch);

    -- Runtime role: may resolve names in its schema, nothing else (no CREATE).
    EXECUTE format('REVOKE ALL ON SCHEMA %I FROM %I', sch, app_r);
    EXECUTE format('GRANT USAGE ON SCHEMA %I TO %I', sch, app_r);

    -- DML on every table / sequence the owner creates from now on ...
    EXECUTE format('ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA %I GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO %I', owner_r, sch, app_r);
    EXECUTE format('ALTER DEFAULT PRIVILEGES FOR ROLE %I IN SCHEMA %I GRANT USAGE, SELECT ON SEQUENCES TO %I', owner_r, sch, app_r);
    -- ... and on those that already exist (re-running after migrations).
    EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA %I TO %I', sch, app_r);
    EXECUTE format('GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA %I TO %I', sch, app_r);
    -- ... except what a table's comment declares append-only (the audit log): its migration
    -- revoked UPDATE and DELETE, and the GRANT above must not give them back on a re-run.
    FOR tbl IN SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = sch AND c.relkind = 'r' AND obj_description(c.oid, 'pg_class') LIKE 'append-only%' LOOP
      EXECUTE format('REVOKE UPDATE, DELETE, TRUNCATE ON %I.%I FROM %I', sch, tbl, app_r);
    END LOOP;
    -- ... and DELETE on what a table's comment declares no-delete (an organization's profile).
    FOR tbl IN SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = sch AND c.relkind = 'r' AND obj_description(c.oid, 'pg_class') LIKE 'no-delete%' LOOP
      EXECUTE format('REVOKE DELETE, TRUNCATE ON %I.%I FROM %I', sch, tbl, app_r);
    END LOOP;

    -- Unqualified names resolve to the service's own schema.
    EXECUTE format('ALTER ROLE %I IN DATABASE %I SET search_path = %I', owner_r, db, sch);
    EXECUTE format('ALTER ROLE %I IN DATABASE %I SET search_path = %I', app_r, db, sch);

    -- Belt and braces: no privilege on any other service schema (e.g. left
    -- over from a manual grant).
    FOR other IN SELECT split_part(unnest(entries), ':', 2) LOOP
      IF other <> sch AND EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = other) THEN
        EXECUTE format('REVOKE ALL ON SCHEMA %I FROM %I, %I', other, owner_r, app_r);
      END IF;
    END LOOP;
  END LOOP;
END
$schemas$;
