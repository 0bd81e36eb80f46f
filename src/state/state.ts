// The State interface: where resources live. machined holds the one instance (in memory);
// daemons and the API reach it through machined (daemons as RemoteState, daemon/remote-state.ts).
// Every implementation must pass the shared conformance suite (testing-conformance.ts, a test
// aid): MemoryState and RemoteState do.
//
// Writes carry the writer's name (`owner`): a resource may be updated, torn down or destroyed
// only by the owner that created it. This is how "each daemon writes only the types it owns"
// is enforced. Finalizers are the exception: any party may add or remove its own.
//
// Watches: watch/watchKind first replay the current state (each existing resource as a
// 'created' event, then one 'bootstrapped' marker), then deliver every later change, in the
// order the writes happened. A watcher that does not keep up is never waited for: its queue is
// bounded, and when it overflows the pending events are dropped, the watcher receives one
// 'errored' event (a WatchOverflowError) and its iteration ends. It should watch again.

import { type Resource, type Ref, refString } from './resource.ts';

export interface WriteOptions {
  /** The writer: a controller or daemon name, or '' for none. */
  owner: string;
}

export interface UpdateOptions extends WriteOptions {
  /** When given, the update fails with a ConflictError unless the stored version is this. */
  expectedVersion?: number;
}

export interface ListOptions {
  labelSelector?: LabelSelector;
}

export interface WatchOptions {
  signal: AbortSignal;
}

export interface WatchKindOptions extends WatchOptions {
  /** Replay existing resources, then 'bootstrapped', before the live events. */
  bootstrap: boolean;
}

export type WatchEvent<S = unknown> =
  | { type: 'created'; resource: Resource<S> }
  | { type: 'updated'; resource: Resource<S>; old: Resource<S> }
  /** resource is the last state before it was destroyed. */
  | { type: 'destroyed'; resource: Resource<S> }
  /** The initial state has been replayed; what follows is live. */
  | { type: 'bootstrapped' }
  /** The watch is over (e.g. WatchOverflowError); the iteration ends after this event. */
  | { type: 'errored'; error: Error };

export interface State {
  /** Throws NotFoundError. */
  get<S = unknown>(namespace: string, type: string, id: string): Promise<Resource<S>>;
  /** Sorted by id. */
  list<S = unknown>(namespace: string, type: string, opts?: ListOptions): Promise<Array<Resource<S>>>;
  /**
   * Stores a new resource owned by opts.owner, with version 1 and phase 'running'; takes spec,
   * labels, annotations and finalizers from the argument. Throws ConflictError (reason
   * 'exists') when the id is taken. Returns the stored resource.
   */
  create<S>(resource: Resource<S>, opts: WriteOptions): Promise<Resource<S>>;
  /**
   * Replaces spec, labels and annotations (version, owner, phase, finalizers and times are the
   * State's). Throws NotFoundError, OwnerConflictError, ConflictError (reason 'version') when
   * opts.expectedVersion is given and differs, PhaseConflictError when tearing down.
   */
  update<S>(resource: Resource<S>, opts: UpdateOptions): Promise<Resource<S>>;
  /** Moves to phase 'tearingDown' (idempotent). Owner only. */
  teardown<S = unknown>(namespace: string, type: string, id: string, opts: WriteOptions): Promise<Resource<S>>;
  /**
   * Removes the resource. Owner only. Throws ConflictError (reason 'finalizers') while it has
   * finalizers.
   */
  destroy(namespace: string, type: string, id: string, opts: WriteOptions): Promise<void>;
  /** Adds finalizers not present yet (any party). PhaseConflictError when tearing down. */
  addFinalizer<S = unknown>(namespace: string, type: string, id: string, ...finalizers: string[]): Promise<Resource<S>>;
  /** Removes the finalizers given (any party; also while tearing down). */
  removeFinalizer<S = unknown>(namespace: string, type: string, id: string, ...finalizers: string[]): Promise<Resource<S>>;
  /** One resource (its current state if it exists, then 'bootstrapped', then changes), or the
   *  whole kind when id is undefined. Ends when signal aborts. */
  watch<S = unknown>(namespace: string, type: string, id: string | undefined, opts: WatchOptions): AsyncIterable<WatchEvent<S>>;
  watchKind<S = unknown>(namespace: string, type: string, opts: WatchKindOptions): AsyncIterable<WatchEvent<S>>;
}

// ---------------------------------------------------------------------------------------------
// Label selectors: either a map (every label must equal) or the kubectl form
// "a=b,c!=d,e,!f" (equal, not equal — also true when absent —, exists, does not exist).

export type LabelSelector = string | Record<string, string>;

/**
 * One term of a label query. The kubectl-form operations, and COSI's (resource.proto LabelTerm:
 * in, the string and numeric comparisons, and `invert` on any of them), matched in one place
 * (matchLabels) for the State implementations and the resource API alike.
 */
export type LabelTerm =
  | { key: string; op: 'equal' | 'notEqual' | 'lt' | 'lte' | 'ltNumeric' | 'lteNumeric'; value: string; invert?: boolean }
  | { key: string; op: 'in'; values: readonly string[]; invert?: boolean }
  | { key: string; op: 'exists' | 'notExists'; invert?: boolean };

