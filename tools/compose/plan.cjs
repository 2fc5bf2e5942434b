#!/usr/bin/env node
// The start order of docker-compose.yml, for podman-compose versions that ignore depends_on
// conditions (Debian's 1.0.3 only orders the starts): one line per service, `WAVE SERVICE UNTIL`.
//   WAVE   0, 1, 2, ...: a service's wave is one more than the highest wave it depends on.
//   UNTIL  what "started" means before the next wave: `exited` for one-shots (restart: "no"; compose's
//          service_completed_successfully), `healthy` for services with a health check, else `running`.
// With --check, also fails when a depends_on condition asks more than UNTIL gives (e.g.
// service_healthy on a service without a health check), so the order here is compose's own.
'use strict';
const { readFileSync } = require('node:fs');
const { join, resolve } = require('node:path');
const YAML = require('yaml');

// Files as podman-compose takes them (-f FILE ...) or bare.
const files = process.argv.slice(2).filter((a) => a !== '--check' && a !== '-f');
const root = resolve(__dirname, '..', '..');
const services = {};
for (const file of files.length ? files : [join(root, 'docker-compose.yml')]) {
  const doc = YAML.parse(readFileSync(resolve(file), 'utf8'));
  for (const [name, s] of Object.entries(doc.services ?? {})) services[name] = { ...services[name], ...s };
}

function dependencies(service) {
  const deps = service.depends_on ?? {};
  return Array.isArray(deps) ? Object.fromEntries(deps.map((d) => [d, { condition: 'service_started' }])) : deps;
}
function until(service) {
  if (service.restart === 'no') return 'exited';
  return service.healthcheck?.test ? 'healthy' : 'running';
}

const wave = {};
function waveOf(name, path = []) {
  if (wave[name] !== undefined) return wave[name];
  if (path.includes(name)) throw new Error(`depends_on cycle: ${[...path, name].join(' -> ')}`);
  if (!services[name]) throw new Error(`depends_on names an unknown service: ${name}`);
  const deps = Object.keys(dependencies(services[name]));
  wave[name] = deps.length ? 1 + Math.max(...deps.map((d) => waveOf(d, [...path, name]))) : 0;
  return wave[name];
}

const wanted = { service_completed_successfully: 'exited', service_healthy: 'healthy', service_started: 'running' };
for (const [name, service] of Object.entries(services)) {
  for (const [dep, { condition = 'service_started' }] of Object.entries(dependencies(service))) {
    const have = until(services[dep]);
    if (wanted[condition] !== have && condition !== 'service_started') {
      console.error(`${name} waits for ${dep} to be ${condition}, but ${dep} ${have === 'exited' ? 'is a one-shot' : `has ${have === 'healthy' ? 'a' : 'no'} health check`}`);
      process.exit(1);
    }
  }
}
const lines = Object.keys(services)
  .map((name) => [waveOf(name), name, until(services[name])])
  .sort((a, b) => a[0] - b[0] || a[1].localeCompare(b[1]));
for (const line of lines) console.log(line.join(' '));
