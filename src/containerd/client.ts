// A small generic client for containerd 1.6's own gRPC API over its unix socket.
//
//   const c = connectContainerd('/system/run/containerd/containerd.sock');
//   const v = await c.unary<{ version: string }>('containerd.services.version.v1.Version', 'Version', {});
//   const { containers } = await c.unary<{ containers: Container[] }>(
//     'containerd.services.containers.v1.Containers', 'List', { filters: [] }, 'taloscontainers');
//   for await (const e of c.serverStream<Envelope>('containerd.services.events.v1.Events', 'Subscribe', { filters: [] })) ...
//   const w = await c.bidi<WriteContentRequest, WriteContentResponse>('containerd.services.content.v1.Content', 'Write', 'ns');
//   w.write({ action: 'STAT', ref: 'x' }); const { value } = await w.responses.next(); w.end();
//   c.close();
//
// Messages are plain objects with the protos' own field names (snake_case: `type_url`,
// `container_id`). Going in, int64/uint64 take a number or a decimal string; coming out they are
// decimal strings (as proto-loader's `longs: String`). Enums come out as their names ('RUNNING')
// and go in as names or numbers. Every field is present on replies (defaults filled). bytes are
// Buffers. google.protobuf.Timestamp is `{ seconds: string, nanos: number }` (timestampToDate).
// google.protobuf.Any is `{ type_url, value: Buffer }`: jsonAny / encodeAny make one, decodeAny
// reads one. The namespace argument goes in the `containerd-namespace` header, as containerd's
// own client sends it. Errors are grpc-js ServiceErrors (code: grpc.status.NOT_FOUND, ...).
//
// The descriptor is the module `bronze:containerd-protos`, loaded (dynamic import) on the first
// call, so a process that never talks to containerd never parses it. grpc-js's own
// @grpc/proto-loader is not used because it wants .proto files at run time; the conversions are
// the ones proto-loader makes, as src/contract/protos.ts does for Bronze's own protos.
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs/light.js';

/** google.protobuf.Any as a plain object. */
export interface Any {
  type_url: string;
  value: Buffer | Uint8Array;
}

/** google.protobuf.Timestamp as this client hands it out. */
export interface Timestamp {
  seconds: string | number;
  nanos: number;
}

export interface CallOptions {
  /** Cancels the call (the promise rejects / the iteration ends with a CANCELLED error). */
  signal?: AbortSignal;
  /** Deadline in milliseconds from now. */
  timeoutMs?: number;
  /** A lease id (Leases service) that holds what the call creates until the lease is deleted. */
  lease?: string;
}

/** A bidirectional call: write requests, read replies in order, end when done. */
export interface BidiCall<Req, Res> {
  write(req: Req): void;
  /** Half-closes the request side. */
  end(): void;
  cancel(): void;
  /** The replies; the iteration throws the call's error, if any. */
  responses: AsyncIterator<Res> & AsyncIterable<Res>;
}

export interface ContainerdClient {
  unary<Res = Record<string, unknown>>(service: string, method: string, req: object, namespace?: string, opts?: CallOptions): Promise<Res>;
  serverStream<Res = Record<string, unknown>>(service: string, method: string, req: object, namespace?: string, opts?: CallOptions): AsyncIterable<Res>;
  bidi<Req extends object = Record<string, unknown>, Res = Record<string, unknown>>(service: string, method: string, namespace?: string, opts?: CallOptions): Promise<BidiCall<Req, Res>>;
  close(): void;
}

/** The header containerd reads the namespace from (containerd/namespaces/grpc.go). */
export const NAMESPACE_HEADER = 'containerd-namespace';
/** The header containerd reads a lease from (containerd/leases/grpc.go). */
export const LEASE_HEADER = 'containerd-lease';

/** How replies are turned into plain objects: proto-loader's conversion, as Bronze uses it. */
const CONVERSION: protobuf.IConversionOptions = { longs: String, enums: String, defaults: true };

