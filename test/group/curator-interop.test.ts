// GroupMember against real Apache Curator GroupMember (Debian's 5.4 jars, driven by
// test/java/CuratorGroupAgent): one layout, so Curator's members see ours with our payload and
// ours see Curator's; payload changes and leaves are seen both ways; nothing is left. Without
// Java or the Curator jars these tests fail (locateCurator names the package), never skip.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { GroupMember, type GroupView } from '../../src/group/index.js';
import { waitFor } from '../../src/testing/index.js';
import { CuratorGroupAgent } from '../java/curator-group.js';
import { ServerFixture, uniquePath } from '../helpers.js';

const fx = new ServerFixture();
let agent: CuratorGroupAgent;
after(async () => {
  await agent?.close();
});

const show = (view: ReadonlyMap<string, Buffer>): string =>
  [...view]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([id, p]) => `${id}=${p.toString()}`)
    .join(',');

/** Waits until Curator's member `id` sees exactly `expected` (`memberId=payload`, sorted, comma-joined). */
async function curatorSees(id: string, expected: string): Promise<void> {
  let last = '';
  await waitFor(
    async () => {
      last = show(await agent.members(id));
      return last === expected;
    },
    { timeoutMs: 15_000, intervalMs: 50, message: `Curator's ${id} sees ${expected} (saw ${last})` },
  );
}

async function oursSees(member: GroupMember, expected: string): Promise<void> {
  await waitFor(() => show(member.currentMembers() as GroupView) === expected, { timeoutMs: 15_000, message: `${member.memberId} sees ${expected} (saw ${show(member.currentMembers())})` });
}

describe('GroupMember with Curator GroupMember', () => {
  before(async () => {
    agent ??= await CuratorGroupAgent.start(fx.server.connectString);
  });

  test('Curator sees ours with our payload and ours sees Curator; changes and leaves both ways', async () => {
    const path = uniquePath('interop-group');
    const [s] = await fx.sessionsApart(1);
    await agent.join('j', path, 'java-1', 'from-curator');
    const ours = new GroupMember(s!, path, 'node-1', 'from-node');
    await ours.start({ timeoutMs: 10_000 });
    await oursSees(ours, 'java-1=from-curator,node-1=from-node');
    await curatorSees('j', 'java-1=from-curator,node-1=from-node');

    // Payload changes, both ways.
    await ours.setThisData('node-moved');
    await curatorSees('j', 'java-1=from-curator,node-1=node-moved');
    await agent.setData('j', 'curator-moved');
    await oursSees(ours, 'java-1=curator-moved,node-1=node-moved');

    // A second Curator member joins, then leaves: ours sees both.
    await agent.join('k', path, 'java-2', '');
    await oursSees(ours, 'java-1=curator-moved,java-2=,node-1=node-moved');
    await agent.leave('k');
    await oursSees(ours, 'java-1=curator-moved,node-1=node-moved');

    // Ours leaves: Curator sees it go.
    await ours.close();
    await curatorSees('j', 'java-1=curator-moved');
    await agent.leave('j');
    assert.deepEqual(await fx.children(path), []);
    await fx.waitNoWatches(s!, path);
  });

  test("a Curator member's session ends: ours sees it leave", async () => {
    const path = uniquePath('interop-group-exit');
    const [s] = await fx.sessionsApart(1);
    const other = await CuratorGroupAgent.start(fx.server.connectString);
    try {
      await other.join('x', path, 'java-x', 'x');
      await using ours = new GroupMember(s!, path, 'node-x');
      await ours.start({ timeoutMs: 10_000 });
      await oursSees(ours, 'java-x=x,node-x=');
      // Its client closes (quit): the ephemeral goes with its session.
      await other.close();
      await oursSees(ours, 'node-x=');
    } finally {
      await other.close();
    }
  });
});
