/**
 * OpenTelemetry spans from the tracing channels: one per acquisition (with a `wait` child), per
 * session request and per queue operation. `@opentelemetry/api` is not imported: you pass its
 * `Tracer` and its `context` and `trace` objects, and the types below are the part of them used.
 *
 * @module
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { subscribe, tracingChannel, unsubscribe } from 'node:diagnostics_channel';
import {
  CHANNELS,
  TRACING_CHANNELS,
  type AcquireContext,
  type AcquireProgress,
  type QueueHandleContext,
  type QueuePutContext,
  type QueueTakeContext,
  type SessionRequestContext,
} from '../observability/channels.js';
import { checkBoolean, checkOptions, optionKeys } from '../client/validate.js';
import { ACQUIRE_CHANNELS, checkApi, guard } from './feed.js';
import type { OtelAttributes } from './opentelemetry.js';

/** The part of an OpenTelemetry `Span` used here. @group Tracing */
export interface OtelSpan {
  /** Sets an attribute. */
  setAttribute(key: string, value: string | number | boolean): unknown;
  /** Sets the status (`code` 2 is `SpanStatusCode.ERROR`). */
  setStatus(status: { code: number; message?: string }): unknown;
  /** Ends the span. */
  end(): void;
}

/** Options of a span, as used here (`@opentelemetry/api`'s `SpanOptions`). @group Tracing */
export interface OtelSpanOptions {
  /** `SpanKind`: 0 internal, 2 client, 3 producer, 4 consumer. */
  kind?: number;
  /** Attributes known at the start. */
  attributes?: OtelAttributes;
}

/** The part of an OpenTelemetry `Tracer` used here. @group Tracing */
export interface OtelTracer {
  /** Starts a span, a child of the span in `context`. */
  startSpan(name: string, options?: OtelSpanOptions, context?: unknown): OtelSpan;
}

/** The part of `@opentelemetry/api`'s `context` used here. @group Tracing */
export interface OtelContextApi {
  /** The active context (the caller's, where a recipe call starts). */
  active(): unknown;
}

/** The part of `@opentelemetry/api`'s `trace` used here. @group Tracing */
export interface OtelTraceApi {
  /** A context like `context` with `span` as its span: the parent of spans started with it. */
  setSpan(context: unknown, span: OtelSpan): unknown;
}

/** Options of {@link openTelemetryTracing}. @group Tracing */
export interface OpenTelemetryTracingOptions {
  /** The tracer to start spans with. */
  tracer: OtelTracer;
  /** `@opentelemetry/api`'s `context`: the active context at a call's start is its span's parent. */
  context: OtelContextApi;
  /** `@opentelemetry/api`'s `trace`: makes the context in which a span's children start. */
  trace: OtelTraceApi;
  /** A `CLIENT` span per session request, a child of the acquisition it is part of (default true). */
  sessionRequests?: boolean;
  /**
   * Spans for queue `put` (`send`), `take`/`poll` (`receive`) and the items `consume` handles
   * (`process`), with OpenTelemetry's messaging attributes (default true).
   * @experimental The messaging conventions are not stable in OpenTelemetry yet: these spans'
   * names and attributes follow them and may change.
   */
  queue?: boolean;
}

const OPTION_KEYS = optionKeys<OpenTelemetryTracingOptions>({ tracer: true, context: true, trace: true, sessionRequests: true, queue: true });

/** What {@link openTelemetryTracing} returns. @group Tracing */
export interface OpenTelemetryTracing {
  /** Unsubscribes from every channel; spans still open end at once, without an outcome. */
  close(): void;
}

// @opentelemetry/api's SpanKind and SpanStatusCode values (stable parts of the API).
const INTERNAL = 0;
const CLIENT = 2;
const PRODUCER = 3;
const CONSUMER = 4;
const ERROR = 2;

/** An operation's span while it is open: the store of the operation's async context. */
interface Open {
  readonly span: OtelSpan;
  /** The context whose span is this one: its children's parent. */
  readonly within: unknown;
  /** An acquisition that may wait (a blocking one): its directory. */
  readonly waitsOn?: string;
  wait?: OtelSpan;
  ended: boolean;
}

const SPAN_NAMES: Readonly<Record<string, string>> = {
  [TRACING_CHANNELS.mutexAcquire]: 'zk_recipes.mutex.acquire',
  [TRACING_CHANNELS.semaphoreAcquire]: 'zk_recipes.semaphore.acquire',
  [TRACING_CHANNELS.rwlockAcquire]: 'zk_recipes.rwlock.acquire',
  [TRACING_CHANNELS.leaderCampaign]: 'zk_recipes.leader.campaign',
};

/** `host:port` (`[v6]:port`) as `server.address` and `server.port`. */
function serverAttributes(server: string | undefined): OtelAttributes {
  if (server === undefined) return {};
  const at = server.lastIndexOf(':');
  const port = Number(server.slice(at + 1));
  if (at < 0 || !Number.isInteger(port)) return { 'server.address': server };
  return { 'server.address': server.slice(0, at).replace(/^\[(.*)\]$/, '$1'), 'server.port': port };
}

