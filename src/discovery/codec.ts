/**
 * curator-x-discovery's JSON form of an instance, and the codecs of its payload.
 *
 * @module
 */
import { describe } from '../client/validate.js';
import { InvalidArgumentError, InvalidInstanceError } from '../errors.js';
import { serviceInstance, UriSpec, type ServiceInstance, type ServiceType } from './instance.js';

/**
 * How an instance's `payload` becomes JSON and back. `encode` returns a JSON value (checked:
 * only null, booleans, finite numbers, strings, arrays and plain objects); `decode` gets the
 * parsed value and may throw to reject it (the instance is then skipped and reported).
 * @group Discovery
 */
export interface PayloadCodec<P> {
  /** The payload as a JSON value. */
  encode(payload: P): unknown;
  /** The payload from its JSON value; throws if it is not one. */
  decode(json: unknown): P;
}

/** The default codec: the payload is the JSON value itself. @group Discovery */
export function jsonPayload<P = unknown>(): PayloadCodec<P> {
  return { encode: (p) => p, decode: (j) => j as P };
}

/**
 * A codec for a payload that Java reads as a class of its own (Curator's `JsonInstanceSerializer`
 * with a payload class): `encode` adds Jackson's `"@class": javaClass`, `decode` drops the
 * `@class` a Java writer put there. A Java reader whose payload class is `Map` needs none:
 * {@link jsonPayload} then does (the `@class` Java writes is kept in what it decodes).
 * @group Discovery
 */
export function curatorPayload<P extends Record<string, unknown>>(javaClass: string): PayloadCodec<P> {
  if (typeof javaClass !== 'string' || !/^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)*$/.test(javaClass)) throw new InvalidArgumentError(`curatorPayload: a Java class name is required, got ${describe(javaClass)}`);
  return {
    encode: (p) => {
      if (p === null || typeof p !== 'object' || Array.isArray(p)) throw new InvalidArgumentError(`curatorPayload(${javaClass}): the payload must be a plain object, got ${describe(p)}`);
      return { '@class': javaClass, ...p };
    },
    decode: (j) => {
      if (j === null || typeof j !== 'object' || Array.isArray(j)) throw new Error(`the payload is not an object: ${describe(j)}`);
      const { '@class': _cls, ...rest } = j as Record<string, unknown>;
      return rest as P;
    },
  };
}

/** Throws `InvalidArgumentError` unless `value` is plain JSON (no undefined, function, bigint, NaN, cycle or class instance). */
function checkJson(value: unknown, where: string, seen = new Set<object>()): void {
  if (value === null || typeof value === 'string' || typeof value === 'boolean') return;
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new InvalidArgumentError(`${where} is not JSON: ${value}`);
    return;
  }
  if (typeof value !== 'object') throw new InvalidArgumentError(`${where} is not JSON: ${describe(value)}`);
  if (seen.has(value)) throw new InvalidArgumentError(`${where} is not JSON: it refers to itself`);
  seen.add(value);
  if (Array.isArray(value)) value.forEach((v, i) => checkJson(v, `${where}[${i}]`, seen));
  else {
    const proto = Object.getPrototypeOf(value) as unknown;
    if (proto !== Object.prototype && proto !== null) throw new InvalidArgumentError(`${where} is not JSON: a ${describe(value)} is not a plain object`);
    for (const [k, v] of Object.entries(value)) checkJson(v, `${where}.${k}`, seen);
  }
  seen.delete(value);
}

/** The node data for `instance`: Curator's field order, `enabled` included. @internal */
export function encodeInstance<P>(instance: ServiceInstance<P>, codec: PayloadCodec<P>, limit: number): Buffer {
  const payload = instance.payload === null ? null : codec.encode(instance.payload);
  checkJson(payload, `the payload of ${instance.name}/${instance.id}`);
  const body = {
    name: instance.name,
    id: instance.id,
    address: instance.address,
    port: instance.port,
    sslPort: instance.sslPort,
    payload,
    registrationTimeUTC: instance.registrationTimeUTC,
    serviceType: instance.serviceType,
    uriSpec: instance.uriSpec === null ? null : instance.uriSpec.toJSON(),
    enabled: instance.enabled,
  };
  const bytes = Buffer.from(JSON.stringify(body));
  if (bytes.length > limit) throw new InvalidArgumentError(`instance ${instance.name}/${instance.id}: ${bytes.length} bytes of JSON, over the session's data limit of ${limit}`);
  return bytes;
}

const TYPES: ReadonlySet<string> = new Set(['DYNAMIC', 'STATIC', 'PERMANENT', 'DYNAMIC_SEQUENTIAL']);

/**
 * The instance in a node's data, as Curator's reader takes it (`enabled` absent means true, as
 * Curator's compatible writer leaves it out). Throws {@link InvalidInstanceError} for anything
 * else: not JSON, a field of the wrong type, a payload its codec refuses.
 * @internal
 */
export function decodeInstance<P>(data: Buffer, path: string, codec: PayloadCodec<P>): ServiceInstance<P> {
  const bad = (why: string, cause?: unknown): InvalidInstanceError => new InvalidInstanceError(`the instance at ${path} is unreadable: ${why}; it is skipped`, { path, cause });
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
  } catch (err) {
    throw bad('its data is not JSON', err);
  }
  if (o === null || typeof o !== 'object' || Array.isArray(o)) throw bad(`its JSON is not an object`);
  const str = (k: string, nullable: boolean): string | null => {
    const v = o[k] ?? null;
    if (v === null && nullable) return null;
    if (typeof v !== 'string') throw bad(`"${k}" is ${describe(v)}, not a string`);
    return v;
  };
  const int = (k: string): number | null => {
    const v = o[k] ?? null;
    if (v === null) return null;
    if (!Number.isSafeInteger(v)) throw bad(`"${k}" is ${describe(v)}, not an integer`);
    return v as number;
  };
  const type = o.serviceType ?? 'DYNAMIC';
  if (typeof type !== 'string' || !TYPES.has(type)) throw bad(`"serviceType" is ${describe(type)}`);
  const enabled = o.enabled ?? true;
  if (typeof enabled !== 'boolean') throw bad(`"enabled" is ${describe(enabled)}, not a boolean`);
  let uriSpec: UriSpec | null = null;
  const u = o.uriSpec ?? null;
  if (u !== null) {
    const parts = (u as { parts?: unknown }).parts;
    try {
      uriSpec = new UriSpec(parts as never);
    } catch (err) {
      throw bad('"uriSpec" is not { parts: [...] }', err);
    }
  }
  let payload: P | null = null;
  if (o.payload !== undefined && o.payload !== null) {
    try {
      payload = codec.decode(o.payload);
    } catch (err) {
      throw bad(`its payload was refused (${err instanceof Error ? err.message : String(err)})`, err);
    }
  }
  const time = int('registrationTimeUTC') ?? 0;
  try {
    return serviceInstance<P>({
      name: str('name', false) as string,
      id: str('id', false) as string,
      address: str('address', true),
      port: int('port'),
      sslPort: int('sslPort'),
      payload,
      registrationTimeUTC: time,
      serviceType: type as ServiceType,
      uriSpec,
      enabled,
    });
  } catch (err) {
    if (err instanceof InvalidInstanceError) throw err;
    throw bad((err as Error).message, err);
  }
}
