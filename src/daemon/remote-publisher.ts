// The Publisher a daemon uses in production: machined's cosi.resource.State over its unix
// socket, naming the daemon as owner (machined allows it the types it owns, see
// src/contract/owners.ts). Specs travel as YAML, as COSI's yaml_spec.
import * as grpc from '@grpc/grpc-js';
import YAML from 'yaml';
import { OWNER_METADATA_KEY } from '../contract/owners.ts';
import { socketPath } from '../contract/paths.ts';
import { serviceClient } from '../contract/protos.ts';
import { LOCAL_CHANNEL_OPTIONS } from './local-channel.ts';
import { jsonEqual, newResource, type Resource } from '../state/resource.ts';
import type { WatchEvent } from '../state/state.ts';
import type { Publisher } from './publisher.ts';

interface WireResource {
  metadata: { namespace: string; type: string; id: string; version: string; owner: string; phase: string; labels: Record<string, string>; annotations: Record<string, string>; finalizers: string[] };
  spec: { yaml_spec: string };
}

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

function toResource<S>(w: WireResource): Resource<S> {
  const m = w.metadata;
  const r = newResource<S>(m.namespace, m.type, m.id, (w.spec.yaml_spec ? YAML.parse(w.spec.yaml_spec) : null) as S, { labels: m.labels, annotations: m.annotations });
  r.metadata.version = Number(m.version);
  r.metadata.owner = m.owner;
  return r;
}

function toWire(namespace: string, type: string, id: string, spec: unknown, labels: Record<string, string>): object {
  return { metadata: { namespace, type, id, labels }, spec: { yaml_spec: YAML.stringify(spec ?? null) } };
}

export class RemotePublisher implements Publisher {
  private readonly client: StateClient;

  constructor(
    private readonly owner: string,
    socket = socketPath('machined'),
    private readonly timeoutMs = 10_000,
  ) {
    const State = serviceClient('cosi.resource.State');
    this.client = new State(`unix:${socket}`, grpc.credentials.createInsecure(), LOCAL_CHANNEL_OPTIONS) as unknown as StateClient;
  }

  close(): void {
    this.client.close();
  }

  // waitForReady (a metadata option in grpc-js, not a call option): a call made while machined's
  // socket is not there yet (a daemon machined started before it serves, machined/early.ts)
  // waits for it, within its deadline, instead of failing at once.
  private md(): grpc.Metadata {
    const md = new grpc.Metadata({ waitForReady: true });
    md.set(OWNER_METADATA_KEY, this.owner);
    return md;
  }

  private unary(fn: Unary, req: object): Promise<any> {
    return new Promise((resolve, reject) =>
      fn.call(this.client, req, this.md(), { deadline: Date.now() + this.timeoutMs }, (e, r) => (e ? reject(e) : resolve(r))),
    );
  }

  async apply(namespace: string, type: string, id: string, spec: unknown, labels: Record<string, string> = {}): Promise<void> {
    let current: WireResource | undefined;
    try {
      current = (await this.unary(this.client.Get, { namespace, type, id })).resource;
    } catch (err) {
      if ((err as grpc.ServiceError).code !== grpc.status.NOT_FOUND) throw err;
    }
    const wire = toWire(namespace, type, id, spec, labels);
    if (!current) {
      await this.unary(this.client.Create, { resource: wire, options: { owner: this.owner } });
      return;
    }
    const existing = toResource(current);
    if (jsonEqual(existing.spec, JSON.parse(JSON.stringify(spec ?? null))) && jsonEqual(existing.metadata.labels, labels)) return;
    await this.unary(this.client.Update, { new_resource: wire, options: { owner: this.owner } });
  }

  async destroy(namespace: string, type: string, id: string): Promise<void> {
    try {
      await this.unary(this.client.Destroy, { namespace, type, id, options: { owner: this.owner } });
    } catch (err) {
      if ((err as grpc.ServiceError).code !== grpc.status.NOT_FOUND) throw err;
    }
  }

  list<S = unknown>(namespace: string, type: string): Promise<Resource<S>[]> {
    return new Promise((resolve, reject) => {
      const out: Resource<S>[] = [];
      const s = this.client.List({ namespace, type }, this.md(), { deadline: Date.now() + this.timeoutMs });
      s.on('data', (m: { resource: WireResource }) => out.push(toResource<S>(m.resource)));
      s.on('error', reject);
      s.on('end', () => resolve(out));
    });
  }

  async *watch<S = unknown>(namespace: string, type: string, signal: AbortSignal): AsyncIterable<WatchEvent<S>> {
    const s = this.client.Watch({ namespace, type, options: { bootstrap_contents: true }, api_version: 1 }, this.md());
    const abort = () => s.cancel();
    signal.addEventListener('abort', abort, { once: true });
    try {
      for await (const msg of s as AsyncIterable<{ event: Array<{ event_type: string; resource?: WireResource; old?: WireResource; error?: string }> }>) {
        for (const ev of msg.event) {
          switch (ev.event_type) {
            case 'CREATED':
              yield { type: 'created', resource: toResource<S>(ev.resource!) };
              break;
            case 'UPDATED':
              yield { type: 'updated', resource: toResource<S>(ev.resource!), old: toResource<S>(ev.old ?? ev.resource!) };
              break;
            case 'DESTROYED':
              yield { type: 'destroyed', resource: toResource<S>(ev.resource!) };
              break;
            case 'BOOTSTRAPPED':
              yield { type: 'bootstrapped' };
              break;
            case 'ERRORED':
              yield { type: 'errored', error: new Error(ev.error ?? 'watch failed') };
              return;
          }
        }
      }
    } catch (err) {
      if (!signal.aborted) throw err;
    } finally {
      signal.removeEventListener('abort', abort);
    }
  }
}
