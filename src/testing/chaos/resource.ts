/**
 * {@link FencedResource}: an external resource that rejects stale fencing tokens, and
 * {@link FencedResourceClient}, how clients write to it.
 *
 * @module
 */
import { connect, createServer, type Server, type Socket } from 'node:net';
import { chaosNow } from './clock.js';
import type { ResourceEvent } from './history.js';
import { LOOPBACK } from '../ports.js';
import { checkInt, checkName, describe, need } from './validate.js';

/** What a register of a {@link FencedResource} holds. */
export interface RegisterState {
  /** The last accepted value. */
  value: number;
  /** The highest accepted token. */
  token: bigint;
}

/** A write sent to a {@link FencedResource}. */
interface WriteRequest {
  id: number;
  register: string;
  writer: string;
  token: string;
  value: number;
}

/** The resource's answer to a write. */
interface WriteReply {
  id: number;
  accepted: boolean;
}

/** Checks a write's register, token and value. */
function checkWrite(register: unknown, token: unknown, value: unknown): void {
  checkName(register, 'write: register');
  need(typeof token === 'bigint', `write: token must be a bigint, got ${describe(token)}`);
  need(typeof value === 'number' && Number.isFinite(value), `write: value must be a finite number, got ${describe(value)}`);
}

/** Splits a socket's bytes into JSON lines. */
function onLines(socket: Socket, fn: (line: string) => void): void {
  let partial = '';
  socket.setEncoding('utf8');
  socket.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop() ?? '';
    for (const line of lines) if (line.trim() !== '') fn(line);
  });
}

/**
 * A fenced storage service for tests, on 127.0.0.1: named registers that accept a write only if
 * its fencing token is not below the highest token the register has accepted (Kleppmann's
 * fencing: the only defence against a holder that still acts after losing its lock). It records
 * every decision itself ({@link ResourceEvent}), so a checker need not trust the writers.
 */
export class FencedResource {
  /** Listening port. */
  readonly port: number;
  readonly #server: Server;
  readonly #highest = new Map<string, bigint>();
  readonly #values = new Map<string, number>();
  readonly #sockets = new Set<Socket>();
  readonly #onEvent: (event: ResourceEvent) => void;

  private constructor(server: Server, port: number, onEvent: (event: ResourceEvent) => void) {
    this.#server = server;
    this.port = port;
    this.#onEvent = onEvent;
    server.on('connection', (socket) => this.#accept(socket));
  }

  /** Starts the resource on a free loopback port; `onEvent` gets every decision. */
  static async start(onEvent: (event: ResourceEvent) => void): Promise<FencedResource> {
    need(typeof onEvent === 'function', `FencedResource.start: onEvent must be a function, got ${describe(onEvent)}`);
    const server = createServer({ noDelay: true });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen({ host: LOOPBACK, port: 0 }, () => resolve());
    });
    server.unref();
    const address = server.address();
    if (address === null || typeof address === 'string') throw new Error('resource has no TCP address');
    return new FencedResource(server, address.port, onEvent);
  }

  /** The last accepted value and token of `register`, if any was accepted. */
  state(register: string): RegisterState | undefined {
    const token = this.#highest.get(register);
    const value = this.#values.get(register);
    return token === undefined || value === undefined ? undefined : { value, token };
  }

  /** Decides one write (also reachable without a socket, for tests). */
  write(register: string, writer: string, token: bigint, value: number): boolean {
    checkWrite(register, token, value);
    checkName(writer, 'write: writer');
    const highest = this.#highest.get(register) ?? -1n;
    const accepted = token >= highest;
    if (accepted) {
      this.#highest.set(register, token);
      this.#values.set(register, value);
    }
    this.#onEvent({ type: 'resource', t: chaosNow(), client: 'resource', register, writer, token: String(token), value, accepted, highest: String(highest) });
    return accepted;
  }

  #accept(socket: Socket): void {
    this.#sockets.add(socket);
    socket.on('close', () => this.#sockets.delete(socket));
    socket.on('error', () => socket.destroy());
    onLines(socket, (line) => {
      let request: WriteRequest;
      try {
        request = JSON.parse(line) as WriteRequest;
      } catch {
        socket.destroy();
        return;
      }
      const accepted = this.write(request.register, request.writer, BigInt(request.token), request.value);
      socket.write(`${JSON.stringify({ id: request.id, accepted } satisfies WriteReply)}\n`);
    });
  }

  /** Stops listening and closes every connection. */
  close(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    return new Promise((resolve) => this.#server.close(() => resolve()));
  }
}

/** A client's connection to a {@link FencedResource}: one socket, writes answered in order. */
export class FencedResourceClient {
  readonly #socket: Socket;
  readonly #pending = new Map<number, { resolve: (accepted: boolean) => void; reject: (err: Error) => void }>();
  #next = 0;

  /** The name this client's writes carry. */
  readonly writer: string;

  private constructor(socket: Socket, writer: string) {
    this.writer = writer;
    this.#socket = socket;
    onLines(socket, (line) => {
      const reply = JSON.parse(line) as WriteReply;
      this.#pending.get(reply.id)?.resolve(reply.accepted);
      this.#pending.delete(reply.id);
    });
    socket.on('close', () => {
      for (const p of this.#pending.values()) p.reject(new Error('fenced resource connection closed'));
      this.#pending.clear();
    });
    socket.on('error', () => undefined);
  }

  /** Connects to the resource on 127.0.0.1:`port`; `writer` names this client in its records. */
  static connect(port: number, writer: string): Promise<FencedResourceClient> {
    return new Promise((resolve, reject) => {
      checkInt(port, 'FencedResourceClient.connect: port', 1, 65_535);
      checkName(writer, 'FencedResourceClient.connect: writer');
      const socket = connect({ host: LOOPBACK, port, noDelay: true });
      socket.once('error', reject);
      socket.once('connect', () => {
        socket.off('error', reject);
        resolve(new FencedResourceClient(socket, writer));
      });
    });
  }

  /** Writes `value` to `register` with fencing token `token`; resolves to whether it was accepted. */
  write(register: string, token: bigint, value: number): Promise<boolean> {
    try {
      checkWrite(register, token, value);
    } catch (err) {
      return Promise.reject(err);
    }
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.#socket.write(`${JSON.stringify({ id, register, writer: this.writer, token: String(token), value } satisfies WriteRequest)}\n`);
    });
  }

  /** Closes the connection. */
  close(): void {
    this.#socket.destroy();
  }
}
