// A bare-bones ZooKeeper wire client, only for testing the kit: it opens a session,
// creates persistent nodes and sets data watches, so four-letter words have
// sessions and watches to report. (Recipes use src/client, never this.)
import { connect, type Socket } from 'node:net';
import { withTimeout } from '../../src/testing/index.js';

const OP_CREATE = 1;
const OP_EXISTS = 3;
const OP_GET_DATA = 4;
const OP_CLOSE = -11;

/** ZooKeeper error codes this helper reports. */
export const ZOK = 0;
export const ZNONODE = -101;
export const ZNODEEXISTS = -110;

function int(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
}

function long(n: bigint): Buffer {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(n);
  return b;
}

function bytes(b: Buffer): Buffer {
  return Buffer.concat([int(b.length), b]);
}

function str(s: string): Buffer {
  return bytes(Buffer.from(s, 'utf8'));
}

function frame(body: Buffer): Buffer {
  return Buffer.concat([int(body.length), body]);
}

/** A raw session: `sessionId` as the server prints it (`0x...`), negotiated `timeoutMs`. */
export class RawSession {
  readonly #socket: Socket;
  readonly #pending = new Map<number, (err: number) => void>();
  #xid = 1;
  #buffer = Buffer.alloc(0);
  #onConnect: ((reply: Buffer) => void) | undefined;
  sessionId = '';
  timeoutMs = 0;

  private constructor(socket: Socket) {
    this.#socket = socket;
    socket.on('data', (chunk: Buffer) => this.#read(chunk));
    socket.on('error', () => {});
  }

  /** Connects and opens a session asking for `timeoutMs`. */
  static async open(host: string, port: number, timeoutMs = 10_000): Promise<RawSession> {
    const socket = connect({ host, port });
    const session = new RawSession(socket);
    const reply = new Promise<Buffer>((resolve, reject) => {
      session.#onConnect = resolve;
      socket.once('close', () => reject(new Error('closed before the session was established')));
    });
    const request = Buffer.concat([int(0), long(0n), int(timeoutMs), long(0n), bytes(Buffer.alloc(16)), Buffer.from([0])]);
    socket.write(frame(request));
    const body = await withTimeout(reply, 5000, 'a ZooKeeper session');
    session.timeoutMs = body.readInt32BE(4);
    session.sessionId = `0x${body.readBigUInt64BE(8).toString(16)}`;
    return session;
  }

  #read(chunk: Buffer): void {
    this.#buffer = Buffer.concat([this.#buffer, chunk]);
    while (this.#buffer.length >= 4) {
      const length = this.#buffer.readInt32BE(0);
      if (this.#buffer.length < 4 + length) return;
      const body = this.#buffer.subarray(4, 4 + length);
      this.#buffer = this.#buffer.subarray(4 + length);
      if (this.#onConnect) {
        this.#onConnect(body);
        this.#onConnect = undefined;
        continue;
      }
      const xid = body.readInt32BE(0);
      const err = body.readInt32BE(12);
      this.#pending.get(xid)?.(err);
      this.#pending.delete(xid);
    }
  }

  #call(type: number, payload: Buffer): Promise<number> {
    const xid = this.#xid++;
    const reply = new Promise<number>((resolve) => this.#pending.set(xid, resolve));
    this.#socket.write(frame(Buffer.concat([int(xid), int(type), payload])));
    return withTimeout(reply, 5000, `reply to op ${type}`);
  }

  /** Creates a node open to everyone (persistent, or ephemeral); resolves to the error code. */
  create(path: string, data = '', ephemeral = false): Promise<number> {
    const acl = Buffer.concat([int(1), int(31), str('world'), str('anyone')]);
    return this.#call(OP_CREATE, Buffer.concat([str(path), str(data), acl, int(ephemeral ? 1 : 0)]));
  }

  /** `exists`, optionally leaving a watch; resolves to the error code. */
  exists(path: string, watch = false): Promise<number> {
    return this.#call(OP_EXISTS, Buffer.concat([str(path), Buffer.from([watch ? 1 : 0])]));
  }

  /** `getData` with a watch; resolves to the error code. */
  watchData(path: string): Promise<number> {
    return this.#call(OP_GET_DATA, Buffer.concat([str(path), Buffer.from([1])]));
  }

  /** Any request: op code and encoded body; resolves to the reply's error code. */
  request(type: number, payload: Buffer): Promise<number> {
    return this.#call(type, payload);
  }

  /** Closes the session (the server drops its watches) and the socket. */
  async close(): Promise<void> {
    if (this.#socket.destroyed) return;
    await this.#call(OP_CLOSE, Buffer.alloc(0)).catch(() => undefined);
    this.#socket.destroy();
  }

  /** Drops the socket without closing the session. */
  destroy(): void {
    this.#socket.destroy();
  }
}
