// The package as users get it: `npm pack` from a copy of the repository (its prepack hook
// builds), then the tarball installed into throwaway ESM, CommonJS and TypeScript projects
// (NodeNext, node16, bundler and legacy node10 resolution), each running a mutex against a
// real server. Everything lives in one temp dir, removed afterwards.
import assert from 'node:assert/strict';
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { TestingServer } from '../src/testing/index.js';

// From build/test/package.test.js up to the repository.
const REPO = fileURLToPath(new URL('../..', import.meta.url));
const TSC = join(REPO, 'node_modules', 'typescript', 'bin', 'tsc');
const TYPE_ROOTS = join(REPO, 'node_modules', '@types');

// The outer npm (npm test) exports its own prefix, lifecycle and package; a nested npm must not
// see them (npm_config_local_prefix would point it at this repository). Keep what reaches the
// registry: cache, rc files, certificates, proxies, registry.
function npmEnv(): NodeJS.ProcessEnv {
  const keep = /^npm_config_(cache|userconfig|globalconfig|cafile|registry|.*proxy)$/i;
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^npm_/i.test(k) || keep.test(k)) env[k] = v;
  delete env.INIT_CWD;
  return env;
}

function run(cmd: string, args: readonly string[], cwd: string, env: NodeJS.ProcessEnv = npmEnv()): SpawnSyncReturns<string> {
  const r = spawnSync(cmd, args, { cwd, env, encoding: 'utf8', timeout: 180_000 });
  assert.equal(r.status, 0, `${cmd} ${args.join(' ')} (in ${cwd}) failed: ${r.error ?? ''}\n${r.stdout}\n${r.stderr}`);
  return r;
}

/** The files of a fresh clone: tracked and untracked-but-not-ignored (what `git clone` of a commit of this tree would give). */
function sourceFiles(): string[] {
  const git = spawnSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: REPO, encoding: 'utf8' });
  if (git.status === 0) {
    return git.stdout
      .split('\0')
      .filter((f) => f && !/^(node_modules|dist|build)(\/|$)/.test(f) && existsSync(join(REPO, f)));
  }
  // Not a git checkout: what the build and the package need.
  return ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'tsconfig.base.json', 'tsconfig.json', 'tsconfig.cjs.json', 'src', 'scripts'];
}

// One program, written as ESM and as CommonJS: a mutex held, refused to a second participant
// (tryAcquire null, acquire times out with LockTimeoutError), its fencing token passed on as a
// string, released; and the testing export asked whether the server is fine.
const BODY = `
  const [connect, label] = process.argv.slice(2);
  const [host, port] = connect.split(':');
  if (!(await ruok(host, Number(port)))) throw new Error('ruok from zk-recipes/testing failed');
  const session = await ZkSession.connect(connect);
  try {
    const path = '/package-test/' + label;
    const a = new Mutex(session, path);
    const b = new Mutex(session, path);
    const lock = await a.acquire({ timeoutMs: 10000 });
    const busy = (await b.tryAcquire()) === null;
    let timeout = false;
    try {
      await b.acquire({ timeoutMs: 100 });
    } catch (err) {
      timeout = err instanceof LockTimeoutError && err.code === 'LOCK_TIMEOUT';
    }
    const token = typeof lock.fencingToken === 'bigint' ? lock.fencingToken.toString() : null;
    await lock.release();
    const again = await b.tryAcquire();
    await again.release();
    await a.close();
    await b.close();
    await session.deleteRecursive('/package-test/' + label);
    console.log(JSON.stringify({ label, busy, timeout, token, format: typeof require === 'function' ? 'cjs' : 'esm' }));
  } finally {
    await session.close();
  }
`;

const ESM_JS = `import { LockTimeoutError, Mutex, ZkSession } from 'zk-recipes';
import { ruok } from 'zk-recipes/testing';
import { openTelemetryMetrics, openTelemetryTracing, prometheusMetrics } from 'zk-recipes/metrics';
if (typeof prometheusMetrics !== 'function' || typeof openTelemetryMetrics !== 'function' || typeof openTelemetryTracing !== 'function') throw new Error('zk-recipes/metrics did not load');
${BODY}`;

const CJS_JS = `const { LockTimeoutError, Mutex, ZkSession } = require('zk-recipes');
const { ruok } = require('zk-recipes/testing');
const { openTelemetryMetrics, openTelemetryTracing, prometheusMetrics } = require('zk-recipes/metrics');
if (typeof prometheusMetrics !== 'function' || typeof openTelemetryMetrics !== 'function' || typeof openTelemetryTracing !== 'function') throw new Error('zk-recipes/metrics did not load');
async function main() {${BODY}}
main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
`;

