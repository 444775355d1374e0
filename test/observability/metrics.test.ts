// zk-recipes/metrics on a real server: a prom-client registry fed by real recipes, read back
// after a contended run, a timeout, a miss and a lock lost by a forced session expiry.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as promClient from 'prom-client';
import { LockTimeoutError, Mutex } from '../../src/index.js';
import { prometheusMetrics } from '../../src/metrics/index.js';
import { expireSession, waitFor } from '../../src/testing/index.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();

/** The value of `name` with exactly these labels (0 when absent). */
async function value(registry: promClient.Registry, name: string, labels: Record<string, string>): Promise<number> {
  // A histogram's samples are listed under its own name, each with its metricName (`_count`, ...).
  const samples = (await registry.getMetricsAsJSON()).flatMap((m) => m.values.map((v) => ({ ...v, metricName: (v as { metricName?: string }).metricName ?? m.name })));
  const sample = samples.find((v) => v.metricName === name && Object.entries(labels).every(([k, l]) => String(v.labels[k]) === l) && Object.keys(v.labels).length === Object.keys(labels).length);
  return sample ? Number(sample.value) : 0;
}

test('real acquisitions: acquired, timeout and miss counts, hold times, held and waiting gauges, a lost lock by reason', async () => {
  const registry = new promClient.Registry();
  const metrics = prometheusMetrics({ client: promClient, registry, label: () => 'orders' });
  try {
    const path = uniquePath('metrics');
    const [a, b] = await fx.sessionsN(2);
    const ma = new Mutex(a!, path);
    const mb = new Mutex(b!, path);
    const ha = await ma.acquire();
    assert.equal(await value(registry, 'zk_recipes_held', { recipe: 'mutex', mode: 'exclusive', path: 'orders' }), 1);
    const waiting = mb.acquire({ timeoutMs: 10_000 });
    await waitFor(async () => (await value(registry, 'zk_recipes_waiting', { recipe: 'mutex', mode: 'exclusive', path: 'orders' })) === 1, { timeoutMs: 10_000, message: 'one waiting' });
    await ha.release();
    await (await waiting).release();
    const hc = await ma.acquire();
    await assert.rejects(mb.acquire({ timeoutMs: 200 }), LockTimeoutError);
    assert.equal(await mb.tryAcquire(), null);
    await hc.release();
    const count = (outcome: string): Promise<number> => value(registry, 'zk_recipes_acquire_duration_seconds_count', { recipe: 'mutex', mode: 'exclusive', outcome, path: 'orders' });
    assert.equal(await count('acquired'), 3);
    assert.equal(await count('timeout'), 1);
    assert.equal(await count('miss'), 1);
    assert.equal(await value(registry, 'zk_recipes_lock_miss_total', { recipe: 'mutex', mode: 'exclusive', path: 'orders' }), 1);
    assert.equal(await value(registry, 'zk_recipes_hold_duration_seconds_count', { recipe: 'mutex', mode: 'exclusive', path: 'orders' }), 3);
    assert.equal(await value(registry, 'zk_recipes_held', { recipe: 'mutex', mode: 'exclusive', path: 'orders' }), 0);
    assert.equal(await value(registry, 'zk_recipes_waiting', { recipe: 'mutex', mode: 'exclusive', path: 'orders' }), 0);

    const proxy = await fx.proxy();
    const victim = await fx.pool.connect(`127.0.0.1:${proxy.port}`, { sessionTimeoutMs: 4000 });
    const mv = new Mutex(victim, path);
    const hv = await mv.acquire();
    await expireSession(victim, proxy);
    await waitFor(() => hv.signal.aborted, { timeoutMs: 15_000, message: 'the lock lost' });
    assert.equal(await value(registry, 'zk_recipes_lock_lost_total', { recipe: 'mutex', reason: 'session', path: 'orders' }), 1);
    assert.equal(await value(registry, 'zk_recipes_held', { recipe: 'mutex', mode: 'exclusive', path: 'orders' }), 0);
    await Promise.all([ma.close(), mb.close(), mv.close()]);
  } finally {
    metrics.close();
  }
  // Nothing went to the global registry.
  assert.equal((await promClient.register.getMetricsAsJSON()).filter((m) => m.name.startsWith('zk_recipes_')).length, 0);
});
