#!/usr/bin/env node
// Summarises a `node --cpu-prof` profile: the functions with the most self time, then the time
// spent inside each package or file (inclusive). The figures in docs/perf.md come from it.
//   node tools/bench/top-frames.js tmp/prof/CPU.*.cpuprofile [how many functions, default 30]
const p = JSON.parse(require('fs').readFileSync(process.argv[2]));
const nodes = new Map(p.nodes.map(n => [n.id, n]));
const self = new Map();
const dt = p.timeDeltas; let total = 0;
for (let i = 0; i < p.samples.length; i++) { const n = nodes.get(p.samples[i]); const d = dt[i] || 0; total += d;
  const key = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.replace(/.*node_modules\//,'').replace(/.*\/dist\//,'dist/')}:${n.callFrame.lineNumber}`;
  self.set(key, (self.get(key) || 0) + d); }
// inclusive by package
const parent = new Map(); for (const n of p.nodes) for (const c of n.children || []) parent.set(c, n.id);
const incl = new Map();
for (let i = 0; i < p.samples.length; i++) { const d = dt[i] || 0; const seen = new Set(); let id = p.samples[i];
  while (id !== undefined) { const n = nodes.get(id); const u = n.callFrame.url; let pkg = u.includes('node_modules/') ? u.split('node_modules/').pop().split('/').slice(0, u.split('node_modules/').pop().startsWith('@')?2:1).join('/') : (u.includes('/dist/') ? 'ours:'+u.split('/').slice(-2).join('/') : (u ? 'node:'+u.split('/').pop() : n.callFrame.functionName));
    if (!seen.has(pkg)) { seen.add(pkg); incl.set(pkg, (incl.get(pkg)||0)+d); } id = parent.get(id); } }
const top = [...self].sort((a,b)=>b[1]-a[1]).slice(0, +process.argv[3] || 30);
console.log('total ms', (total/1000).toFixed(0));
for (const [k,v] of top) console.log((100*v/total).toFixed(1).padStart(5)+'%  '+k);
console.log('--- inclusive by package/file');
for (const [k,v] of [...incl].sort((a,b)=>b[1]-a[1]).slice(0,30)) console.log((100*v/total).toFixed(1).padStart(5)+'%  '+k);
