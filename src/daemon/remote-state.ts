// RemoteState: the State interface (src/state/state.ts) over machined's unix socket, as
// cosi.resource.State (machined/api/resources.ts) serves it. It is the one client of that
// service in the daemons: RemotePublisher (./remote-publisher.ts) is a Publisher over it. It
// runs the same conformance suite as MemoryState (remote-state.test.ts).
//
// Specs travel as COSI's yaml_spec, in the YAML form of their definition written as JSON (which
// is YAML too: src/contract/resources/wire.ts, jsonSpec). The State errors come back as the
// same classes: machined names them in a trailer (src/state/error-detail.ts), and a NOT_FOUND
// without one is a NotFoundError. Other failures (PERMISSION_DENIED, UNAVAILABLE, ...) are
// grpc-js's errors as they came.
//
// Where the wire differs from a State in the same process:
// - every write names its writer (opts.owner, sent in the bronze-owner metadata): machined
//   refuses writes with owner '' and writes to types the writer does not own;
// - only registered types are served (src/contract/resources/registry.ts);
// - create sends spec and labels (annotations and finalizers are not sent), update spec, labels
//   and opts.expectedVersion;
// - teardown, addFinalizer and removeFinalizer are not served (cosi.resource.State has no call
//   for them) and reject with UnsupportedOverWireError;
// - a watcher that falls behind is cut off by machined's State only once the socket's buffers
//   are full too.
import * as grpc from '@grpc/grpc-js';
import { socketPath } from '../contract/paths.ts';
import { serviceClient } from '../contract/protos.ts';
import { OWNER_METADATA_KEY, RESOURCE_DEFINITIONS, STATE_ERROR_METADATA_KEY } from '../contract/resources/registry.ts';
import { jsonSpec, specFromYaml } from '../contract/resources/wire.ts';
import type { Resource as WireResource, Resource__Output as WireResourceOut } from '../contract/wire/cosi/resource/Resource.ts';
import type { Event__Output as WireEvent } from '../contract/wire/cosi/resource/Event.ts';
import type { GetResponse__Output as GetResponse } from '../contract/wire/cosi/resource/GetResponse.ts';
import type { LabelTerm as WireLabelTerm } from '../contract/wire/cosi/resource/LabelTerm.ts';
import type { ListResponse__Output as ListResponse } from '../contract/wire/cosi/resource/ListResponse.ts';
import type { WatchResponse__Output as WatchResponse } from '../contract/wire/cosi/resource/WatchResponse.ts';
import { stateErrorFromDetail } from '../state/error-detail.ts';
import { NotFoundError, type Phase, type Ref, type Resource, WatchOverflowError } from '../state/resource.ts';
import {
  type LabelTerm,
  type ListOptions,
  type State,
  type UpdateOptions,
  type WatchEvent,
  type WatchKindOptions,
  type WatchOptions,
  type WriteOptions,
  parseLabelSelector,
  validateRef,
  validateResource,
} from '../state/state.ts';
import { LOCAL_CHANNEL_OPTIONS } from './local-channel.ts';

const definitionOf = (type: string) => RESOURCE_DEFINITIONS.find((d) => d.type === type);

type Unary = (req: object, md: grpc.Metadata, opts: grpc.CallOptions, cb: (e: grpc.ServiceError | null, r?: any) => void) => void;
type Streaming = (req: object, md: grpc.Metadata, opts?: grpc.CallOptions) => grpc.ClientReadableStream<any>;
interface StateClient extends grpc.Client {
  Get: Unary;
  Create: Unary;
  Update: Unary;
  Destroy: Unary;
  List: Streaming;
  Watch: Streaming;
}

/** A State call machined's cosi.resource.State has no call for. */
export class UnsupportedOverWireError extends Error {
  override name = 'UnsupportedOverWireError';
  constructor(operation: string) {
    super(`${operation} is not served over machined's socket (cosi.resource.State has no call for it)`);
  }
}

const dateOf = (ts: { seconds?: string | number; nanos?: number } | null | undefined): Date =>
  new Date(Number(ts?.seconds ?? 0) * 1000 + Math.floor((ts?.nanos ?? 0) / 1e6));

/** A resource as machined sent it. */
export function fromWire<S>(w: WireResourceOut | null): Resource<S> {
  const m = w?.metadata;
  if (!m) throw new Error('machined sent a resource without metadata');
  return {
    metadata: {
      namespace: m.namespace,
      type: m.type,
      id: m.id,
      version: Number(m.version),
      owner: m.owner,
      phase: (m.phase === 'tearingDown' ? 'tearingDown' : 'running') satisfies Phase,
      labels: { ...m.labels },
      annotations: { ...m.annotations },
      created: dateOf(m.created),
      updated: dateOf(m.updated),
      finalizers: [...m.finalizers],
    },
    spec: specFromYaml(definitionOf(m.type), w.spec?.yaml_spec ?? '') as S,
  };
}

