/**
 * A service instance as curator-x-discovery describes it, and its URI template.
 *
 * @module
 */
import { randomUUID } from 'node:crypto';
import { networkInterfaces } from 'node:os';
import { describe, validatePath } from '../client/validate.js';
import { InvalidArgumentError } from '../errors.js';

/**
 * Curator's `ServiceType`: how an instance's node lives.
 * - `DYNAMIC`: an ephemeral node, gone with its session (the default);
 * - `DYNAMIC_SEQUENTIAL`: an ephemeral node whose name is the id with a sequence appended;
 * - `STATIC`, `PERMANENT`: a persistent node (until unregistered).
 * @group Discovery
 */
export type ServiceType = 'DYNAMIC' | 'STATIC' | 'PERMANENT' | 'DYNAMIC_SEQUENTIAL';

const SERVICE_TYPES: ReadonlySet<string> = new Set(['DYNAMIC', 'STATIC', 'PERMANENT', 'DYNAMIC_SEQUENTIAL']);

/** One part of a {@link UriSpec}: literal text, or a variable's name. @group Discovery */
export interface UriSpecPart {
  /** The text, or the variable's name. */
  readonly value: string;
  /** Whether `value` names a variable. */
  readonly variable: boolean;
}

/** A {@link UriSpec} as JSON. @group Discovery */
export interface UriSpecJson {
  /** The parts, in order. */
  parts: UriSpecPart[];
}

/**
 * Curator's `UriSpec`: a URI template such as `{scheme}://{address}:{port}/api`. Variables are
 * in braces; `{[}` and `{]}` write a literal brace. {@link UriSpec.build} fills them from an
 * instance (`scheme`, `name`, `id`, `address`, `port`, `ssl-port`, `registration-time-utc`,
 * `service-type`) and from the variables given; an unknown variable is left out.
 * @group Discovery
 */
export class UriSpec {
  /** The template's parts, in order, as Curator stores them in an instance's JSON. */
  readonly parts: readonly UriSpecPart[];

  /** Parses a template; throws `InvalidArgumentError` for an unclosed `{`. */
  constructor(template: string | readonly UriSpecPart[]) {
    if (typeof template === 'string') this.parts = parseTemplate(template);
    else if (Array.isArray(template)) this.parts = template.map((p, i) => checkPart(p, i));
    else throw new InvalidArgumentError(`UriSpec: a template string or an array of parts is required, got ${describe(template)}`);
    Object.freeze(this.parts);
  }

  /** The URI for `instance`, with `variables` taking precedence over the instance's fields. */
  build(instance?: ServiceInstance<unknown>, variables: Readonly<Record<string, unknown>> = {}): string {
    const values: Record<string, unknown> = { '[': '{', ']': '}', scheme: 'http' };
    if (instance !== undefined) {
      if (instance.sslPort !== null) values.scheme = 'https';
      Object.assign(values, {
        name: instance.name,
        id: instance.id,
        address: instance.address,
        port: instance.port,
        'ssl-port': instance.sslPort,
        'registration-time-utc': instance.registrationTimeUTC,
        'service-type': instance.serviceType.toLowerCase(),
      });
    }
    Object.assign(values, variables);
    let out = '';
    for (const p of this.parts) {
      if (!p.variable) out += p.value;
      else if (values[p.value] !== undefined && values[p.value] !== null) out += String(values[p.value]);
    }
    return out;
  }

  /** The template again, as a string. */
  toString(): string {
    return this.parts.map((p) => (p.variable ? `{${p.value}}` : p.value)).join('');
  }

  /** The form Curator writes: `{ parts: [...] }`. */
  toJSON(): UriSpecJson {
    return { parts: this.parts.map((p) => ({ value: p.value, variable: p.variable })) };
  }
}

function parseTemplate(template: string): UriSpecPart[] {
  const parts: UriSpecPart[] = [];
  let i = 0;
  while (i < template.length) {
    const open = template.indexOf('{', i);
    if (open < 0) {
      parts.push({ value: template.slice(i), variable: false });
      break;
    }
    if (open > i) parts.push({ value: template.slice(i, open), variable: false });
    const close = template.indexOf('}', open + 1);
    if (close < 0) throw new InvalidArgumentError(`UriSpec: unclosed "{" at ${open} in ${JSON.stringify(template)}`);
    parts.push({ value: template.slice(open + 1, close), variable: true });
    i = close + 1;
  }
  return parts;
}

function checkPart(p: unknown, i: number): UriSpecPart {
  const o = p as { value?: unknown; variable?: unknown } | null;
  if (o === null || typeof o !== 'object' || typeof o.value !== 'string' || typeof o.variable !== 'boolean') {
    throw new InvalidArgumentError(`UriSpec: part ${i} must be { value: string, variable: boolean }, got ${describe(p)}`);
  }
  return { value: o.value, variable: o.variable };
}

/**
 * A service instance: what curator-x-discovery stores as JSON at `<base>/<name>/<id>`.
 * `P` is the payload's type (see {@link PayloadCodec}). Immutable: make a changed copy with
 * {@link serviceInstance}`({ ...instance, port: 81 })`.
 * @group Discovery
 */
