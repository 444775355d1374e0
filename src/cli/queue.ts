/**
 * `zkr queue put|take|size|dead-letters PATH`: a {@link DistributedQueue}'s items from a shell.
 * `put` prints the new item's path; `take` prints the item's data as it is (exit `-E`, default
 * 1, when none came in time); `size` prints a number; `dead-letters` one line per letter.
 *
 * @internal
 * @module
 */
import { OperationTimeoutError } from '../errors.js';
import { DistributedQueue } from '../queue/queue.js';
import type { QueueCommand } from './args.js';
import { recipeAcl } from './connect.js';
import { out, withSession } from './with-session.js';

async function readStdin(): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Runs `zkr queue`. @internal */
export function runQueue(cmd: QueueCommand): Promise<number> {
  return withSession(cmd, `queue ${cmd.op} ${cmd.path}`, async (session, signal) => {
    const queue = new DistributedQueue(session, cmd.path, recipeAcl(cmd.acl));
    try {
      switch (cmd.op) {
        case 'put': {
          const data = cmd.data !== undefined ? Buffer.from(cmd.data) : await readStdin();
          const path = await queue.put(data, { signal });
          await out(cmd.json ? `${JSON.stringify({ path })}\n` : `${path}\n`);
          return 0;
        }
        case 'take': {
          let item: Buffer | null;
          try {
            item = cmd.timeoutMs === 0 ? await queue.poll({ signal }) : await queue.take({ signal, ...(cmd.timeoutMs !== undefined && { timeoutMs: cmd.timeoutMs }) });
          } catch (err) {
            if (err instanceof OperationTimeoutError) item = null;
            else throw err;
          }
          if (!item) return cmd.conflictExitCode;
          await out(cmd.json ? `${JSON.stringify({ data: item.toString('utf8') })}\n` : item);
          return 0;
        }
        case 'size': {
          const size = await queue.size({ signal });
          await out(cmd.json ? `${JSON.stringify({ size })}\n` : `${size}\n`);
          return 0;
        }
        case 'dead-letters': {
          const letters = await queue.deadLetters({ signal });
          if (cmd.json) {
            await out(`${JSON.stringify(letters.map((l) => ({ path: l.path, itemPath: l.itemPath, priority: l.priority, data: l.data.toString('utf8'), deliveries: l.deliveries, lastError: l.lastError, deadAt: new Date(l.deadAt).toISOString() })))}\n`);
          } else {
            for (const l of letters) await out(`${l.path}\t${l.deliveries} deliveries\t${new Date(l.deadAt).toISOString()}\t${l.lastError}\n`);
          }
          return 0;
        }
      }
    } finally {
      await queue.close();
    }
  });
}