/** What a write sends: the address, labels and spec (and the version the writer read, for a checked update). */
function toWire(r: Resource<unknown>, expectedVersion?: number): WireResource {
  const { namespace, type, id, labels } = r.metadata;
  return {
    metadata: { namespace, type, id, labels, ...(expectedVersion === undefined ? {} : { version: String(expectedVersion) }) },
    spec: { yaml_spec: jsonSpec(definitionOf(type), r.spec) },
  };
}

/** A State label term as COSI's (notEqual is EQUAL inverted, as COSI writes it). */
function wireTerm(t: LabelTerm): WireLabelTerm {
  const invert = !!t.invert;
  switch (t.op) {
    case 'exists':
      return { key: t.key, op: 'EXISTS', invert };
    case 'notExists':
      return { key: t.key, op: 'NOT_EXISTS', invert };
    case 'in':
      return { key: t.key, op: 'IN', value: [...t.values], invert };
    case 'notEqual':
      return { key: t.key, op: 'EQUAL', value: [t.value], invert: !invert };
    default:
      return { key: t.key, op: ({ equal: 'EQUAL', lt: 'LT', lte: 'LTE', ltNumeric: 'LT_NUMERIC', lteNumeric: 'LTE_NUMERIC' } as const)[t.op], value: [t.value], invert };
  }
}

/** The State error a failed call stands for (see the header), or the call's own error. */
function stateError(err: unknown, ref?: Ref): unknown {
  const e = err as Partial<grpc.ServiceError> | null;
  const detail = e?.metadata?.get(STATE_ERROR_METADATA_KEY)[0];
  const rebuilt = detail === undefined ? undefined : stateErrorFromDetail(String(detail));
  if (rebuilt) return rebuilt;
  if (e?.code === grpc.status.NOT_FOUND && ref) return new NotFoundError(ref);
  return err;
}

/** An ERRORED watch event's error: a WatchOverflowError when it says so. */
function watchError(message: string): Error {
  const m = message.match(/^watch of (.+) fell more than (\d+) events behind/);
  return m ? new WatchOverflowError(m[1]!, Number(m[2])) : new Error(message || 'watch failed');
}

export interface RemoteStateOptions {
  /** Default socketPath('machined'). */
  socket?: string;
  /** Deadline of each call but watches, ms. Default 10 s. */
  timeoutMs?: number;
}

export class RemoteState implements State {
  readonly #client: StateClient;
  readonly #timeoutMs: number;

  constructor(opts: RemoteStateOptions = {}) {
    const State = serviceClient('cosi.resource.State');
    this.#client = new State(`unix:${opts.socket ?? socketPath('machined')}`, grpc.credentials.createInsecure(), LOCAL_CHANNEL_OPTIONS) as unknown as StateClient;
    this.#timeoutMs = opts.timeoutMs ?? 10_000;
  }

  close(): void {
    this.#client.close();
  }