let rootPromise: Promise<protobuf.Root> | undefined;
/** The protobufjs root of containerd's protos, made once, on first use. */
export function containerdRoot(): Promise<protobuf.Root> {
  return (rootPromise ??= import('bronze:containerd-protos').then(({ descriptor }) => {
    const root = protobuf.Root.fromJSON(JSON.parse(descriptor) as protobuf.INamespace);
    root.resolveAll();
    return root;
  }));
}

/** A message type of containerd's protos by full name (`containerd.types.Descriptor`). */
export async function containerdType(fullName: string): Promise<protobuf.Type> {
  return (await containerdRoot()).lookupType(fullName);
}

/** An Any holding `obj` encoded as the message `messageType` (`containerd.runc.v1.Options`). */
export async function encodeAny(typeUrl: string, messageType: string, obj: object): Promise<Any> {
  const t = await containerdType(messageType);
  return { type_url: typeUrl, value: Buffer.from(t.encode(t.fromObject(obj)).finish()) };
}

/** An Any holding `obj` as JSON, as containerd wants the OCI runtime spec (RUNTIME_SPEC_TYPE_URL). */
export function jsonAny(typeUrl: string, obj: unknown): Any {
  return { type_url: typeUrl, value: Buffer.from(JSON.stringify(obj)) };
}

/** type_url of an OCI runtime spec inside an Any (containerd's typeurl registration). */
export const RUNTIME_SPEC_TYPE_URL = 'types.containerd.io/opencontainers/runtime-spec/1/Spec';

/**
 * The message inside an Any, as a plain object. `messageType` defaults to the type_url's last
 * path element, which is the proto name for the messages containerd registers by it
 * (`io.containerd.cgroups.v2.Metrics`, `containerd.events.TaskExit`).
 */
export async function decodeAny<T = Record<string, unknown>>(any: Any, messageType?: string): Promise<T> {
  const name = messageType ?? any.type_url.slice(any.type_url.lastIndexOf('/') + 1);
  const t = await containerdType(name);
  return t.toObject(t.decode(any.value), CONVERSION) as T;
}

/** A Timestamp as a Date (millisecond precision). */
export function timestampToDate(ts: Timestamp | null | undefined): Date {
  if (!ts) return new Date(0);
  return new Date(Number(ts.seconds) * 1000 + Math.floor(ts.nanos / 1e6));
}

/** A Date as a Timestamp. */
export function dateToTimestamp(d: Date): Timestamp {
  const ms = d.getTime();
  return { seconds: Math.floor(ms / 1000), nanos: (ms % 1000) * 1e6 };
}

/** Whether `err` is a gRPC error with this status code. */
export function hasGrpcCode(err: unknown, code: grpc.status): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === code;
}
export const isNotFound = (err: unknown): boolean => hasGrpcCode(err, grpc.status.NOT_FOUND);
export const isAlreadyExists = (err: unknown): boolean => hasGrpcCode(err, grpc.status.ALREADY_EXISTS);

interface MethodCodec {
  path: string;
  serialize: (v: unknown) => Buffer;
  deserialize: (b: Buffer) => unknown;
}

const codecs = new Map<string, MethodCodec>();
async function methodCodec(service: string, method: string): Promise<MethodCodec> {
  const key = `${service}/${method}`;
  let c = codecs.get(key);
  if (c) return c;
  const root = await containerdRoot();
  let svc: protobuf.Service;
  try {
    svc = root.lookupService(service);
  } catch {
    throw new Error(`unknown containerd service ${service}`);
  }
  const m = svc.methods[method];
  if (!m) throw new Error(`unknown containerd method ${key}`);
  m.resolve();
  const req = m.resolvedRequestType!;
  const res = m.resolvedResponseType!;
  c = {
    path: `/${service}/${method}`,
    serialize: (v) => Buffer.from(req.encode(req.fromObject(v as Record<string, unknown>)).finish()),
    deserialize: (b) => res.toObject(res.decode(b), CONVERSION),
  };
  codecs.set(key, c);
  return c;
}

