// DIGEST-MD5 (RFC 2831) without a server: the RFC's own example exchange, the parser, and the
// refusals of what this client does not do.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DigestMd5Client, DigestMd5Error, parseDirectives } from '../../src/client/digest-md5.js';
import { checkSasl, saslAcl } from '../../src/client/sasl.js';
import { InvalidArgumentError, ZkSession } from '../../src/index.js';

// RFC 2831 section 4: chris / secret at imap/elwood.innosoft.com.
const RFC_CHALLENGE = 'realm="elwood.innosoft.com",nonce="OA6MG9tEQGm2hh",qop="auth",algorithm=md5-sess,charset=utf-8';
const rfcClient = (): DigestMd5Client => new DigestMd5Client({ username: 'chris', password: 'secret', serviceName: 'imap', serverHost: 'elwood.innosoft.com' }, 'OA6MHXh6VqTrRk');

describe('DIGEST-MD5', () => {
  test("RFC 2831's example: the response digest and the server's rspauth", () => {
    const client = rfcClient();
    const response = parseDirectives(client.respond(Buffer.from(RFC_CHALLENGE)).toString());
    assert.deepEqual(response.get('response'), ['d388dad90d4bbd760a152321f2143af7']);
    assert.deepEqual(response.get('username'), ['chris']);
    assert.deepEqual(response.get('realm'), ['elwood.innosoft.com']);
    assert.deepEqual(response.get('digest-uri'), ['imap/elwood.innosoft.com']);
    assert.deepEqual(response.get('nc'), ['00000001']);
    assert.deepEqual(response.get('qop'), ['auth']);
    assert.deepEqual(response.get('charset'), ['utf-8']);
    assert.equal(client.complete, false);
    client.verify(Buffer.from('rspauth=ea40f60335c427b5527b84dbabcdfffd'));
    assert.equal(client.complete, true);
  });

  test('a wrong rspauth fails mutual authentication', () => {
    const client = rfcClient();
    client.respond(Buffer.from(RFC_CHALLENGE));
    assert.throws(() => client.verify(Buffer.from('rspauth=00000000000000000000000000000000')), /mutual authentication/);
    assert.throws(() => client.verify(Buffer.from('')), /no rspauth/);
  });

  test('the parser: quoted strings with escapes, tokens, repeated names, white space', () => {
    const d = parseDirectives(' realm="a\\"b" , realm="c",qop="auth,auth-int", maxbuf=1024 ,');
    assert.deepEqual(d.get('realm'), ['a"b', 'c']);
    assert.deepEqual(d.get('qop'), ['auth,auth-int']);
    assert.deepEqual(d.get('maxbuf'), ['1024']);
    assert.throws(() => parseDirectives('realm="open'), DigestMd5Error);
    assert.throws(() => parseDirectives('justtext'), DigestMd5Error);
  });

  test('quotes and backslashes in the username are escaped in the response', () => {
    const client = new DigestMd5Client({ username: 'a"b\\c', password: 'p', serviceName: 'zookeeper', serverHost: 'zk-sasl-md5' });
    const response = parseDirectives(client.respond(Buffer.from('realm="zk-sasl-md5",nonce="n",qop="auth",charset=utf-8,algorithm=md5-sess')).toString());
    assert.deepEqual(response.get('username'), ['a"b\\c']);
  });

  test('refuses a challenge it cannot answer: no nonce (a server without SASL), no auth qop, another algorithm, a second challenge', () => {
    const creds = { username: 'u', password: 'p', serviceName: 'zookeeper', serverHost: 'zk-sasl-md5' };
    assert.throws(() => new DigestMd5Client(creds).respond(Buffer.alloc(0)), /no nonce/);
    assert.throws(() => new DigestMd5Client(creds).respond(Buffer.from('nonce="n",qop="auth-conf",algorithm=md5-sess')), /qop auth-conf/);
    assert.throws(() => new DigestMd5Client(creds).respond(Buffer.from('nonce="n",algorithm=md5')), /md5-sess/);
    const twice = new DigestMd5Client(creds);
    twice.respond(Buffer.from('nonce="n",algorithm=md5-sess'));
    assert.throws(() => twice.respond(Buffer.from('nonce="n",algorithm=md5-sess')), /second challenge/);
    // Without charset=utf-8, strings are ISO 8859-1: a password beyond it cannot be sent.
    assert.throws(() => new DigestMd5Client({ ...creds, password: 'ключ' }).respond(Buffer.from('nonce="n",algorithm=md5-sess')), /ISO 8859-1/);
  });
});

describe('the sasl option', () => {
  test('GSSAPI, PLAIN and others are refused when the session is created, naming what is supported', () => {
    for (const mechanism of ['GSSAPI', 'PLAIN', 'SCRAM-SHA-256', undefined]) {
      assert.throws(
        () => new ZkSession('127.0.0.1:1', { sasl: { mechanism, username: 'u', password: 'p' } as never }),
        (err: unknown) => err instanceof InvalidArgumentError && /only 'DIGEST-MD5'/.test(err.message) && (mechanism !== 'GSSAPI' || /Kerberos/.test(err.message)),
      );
    }
  });

  test('bad credentials and unknown keys are refused; defaults are filled in', () => {
    assert.throws(() => checkSasl({ mechanism: 'DIGEST-MD5', username: '', password: 'p' }), /sasl.username/);
    assert.throws(() => checkSasl({ mechanism: 'DIGEST-MD5', username: 'u' }), /sasl.password/);
    assert.throws(() => checkSasl({ mechanism: 'DIGEST-MD5', username: 'u', password: 'p', serviceName: 'a/b' }), /serviceName/);
    assert.throws(() => checkSasl({ mechanism: 'DIGEST-MD5', username: 'u', password: 'p', user: 'x' }), /unknown option 'user'/);
    assert.throws(() => checkSasl('DIGEST-MD5'), InvalidArgumentError);
    assert.deepEqual(checkSasl({ mechanism: 'digest-md5', username: 'u', password: 'p' }), { mechanism: 'DIGEST-MD5', username: 'u', password: 'p', serviceName: 'zookeeper', serverHost: 'zk-sasl-md5' });
  });

  test('saslAcl', () => {
    assert.deepEqual(saslAcl('alice'), { scheme: 'sasl', id: 'alice', perms: 31 });
    assert.deepEqual(saslAcl('bob', 1), { scheme: 'sasl', id: 'bob', perms: 1 });
    assert.throws(() => saslAcl(''), InvalidArgumentError);
    assert.throws(() => saslAcl('a', 64), InvalidArgumentError);
  });
});