  // waitForReady (a metadata option in grpc-js, not a call option): a call made while machined's
  // socket is not there yet (a daemon machined started before it serves, machined/early.ts)
  // waits for it, within its deadline, instead of failing at once.
  #md(owner?: string): grpc.Metadata {
    const md = new grpc.Metadata({ waitForReady: true });
    if (owner !== undefined) md.set(OWNER_METADATA_KEY, owner);
    return md;
  }

  async #unary(fn: Unary, req: object, ref: Ref, owner?: string): Promise<any> {
    try {
      return await new Promise((resolve, reject) =>
        fn.call(this.#client, req, this.#md(owner), { deadline: Date.now() + this.#timeoutMs }, (e, r) => (e ? reject(e) : resolve(r))),
      );
    } catch (err) {
      throw stateError(err, ref);
    }
  }

  async get<S = unknown>(namespace: string, type: string, id: string): Promise<Resource<S>> {
    validateRef({ namespace, type, id });
    const reply = (await this.#unary(this.#client.Get, { namespace, type, id }, { namespace, type, id })) as GetResponse;
    return fromWire<S>(reply.resource);
  }

  async list<S = unknown>(namespace: string, type: string, opts: ListOptions = {}): Promise<Array<Resource<S>>> {
    validateRef({ namespace, type, id: '-' });
    const terms = opts.labelSelector === undefined ? [] : parseLabelSelector(opts.labelSelector);
    const options = terms.length === 0 ? {} : { label_query: [{ terms: terms.map(wireTerm) }] };
    return new Promise((resolve, reject) => {
      const out: Array<Resource<S>> = [];
      const s = this.#client.List({ namespace, type, options }, this.#md(), { deadline: Date.now() + this.#timeoutMs });
      s.on('data', (m: ListResponse) => out.push(fromWire<S>(m.resource)));
      s.on('error', (err) => reject(stateError(err)));
      s.on('end', () => resolve(out));
    });
  }

  async create<S>(resource: Resource<S>, opts: WriteOptions): Promise<Resource<S>> {
    validateResource(resource);
    const reply = await this.#unary(this.#client.Create, { resource: toWire(resource), options: { owner: opts.owner } }, resource.metadata, opts.owner);
    return fromWire<S>(reply.resource);
  }

  async update<S>(resource: Resource<S>, opts: UpdateOptions): Promise<Resource<S>> {
    validateResource(resource);
    const req = { new_resource: toWire(resource, opts.expectedVersion), options: { owner: opts.owner } };
    return fromWire<S>((await this.#unary(this.#client.Update, req, resource.metadata, opts.owner)).resource);
  }

  async destroy(namespace: string, type: string, id: string, opts: WriteOptions): Promise<void> {
    validateRef({ namespace, type, id });
    await this.#unary(this.#client.Destroy, { namespace, type, id, options: { owner: opts.owner } }, { namespace, type, id }, opts.owner);
  }

  async teardown<S = unknown>(_namespace: string, _type: string, _id: string, _opts: WriteOptions): Promise<Resource<S>> {
    throw new UnsupportedOverWireError('teardown');
  }

  async addFinalizer<S = unknown>(_namespace: string, _type: string, _id: string, ..._finalizers: string[]): Promise<Resource<S>> {
    throw new UnsupportedOverWireError('addFinalizer');
  }

  async removeFinalizer<S = unknown>(_namespace: string, _type: string, _id: string, ..._finalizers: string[]): Promise<Resource<S>> {
    throw new UnsupportedOverWireError('removeFinalizer');
  }

  watch<S = unknown>(namespace: string, type: string, id: string | undefined, opts: WatchOptions): AsyncIterable<WatchEvent<S>> {
    validateRef({ namespace, type, id: id ?? '-' });
    if (id === undefined) return this.watchKind<S>(namespace, type, { signal: opts.signal, bootstrap: true });
    return this.#watch<S>({ namespace, type, id, options: {}, api_version: 1 }, opts.signal, true);
  }

  watchKind<S = unknown>(namespace: string, type: string, opts: WatchKindOptions): AsyncIterable<WatchEvent<S>> {
    validateRef({ namespace, type, id: '-' });
    return this.#watch<S>({ namespace, type, options: { bootstrap_contents: opts.bootstrap }, api_version: 1 }, opts.signal, false);
  }

  /**
   * The call starts now, not at the first read, so that the watch sees writes made right after
   * it was asked for. It ends when the signal aborts or the reader stops.
   */
  #watch<S>(req: object, signal: AbortSignal, single: boolean): AsyncIterable<WatchEvent<S>> {
    if (signal.aborted) return (async function* () {})();
    const call = this.#client.Watch(req, this.#md());
    call.on('error', () => {}); // read below; this keeps an unread, cancelled call from throwing
    const cancel = () => call.cancel();
    signal.addEventListener('abort', cancel, { once: true });
    return (async function* (): AsyncGenerator<WatchEvent<S>> {
      let bootstrapped = false;
      try {
        for await (const msg of call as AsyncIterable<WatchResponse>) {
          for (const ev of msg.event as WireEvent[]) {
            switch (ev.event_type) {
              case 'CREATED':
                yield { type: 'created', resource: fromWire<S>(ev.resource) };
                break;
              case 'UPDATED':
                yield { type: 'updated', resource: fromWire<S>(ev.resource), old: fromWire<S>(ev.old ?? ev.resource) };
                break;
              case 'DESTROYED':
                // Before the bootstrap ends, a one-id watch is told DESTROYED for an id that does
                // not exist (COSI's tombstone): nothing a State watcher is told.
                if (single && !bootstrapped) break;
                yield { type: 'destroyed', resource: fromWire<S>(ev.resource) };
                break;
              case 'BOOTSTRAPPED':
                bootstrapped = true;
                yield { type: 'bootstrapped' };
                break;
              case 'ERRORED':
                yield { type: 'errored', error: watchError(ev.error ?? '') };
                return;
            }
          }
        }
      } catch (err) {
        if (!signal.aborted) throw stateError(err);
      } finally {
        signal.removeEventListener('abort', cancel);
        call.cancel();
      }
    })();
  }
}
