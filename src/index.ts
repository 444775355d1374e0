/**
 * zk-recipes: ZooKeeper coordination recipes for Node.js (mutex, semaphore, read-write lock,
 * leader election, queue) over one session layer. Node layout is compatible with Apache
 * Curator, so Java and Node services can share lock paths.
 *
 * Test utilities (real ZooKeeper servers, ensembles, a fault-injecting proxy, forced session
 * expiry) live in the `zk-recipes/testing` export.
 *
 * @packageDocumentation
 */
export * from './errors.js';
export * from './client/index.js';
export * from './driver/index.js';
export * from './mutex/index.js';
export * from './semaphore/index.js';
export * from './rwlock/index.js';
export * from './leader/index.js';
export * from './queue/index.js';
