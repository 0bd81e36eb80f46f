// State errors as plain text and back, so that a State served over a wire can say which error
// a call hit and a remote State can throw the same class again: machined's cosi.resource.State
// sends stateErrorDetail as a trailer (machined/api/resources.ts) and RemoteState
// (daemon/remote-state.ts) rebuilds the error with stateErrorFromDetail. The message travels
// whole, so the rebuilt error reads exactly as the one thrown.
import { ConflictError, NotFoundError, OwnerConflictError, type Phase, PhaseConflictError, type Ref, type StateError } from './resource.ts';

interface Detail {
  name: 'NotFoundError' | 'ConflictError' | 'OwnerConflictError' | 'PhaseConflictError';
  namespace: string;
  type: string;
  id: string;
  message: string;
  reason?: ConflictError['reason'];
  owner?: string;
  requestedBy?: string;
  phase?: Phase;
}

/** JSON text describing a State error; undefined for any other error. */
export function stateErrorDetail(err: unknown): string | undefined {
  if (!(err instanceof NotFoundError || err instanceof ConflictError || err instanceof OwnerConflictError || err instanceof PhaseConflictError)) return undefined;
  const d: Detail = { name: err.name as Detail['name'], namespace: err.namespace, type: err.type, id: err.id, message: err.message };
  if (err instanceof ConflictError) d.reason = err.reason;
  if (err instanceof OwnerConflictError) Object.assign(d, { owner: err.owner, requestedBy: err.requestedBy });
  if (err instanceof PhaseConflictError) d.phase = err.phase;
  return JSON.stringify(d);
}

/** The error stateErrorDetail described; undefined when the text is not such a description. */
export function stateErrorFromDetail(text: string): StateError | undefined {
  let d: Partial<Detail>;
  try {
    d = JSON.parse(text) as Partial<Detail>;
  } catch {
    return undefined;
  }
  if (typeof d !== 'object' || d === null || typeof d.namespace !== 'string' || typeof d.type !== 'string' || typeof d.id !== 'string') return undefined;
  const ref: Ref = { namespace: d.namespace, type: d.type, id: d.id };
  let err: StateError;
  switch (d.name) {
    case 'NotFoundError':
      err = new NotFoundError(ref);
      break;
    case 'ConflictError':
      if (d.reason !== 'exists' && d.reason !== 'version' && d.reason !== 'finalizers') return undefined;
      err = new ConflictError(ref, d.reason, '');
      break;
    case 'OwnerConflictError':
      err = new OwnerConflictError(ref, String(d.owner ?? ''), String(d.requestedBy ?? ''));
      break;
    case 'PhaseConflictError':
      err = new PhaseConflictError(ref, d.phase === 'tearingDown' ? 'tearingDown' : 'running', '');
      break;
    default:
      return undefined;
  }
  if (typeof d.message === 'string') err.message = d.message;
  return err;
}
