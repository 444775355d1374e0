/**
 * A page loaded in real headless Chromium (Debian's `chromium` package, or the binary named
 * by CHROMIUM), driven over the DevTools protocol on a pipe (`--remote-debugging-pipe`: no
 * port, no WebSocket, no npm package). It reports every script error the page raised
 * (uncaught exceptions, console.error, error log entries) and the value of one expression
 * evaluated once the page has loaded. Chromium runs with a fresh profile, removed afterwards,
 * and exits when the pipe closes, so it never outlives the test process.
 */
import { spawn } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import type { Readable, Writable } from 'node:stream';

const FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** The Chromium to run: CHROMIUM, else chromium (Debian) or chromium-browser on PATH; throws saying how to get one. */
export function findChromium(): string {
  const executable = (p: string): boolean => {
    try {
      accessSync(p, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  };
  if (process.env.CHROMIUM) {
    if (executable(process.env.CHROMIUM)) return process.env.CHROMIUM;
    throw new Error(`CHROMIUM=${process.env.CHROMIUM} is not an executable`);
  }
  for (const dir of (process.env.PATH ?? '').split(delimiter).filter(Boolean)) {
    for (const name of ['chromium', 'chromium-browser']) if (executable(join(dir, name))) return join(dir, name);
  }
  throw new Error('Chromium not found (CHROMIUM, or chromium on PATH): on Debian or Ubuntu, apt-get install chromium (npm test does it as root); elsewhere set CHROMIUM to a Chromium or Chrome binary');
}

/** What a page did: the script errors it raised, and the value of the expression. */
export interface PageResult {
  errors: string[];
  value: unknown;
}

interface Message {
  id?: number;
  method?: string;
  sessionId?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
}

/** Loads `url` in headless Chromium, waits for its load event, and evaluates `expression` (JSON-serializable result). */
export async function loadInChromium(url: string, expression: string, timeoutMs = 60_000): Promise<PageResult> {
  const profile = mkdtempSync(join(tmpdir(), 'zk-recipes-chromium-'));
  const child = spawn(findChromium(), [...FLAGS, `--user-data-dir=${profile}`, '--remote-debugging-pipe', 'about:blank'], {
    stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'],
  });
  const toBrowser = child.stdio[3] as Writable;
  const fromBrowser = child.stdio[4] as Readable;
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr = (stderr + d).slice(-4000)));
  toBrowser.on('error', () => undefined); // a browser that died is reported by its exit

  const pending = new Map<number, { resolve: (r: Record<string, unknown>) => void; reject: (e: Error) => void }>();
  const listeners = new Set<(m: Message) => void>();
  let failure: Error | undefined;
  const fail = (err: Error): void => {
    failure ??= err;
    for (const p of pending.values()) p.reject(failure);
    pending.clear();
  };
  child.on('exit', (code, signal) => fail(new Error(`chromium exited (${signal ?? `code ${code}`}) before the page was checked: ${stderr}`)));
  child.on('error', (err) => fail(err));
  const deadline = setTimeout(() => {
    fail(new Error(`chromium did not load and check ${url} within ${timeoutMs} ms: ${stderr}`));
    child.kill('SIGKILL');
  }, timeoutMs);

  // Messages are JSON, each ended by a NUL byte.
  let buffer = '';
  fromBrowser.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    for (let end = buffer.indexOf('\0'); end >= 0; end = buffer.indexOf('\0')) {
      const message = JSON.parse(buffer.slice(0, end)) as Message;
      buffer = buffer.slice(end + 1);
      const waiter = message.id === undefined ? undefined : pending.get(message.id);
      if (waiter && message.id !== undefined) {
        pending.delete(message.id);
        if (message.error) waiter.reject(new Error(`DevTools: ${message.error.message}`));
        else waiter.resolve(message.result ?? {});
      } else {
        for (const l of listeners) l(message);
      }
    }
  });
  let nextId = 1;
  const send = (method: string, params: Record<string, unknown> = {}, sessionId?: string): Promise<Record<string, unknown>> =>
    new Promise((resolve, reject) => {
      if (failure) return reject(failure);
      const id = nextId++;
      pending.set(id, { resolve, reject });
      toBrowser.write(`${JSON.stringify({ id, method, params, ...(sessionId !== undefined && { sessionId }) })}\0`);
    });

  try {
    const { targetId } = await send('Target.createTarget', { url: 'about:blank' });
    const { sessionId } = (await send('Target.attachToTarget', { targetId, flatten: true })) as { sessionId: string };
    const errors: string[] = [];
    let loaded!: () => void;
    const load = new Promise<void>((resolve) => (loaded = resolve));
    listeners.add((m) => {
      if (m.sessionId !== sessionId) return;
      const p = m.params ?? {};
      if (m.method === 'Page.loadEventFired') loaded();
      if (m.method === 'Runtime.exceptionThrown') {
        const d = p.exceptionDetails as { text?: string; exception?: { description?: string } };
        errors.push(`uncaught: ${d.exception?.description ?? d.text ?? JSON.stringify(d)}`);
      }
      if (m.method === 'Runtime.consoleAPICalled' && p.type === 'error') errors.push(`console.error: ${JSON.stringify(p.args)}`);
      if (m.method === 'Log.entryAdded') {
        const e = p.entry as { level?: string; text?: string; url?: string };
        if (e.level === 'error') errors.push(`log: ${e.text ?? ''} ${e.url ?? ''}`);
      }
    });
    await send('Runtime.enable', {}, sessionId);
    await send('Log.enable', {}, sessionId);
    await send('Page.enable', {}, sessionId);
    const nav = await send('Page.navigate', { url }, sessionId);
    if (typeof nav.errorText === 'string') throw new Error(`chromium could not open ${url}: ${nav.errorText}`);
    await Promise.race([load, new Promise((_, reject) => (failure ? reject(failure) : child.once('exit', () => reject(failure))))]);
    const evaluated = (await send('Runtime.evaluate', { expression, returnByValue: true, awaitPromise: true }, sessionId)) as {
      result?: { value?: unknown };
      exceptionDetails?: { text?: string; exception?: { description?: string } };
    };
    if (evaluated.exceptionDetails) throw new Error(`the check threw in the page: ${evaluated.exceptionDetails.exception?.description ?? evaluated.exceptionDetails.text ?? ''}`);
    return { errors, value: evaluated.result?.value };
  } finally {
    clearTimeout(deadline);
    const exited = child.exitCode !== null || child.signalCode !== null ? Promise.resolve() : new Promise((r) => child.once('exit', r));
    await send('Browser.close').catch(() => undefined);
    const kill = setTimeout(() => child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(kill);
    rmSync(profile, { recursive: true, force: true });
  }
}
