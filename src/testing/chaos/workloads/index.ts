/**
 * The workload of each recipe kind.
 *
 * @internal
 * @module
 */
import type { WorkloadKind } from '../history.js';
import { atomicWorkload } from './atomic.js';
import { doubleBarrierWorkload } from './barrier.js';
import { discoveryWorkload } from './discovery.js';
import { cacheWorkload } from './cache.js';
import { groupWorkload } from './group.js';
import type { Workload } from './common.js';
import { latchWorkload, selectorWorkload } from './leader.js';
import { persistentNodeWorkload } from './persistent-node.js';
import { mutexWorkload, rwlockWorkload, semaphoreWorkload } from './locks.js';
import { multiLockWorkload } from './multilock.js';
import { consumeWorkload, takeWorkload } from './queue.js';
import { sharedCountWorkload } from './shared.js';
import { zkrWorkload } from './zkr.js';

/** The client-side loop of every workload kind. */
export const WORKLOADS: Readonly<Record<WorkloadKind, Workload>> = {
  mutex: mutexWorkload,
  semaphore: semaphoreWorkload,
  rwlock: rwlockWorkload,
  latch: latchWorkload,
  selector: selectorWorkload,
  'queue-at-most-once': takeWorkload,
  'queue-at-least-once': consumeWorkload,
  cache: cacheWorkload,
  zkr: zkrWorkload,
  'double-barrier': doubleBarrierWorkload,
  'shared-count': sharedCountWorkload,
  'persistent-node': persistentNodeWorkload,
  atomic: atomicWorkload,
  group: groupWorkload,
  multilock: multiLockWorkload,
  discovery: discoveryWorkload,
};
