// PersistentNode against real Apache Curator (Debian's 5.4 jars, driven by
// test/java/CuratorNodeAgent): ours re-creates a node Curator deleted, Curator's PersistentNode
// re-creates one ours deleted; both on the same path adopt each other's node and take over when
// the other closes; protected names are recognised both ways. Nothing is left. Without Java or
// the Curator jars these tests fail (locateCurator names the package), never skip.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PersistentNode } from '../../src/nodes/index.js';
import { parseNode } from '../../src/driver/names.js';
import { waitFor } from '../../src/testing/index.js';
import { CuratorNodeAgent } from '../java/curator-node.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();
let agent: CuratorNodeAgent;
after(async () => {
  await agent?.close();
});

const hex = (id: bigint): string => `0x${id.toString(16)}`;

async function ownerIs(path: string, session: string): Promise<void> {
  await waitFor(async () => {
    const stat = await fx.observer.exists(path);
    return stat !== null && hex(stat.ephemeralOwner) === session;
  }, { timeoutMs: 15000, message: `${path} owned by ${session}` });
}

async function dataIs(path: string, data: string): Promise<void> {
  await waitFor(async () => (await fx.observer.getData(path).catch(() => undefined))?.data.toString() === data, { timeoutMs: 15000, message: `${path} holds ${data}` });
}

describe('PersistentNode with Curator PersistentNode', () => {
  before(async () => {
    agent ??= await CuratorNodeAgent.start(fx.server.connectString);
  });

  test('ours re-creates a node Curator deleted; Curator re-creates one ours deleted', async () => {
    const base = uniquePath('interop-pn');
    const [s] = await fx.sessionsApart(1);
    assert.ok(s);
    await using ours = new PersistentNode(s, `${base}/ours`, { data: 'o' });
    ours.start();
    await ours.waitForInitialCreate({ timeoutMs: 10000 });
    const back = new Promise<string>((resolve) => ours.once('created', resolve));
    await agent.send('delete', `${base}/ours`);
    assert.equal(await back, `${base}/ours`);
    await ownerIs(`${base}/ours`, hex(s.sessionId));
    await dataIs(`${base}/ours`, 'o');

    assert.equal(await agent.startNode('c1', 'EPHEMERAL', false, `${base}/theirs`, 'c'), `${base}/theirs`);
    const again = agent.nextCreated('c1');
    await s.delete(`${base}/theirs`);
    assert.equal(await again, `${base}/theirs`);
    await ownerIs(`${base}/theirs`, agent.sessionId);
    await agent.send('close', 'c1');
    await ours.close();
    assert.deepEqual(await fx.children(base), []);
  });

  test('both on one path: each adopts the other\'s node, and takes over when the other closes', async () => {
    const base = uniquePath('interop-pn-shared');
    const path = `${base}/shared`;
    const [s] = await fx.sessionsApart(1);
    assert.ok(s);
    await agent.startNode('c2', 'EPHEMERAL', false, path, 'curator');
    await ownerIs(path, agent.sessionId);
    // Ours finds Curator's node: adopted, our data written onto it.
    const ours = new PersistentNode(s, path, { data: 'ours' });
    ours.start();
    await ours.waitForInitialCreate({ timeoutMs: 10000 });
    assert.equal(ours.actualPath, path);
    await dataIs(path, 'ours');
    // Curator closes (deletes it): ours creates its own.
    const mine = new Promise<string>((resolve) => ours.once('created', resolve));
    await agent.send('close', 'c2');
    await mine;
    await ownerIs(path, hex(s.sessionId));
    await dataIs(path, 'ours');
    // A new Curator node on it adopts ours (Curator writes its data); ours closes: Curator's comes.
    const curatorCreated = agent.nextCreated('c3');
    await agent.startNode('c3', 'EPHEMERAL', false, path, 'curator2');
    await dataIs(path, 'curator2');
    await ours.close();
    await curatorCreated;
    await ownerIs(path, agent.sessionId);
    await agent.send('close', 'c3');
    assert.deepEqual(await fx.children(base), []);
    await fx.waitNoWatches(s, base);
  });

  test('protected names are recognised both ways; a protected Curator node ours deleted comes back protected', async () => {
    const base = uniquePath('interop-pn-protected');
    const [s] = await fx.sessionsApart(1);
    assert.ok(s);
    await using ours = new PersistentNode(s, `${base}/n-`, { mode: 'EPHEMERAL_SEQUENTIAL', protection: true });
    ours.start();
    await ours.waitForInitialCreate({ timeoutMs: 10000 });
    const ourName = (ours.actualPath as string).slice(base.length + 1);
    const ourParsed = parseNode(ourName, ['n-']);
    assert.ok(ourParsed?.uuid, ourName);
    assert.equal(await agent.send('protected', ourName), `true ${ourParsed.uuid}`);

    const theirPath = await agent.startNode('c4', 'EPHEMERAL_SEQUENTIAL', true, `${base}/c-`, 'x');
    const theirName = theirPath.slice(base.length + 1);
    const [isProtected, theirUuid] = (await agent.send('protected', theirName)).split(' ');
    assert.equal(isProtected, 'true');
    assert.equal(parseNode(theirName, ['c-'])?.uuid, theirUuid);
    const again = agent.nextCreated('c4');
    await s.delete(theirPath);
    const recreated = await again;
    assert.ok(recreated.slice(base.length + 1).startsWith('_c_'), `Curator re-created it protected: ${recreated}`);
    await ownerIs(recreated, agent.sessionId);
    await agent.send('close', 'c4');
    await ours.close();
    assert.deepEqual(await fx.children(base), []);
  });
});
