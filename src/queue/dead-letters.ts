/**
 * Dead letters: items moved out of the queue after too many deliveries. Each is
 * `<queue>/dead/<priority>.<bucket>.<item>` (data: the payload) with a child `info` (JSON: the
 * item's path, its delivery count, the last error, when). Listed in put order; re-queued as a new
 * item (one transaction with the letter's deletion, exactly once like any put) or discarded.
 *
 * @internal
 * @module
 */
import type { ZkSession } from '../client/session.js';
import { ConnectionLossError, NoNodeError, QueueLayoutError } from '../errors.js';
import { raceAbort } from '../util/abort.js';
import { untilAnswered } from './backoff.js';
import type { DeadLetterInfo } from './claims.js';
import { itemSeq, MAX_LISTING, parseBucket, priorityOfKey, PRIORITY_RANGE } from './layout.js';

/** An item moved to a queue's dead letters after too many deliveries. @group Recipes */
export interface DeadLetter {
  /** Full path of the dead-letter node (pass the letter to `requeueDeadLetter` or `discardDeadLetter`). */
  readonly path: string;
  /** The item's path when it was moved. */
  readonly itemPath: string;
  /** The item's priority. */
  readonly priority: number;
  /** The item's data. */
  readonly data: Buffer;
  /** How many times it was delivered, the last one included. */
  readonly deliveries: number;
  /** The last handler error (`name: message`), or why it was moved without one. */
  readonly lastError: string;
  /** When it was moved, epoch ms. */
  readonly deadAt: number;
}

/** Sort key of a letter's name `p-<priority>.b-<bucket>.i-<id>-<seq>`: put order. */
function order(name: string): [number, number, number] {
  const [, b, i] = name.split('.');
  return [priorityOfKey(name) ?? PRIORITY_RANGE.max + 1, parseBucket(b ?? '') ?? 0, itemSeq(i ?? '') ?? 0];
}

/** Reads and writes one queue's dead letters. */
export class DeadLetters {
  constructor(
    private readonly session: ZkSession,
    /** `<queue>/dead`. */
    readonly dir: string,
  ) {}

  /** Up to `limit` dead letters, oldest first (by priority, then put order). */
  async list(limit: number, signal: AbortSignal): Promise<DeadLetter[]> {
    const read = <T>(fn: () => Promise<T>): Promise<T> => untilAnswered(this.session, signal, () => raceAbort(fn(), signal));
    const stat = await read(() => this.session.exists(this.dir));
    if (!stat) return [];
    if (stat.numChildren > MAX_LISTING) {
      throw new QueueLayoutError(`dead-letter directory ${this.dir} has ${stat.numChildren} children, more than can be listed safely (${MAX_LISTING}); discard some`, { path: this.dir });
    }
    let names: string[];
    try {
      names = (await read(() => this.session.getChildren(this.dir))).children.filter((n) => priorityOfKey(n) !== undefined);
    } catch (err) {
      if (err instanceof NoNodeError) return [];
      throw err;
    }
    names.sort((a, b) => {
      const [x, y] = [order(a), order(b)];
      return x[0] - y[0] || x[1] - y[1] || x[2] - y[2];
    });
    const letters = await Promise.all(names.slice(0, limit).map((name) => this.read(name, signal)));
    return letters.filter((l): l is DeadLetter => l !== undefined);
  }

  /** One letter, or undefined when it is gone (re-queued or discarded meanwhile). */
  private async read(name: string, signal: AbortSignal): Promise<DeadLetter | undefined> {
    const path = `${this.dir}/${name}`;
    try {
      const [payload, info] = await untilAnswered(this.session, signal, () =>
        raceAbort(Promise.all([this.session.getData(path), this.session.getData(`${path}/info`)]), signal),
      );
      const meta = parseInfo(info.data);
      return {
        path,
        itemPath: meta.item,
        priority: priorityOfKey(name) ?? PRIORITY_RANGE.default,
        data: payload.data,
        deliveries: meta.deliveries,
        lastError: meta.error,
        deadAt: meta.at,
      };
    } catch (err) {
      if (err instanceof NoNodeError) return undefined;
      throw err;
    }
  }

  /** The ops that delete a letter (in a re-queue's transaction, or alone). */
  deletion(letter: Pick<DeadLetter, 'path'>): { type: 'delete'; path: string }[] {
    return [
      { type: 'delete', path: `${letter.path}/info` },
      { type: 'delete', path: letter.path },
    ];
  }

  /** Deletes a letter; resolves to false when it was not there. Sent again after a lost reply. */
  async discard(letter: Pick<DeadLetter, 'path'>, signal: AbortSignal): Promise<boolean> {
    let resent = false;
    return untilAnswered(this.session, signal, async () => {
      try {
        await raceAbort(this.session.multi(this.deletion(letter)), signal);
        return true;
      } catch (err) {
        // After a lost reply, gone may mean deleted by us.
        if (err instanceof NoNodeError) return resent;
        if (err instanceof ConnectionLossError) resent = true;
        throw err;
      }
    });
  }
}

function parseInfo(data: Buffer): DeadLetterInfo {
  try {
    const v = JSON.parse(data.toString()) as Partial<DeadLetterInfo>;
    return {
      item: typeof v.item === 'string' ? v.item : '',
      deliveries: typeof v.deliveries === 'number' ? v.deliveries : 0,
      error: typeof v.error === 'string' ? v.error : '',
      at: typeof v.at === 'number' ? v.at : 0,
    };
  } catch {
    return { item: '', deliveries: 0, error: '', at: 0 };
  }
}
