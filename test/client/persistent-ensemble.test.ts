// Persistent watches on a 3-member ensemble: a session behind a follower that dies moves to the
// other follower, which re-registers the watch (RESET) and goes on delivering; what changed in
// between is found by the read after RESET, since no member replays it.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { waitFor } from '../../src/testing/index.js';
import { ClusterFixture, uniquePath } from '../helpers.js';

const fx = new ClusterFixture();

describe('persistent watches on an ensemble', () => {
  test('the member a recursive watch was set on is killed: the watch is set again on another member, RESET, then every later change', async () => {
    const { victim, first, failOver } = await fx.behindTwoFollowers();
    const base = uniquePath('pw-ensemble');
    await fx.observer.mkdirp(base);
    const watch = await victim.addWatch(base, { recursive: true });
    const seen: string[] = [];
    watch.on('event', (e) => seen.push(`${e.type} ${e.path}`));
    watch.on('reset', () => seen.push('RESET'));
    await fx.observer.create(`${base}/before`);
    await waitFor(() => seen.length === 1, { timeoutMs: 5000, message: `the first event: ${JSON.stringify(seen)}` });
    await fx.cluster.kill(first);
    // Written while the session reaches no member: not replayed, found by the read after RESET.
    await fx.observer.create(`${base}/between`);
    failOver();
    await waitFor(() => seen.includes('RESET'), { timeoutMs: 10_000, message: `RESET: ${JSON.stringify(seen)}` });
    const { children } = await victim.getChildren(base);
    assert.deepEqual(children.sort(), ['before', 'between']);
    await fx.observer.setData(`${base}/between`, 'x');
    await fx.observer.delete(`${base}/before`);
    await waitFor(() => seen.length === 4, { timeoutMs: 5000, message: `after RESET: ${JSON.stringify(seen)}` });
    assert.deepEqual(seen, [`NODE_CREATED ${base}/before`, 'RESET', `NODE_DATA_CHANGED ${base}/between`, `NODE_DELETED ${base}/before`]);
    await watch.close();
    await fx.cluster.restart(first);
    await fx.waitNoWatches(victim, base);
    await fx.observer.deleteRecursive(base);
  });
});