export interface ServiceInstance<P = unknown> {
  /** The service's name: a node under the base path. */
  readonly name: string;
  /** This instance's id: its node's name (unique within the service). */
  readonly id: string;
  /** Host or address where the instance listens, or null. */
  readonly address: string | null;
  /** Plain port, or null. */
  readonly port: number | null;
  /** TLS port, or null. */
  readonly sslPort: number | null;
  /** What the service publishes beside its address (decoded by the discovery's codec), or null. */
  readonly payload: P | null;
  /** When the instance was made, ms since the epoch (UTC). */
  readonly registrationTimeUTC: number;
  /** How its node lives; see {@link ServiceType}. */
  readonly serviceType: ServiceType;
  /** Its URI template, or null. */
  readonly uriSpec: UriSpec | null;
  /** Whether it takes traffic (a provider skips disabled instances). */
  readonly enabled: boolean;
}

/** What {@link serviceInstance} takes: every field but `name` is optional. @group Discovery */
export interface ServiceInstanceInit<P = unknown> {
  /** The service's name (required). */
  name: string;
  /** Default: a random UUID. */
  id?: string;
  /** Default: the first non-internal IPv4 address of this host, else `127.0.0.1`. */
  address?: string | null;
  /** Default null. */
  port?: number | null;
  /** Default null. */
  sslPort?: number | null;
  /** Default null. */
  payload?: P | null;
  /** Default: now. */
  registrationTimeUTC?: number;
  /** Default `DYNAMIC`. */
  serviceType?: ServiceType;
  /** A template string or a {@link UriSpec}; default null. */
  uriSpec?: UriSpec | string | null;
  /** Default true. */
  enabled?: boolean;
}

/** The keys of {@link ServiceInstanceInit}. @internal */
export const SERVICE_INSTANCE_KEYS: readonly string[] = ['name', 'id', 'address', 'port', 'sslPort', 'payload', 'registrationTimeUTC', 'serviceType', 'uriSpec', 'enabled'];

/**
 * Makes a checked, frozen {@link ServiceInstance} (Curator's `ServiceInstance.builder()`).
 * Throws `InvalidArgumentError` for a name or id that is not a valid node name (empty, with
 * `/`, `.` or `..`, or a character ZooKeeper refuses), a port outside 0..65535, an unknown
 * service type or key.
 * @group Discovery
 */
export function serviceInstance<P = unknown>(init: ServiceInstanceInit<P>): ServiceInstance<P> {
  if (init === null || typeof init !== 'object') throw new InvalidArgumentError(`serviceInstance: an object with at least a name is required, got ${describe(init)}`);
  for (const k of Object.keys(init)) {
    if (!SERVICE_INSTANCE_KEYS.includes(k)) throw new InvalidArgumentError(`serviceInstance: unknown field ${JSON.stringify(k)} (known: ${SERVICE_INSTANCE_KEYS.join(', ')})`);
  }
  checkNodeName(init.name, 'service name');
  const id = init.id ?? randomUUID();
  checkNodeName(id, 'instance id');
  const serviceType = init.serviceType ?? 'DYNAMIC';
  if (typeof serviceType !== 'string' || !SERVICE_TYPES.has(serviceType)) throw new InvalidArgumentError(`serviceInstance: serviceType must be one of ${[...SERVICE_TYPES].join(', ')}, got ${describe(serviceType)}`);
  const registrationTimeUTC = init.registrationTimeUTC ?? Date.now();
  if (!Number.isSafeInteger(registrationTimeUTC)) throw new InvalidArgumentError(`serviceInstance: registrationTimeUTC must be an integer (ms since the epoch), got ${describe(registrationTimeUTC)}`);
  const address = init.address === undefined ? defaultAddress() : init.address;
  if (address !== null && typeof address !== 'string') throw new InvalidArgumentError(`serviceInstance: address must be a string or null, got ${describe(address)}`);
  const enabled = init.enabled ?? true;
  if (typeof enabled !== 'boolean') throw new InvalidArgumentError(`serviceInstance: enabled must be a boolean, got ${describe(enabled)}`);
  const uri = init.uriSpec ?? null;
  const uriSpec = uri === null ? null : uri instanceof UriSpec ? uri : new UriSpec(uri);
  return Object.freeze({
    name: init.name,
    id,
    address,
    port: checkPort(init.port, 'port'),
    sslPort: checkPort(init.sslPort, 'sslPort'),
    payload: init.payload ?? null,
    registrationTimeUTC,
    serviceType: serviceType as ServiceType,
    uriSpec,
    enabled,
  });
}

/** Throws `InvalidArgumentError` unless `name` can be one node's name. @internal */
export function checkNodeName(name: unknown, what: string): asserts name is string {
  if (typeof name !== 'string' || name === '' || name.includes('/')) throw new InvalidArgumentError(`${what} must be a non-empty string without "/", got ${describe(name)}`);
  validatePath(`/${name}`, what);
}

function checkPort(port: unknown, what: string): number | null {
  if (port === undefined || port === null) return null;
  if (!Number.isInteger(port) || (port as number) < 0 || (port as number) > 65535) throw new InvalidArgumentError(`serviceInstance: ${what} must be an integer from 0 to 65535 or null, got ${describe(port)}`);
  return port as number;
}

let hostAddress: string | undefined;
function defaultAddress(): string {
  if (hostAddress === undefined) {
    const all = Object.values(networkInterfaces()).flat();
    hostAddress = all.find((a) => a !== undefined && a.family === 'IPv4' && !a.internal)?.address ?? '127.0.0.1';
  }
  return hostAddress;
}