// TypeScript: the same program, typed; `handle` and `server` check that types flow from both exports.
const TS_BODY = BODY.replace('const lock = await', 'const lock: LockHandle = await').replace('const again = await b.tryAcquire();\n    await again.release();', 'const again = await b.tryAcquire();\n    await again?.release();');
const TS_HEADER = (from: string): string => `import { LockTimeoutError, Mutex, ZkSession, type LockHandle, type SessionOptions } from 'zk-recipes';
import { ruok, TestingServer, type TestingServerOptions } from 'zk-recipes/testing';
// Without prom-client or @opentelemetry/api installed: the metrics types are the package's own.
import { openTelemetryMetrics, openTelemetryTracing, prometheusMetrics, type OpenTelemetryMetricsOptions, type OpenTelemetryTracingOptions, type PrometheusMetricsOptions } from 'zk-recipes/metrics';
const metricsOptions: ((o: PrometheusMetricsOptions) => unknown) = prometheusMetrics;
const otelMetricsOptions: ((o: OpenTelemetryMetricsOptions) => unknown) = openTelemetryMetrics;
const otelTracingOptions: ((o: OpenTelemetryTracingOptions) => unknown) = openTelemetryTracing;
void [metricsOptions, otelMetricsOptions, otelTracingOptions];
const options: SessionOptions = { sessionTimeoutMs: 10000 };
const serverOptions: TestingServerOptions = { tickTime: 200 };
const start: (o?: TestingServerOptions) => Promise<TestingServer> = TestingServer.start;
void [options, serverOptions, start, ${JSON.stringify(from)}];
`;
const TS_ESM = `${TS_HEADER('esm')}${TS_BODY}`;
const TS_CJS = `${TS_HEADER('cjs')}async function main(): Promise<void> {${TS_BODY}}
main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
`;
// Legacy resolution (no exports map): main/types and typesVersions for the subpath.
const TS_NODE10 = `import { Mutex, ZkSession, type LockHandle } from 'zk-recipes';
import { TestingServer } from 'zk-recipes/testing';
import { prometheusMetrics } from 'zk-recipes/metrics';
export async function main(connect: string): Promise<LockHandle> {
  const session = await ZkSession.connect(connect);
  void [TestingServer, prometheusMetrics];
  return new Mutex(session, '/x').acquire();
}
`;

function tsconfig(options: Record<string, unknown>, include: string[]): string {
  return JSON.stringify(
    {
      compilerOptions: {
        target: 'ES2022',
        lib: ['ES2023', 'ESNext.Disposable'],
        strict: true,
        // Check the package's own declarations too, not only our use of them.
        skipLibCheck: false,
        typeRoots: [TYPE_ROOTS],
        types: ['node'],
        ...options,
      },
      include,
    },
    null,
    2,
  );
}

