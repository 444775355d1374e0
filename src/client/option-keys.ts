/**
 * The keys of the session's call options and transaction ops, for the unknown-key check
 * ({@link checkOptions}): each list is checked against its type at compile time.
 *
 * @internal
 * @module
 */
import type { AddWatchOptions, CallOptions, CreateCallOptions, MkdirpOptions, WatchOptions, ZkSession } from './session.js';
import { SESSION_OPTION_KEYS, type SessionOptions } from './lifecycle.js';
import type { CheckOp, CreateOp, DeleteOp, SetDataOp } from './types.js';
import { optionKeys } from './validate.js';

/** Options of `ZkSession.connect`: the session's, and the signal of the wait. */
export const CONNECT_OPTION_KEYS = optionKeys<OptionsOf<typeof ZkSession.connect>, SessionOptions>({ signal: true }, SESSION_OPTION_KEYS);
/** Options of reads, `sync`, `multi` and `deleteRecursive`. */
export const CALL_OPTION_KEYS = optionKeys<CallOptions>({ signal: true });
/** Options of watch-setting reads. */
export const WATCH_OPTION_KEYS = optionKeys<WatchOptions>({ signal: true });
/** Options of `create` and `createWithStat`. */
export const CREATE_CALL_OPTION_KEYS = optionKeys<CreateCallOptions>({ data: true, mode: true, ttlMs: true, acl: true, signal: true });
/** Options of `delete` and `setData`. */
export const VERSIONED_CALL_OPTION_KEYS = optionKeys<OptionsOf<ZkSession['delete']> & OptionsOf<ZkSession['setData']>, CallOptions>({ version: true }, CALL_OPTION_KEYS);
/** Options of `mkdirp`. */
export const MKDIRP_OPTION_KEYS = optionKeys<MkdirpOptions, CallOptions>({ data: true, acl: true, container: true }, CALL_OPTION_KEYS);
/** Options of `addWatch`. */
export const ADD_WATCH_OPTION_KEYS = optionKeys<AddWatchOptions, CallOptions>({ recursive: true }, CALL_OPTION_KEYS);

/** The options parameter (the last) of a session method. */
type OptionsOf<F> = F extends (...args: infer A) => unknown ? NonNullable<A extends [...unknown[], infer O] ? O : never> : never;

/** The keys of each kind of transaction op. */
export const OP_KEYS: { readonly [K in (CreateOp | DeleteOp | SetDataOp | CheckOp)['type']]: readonly string[] } = {
  create: optionKeys<CreateOp>({ type: true, path: true, data: true, mode: true, ttlMs: true, acl: true }),
  delete: optionKeys<DeleteOp>({ type: true, path: true, version: true }),
  setData: optionKeys<SetDataOp>({ type: true, path: true, data: true, version: true }),
  check: optionKeys<CheckOp>({ type: true, path: true, version: true }),
};
