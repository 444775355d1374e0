// What the README and package.json say is supported and tested stays true: they agree with
// each other, the ZooKeeper the tests run is a version the README calls tested, and this Node
// is one package.json accepts.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { LOOPBACK, srvr, TestingServer } from '../src/testing/index.js';

// From build/test/versions.test.js up to the repository.
const REPO = fileURLToPath(new URL('../..', import.meta.url));
const pkg = JSON.parse(readFileSync(join(REPO, 'package.json'), 'utf8')) as { description: string; engines: { node: string } };
const readme = readFileSync(join(REPO, 'README.md'), 'utf8');

/** The cells of the README's "Supported versions" row that starts with `name`. */
function row(name: string): { supported: string; tested: string } {
  const section = readme.slice(readme.indexOf('## Supported versions'));
  const line = section.split('\n').find((l) => l.startsWith(`| ${name} |`));
  assert.ok(line, `the README's supported versions table has a ${name} row`);
  const [, supported = '', tested = ''] = line.split('|').map((c) => c.trim()).filter((c, i, all) => i > 0 && i < all.length - 1);
  return { supported, tested };
}

describe('supported versions', () => {
  let server: TestingServer;
  before(async () => {
    server = await TestingServer.start();
  });
  after(async () => {
    await server?.close();
  });

  it('Node: the README says what engines says, and this Node satisfies it', () => {
    const min = /^>=(\d+)$/.exec(pkg.engines.node)?.[1];
    assert.ok(min, `engines.node is a lower bound: ${pkg.engines.node}`);
    assert.equal(row('Node.js').supported, `${min} and later (\`engines\` in package.json)`);
    assert.match(pkg.description, new RegExp(`Node\\.js ${min}\\+`));
    assert.ok(Number(process.versions.node.split('.')[0]) >= Number(min), `Node ${process.versions.node} is below engines ${pkg.engines.node}`);
  });

  it('ZooKeeper: package.json and the README give the same range, and the server the tests run is the tested version', async () => {
    const { supported, tested } = row('ZooKeeper server');
    const range = /^(\d+\.\d+) to (\d+\.\d+)$/.exec(supported);
    assert.ok(range, `a range: ${supported}`);
    assert.match(pkg.description, new RegExp(`ZooKeeper ${range[1]!.replace('.', '\\.')}-${range[2]!.replace('.', '\\.')} servers`));
    const version = (await srvr(LOOPBACK, server.port))?.fields['Zookeeper version'] ?? '';
    const minor = /^(\d+\.\d+)\./.exec(version)?.[1];
    assert.ok(minor, `srvr reports a version: ${version}`);
    assert.ok(tested.startsWith(`${minor}:`), `the README says tested "${tested}"; the tests run ZooKeeper ${version}`);
    const at = (v: string): number => Number(v.split('.')[0]) * 1000 + Number(v.split('.')[1]);
    assert.ok(at(minor) >= at(range[1]!) && at(minor) <= at(range[2]!), `${minor} is within ${supported}`);
  });
});
