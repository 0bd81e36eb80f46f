// Test aids for the API handlers: call a unary or server-streaming handler in-process, with a
// stand-in for the grpc-js call object (the integration test uses a real server and client).

import { EventEmitter } from 'node:events';
import * as grpc from '@grpc/grpc-js';

export interface CallError {
  code: grpc.status;
  message: string;
}

/** Calls a unary handler; rejects with { code, message } when it answers with an error. */
export function callUnary<Res = any>(handler: grpc.handleUnaryCall<any, any> | undefined, request: unknown, metadata = new grpc.Metadata()): Promise<Res> {
  if (!handler) throw new Error('no such handler');
  return new Promise((resolve, reject) => {
    const call = Object.assign(new EventEmitter(), { request, metadata, cancelled: false });
    handler(call as unknown as grpc.ServerUnaryCall<any, any>, (err, reply) => {
      if (err) {
        const e = err as grpc.ServiceError;
        reject({ code: e.code ?? grpc.status.UNKNOWN, message: e.message } satisfies CallError);
      }
      else resolve(reply as Res);
    });
  });
}

/** A server-streaming call in progress: what was written, and how it ended. */
export class FakeStream<Res = any> extends EventEmitter {
  readonly messages: Res[] = [];
  cancelled = false;
  ended = false;
  error: CallError | undefined;
  readonly done: Promise<void>;
  #resolve!: () => void;
  #waiters: Array<{ n: number; resolve: () => void }> = [];

  constructor(
    readonly request: unknown,
    readonly metadata = new grpc.Metadata(),
  ) {
    super();
    this.done = new Promise((resolve) => (this.#resolve = resolve));
    this.on('error', (err: grpc.ServiceError) => {
      this.error = { code: err.code ?? grpc.status.UNKNOWN, message: err.message };
      this.#finish();
    });
  }

  write(msg: Res): boolean {
    if (this.ended) throw new Error('write after end');
    this.messages.push(msg);
    this.#waiters = this.#waiters.filter((w) => (this.messages.length >= w.n ? (w.resolve(), false) : true));
    return true;
  }

  end(): void {
    this.#finish();
  }

  /** As when the client cancels; `done` resolves a macrotask later, once the handler has
   *  had its turn to clean up. */
  cancel(): void {
    this.cancelled = true;
    this.emit('cancelled', 'cancelled');
    setTimeout(() => this.#finish(), 0);
  }

  /** Resolves once n messages have been written in all. */
  waitFor(n: number, timeoutMs = 3000): Promise<void> {
    if (this.messages.length >= n) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`timed out waiting for ${n} messages (have ${this.messages.length})`)), timeoutMs);
      this.#waiters.push({
        n,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
    });
  }

  #finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.#resolve();
  }
}

/** Starts a server-streaming handler on a FakeStream. */
export function callStream<Res = any>(handler: grpc.handleServerStreamingCall<any, any> | undefined, request: unknown, metadata?: grpc.Metadata): FakeStream<Res> {
  if (!handler) throw new Error('no such handler');
  const stream = new FakeStream<Res>(request, metadata);
  handler(stream as unknown as grpc.ServerWritableStream<any, any>);
  return stream;
}

/** Runs a streaming call to its end and returns the messages; rejects with its error. */
export async function collect<Res = any>(handler: grpc.handleServerStreamingCall<any, any> | undefined, request: unknown, metadata?: grpc.Metadata): Promise<Res[]> {
  const s = callStream<Res>(handler, request, metadata);
  await s.done;
  if (s.error) throw s.error;
  return s.messages;
}