const LABEL_KEY = /^[A-Za-z0-9]([A-Za-z0-9._/-]*[A-Za-z0-9])?$/;

/** Throws an Error naming the bad term. */
export function parseLabelSelector(sel: LabelSelector): LabelTerm[] {
  if (typeof sel !== 'string') return Object.entries(sel).map(([key, value]) => ({ key, op: 'equal', value }));
  const terms: LabelTerm[] = [];
  for (const raw of sel.split(',')) {
    const term = raw.trim();
    if (term === '') continue;
    let m: RegExpMatchArray | null;
    let parsed: LabelTerm;
    if ((m = term.match(/^([^=!\s]+)\s*!=\s*(.*)$/))) parsed = { key: m[1]!, op: 'notEqual', value: m[2]!.trim() };
    else if ((m = term.match(/^([^=!\s]+)\s*==?\s*(.*)$/))) parsed = { key: m[1]!, op: 'equal', value: m[2]!.trim() };
    else if ((m = term.match(/^!\s*([^=!\s]+)$/))) parsed = { key: m[1]!, op: 'notExists' };
    else if ((m = term.match(/^([^=!\s]+)$/))) parsed = { key: m[1]!, op: 'exists' };
    else throw new Error(`invalid label selector term ${JSON.stringify(term)}`);
    if (!LABEL_KEY.test(parsed.key)) throw new Error(`invalid label key ${JSON.stringify(parsed.key)} in selector`);
    terms.push(parsed);
  }
  return terms;
}

export function matchLabels(labels: Record<string, string>, terms: readonly LabelTerm[]): boolean {
  return terms.every((t) => matchLabelTerm(labels, t) !== !!t.invert);
}

function matchLabelTerm(labels: Record<string, string>, t: LabelTerm): boolean {
  const has = Object.hasOwn(labels, t.key);
  const v = labels[t.key]!;
  switch (t.op) {
    case 'equal':
      return has && v === t.value;
    case 'notEqual':
      return !has || v !== t.value;
    case 'exists':
      return has;
    case 'notExists':
      return !has;
    case 'in':
      return has && t.values.includes(v);
    case 'lt':
      return has && v < t.value;
    case 'lte':
      return has && v <= t.value;
    case 'ltNumeric':
    case 'lteNumeric': {
      const a = Number(v);
      const b = Number(t.value);
      return has && Number.isFinite(a) && Number.isFinite(b) && (t.op === 'ltNumeric' ? a < b : a <= b);
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Checks shared by implementations.

/** Throws a TypeError unless the reference and the resource's maps are well formed. */
export function validateRef(ref: Ref): void {
  for (const field of ['namespace', 'type', 'id'] as const) {
    if (typeof ref[field] !== 'string' || ref[field] === '') {
      throw new TypeError(`resource ${refString(ref)}: ${field} must be a non-empty string`);
    }
  }
}

export function validateResource(r: Resource): void {
  if (typeof r !== 'object' || r === null || typeof r.metadata !== 'object' || r.metadata === null) {
    throw new TypeError('not a resource: metadata missing');
  }
  validateRef(r.metadata);
  for (const field of ['labels', 'annotations'] as const) {
    const map = r.metadata[field];
    if (typeof map !== 'object' || map === null || Array.isArray(map)) {
      throw new TypeError(`resource ${refString(r.metadata)}: ${field} must be an object`);
    }
    for (const [k, v] of Object.entries(map)) {
      if (typeof v !== 'string') throw new TypeError(`resource ${refString(r.metadata)}: ${field}.${k} must be a string`);
    }
  }
  const badKey = Object.keys(r.metadata.labels).find((k) => !LABEL_KEY.test(k));
  if (badKey !== undefined) throw new TypeError(`resource ${refString(r.metadata)}: invalid label key ${JSON.stringify(badKey)}`);
  if (!Array.isArray(r.metadata.finalizers) || r.metadata.finalizers.some((f) => typeof f !== 'string' || f === '')) {
    throw new TypeError(`resource ${refString(r.metadata)}: finalizers must be non-empty strings`);
  }
  assertJsonable(r.spec, `resource ${refString(r.metadata)}: spec`);
}

/** Throws a TypeError unless v is made of plain objects, arrays, strings, finite numbers,
 *  booleans and null (Dates are allowed too: they survive structuredClone). */
export function assertJsonable(v: unknown, path: string): void {
  if (v === null || typeof v === 'string' || typeof v === 'boolean') return;
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw new TypeError(`${path} is not a finite number`);
    return;
  }
  if (typeof v !== 'object') throw new TypeError(`${path} is a ${typeof v}, not JSON-able`);
  if (v instanceof Date) return;
  if (Array.isArray(v)) {
    v.forEach((item, i) => assertJsonable(item, `${path}[${i}]`));
    return;
  }
  const proto = Object.getPrototypeOf(v);
  if (proto !== Object.prototype && proto !== null) throw new TypeError(`${path} is not a plain object`);
  for (const [k, item] of Object.entries(v)) {
    if (item !== undefined) assertJsonable(item, `${path}.${k}`);
  }
}
