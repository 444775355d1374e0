#!/usr/bin/env node
// Compares two V8 heap snapshots and prints what was added per item, grouped by kind (closures,
// contexts, arrays, promises, ...) and by the source line that made it (closures: where the
// function is defined; contexts: the function whose scope they are).
//   node scripts/heap-per-item.mjs BASE.heapsnapshot AFTER.heapsnapshot N [--top 40] [--match TEXT]   (after npm run build:test)
// The bench writes such a pair with BENCH_HEAP_SNAPSHOT_DIR=dir (scale_waiters: base and queued).
// Counts are of live objects only (reachable from the GC roots), as a snapshot shows them.
import { readFileSync } from 'node:fs';
import { parseArgsOrExit } from '../build/bench/args.js';

const USAGE = 'usage: heap-per-item.mjs BASE.heapsnapshot AFTER.heapsnapshot N [--top 40] [--match TEXT]';
const { values, positionals } = parseArgsOrExit('heap-per-item', { allowPositionals: true, options: { top: { type: 'string', default: '40' }, match: { type: 'string' }, chains: { type: 'string' }, depth: { type: 'string', default: '5' } } }, USAGE);
const [baseFile, afterFile, nArg] = positionals;
if (!baseFile || !afterFile || !nArg) {
  console.error(USAGE);
  process.exit(2);
}
const n = Number(nArg);
const top = Number(values.top);

/** Reads a snapshot into flat tables, with each node's group key. */
function load(file) {
  const snap = JSON.parse(readFileSync(file, 'utf8'));
  const m = snap.snapshot.meta;
  const nf = m.node_fields.length;
  const ef = m.edge_fields.length;
  const nodeTypes = m.node_types[0];
  const edgeTypes = m.edge_types[0];
  const [iType, iName, , iSize, iEdges] = ['type', 'name', 'id', 'self_size', 'edge_count'].map((f) => m.node_fields.indexOf(f));
  const [eType, eName, eTo] = ['type', 'name_or_index', 'to_node'].map((f) => m.edge_fields.indexOf(f));
  const { nodes, edges, strings } = snap;
  const count = nodes.length / nf;
  const firstEdge = new Uint32Array(count + 1);
  for (let i = 0, e = 0; i < count; i++) {
    firstEdge[i] = e;
    e += nodes[i * nf + iEdges] * ef;
  }
  firstEdge[count] = edges.length;
  const type = (i) => nodeTypes[nodes[i * nf + iType]];
  const name = (i) => strings[nodes[i * nf + iName]];
  const size = (i) => nodes[i * nf + iSize];
  const edgeName = (e) => {
    const t = edgeTypes[edges[e + eType]];
    return t === 'element' || t === 'hidden' ? String(edges[e + eName]) : strings[edges[e + eName]];
  };
  const child = (i, wanted) => {
    for (let e = firstEdge[i]; e < firstEdge[i + 1]; e += ef) if (edgeName(e) === wanted) return edges[e + eTo] / nf;
    return undefined;
  };
  // Reachable from the root (node 0), not through weak edges.
  const live = new Uint8Array(count);
  const stack = [0];
  live[0] = 1;
  while (stack.length) {
    const i = stack.pop();
    for (let e = firstEdge[i]; e < firstEdge[i + 1]; e += ef) {
      if (edgeTypes[edges[e + eType]] === 'weak') continue;
      const to = edges[e + eTo] / nf;
      if (!live[to]) {
        live[to] = 1;
        stack.push(to);
      }
    }
  }
  // Closure locations.
  const loc = new Map();
  const lf = m.location_fields.length;
  const [lObj, lScript, lLine, lCol] = ['object_index', 'script_id', 'line', 'column'].map((f) => m.location_fields.indexOf(f));
  for (let k = 0; k < snap.locations.length; k += lf) loc.set(snap.locations[k + lObj] / nf, { script: snap.locations[k + lScript], line: snap.locations[k + lLine] + 1, col: snap.locations[k + lCol] + 1 });
  // Script ids → names: through each closure's shared info's script.
  const scriptName = new Map();
  const fileOf = (closure) => {
    const l = loc.get(closure);
    if (!l) return '?';
    if (!scriptName.has(l.script)) {
      const sfi = child(closure, 'shared');
      const script = sfi === undefined ? undefined : (child(sfi, 'script') ?? child(sfi, 'script_or_debug_info'));
      const nm = script === undefined ? undefined : child(script, 'name');
      if (nm !== undefined) scriptName.set(l.script, name(nm));
    }
    return `${(scriptName.get(l.script) ?? `script ${l.script}`).replace(/^file:\/\/.*?\/(build|node_modules)\//, '$1/')}:${l.line}`;
  };
  // One retainer of each node (the first live one found), with the edge's name.
  const retainer = new Int32Array(count).fill(-1);
  const retainerEdge = new Array(count);
  for (let i = 0; i < count; i++) {
    if (!live[i]) continue;
    for (let e = firstEdge[i]; e < firstEdge[i + 1]; e += ef) {
      if (edgeTypes[edges[e + eType]] === 'weak') continue;
      const to = edges[e + eTo] / nf;
      if (retainer[to] === -1) {
        retainer[to] = i;
        retainerEdge[to] = edgeName(e);
      }
    }
  }
  const fnOf = (closure) => `${name(closure) || '(anonymous)'} @ ${fileOf(closure)}`;
  const keyOf = (i, depth = 0) => {
    const t = type(i);
    if (t === 'closure') return `closure ${fnOf(i)}`;
    if (t === 'object' && name(i) === 'Generator') {
      const f = child(i, 'function');
      return `Generator of ${f === undefined ? '?' : fnOf(f)}`;
    }
    if ((t === 'array' || t === 'hidden' || (t === 'object' && (name(i) === 'Object' || name(i) === 'Array' || name(i) === 'Promise'))) && depth < 2 && retainer[i] >= 0) {
      return `${t} ${name(i).slice(0, 30)} <-${retainerEdge[i]}- ${keyOf(retainer[i], depth + 1)}`;
    }
    if (t === 'object' && name(i) === 'system / Context') {
      // A context: name it by a closure that holds it (the function whose scope it is).
      return 'context';
    }
    if (t === 'array' || t === 'object' || t === 'hidden' || t === 'native') return `${t} ${name(i).slice(0, 60)}`;
    if (t === 'string' || t === 'concatenated string' || t === 'sliced string') return t;
    return `${t} ${name(i).slice(0, 40)}`;
  };
  // Contexts: the function of a closure pointing at them.
  const ctxOwner = new Map();
  for (let i = 0; i < count; i++) {
    if (type(i) !== 'closure' || !live[i]) continue;
    const c = child(i, 'context');
    if (c !== undefined && !ctxOwner.has(c)) ctxOwner.set(c, `${name(i) || '(anonymous)'} @ ${fileOf(i)}`);
  }
  const fullKey = (i) => {
    const k = keyOf(i);
    return k === 'context' ? `context of ${ctxOwner.get(i) ?? '?'}` : k;
  };
  // --chains TEXT: for the objects whose group contains TEXT, their retainer chains (counted).
  const chains = new Map();
  const groups = new Map();
  for (let i = 0; i < count; i++) {
    if (!live[i]) continue;
    let k = fullKey(i);
    if (values.chains && k.includes(values.chains)) {
      const steps = [];
      for (let j = i, d = 0; d < Number(values.depth) && retainer[j] >= 0; d++) {
        steps.push(`-${retainerEdge[j]}-> ${fullKey(retainer[j])}`);
        j = retainer[j];
      }
      const c = steps.join('\n      ');
      chains.set(c, (chains.get(c) ?? 0) + 1);
    }
    const g = groups.get(k) ?? { count: 0, size: 0 };
    g.count++;
    g.size += size(i);
    groups.set(k, g);
  }
  groups.chains = chains;
  return groups;
}

