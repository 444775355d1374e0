/**
 * Permission refusals passed on to other callers.
 *
 * @internal
 * @module
 */
import { InvalidAclError, NoAuthError, type ServerErrorCode } from '../errors.js';

/**
 * A fresh copy of a permission refusal for another caller (error instances are never shared),
 * its message prefixed with `context`, the original as `cause`.
 * @internal
 */
export function copyPermissionError(err: NoAuthError | InvalidAclError, context: string): NoAuthError | InvalidAclError {
  const Ctor = err instanceof InvalidAclError ? InvalidAclError : NoAuthError;
  return new Ctor(err.code as ServerErrorCode, `${context}: ${err.message}`, { zkCode: err.zkCode, op: err.op, opIndex: err.opIndex, path: err.path, cause: err });
}
