/**
 * The discovery workload: each client runs a {@link ServiceDiscovery} on one base path with a
 * service cache of service `svc` for the whole run, recording every list it holds (instance id
 * to payload version), and registers instances one after another: each with a new id (never
 * used again), updated every 0.5-2 s (its payload's `v` counts up), unregistered after 2-8 s.
 * Once the nemesis is done (the drain) the instance it has (or the next it registers) stays,
 * and at the stop it waits a settle bound past the drain, so that the checker can judge every
 * cache after the last heal.
 *
 * @internal
 * @module
 */
import { ServiceDiscovery } from '../../../discovery/service-discovery.js';
import type { ServiceInstance } from '../../../discovery/instance.js';
import { settleBoundMs } from '../checker/group.js';
import { chaosNow } from '../clock.js';
import { errorText, pause, type WorkloadContext } from './common.js';

/** The service every client registers and follows. */
const SERVICE = 'svc';
/** Bound of one call, ms: a call cut off by a fault gives up and the loop goes on. */
const CALL_MS = 5000;

type Payload = { v: number };

/** Registers, updates and unregisters until the drain; then keeps one instance until the stop and a settle bound after the drain. */
export async function discoveryWorkload(ctx: WorkloadContext): Promise<void> {
  const workload = ctx.spec.name;
  const settleMs = settleBoundMs(ctx.session.timeoutMs);
  let drainedAt: number | undefined;
  ctx.drain.addEventListener('abort', () => (drainedAt = chaosNow()), { once: true });
  const discovery = new ServiceDiscovery<Payload>(ctx.session, { basePath: ctx.spec.path });
  discovery.on('error', (err) => ctx.recorder.record({ type: 'note', level: 'info', message: `${ctx.name}: ${errorText(err)}` }));
  const recordView = (list: readonly ServiceInstance<Payload>[], synced: boolean, final?: boolean): void => {
    const instances = Object.fromEntries(list.map((i) => [i.id, i.payload?.v ?? -1]));
    ctx.recorder.record({ type: 'discovery-view', workload, instances, synced, ...(final && { final }) });
  };
  const call = async (op: 'register' | 'update' | 'unregister', instance: ServiceInstance<Payload>, fn: () => Promise<void>): Promise<boolean> => {
    const version = op === 'unregister' ? undefined : (instance.payload?.v ?? 0);
    const base = { type: 'discovery' as const, workload, op, instance: instance.id, ...(version !== undefined && { version }) };
    ctx.recorder.record({ ...base, phase: 'invoke' });
    try {
      await fn();
      ctx.recorder.record({ ...base, phase: 'ok' });
      return true;
    } catch (err) {
      ctx.recorder.record({ ...base, phase: 'fail', error: errorText(err) });
      return false;
    }
  };
  try {
    // Started before anything else; a start cut off by a fault is tried again.
    while (!ctx.stop.aborted) {
      try {
        await discovery.start({ timeoutMs: CALL_MS, signal: ctx.stop });
        break;
      } catch (err) {
        ctx.recorder.record({ type: 'note', level: 'info', message: `${ctx.name}: start: ${errorText(err)}` });
        if (!(await pause(ctx.random.int(200, 1000), ctx.stop))) return;
      }
    }
    const cache = discovery.serviceCache(SERVICE);
    cache.on('changed', (list) => recordView(list, cache.synced));
    while (!ctx.stop.aborted) {
      try {
        await cache.start({ timeoutMs: settleMs, signal: ctx.stop });
        recordView(cache.instances, cache.synced);
        break;
      } catch (err) {
        ctx.recorder.record({ type: 'note', level: 'info', message: `${ctx.name}: cache start: ${errorText(err)}` });
        if (cache.synced || !(await pause(ctx.random.int(200, 1000), ctx.stop))) break;
      }
    }

    let lastTries = 3;
    // After the drain, the next instance registered stays to the end (a few tries, should one fail).
    for (let n = 0; lastTries > 0; n++) {
      const last = ctx.drain.aborted;
      if (last) lastTries--;
      let inst: ServiceInstance<Payload> = { name: SERVICE, id: `${ctx.name}-i${n}`, address: '127.0.0.1', port: 8000 + n, sslPort: null, payload: { v: 0 }, registrationTimeUTC: Date.now(), serviceType: 'DYNAMIC', uriSpec: null, enabled: true };
      const registered = await call('register', inst, () => discovery.register(inst, { timeoutMs: last ? settleMs : CALL_MS }));
      if (!registered) {
        // Whatever the failed register created is removed by the discovery; try a new id.
        await pause(ctx.random.int(200, 1000));
        continue;
      }
      // Stays 2-8 s with an update every 0.5-2 s; the drain ends the stay, and it then stays on.
      const leaveAt = chaosNow() + ctx.random.int(2000, 8000);
      while (!ctx.drain.aborted && chaosNow() < leaveAt) {
        if (!(await pause(ctx.random.int(500, 2000), ctx.drain))) break;
        const next = { ...inst, payload: { v: (inst.payload?.v ?? 0) + 1 } };
        inst = next;
        await call('update', next, () => discovery.update(next, { timeoutMs: CALL_MS }));
      }
      if (ctx.drain.aborted) {
        // The nemesis is done: one last update after the heal, then stay until the stop and a settle bound past the drain.
        const next = { ...inst, payload: { v: (inst.payload?.v ?? 0) + 1 } };
        inst = next;
        await call('update', next, () => discovery.update(next, { timeoutMs: settleMs }));
        const lastWrite = chaosNow();
        await untilAborted(ctx.stop);
        await pause(Math.max(drainedAt ?? 0, lastWrite) + settleMs + 1000 - chaosNow());
        recordView(cache.instances, cache.synced, true);
        lastTries = 0;
      }
      await call('unregister', inst, () => discovery.unregister(inst.id, { timeoutMs: CALL_MS }));
      if (lastTries > 0) await pause(ctx.random.int(100, 1000));
    }
  } finally {
    await discovery.close({ timeoutMs: 10_000 }).catch((err: unknown) => ctx.recorder.record({ type: 'note', level: 'info', message: `${ctx.name}: close: ${errorText(err)}` }));
  }
}

function untilAborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
}