describe('the packed package', () => {
  let server: TestingServer;
  let tmp: string;
  let tarball: string;
  let packedFiles: string[];
  let app: string;
  // Node 20.19+ can require() ES modules: turn that off, so the CommonJS build is what runs.
  const noRequireEsm = process.allowedNodeEnvironmentFlags.has('--no-experimental-require-module') ? ['--no-experimental-require-module'] : [];

  before(async () => {
    tmp = realpathSync(mkdtempSync(join(tmpdir(), 'zk-recipes-package-')));
    server = await TestingServer.start();
  });
  after(async () => {
    await server?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('npm pack from a fresh copy builds (prepack) and ships dist, sources for its declaration maps, LICENSE and README; no tests, no JS source maps, within its size budget', () => {
    const copy = join(tmp, 'repo');
    for (const f of sourceFiles()) cpSync(join(REPO, f), join(copy, f), { recursive: true });
    assert.equal(existsSync(join(copy, 'dist')), false);
    symlinkSync(join(REPO, 'node_modules'), join(copy, 'node_modules'), 'dir');
    const out = join(tmp, 'pack');
    mkdirSync(out);
    const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', out], copy).stdout) as [{ filename: string; unpackedSize: number; files: { path: string; size: number }[] }];
    tarball = join(out, packed[0].filename);
    packedFiles = packed[0].files.map((f) => f.path);
    const has = (p: string): boolean => packedFiles.includes(p);
    for (const p of [
      'package.json',
      'README.md',
      'LICENSE',
      'CHANGELOG.md',
      'dist/index.js',
      'dist/index.d.ts',
      'dist/testing/index.js',
      'dist/testing/index.d.ts',
      'dist/cjs/package.json',
      'dist/cjs/index.js',
      'dist/cjs/index.d.ts',
      'dist/cjs/testing/index.js',
      'dist/cjs/testing/index.d.ts',
      'dist/metrics/index.js',
      'dist/metrics/index.d.ts',
      'dist/cjs/metrics/index.js',
      'dist/cjs/metrics/index.d.ts',
      'src/index.ts',
      'dist/cli/zkr.js',
    ]) {
      assert.ok(has(p), `${p} is packed`);
    }
    const stray = packedFiles.filter((p) => /^(test|build|bench|demo|examples|docs|\.ci)\//.test(p) || /\.test\.|tsbuildinfo/.test(p));
    assert.deepEqual(stray, [], 'no tests, build output, bench, demo or CI files');
    // package.json#exports, main and types all point at packed files.
    const pkg = JSON.parse(readFileSync(join(copy, 'package.json'), 'utf8')) as { main: string; types: string; exports: Record<string, unknown>; bin: Record<string, string> };
    const targets = JSON.stringify([pkg.main, pkg.types, pkg.exports, pkg.bin]).match(/\.\/dist\/[^"]+/g) ?? [];
    for (const t of targets) assert.ok(has(t.slice(2)), `${t} (package.json) is packed`);
    // Footprint: declaration maps and the sources they point at (go-to-definition opens the
    // TypeScript source, comments included), no JavaScript source maps (tsc's output reads as
    // the source does), and the whole under a budget: a deliberate increase moves the budget.
    assert.deepEqual(packedFiles.filter((p) => p.endsWith('.js.map')), [], 'no JavaScript source maps');
    // 5.0 MB: the caches and zkr moved it from 3.5 to 4.0; the diagnostics channels, zk-recipes/metrics and the barriers to 4.6;
    // the OpenTelemetry adapters, PersistentNode, SharedValue/SharedCount and AtomicNumber to 4.8.
    // 5.5 MB since zk-recipes/discovery (about 0.2 MB of it in dist, cjs and src).
    // 6.0 MB since security (ACLs on every recipe, TLS, SASL DIGEST-MD5, and their test-kit servers).
    const budget = 6_000_000;
    const bytes = new Map<string, number>();
    for (const f of packed[0].files) {
      const kind = /\.d\.ts\.map$/.test(f.path) ? 'declaration maps' : f.path.startsWith('src/') ? 'src/' : f.path.startsWith('dist/cjs/') ? 'dist/cjs/' : f.path.startsWith('dist/') ? 'dist/ (ESM)' : 'other';
      bytes.set(kind, (bytes.get(kind) ?? 0) + f.size);
    }
    assert.ok(packed[0].unpackedSize <= budget, `unpacked ${packed[0].unpackedSize} bytes, over the ${budget}-byte budget: ${JSON.stringify(Object.fromEntries(bytes))}`);
    // Every declaration map's sources are in the tarball, so go-to-definition resolves.
    const maps = packedFiles.filter((p) => p.endsWith('.map'));
    assert.ok(maps.length > 0);
    for (const m of maps) {
      const map = JSON.parse(readFileSync(join(copy, m), 'utf8')) as { sources: string[]; sourceRoot?: string };
      for (const s of map.sources) {
        const resolved = posix.normalize(posix.join(posix.dirname(m), map.sourceRoot ?? '', s));
        assert.ok(has(resolved), `${m} refers to ${resolved}, which is packed`);
      }
    }
  });

  it('installs into ESM, CommonJS and TypeScript projects', () => {
    app = join(tmp, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'zk-recipes-consumer', version: '1.0.0', private: true }));
    const install = run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], app);
    // No lifecycle script runs at install (npm warns about each package that has one).
    const installed = JSON.parse(readFileSync(join(app, 'node_modules', 'zk-recipes', 'package.json'), 'utf8')) as { scripts?: Record<string, string> };
    const hooks = Object.keys(installed.scripts ?? {}).filter((k) => /^(pre|post)?(install|prepare)$|^prepublish$/.test(k));
    assert.deepEqual(hooks, [], 'the installed package.json has no install-time script');
    assert.doesNotMatch(`${install.stdout}\n${install.stderr}`, /install[- ]scripts?/i, 'npm install says nothing about install scripts');
    const deps = (JSON.parse(readFileSync(join(app, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }).dependencies;
    assert.ok(deps['zk-recipes'], 'saved as a dependency');
    // Each project is a folder with its own package.json; they share the install above.
    const write = (dir: string, files: Record<string, string>): void => {
      mkdirSync(join(app, dir), { recursive: true });
      for (const [name, text] of Object.entries(files)) writeFileSync(join(app, dir, name), text);
    };
    write('esm', { 'package.json': '{"type":"module"}', 'main.js': ESM_JS });
    write('cjs', { 'package.json': '{"type":"commonjs"}', 'main.js': CJS_JS });
    write('ts', {
      'package.json': '{"type":"module"}',
      'esm.ts': TS_ESM,
      'cjs.cts': TS_CJS,
      'tsconfig.nodenext.json': tsconfig({ module: 'NodeNext', moduleResolution: 'NodeNext', outDir: 'out' }, ['esm.ts', 'cjs.cts']),
      'tsconfig.node16.json': tsconfig({ module: 'Node16', moduleResolution: 'Node16', noEmit: true }, ['esm.ts', 'cjs.cts']),
      'tsconfig.bundler.json': tsconfig({ module: 'ESNext', moduleResolution: 'Bundler', noEmit: true }, ['esm.ts']),
    });
    write('ts-node10', {
      'package.json': '{"type":"commonjs"}',
      'legacy.ts': TS_NODE10,
      'tsconfig.json': tsconfig({ module: 'CommonJS', moduleResolution: 'Node10', noEmit: true, ignoreDeprecations: '5.0' }, ['legacy.ts']),
    });
  });

  const mutexRun = (dir: string, file: string, label: string, flags: string[] = []): Record<string, unknown> => {
    const r = run(process.execPath, [...flags, join(app, dir, file), server.connectString, label], join(app, dir), process.env);
    const result = JSON.parse(r.stdout.trim()) as Record<string, unknown>;
    assert.equal(result.label, label);
    assert.equal(result.busy, true, 'a second participant cannot take the held mutex');
    assert.equal(result.timeout, true, 'its acquire() times out with LockTimeoutError');
    assert.match(String(result.token), /^\d+$/, 'the fencing token is a bigint, passed on as a string');
    return result;
  };

  it('ESM: import of the root and zk-recipes/testing runs a mutex', () => {
    assert.equal(mutexRun('esm', 'main.js', 'esm').format, 'esm');
  });

  it('CommonJS: require of the root and zk-recipes/testing runs a mutex (without require(esm))', () => {
    assert.equal(mutexRun('cjs', 'main.js', 'cjs', noRequireEsm).format, 'cjs');
  });

  // node16 is the strict one for cjs.cts: since TypeScript 5.8, nodenext accepts require() of
  // ESM types (Node 22 can), so only node16 fails if `require` resolved to the ESM declarations.
  for (const resolution of ['nodenext', 'node16', 'bundler']) {
    it(`TypeScript, ${resolution} resolution: root and testing type-check (package declarations included)`, () => {
      run(process.execPath, [TSC, '-p', `tsconfig.${resolution}.json`, ...(resolution === 'nodenext' ? [] : ['--noEmit'])], join(app, 'ts'));
    });
  }

  it('TypeScript, legacy node10 resolution: main/types and typesVersions for zk-recipes/testing', () => {
    run(process.execPath, [TSC, '-p', 'tsconfig.json', '--noEmit'], join(app, 'ts-node10'));
  });

  it('TypeScript output runs: an ES module and a .cts (CommonJS) file, each with a mutex', () => {
    assert.equal(mutexRun('ts', 'out/esm.js', 'ts-esm').format, 'esm');
    assert.equal(mutexRun('ts', 'out/cjs.cjs', 'ts-cjs', noRequireEsm).format, 'cjs');
  });

  it("the zkr bin runs from the installed package's node_modules/.bin, its command's exit code passed through", () => {
    const zkr = join(app, 'node_modules', '.bin', 'zkr');
    assert.match(run(zkr, ['--help'], app).stdout, /^usage: zkr SUBCOMMAND/);
    const r = spawnSync(zkr, ['lock', '/package-test/zkr', '--connect', server.connectString, '--', process.execPath, '-e', 'console.log(process.env.ZKR_MODE); process.exit(5)'], { cwd: app, encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 5, r.stderr);
    assert.equal(r.stdout, 'lock\n');
  });
});
