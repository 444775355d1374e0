/**
 * The client side of SASL DIGEST-MD5 (RFC 2831), quality of protection `auth` only (no
 * integrity or confidentiality layer): what ZooKeeper's Java client does with a JAAS `Client`
 * section holding a username and password. Pure: no I/O, so it is tested on its own.
 *
 * @internal
 * @module
 */
import { createHash, randomBytes } from 'node:crypto';

/** What a DIGEST-MD5 exchange needs. */
export interface DigestMd5Credentials {
  username: string;
  password: string;
  /** The service, first half of the digest-uri (ZooKeeper: `zookeeper`). */
  serviceName: string;
  /** The server name, second half of the digest-uri (ZooKeeper: `zk-sasl-md5`). */
  serverHost: string;
}

/** Why an exchange failed locally (a malformed or unexpected server token). */
export class DigestMd5Error extends Error {}

/** Directives of a challenge: each name (lower case) with every value it was given. */
export type Directives = Map<string, string[]>;

/**
 * Parses `name=value, name="quoted \" value", ...` (RFC 2831 section 7.1: tokens or quoted
 * strings, separated by commas and optional white space; a name may repeat, e.g. `realm`).
 * @throws DigestMd5Error for a malformed token.
 */
export function parseDirectives(text: string): Directives {
  const out: Directives = new Map();
  let i = 0;
  const skip = (): void => {
    while (i < text.length && /[\s,]/.test(text[i] as string)) i++;
  };
  skip();
  while (i < text.length) {
    const eq = text.indexOf('=', i);
    if (eq < 0) throw new DigestMd5Error(`malformed directive at ${JSON.stringify(text.slice(i, i + 20))}`);
    const name = text.slice(i, eq).trim().toLowerCase();
    if (!/^[a-z0-9-]+$/.test(name)) throw new DigestMd5Error(`malformed directive name ${JSON.stringify(name)}`);
    i = eq + 1;
    while (text[i] === ' ' || text[i] === '\t') i++;
    let value = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new DigestMd5Error(`unterminated quoted value of ${name}`);
        const c = text[i++] as string;
        if (c === '"') break;
        if (c === '\\' && i < text.length) value += text[i++];
        else value += c;
      }
    } else {
      const end = text.indexOf(',', i);
      value = text.slice(i, end < 0 ? text.length : end).trim();
      i = end < 0 ? text.length : end;
    }
    const list = out.get(name) ?? [];
    list.push(value);
    out.set(name, list);
    skip();
  }
  return out;
}

/** A quoted-string value (RFC 2831: `"` and `\` escaped with `\`). */
function quote(s: string): string {
  return `"${s.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

function md5(...parts: (string | Buffer)[]): Buffer {
  const h = createHash('md5');
  for (const p of parts) h.update(p);
  return h.digest();
}

function single(d: Directives, name: string): string | undefined {
  const v = d.get(name);
  if (v && v.length > 1) throw new DigestMd5Error(`the server's challenge has ${v.length} ${name} directives`);
  return v?.[0];
}

/**
 * One DIGEST-MD5 exchange (one per connection): {@link respond} answers the server's challenge,
 * {@link verify} checks the server's `rspauth` (mutual authentication).
 */
export class DigestMd5Client {
  private expected: string | undefined;
  private done = false;

  constructor(
    private readonly credentials: DigestMd5Credentials,
    /** The client nonce; random unless a test fixes it. */
    private readonly cnonce = randomBytes(24).toString('base64'),
  ) {}

  /** Whether the server's `rspauth` was verified. */
  get complete(): boolean {
    return this.done;
  }

  /**
   * The response to the server's first challenge (`digest-challenge`).
   * @throws DigestMd5Error when the challenge is malformed or asks for what this client lacks.
   */
  respond(challenge: Buffer): Buffer {
    if (this.expected !== undefined) throw new DigestMd5Error('the server sent a second challenge');
    const d = parseDirectives(challenge.toString('utf8'));
    const nonce = single(d, 'nonce');
    if (nonce === undefined || nonce === '') throw new DigestMd5Error('the challenge has no nonce (does the server run SASL at all?)');
    const algorithm = single(d, 'algorithm');
    if (algorithm?.toLowerCase() !== 'md5-sess') throw new DigestMd5Error(`the challenge asks for algorithm ${JSON.stringify(algorithm)}, not md5-sess`);
    const qops = (single(d, 'qop') ?? 'auth').split(',').map((q) => q.trim().toLowerCase());
    if (!qops.includes('auth')) throw new DigestMd5Error(`the server offers only qop ${qops.join(',')}; this client does auth only (no integrity or confidentiality layer)`);
    const utf8 = single(d, 'charset')?.toLowerCase() === 'utf-8';
    // The Java client takes the first realm the server offers (its callback keeps the default).
    const realm = d.get('realm')?.[0] ?? '';
    const { username, password } = this.credentials;
    const encode = (s: string): Buffer => {
      // Without charset=utf-8 the strings are ISO 8859-1 (RFC 2831 section 2.1.2.1).
      if (!utf8 && [...s].some((c) => (c.codePointAt(0) ?? 0) > 0xff)) throw new DigestMd5Error('the server does not accept UTF-8 and the username or password has characters beyond ISO 8859-1');
      return Buffer.from(s, utf8 ? 'utf8' : 'latin1');
    };
    const digestUri = `${this.credentials.serviceName}/${this.credentials.serverHost}`;
    const nc = '00000001';
    const a1 = Buffer.concat([md5(encode(username), ':', encode(realm), ':', encode(password)), Buffer.from(`:${nonce}:${this.cnonce}`, 'utf8')]);
    const ha1 = md5(a1).toString('hex');
    const kd = (a2: string): string => md5(`${ha1}:${nonce}:${nc}:${this.cnonce}:auth:${md5(a2).toString('hex')}`).toString('hex');
    this.expected = kd(`:${digestUri}`);
    const fields = [
      ...(utf8 ? ['charset=utf-8'] : []),
      `username=${quote(username)}`,
      `realm=${quote(realm)}`,
      `nonce=${quote(nonce)}`,
      `nc=${nc}`,
      `cnonce=${quote(this.cnonce)}`,
      `digest-uri=${quote(digestUri)}`,
      'maxbuf=65536',
      `response=${kd(`AUTHENTICATE:${digestUri}`)}`,
      'qop=auth',
    ];
    return Buffer.from(fields.join(','), utf8 ? 'utf8' : 'latin1');
  }

  /**
   * Checks the server's final token (`rspauth=...`): it proves the server knows the password too.
   * @throws DigestMd5Error when it is missing or wrong.
   */
  verify(token: Buffer): void {
    if (this.expected === undefined) throw new DigestMd5Error('the server sent rspauth before a challenge');
    const rspauth = single(parseDirectives(token.toString('utf8')), 'rspauth');
    if (rspauth === undefined) throw new DigestMd5Error('the server sent no rspauth');
    if (rspauth.toLowerCase() !== this.expected) throw new DigestMd5Error('the server failed mutual authentication (wrong rspauth): it does not know this password');
    this.done = true;
  }
}
