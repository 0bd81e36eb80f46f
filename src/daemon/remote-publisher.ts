// The Publisher a daemon uses in production: machined's cosi.resource.State over its unix
// socket, naming the daemon as owner (machined allows it the types whose definition names it
// owner, see src/contract/resources/). Specs travel as COSI's yaml_spec, in the YAML form of
// their definition (src/contract/resources/wire.ts).
import * as grpc from '@grpc/grpc-js';
import { socketPath } from '../contract/paths.ts';
import { serviceClient } from '../contract/protos.ts';
import { LOCAL_CHANNEL_OPTIONS } from './local-channel.ts';
import { OWNER_METADATA_KEY, RESOURCE_DEFINITIONS } from '../contract/resources/registry.ts';
import { specFromYaml, yamlSpec } from '../contract/resources/wire.ts';
import type { Resource as WireResource, Resource__Output as WireResourceOut } from '../contract/wire/cosi/resource/Resource.ts';
import type { Event__Output as WireEvent } from '../contract/wire/cosi/resource/Event.ts';
import type { GetResponse__Output as GetResponse } from '../contract/wire/cosi/resource/GetResponse.ts';
import type { ListResponse__Output as ListResponse } from '../contract/wire/cosi/resource/ListResponse.ts';
import type { WatchResponse__Output as WatchResponse } from '../contract/wire/cosi/resource/WatchResponse.ts';
import { newResource, type Resource } from '../state/resource.ts';
import { createOrUpdate } from '../state/apply.ts';
import type { WatchEvent } from '../state/state.ts';
import type { Publisher } from './publisher.ts';

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

function toResource<S>(w: WireResourceOut | null): Resource<S> {
  const m = w?.metadata;
  if (!m) throw new Error('machined sent a resource without metadata');
  const r = newResource<S>(m.namespace, m.type, m.id, specFromYaml(definitionOf(m.type), w.spec?.yaml_spec ?? '') as S, { labels: m.labels, annotations: m.annotations });
  r.metadata.version = Number(m.version);
  r.metadata.owner = m.owner;
  return r;
}

function toWire(r: Resource<unknown>): WireResource {
  const { namespace, type, id, labels } = r.metadata;
  return { metadata: { namespace, type, id, labels }, spec: { yaml_spec: yamlSpec(definitionOf(type), r.spec) } };
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
    await createOrUpdate(
      {
        find: async () => {
          try {
            const current = ((await this.unary(this.client.Get, { namespace, type, id })) as GetResponse).resource;
            return current ? toResource(current) : undefined;
          } catch (err) {
            if ((err as grpc.ServiceError).code === grpc.status.NOT_FOUND) return undefined;
            throw err;
          }
        },
        create: async (r) => {
          await this.unary(this.client.Create, { resource: toWire(r), options: { owner: this.owner } });
        },
        update: async (r) => {
          await this.unary(this.client.Update, { new_resource: toWire(r), options: { owner: this.owner } });
        },
      },
      { namespace, type, id },
      spec,
      { labels },
    );
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
      s.on('data', (m: ListResponse) => out.push(toResource<S>(m.resource)));
      s.on('error', reject);
      s.on('end', () => resolve(out));
    });
  }

  async *watch<S = unknown>(namespace: string, type: string, signal: AbortSignal): AsyncIterable<WatchEvent<S>> {
    const s = this.client.Watch({ namespace, type, options: { bootstrap_contents: true }, api_version: 1 }, this.md());
    const abort = () => s.cancel();
    signal.addEventListener('abort', abort, { once: true });
    try {
      for await (const msg of s as AsyncIterable<WatchResponse>) {
        for (const ev of msg.event as WireEvent[]) {
          switch (ev.event_type) {
            case 'CREATED':
              yield { type: 'created', resource: toResource<S>(ev.resource) };
              break;
            case 'UPDATED':
              yield { type: 'updated', resource: toResource<S>(ev.resource), old: toResource<S>(ev.old ?? ev.resource) };
              break;
            case 'DESTROYED':
              yield { type: 'destroyed', resource: toResource<S>(ev.resource) };
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