const base = load(baseFile);
const after = load(afterFile);
const rows = [];
for (const [k, g] of after) {
  const b = base.get(k) ?? { count: 0, size: 0 };
  const dc = g.count - b.count;
  const ds = g.size - b.size;
  if (dc !== 0 || ds !== 0) rows.push({ k, count: dc / n, size: ds / n });
}
const kinds = new Map();
for (const r of rows) {
  const kind = r.k.startsWith('context of') ? 'context' : r.k.split(' ')[0] === 'object' || r.k.split(' ')[0] === 'array' ? r.k.split(' ').slice(0, 2).join(' ') : r.k.split(' ')[0];
  const g = kinds.get(kind) ?? { count: 0, size: 0 };
  g.count += r.count;
  g.size += r.size;
  kinds.set(kind, g);
}
const fmt = (x) => x.toFixed(2).padStart(8);
const total = rows.reduce((a, r) => a + r.size, 0);
console.log(`per item (N = ${n}): ${Math.round(total)} bytes of live objects`);
console.log('\nby kind:');
for (const [k, g] of [...kinds].sort((a, b) => b[1].size - a[1].size).slice(0, top)) console.log(`${fmt(g.count)} ${String(Math.round(g.size)).padStart(6)} B  ${k}`);
console.log('\nby group:');
const shown = rows.filter((r) => !values.match || r.k.includes(values.match)).sort((a, b) => b.size - a.size);
for (const r of shown.slice(0, top)) console.log(`${fmt(r.count)} ${String(Math.round(r.size)).padStart(6)} B  ${r.k}`);

if (values.chains) {
  console.log(`\nretainer chains of ${values.chains} (after; count per item):`);
  for (const [c, k] of [...after.chains].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${(k / n).toFixed(2)}  ${c}`);
}
