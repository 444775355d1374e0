// No JVM may outlive the node process that started it, however that process ends.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { describe, it } from 'node:test';
import { waitFor, withTimeout } from '../../src/testing/index.js';
import { isAlive } from './procs.js';

const KIT = new URL('../../src/testing/index.js', import.meta.url).href;

interface Child {
  nodePid: number;
  javaPid: number;
  workDir: string;
  exited: Promise<unknown>;
}

/** Runs a node script that starts a server, prints `javaPid workDir`, then does `then`. */
async function startChild(then: string): Promise<Child> {
  const script = `
    import { TestingServer } from ${JSON.stringify(KIT)};
    const server = await TestingServer.start();
    console.log(server.pid + ' ' + server.workDir);
    ${then}
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const lines = createInterface({ input: child.stdout });
  const first = await withTimeout(
    new Promise<string>((resolve, reject) => {
      lines.once('line', resolve);
      void exited.then(() => reject(new Error('child exited before printing')));
    }),
    30_000,
    'child to start a server',
  );
  const [javaPid = '', workDir = ''] = first.split(' ');
  assert.ok(child.pid);
  return { nodePid: child.pid, javaPid: Number(javaPid), workDir, exited };
}

async function assertGone(child: Child): Promise<void> {
  await withTimeout(child.exited, 5000, 'child to exit');
  await waitFor(() => !isAlive(child.javaPid), { timeoutMs: 3000, message: `java ${child.javaPid} to die` });
}

describe('no orphan JVMs', () => {
  it('kills the JVM when node is SIGKILLed (the wrapper sees stdin close)', async () => {
    const child = await startChild('setInterval(() => {}, 1000);');
    assert.ok(isAlive(child.javaPid));
    process.kill(child.nodePid, 'SIGKILL');
    await assertGone(child);
    await waitFor(() => !existsSync(child.workDir), { timeoutMs: 3000, message: 'the wrapper to remove the files' });
  });

  it('kills the JVM and removes its files when node calls process.exit()', async () => {
    const child = await startChild('process.exit(0);');
    await assertGone(child);
    assert.equal(existsSync(child.workDir), false);
  });

  it('does not keep node alive when a server is never closed', async () => {
    const child = await startChild('');
    await assertGone(child);
    assert.equal(existsSync(child.workDir), false);
  });
});