/** The last segment of a node path (a queue item's id). */
function baseName(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

/** Marks a span failed: `error.type` is the error's stable code (`LOCK_TIMEOUT`, ...), else its name. */
function fail(span: OtelSpan, code: string | undefined, error: unknown): void {
  const name = error instanceof Error ? error.name : undefined;
  span.setAttribute('error.type', code ?? name ?? '_OTHER');
  span.setStatus({ code: ERROR, ...(error instanceof Error && { message: error.message }) });
}

/**
 * Starts OpenTelemetry spans from zk-recipes' tracing channels:
 *
 * - one per acquisition (`zk_recipes.mutex.acquire`, `zk_recipes.semaphore.acquire`,
 *   `zk_recipes.rwlock.acquire`, `zk_recipes.leader.campaign`), a child of the caller's active
 *   context, with the recipe, mode, path, outcome, queue position, fencing token and, on a
 *   failure, `error.type` (the error's code, e.g. `LOCK_TIMEOUT`) and an error status;
 * - a `wait` child of it from its first progress report (a listing found nodes ahead of ours
 *   and the holder's id was read: one round trip after the listing) to its outcome: listening to
 *   progress costs that read per new holder while an acquisition waits;
 * - a `CLIENT` span per session request (`zookeeper.<op>`) with `server.address` and
 *   `server.port`, a child of the acquisition it serves, else of the active context;
 * - queue spans on OpenTelemetry's messaging conventions (experimental, see
 *   {@link OpenTelemetryTracingOptions.queue}).
 *
 * A tracer that throws loses spans, never an acquisition. `close()` unsubscribes. Bad options:
 * `InvalidArgumentError`.
 *
 * @example
 * ```ts
 * import { context, trace } from '@opentelemetry/api';
 * import { openTelemetryTracing } from 'zk-recipes/metrics';
 *
 * const tracing = openTelemetryTracing({ tracer: trace.getTracer('zk-recipes'), context, trace });
 * shutdown.addEventListener('abort', () => tracing.close());
 * ```
 * @group Tracing
 */
export function openTelemetryTracing(options: OpenTelemetryTracingOptions): OpenTelemetryTracing {
  const o = checkOptions(options, 'openTelemetryTracing', OPTION_KEYS);
  const tracer = checkApi(o.tracer, 'openTelemetryTracing: tracer', ['startSpan']);
  const context = checkApi(o.context, 'openTelemetryTracing: context', ['active']);
  const trace = checkApi(o.trace, 'openTelemetryTracing: trace', ['setSpan']);
  const sessionRequests = checkBoolean(o.sessionRequests, 'openTelemetryTracing: sessionRequests', true);
  const queue = checkBoolean(o.queue, 'openTelemetryTracing: queue', true);
  const off: (() => void)[] = [];
  const open = new Map<object, Open>(); // every open span by its trace context, for close()
  // The operation in whose async context a progress report or a session request comes.
  const store = new AsyncLocalStorage<Open | undefined>();
  /** The parent of a span starting now: the open operation of this async context, else the active context. */
  const parent = (): unknown => {
    const o = store.getStore();
    return o && !o.ended ? o.within : context.active();
  };

  /**
   * Spans of a tracing channel: `start` makes one where start is published (synchronously, in
   * the caller's context) and, when `scope`, the store of the operation's async context (the
   * parent of what it does: a session request is a leaf); `end` finishes it once.
   */
  const spans = <C extends object>(name: string, start: (c: C, parent: unknown) => { span: OtelSpan; waitsOn?: string }, end: (c: C, o: Open) => void, scope = true): void => {
    const t = tracingChannel<Open | undefined, C>(name);
    const begin = (c: C): Open | undefined => {
      try {
        const from = parent();
        const { span, waitsOn } = start(c, from);
        const o: Open = { span, within: undefined, ...(waitsOn !== undefined && { waitsOn }), ended: false };
        open.set(c, o);
        (o as { within: unknown }).within = trace.setSpan(from, span);
        return o;
      } catch {
        return undefined; // a tracer's failure must never break a recipe
      }
    };
    const done = (c: C): void => {
      const o = open.get(c);
      if (!o || o.ended) return;
      o.ended = true;
      open.delete(c);
      try {
        end(c, o);
      } finally {
        try {
          o.wait?.end();
        } finally {
          o.span.end();
        }
      }
    };
    if (scope) t.start.bindStore(store, begin);
    const handlers = { ...(!scope && { start: begin }), asyncEnd: guard(done), error: guard(done) } as never;
    t.subscribe(handlers);
    off.push(() => {
      if (scope) t.start.unbindStore(store);
      t.unsubscribe(handlers);
    });
  };

  for (const name of ACQUIRE_CHANNELS) {
    spans<AcquireContext>(
      name,
      (c, from) => {
        const attributes: OtelAttributes = {
          'zk_recipes.recipe': c.recipe,
          'zk_recipes.mode': c.mode,
          'zk_recipes.path': c.path,
          'zk_recipes.participant_id': c.participantId,
          'zk_recipes.session.id': c.sessionId.toString(16),
          'zk_recipes.nonblocking': c.nonblocking,
          'zk_recipes.leases': c.leases,
          ...(c.timeoutMs !== undefined && { 'zk_recipes.timeout_ms': c.timeoutMs }),
        };
        const span = tracer.startSpan(SPAN_NAMES[name] ?? name, { kind: INTERNAL, attributes }, from);
        // A try-once call never waits (its progress report says where it stood).
        return c.nonblocking ? { span } : { span, waitsOn: c.path };
      },
      (c, { span, wait }) => {
        if (c.outcome !== undefined) span.setAttribute('zk_recipes.outcome', c.outcome);
        if (c.queuePosition !== undefined) span.setAttribute('zk_recipes.queue.position', c.queuePosition);
        if (c.nodePath !== undefined) span.setAttribute('zk_recipes.node.path', c.nodePath);
        // A string: a czxid may pass 2^53.
        if (c.fencingToken !== undefined) span.setAttribute('zk_recipes.fencing_token', c.fencingToken.toString());
        if (c.error !== undefined) fail(span, c.errorCode, c.error);
        if (wait && c.outcome !== undefined) wait.setAttribute('zk_recipes.outcome', c.outcome);
      },
    );
  }
  // Progress is published in the acquisition's async context (its reads run there).
  const progress = guard((p: AcquireProgress) => {
    const o = store.getStore();
    if (!o || o.ended || o.wait || p.position <= 0 || o.waitsOn !== p.path) return;
    o.wait = tracer.startSpan('wait', { kind: INTERNAL, attributes: { 'zk_recipes.queue.position': p.position, ...(p.holderId !== undefined && { 'zk_recipes.holder_id': p.holderId }) } }, o.within);
  });
  subscribe(CHANNELS.lockProgress, progress);
  off.push(() => unsubscribe(CHANNELS.lockProgress, progress));

  const ended = (c: { outcome?: string; error?: unknown; errorCode?: string }, { span }: Open): void => {
    if (c.outcome !== undefined) span.setAttribute('zk_recipes.outcome', c.outcome);
    if (c.error !== undefined) fail(span, c.errorCode, c.error);
  };
  if (sessionRequests) {
    spans<SessionRequestContext>(
      TRACING_CHANNELS.sessionRequest,
      (c, from) => ({
        span: tracer.startSpan(
          `zookeeper.${c.op}`,
          {
            kind: CLIENT,
            attributes: { 'zk_recipes.op': c.op, 'zk_recipes.session.id': c.sessionId.toString(16), ...(c.path !== undefined && { 'zk_recipes.path': c.path }), ...serverAttributes(c.server) },
          },
          from,
        ),
      }),
      (c, o) => {
        // The server it was sent to (set when sent: a request may wait for a connection).
        for (const [k, v] of Object.entries(serverAttributes(c.server))) o.span.setAttribute(k, v);
        ended(c, o);
      },
      false,
    );
  }
  if (queue) {
    const messaging = (type: 'send' | 'receive' | 'process', operation: string, path: string): OtelAttributes => ({
      'messaging.system': 'zookeeper',
      'messaging.operation.type': type,
      'messaging.operation.name': operation,
      'messaging.destination.name': path,
    });
    spans<QueuePutContext>(
      TRACING_CHANNELS.queuePut,
      (c, from) => ({ span: tracer.startSpan(`put ${c.path}`, { kind: PRODUCER, attributes: { ...messaging('send', 'put', c.path), ...(c.items !== 1 && { 'messaging.batch.message_count': c.items }) } }, from) }),
      (c, o) => {
        if (c.itemPaths?.length === 1) o.span.setAttribute('messaging.message.id', baseName(c.itemPaths[0] as string));
        ended(c, o);
      },
    );
    spans<QueueTakeContext>(
      TRACING_CHANNELS.queueTake,
      (c, from) => ({ span: tracer.startSpan(`${c.nonblocking ? 'poll' : 'take'} ${c.path}`, { kind: CLIENT, attributes: messaging('receive', c.nonblocking ? 'poll' : 'take', c.path) }, from) }),
      ended,
    );
    spans<QueueHandleContext>(
      TRACING_CHANNELS.queueHandle,
      (c, from) => ({
        span: tracer.startSpan(
          `process ${c.path}`,
          { kind: CONSUMER, attributes: { ...messaging('process', 'process', c.path), 'messaging.message.id': baseName(c.itemPath), 'zk_recipes.previous_attempts': c.previousAttempts } },
          from,
        ),
      }),
      ended,
    );
  }

  return {
    close() {
      for (const f of off.splice(0)) f();
      for (const o of open.values()) {
        try {
          o.wait?.end();
          o.span.end();
        } catch {
          // as everywhere: a tracer's failure stays here
        }
      }
      open.clear();
    },
  };
}