function metadataFor(namespace?: string, opts?: CallOptions): grpc.Metadata {
  const md = new grpc.Metadata();
  if (namespace) md.set(NAMESPACE_HEADER, namespace);
  if (opts?.lease) md.set(LEASE_HEADER, opts.lease);
  return md;
}

function callOptions(opts?: CallOptions): grpc.CallOptions {
  return opts?.timeoutMs !== undefined ? { deadline: Date.now() + opts.timeoutMs } : {};
}

/** Cancels `call` when `signal` aborts; returns the listener's remover. */
function linkSignal(call: { cancel(): void }, signal?: AbortSignal): () => void {
  if (!signal) return () => {};
  if (signal.aborted) {
    call.cancel();
    return () => {};
  }
  const onAbort = () => call.cancel();
  signal.addEventListener('abort', onAbort, { once: true });
  return () => signal.removeEventListener('abort', onAbort);
}

/**
 * A client of the containerd at `socketPath`. Connecting is lazy: the first call connects. A
 * call made while containerd is not (yet) serving fails at once with UNAVAILABLE (grpc-js's
 * default, no wait-for-ready); the caller retries.
 */
export function connectContainerd(socketPath: string): ContainerdClient {
  const client = new grpc.Client(`unix://${socketPath}`, grpc.credentials.createInsecure(), {
    // Content Read replies and image configs stay far below this; containerd's own limit is 16 MiB.
    'grpc.max_receive_message_length': 16 * 1024 * 1024,
    'grpc.max_send_message_length': 16 * 1024 * 1024,
  });
  return {
    async unary<Res>(service: string, method: string, req: object, namespace?: string, opts?: CallOptions): Promise<Res> {
      const c = await methodCodec(service, method);
      return new Promise<Res>((resolve, reject) => {
        const call = client.makeUnaryRequest(c.path, c.serialize, c.deserialize, req, metadataFor(namespace, opts), callOptions(opts), (err, res) => {
          unlink();
          if (err) reject(err);
          else resolve(res as Res);
        });
        const unlink = linkSignal(call, opts?.signal);
      });
    },
    async *serverStream<Res>(service: string, method: string, req: object, namespace?: string, opts?: CallOptions): AsyncIterable<Res> {
      const c = await methodCodec(service, method);
      const call = client.makeServerStreamRequest(c.path, c.serialize, c.deserialize, req, metadataFor(namespace, opts), callOptions(opts));
      const unlink = linkSignal(call, opts?.signal);
      try {
        // A grpc-js ClientReadableStream is a Node Readable: its async iterator throws the call's error.
        for await (const msg of call) yield msg as Res;
      } finally {
        unlink();
        // A consumer that stops early must not leave the stream open on containerd's side.
        call.cancel();
      }
    },
    async bidi<Req extends object, Res>(service: string, method: string, namespace?: string, opts?: CallOptions): Promise<BidiCall<Req, Res>> {
      const c = await methodCodec(service, method);
      const call = client.makeBidiStreamRequest(c.path, c.serialize, c.deserialize, metadataFor(namespace, opts), callOptions(opts));
      const unlink = linkSignal(call, opts?.signal);
      call.on('close', unlink);
      const it = (call as AsyncIterable<Res>)[Symbol.asyncIterator]();
      const responses: AsyncIterator<Res> & AsyncIterable<Res> = {
        next: () => it.next(),
        return: (v?: unknown) => it.return?.(v) ?? Promise.resolve({ done: true, value: undefined }),
        [Symbol.asyncIterator]() {
          return this;
        },
      };
      return {
        write: (req) => void call.write(req),
        end: () => call.end(),
        cancel: () => call.cancel(),
        responses,
      };
    },
    close: () => client.close(),
  };
}
