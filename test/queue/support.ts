/**
 * Helpers shared by the queue test files: what a queue's directories hold, as an observer sees
 * them, and small promise utilities.
 */
import type { ZkSession } from '../../src/client/index.js';
import { NoNodeError } from '../../src/errors.js';

/** Children of `dir` as `observer` sees them (after a sync); none when it does not exist. */
export async function childrenOf(observer: ZkSession, dir: string): Promise<string[]> {
  try {
    await observer.sync(dir);
    return (await observer.getChildren(dir)).children.sort();
  } catch (err) {
    if (err instanceof NoNodeError) return [];
    throw err;
  }
}

/** Full paths of every item node of the queue at `path`, sorted. */
export async function itemPaths(observer: ZkSession, path: string): Promise<string[]> {
  const out: string[] = [];
  for (const p of await childrenOf(observer, `${path}/items`)) {
    for (const b of await childrenOf(observer, `${path}/items/${p}`)) {
      for (const i of await childrenOf(observer, `${path}/items/${p}/${b}`)) out.push(`${path}/items/${p}/${b}/${i}`);
    }
  }
  return out.sort();
}

/** The data of every item of the queue at `path`, as strings, sorted. */
export async function itemData(observer: ZkSession, path: string): Promise<string[]> {
  const paths = await itemPaths(observer, path);
  const data = await Promise.all(paths.map(async (p) => (await observer.getData(p)).data.toString()));
  return data.sort();
}

/** A promise with its resolve exposed. */
export function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** A buffer as a string, `null` kept. */
export const text = (b: Buffer | null): string | null => (b === null ? null : b.toString());

/** Does nothing (for `.catch`). */
export const noop = (): void => undefined;
