// Messages between the demo's conductor (index.ts) and its worker processes (worker.ts).

/** Conductor to worker: run one scene (the queue's in two acts: put all, then take), end the leader scene, or exit. */
export type Command =
  | { scene: 'mutex' | 'semaphore' | 'rwlock' | 'leader' | 'queuePut' | 'queueTake'; base: string }
  | { scene: 'endLeader' }
  | { scene: 'stop' };

/**
 * Worker to conductor: something happened, the scene is over for this worker, it is connected
 * and ready, or it cannot go on (`text` says why, on one line; the worker then exits).
 */
export type Report = { kind: 'event'; text: string; leader?: boolean } | { kind: 'done' } | { kind: 'ready' } | { kind: 'failed'; text: string };
