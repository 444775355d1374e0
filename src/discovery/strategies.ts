/**
 * How a {@link ServiceProvider} picks one instance: Curator's `ProviderStrategy`s.
 *
 * @module
 */
import { checkFunction, describe } from '../client/validate.js';
import { InvalidArgumentError } from '../errors.js';
import type { ServiceInstance } from './instance.js';

/** Picks one of the usable instances (never called with an empty list). @group Discovery */
export interface ProviderStrategy {
  /** The instance to use, from a non-empty list of usable ones. */
  pick<P>(instances: readonly ServiceInstance<P>[]): ServiceInstance<P>;
}

/** Each instance in turn (Curator's `RoundRobinStrategy`, the default). @group Discovery */
export function roundRobin(): ProviderStrategy {
  let next = 0;
  return {
    pick: (instances) => {
      const i = next++ % instances.length;
      if (next >= Number.MAX_SAFE_INTEGER) next = 0;
      return instances[i] as ServiceInstance<never>;
    },
  };
}

/** Any instance, uniformly (Curator's `RandomStrategy`). @group Discovery */
export function random(): ProviderStrategy {
  return { pick: (instances) => instances[Math.floor(Math.random() * instances.length)] as ServiceInstance<never> };
}

/**
 * The same instance while it is usable (Curator's `StickyStrategy`); when it goes (unregistered,
 * disabled, noted down), `then` picks the next one. Default `then`: {@link roundRobin}.
 * @group Discovery
 */
export function sticky(then: ProviderStrategy = roundRobin()): ProviderStrategy {
  if (then === null || typeof then !== 'object') throw new InvalidArgumentError(`sticky: a strategy is required, got ${describe(then)}`);
  checkFunction(then.pick, 'sticky: the strategy\'s pick');
  let current: string | undefined;
  return {
    pick: (instances) => {
      const held = current === undefined ? undefined : instances.find((i) => i.id === current);
      if (held !== undefined) return held;
      const chosen = then.pick(instances);
      current = chosen.id;
      return chosen;
    },
  };
}
