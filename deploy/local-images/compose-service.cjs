#!/usr/bin/env node
// Reads one service of docker-compose.yml and prints, NUL-separated, what smoke.sh hands to podman:
//
//   node compose-service.cjs run-args SERVICE   --env K=V ..., --volume SRC:DST[:ro] ... (bind mounts
//                                               only, relative to the repository), the hardening
//                                               (--user, --read-only, --tmpfs, --cap-drop,
//                                               --security-opt, --init), --entrypoint, the image,
//                                               then the command
//   node compose-service.cjs health SERVICE     the health check's test as an argv (CMD-SHELL: sh -c)
//   node compose-service.cjs image SERVICE      the image
//
// So the smoke test starts each infrastructure image with exactly the settings compose gives it.
'use strict';
const { readFileSync } = require('node:fs');
const { join, resolve } = require('node:path');
const YAML = require('yaml');

const root = resolve(__dirname, '..', '..');
const [mode, name] = process.argv.slice(2);
// merge: the `<<: *hardening` keys, as Compose applies them.
const compose = YAML.parse(readFileSync(join(root, 'docker-compose.yml'), 'utf8'), { merge: true });
const service = compose.services?.[name];
if (!service || !['run-args', 'health', 'image'].includes(mode)) {
  console.error('usage: compose-service.cjs run-args|health|image SERVICE (a service of docker-compose.yml)');
  process.exit(64);
}
const out = [];
if (mode === 'image') {
  out.push(service.image);
} else if (mode === 'health') {
  const test = service.healthcheck?.test;
  if (!test) process.exit(1);
  if (typeof test === 'string') out.push('sh', '-c', test);
  else if (test[0] === 'CMD-SHELL') out.push('sh', '-c', test[1]);
  else if (test[0] === 'CMD') out.push(...test.slice(1));
  else process.exit(1);
} else {
  const env = service.environment ?? {};
  const pairs = Array.isArray(env) ? env.map((e) => String(e)) : Object.entries(env).map(([k, v]) => `${k}=${v ?? ''}`);
  for (const pair of pairs) out.push('--env', pair);
  for (const volume of service.volumes ?? []) {
    const spec = typeof volume === 'string' ? volume : `${volume.source}:${volume.target}${volume.read_only ? ':ro' : ''}`;
    const [source, ...rest] = spec.split(':');
    // Named volumes (postgres-data) stay anonymous here: the smoke test starts from nothing.
    if (source.startsWith('.') || source.startsWith('/')) out.push('--volume', [resolve(root, source), ...rest].join(':'));
  }
  if (service.user !== undefined) out.push('--user', String(service.user));
  if (service.read_only) out.push('--read-only');
  for (const tmpfs of [].concat(service.tmpfs ?? [])) out.push('--tmpfs', tmpfs);
  for (const cap of service.cap_drop ?? []) out.push('--cap-drop', cap);
  for (const opt of service.security_opt ?? []) out.push('--security-opt', opt);
  if (service.init) out.push('--init');
  if (service.entrypoint) out.push('--entrypoint', JSON.stringify([].concat(service.entrypoint)));
  out.push(service.image);
  if (service.command) {
    if (typeof service.command === 'string') out.push('sh', '-c', service.command);
    else out.push(...service.command.map(String));
  }
}
process.stdout.write(out.map((s) => `${s}\0`).join(''));
