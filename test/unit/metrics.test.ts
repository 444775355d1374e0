// The prom-client adapter's mapping, without a server: contract-shaped messages published on the
// channels the library publishes on, then the registry's series read back.
import assert from 'node:assert/strict';
import { channel, tracingChannel } from 'node:diagnostics_channel';
import { describe, test } from 'node:test';
import * as promClient from 'prom-client';
import { CHANNELS, TRACING_CHANNELS, type AcquireContext } from '../../src/observability/channels.js';
import { prometheusMetrics } from '../../src/metrics/index.js';

const ctx = (over: Partial<AcquireContext> = {}): AcquireContext => ({
  recipe: 'mutex', mode: 'exclusive', path: '/locks/orders/42', participantId: 'p', sessionId: 1n,
  timeoutMs: undefined, nonblocking: false, leases: 1, ...over,
});

async function value(registry: promClient.Registry, name: string, labels: Record<string, string>): Promise<number | undefined> {
  const base = name.replace(/_(count|sum)$/, '');
  const m = await (registry.getSingleMetric(name) ?? registry.getSingleMetric(base))?.get();
  return m?.values.find((v) => ((v as { metricName?: string }).metricName ?? name) === name && Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value;
}

describe('prometheusMetrics', () => {
  test('acquisitions, holds, losses and sessions map to their series; paths only through label()', async () => {
    const registry = new promClient.Registry();
    const metrics = prometheusMetrics({ client: promClient, registry, label: (p) => p.replace(/\/[^/]+$/, '/:id') });
    try {
      const t = tracingChannel<AcquireContext, AcquireContext>(TRACING_CHANNELS.mutexAcquire);
      const c = ctx();
      await t.tracePromise(async () => {
        assert.equal(await value(registry, 'zk_recipes_waiting', { recipe: 'mutex', path: '/locks/orders/:id' }), 1);
        Object.assign(c, { outcome: 'acquired', waitMs: 250 });
      }, c);
      assert.equal(await value(registry, 'zk_recipes_waiting', { recipe: 'mutex' }), 0);
      assert.equal(await value(registry, 'zk_recipes_acquire_duration_seconds_count', { outcome: 'acquired' }), 1);
      assert.equal(await value(registry, 'zk_recipes_acquire_duration_seconds_sum', { outcome: 'acquired' }), 0.25);
      const timedOut = ctx();
      await assert.rejects(t.tracePromise(async () => {
        Object.assign(timedOut, { outcome: 'timeout', waitMs: 10 });
        throw new Error('timeout');
      }, timedOut));
      // error and asyncEnd both fire for a rejection: counted once.
      assert.equal(await value(registry, 'zk_recipes_acquire_duration_seconds_count', { outcome: 'timeout' }), 1);
      assert.equal(await value(registry, 'zk_recipes_waiting', { recipe: 'mutex' }), 0);

      const base = { recipe: 'mutex', mode: 'exclusive', path: '/locks/orders/42', nodePath: '/locks/orders/42/n', fencingToken: 7n, sessionId: 1n };
      channel(CHANNELS.lockGranted).publish({ ...base, participantId: 'p', waitMs: 1 });
      assert.equal(await value(registry, 'zk_recipes_held', { recipe: 'mutex' }), 1);
      channel(CHANNELS.lockLost).publish({ ...base, reason: 'session', error: new Error('lost'), holdMs: 2000 });
      assert.equal(await value(registry, 'zk_recipes_held', { recipe: 'mutex' }), 0);
      assert.equal(await value(registry, 'zk_recipes_lock_lost_total', { reason: 'session', path: '/locks/orders/:id' }), 1);
      assert.equal(await value(registry, 'zk_recipes_hold_duration_seconds_sum', { recipe: 'mutex' }), 2);

      channel(CHANNELS.sessionState).publish({ sessionId: 0n, state: 'CONNECTING', previous: 'CONNECTING', connectString: 'x' });
      channel(CHANNELS.sessionState).publish({ sessionId: 5n, state: 'CONNECTED', previous: 'CONNECTING', connectString: 'x' });
      assert.equal(await value(registry, 'zk_recipes_sessions', { state: 'CONNECTED' }), 1);
      assert.equal(await value(registry, 'zk_recipes_sessions', { state: 'CONNECTING' }), 0);

      metrics.trackQueue({ path: '/q/jobs', size: async () => 3 });
      assert.equal(await value(registry, 'zk_recipes_queue_depth', { queue: '/q/:id' }), 3);
    } finally {
      metrics.close();
    }
  });

  test('twice into one registry does not throw; close unsubscribes; no path label without label()', async () => {
    const registry = new promClient.Registry();
    const a = prometheusMetrics({ client: promClient, registry });
    const b = prometheusMetrics({ client: promClient, registry });
    b.close();
    a.close();
    channel(CHANNELS.lockGranted).publish({ recipe: 'mutex', mode: 'exclusive', path: '/x/y', nodePath: '/x/y/n', fencingToken: 1n, sessionId: 1n, participantId: 'p', waitMs: 1 });
    assert.equal(await value(registry, 'zk_recipes_held', { recipe: 'mutex' }), undefined);
    assert.doesNotMatch(await registry.metrics(), /\/x\/y/);
    assert.equal(promClient.register.getSingleMetric('zk_recipes_held'), undefined);
  });

  test('a handler that fails does not throw into the publisher', () => {
    const registry = new promClient.Registry();
    const m = prometheusMetrics({ client: promClient, registry, label: () => { throw new Error('bad hook'); } });
    try {
      channel(CHANNELS.lockMiss).publish({ recipe: 'mutex', mode: 'exclusive', path: '/x', participantId: 'p', sessionId: 1n });
    } finally {
      m.close();
    }
  });
});
