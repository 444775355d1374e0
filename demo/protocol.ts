// Messages between the demo's conductor (index.ts) and its worker processes (worker.ts).

/** Conductor to worker: run one scene, end the leader scene, or exit. */
export type Command =
  | { scene: 'mutex' | 'semaphore' | 'rwlock' | 'leader'; base: string }
  | { scene: 'queue'; base: string; producer: boolean }
  | { scene: 'endLeader' }
  | { scene: 'stop' };

/** Worker to conductor: something happened, or the scene is over for this worker. */
export type Report = { kind: 'event'; text: string; leader?: boolean } | { kind: 'done' } | { kind: 'ready' };
