// cosi.resource.State, read side, as COSI's client reads it: Get fails NOT_FOUND on an empty
// reply, List yields the resources, Watch yields each event. Replies carry no node metadata:
// target one node per call (`node`).
import * as grpc from '@grpc/grpc-js';
import type { Resource__Output } from '../contract/wire/cosi/resource/Resource.ts';
import type { Event__Output } from '../contract/wire/cosi/resource/Event.ts';
import type { WatchRequest } from '../contract/wire/cosi/resource/WatchRequest.ts';
import { RpcError } from './errors.ts';
import type { CallOptions, Service } from './rpc.ts';

export class StateAPI {
  constructor(private readonly c: { readonly cosi: Service<'cosi.resource.State'>; readonly currentEndpoint: string }) {}

  async get(namespace: string, type: string, id: string, o?: CallOptions): Promise<Resource__Output> {
    const res = await this.c.cosi.Get({ namespace, type, id }, o);
    if (!res.resource) throw new RpcError(grpc.status.NOT_FOUND, `${namespace}/${type}/${id}: empty reply`, this.c.currentEndpoint);
    return res.resource;
  }

  async *list(namespace: string, type: string, o?: CallOptions): AsyncGenerator<Resource__Output, void, undefined> {
    for await (const r of this.c.cosi.List({ namespace, type }, o)) {
      if (r.resource) yield r.resource;
    }
  }

  async *watch(req: WatchRequest, o?: CallOptions): AsyncGenerator<Event__Output, void, undefined> {
    for await (const r of this.c.cosi.Watch(req, o)) yield* r.event;
  }
}
