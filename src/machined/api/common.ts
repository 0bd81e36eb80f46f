// Shared by the machine API handlers: errors carrying a gRPC status, the unary and streaming
// plumbing (errors mapped to statuses by status.ts, backpressure, cancellation), and wire
// conversions.
//
// Replies leave `metadata` unset: apid stamps each node's reply with its hostname.

import * as grpc from '@grpc/grpc-js';
import { ApiError, statusOf } from './status.ts';

export { ApiError, errnoStatus, isErrno } from './status.ts';
export { sleep } from '../../lib/sleep.ts';

export const notFound = (msg: string) => new ApiError(grpc.status.NOT_FOUND, msg);
export const invalidArgument = (msg: string) => new ApiError(grpc.status.INVALID_ARGUMENT, msg);
export const permissionDenied = (msg: string) => new ApiError(grpc.status.PERMISSION_DENIED, msg);
export const unavailable = (msg: string) => new ApiError(grpc.status.UNAVAILABLE, msg);

/** An error as the status the call ends with: its message, the code statusOf (status.ts) gives it, and an ApiError's trailers. */
export function toServiceError(err: unknown): grpc.ServiceError {
  const message = err instanceof Error ? err.message : String(err);
  const code = statusOf(err);
  const metadata = (err instanceof ApiError ? err.metadata : undefined) ?? new grpc.Metadata();
  return Object.assign(new Error(message), { code, details: message, metadata });
}

// ---------------------------------------------------------------------------------------------
// Handlers.

type UnaryHandler = grpc.handleUnaryCall<any, any>;
type StreamHandler = grpc.handleServerStreamingCall<any, any>;

/** A unary handler from an async function: its result is the reply, a throw the status. */
export function unary<Req, Res>(fn: (req: Req, call: grpc.ServerUnaryCall<Req, Res>) => Promise<Res> | Res): UnaryHandler {
  return (call, callback) => {
    Promise.resolve()
      .then(() => fn(call.request as Req, call as grpc.ServerUnaryCall<Req, Res>))
      .then(
        (reply) => callback(null, reply),
        (err: unknown) => callback(toServiceError(err)),
      );
  };
}

/**
 * A server-streaming handler from an async function. The function sends with stream.send
 * (which waits while the client is slow) and returns when the stream is complete; a throw
 * ends the call with that status. stream.signal aborts when the client cancels (or the server
 * shuts down), and the call is then left alone.
 */
export function serverStream<Req, Res>(fn: (req: Req, stream: Stream<Res>, call: grpc.ServerWritableStream<Req, Res>) => Promise<void>): StreamHandler {
  return (call) => {
    const stream = new Stream<Res>(call as grpc.ServerWritableStream<Req, Res>);
    Promise.resolve()
      .then(() => fn(call.request as Req, stream, call as grpc.ServerWritableStream<Req, Res>))
      .then(
        () => stream.end(),
        (err: unknown) => stream.fail(err),
      );
  };
}

/** Messages a follower may have pending before it is cut off. */
export const PUSH_LIMIT = 10_000;

export class Stream<T> {
  readonly #call: grpc.ServerWritableStream<unknown, T>;
  readonly #abort = new AbortController();
  #ended = false;

  constructor(call: grpc.ServerWritableStream<unknown, T>) {
    this.#call = call;
    if (call.cancelled) this.#abort.abort();
    call.on('cancelled', () => this.#abort.abort());
    call.on('close', () => this.#abort.abort());
  }

  /** Aborted when the stream is over: the client is gone, the server shut down, or it ended. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  get closed(): boolean {
    return this.#ended || this.#abort.signal.aborted;
  }

  /** Sends one message; resolves when the stream can take more (or the client is gone). */
  send(msg: T): Promise<void> {
    if (this.closed) return Promise.resolve();
    if (this.#call.write(msg)) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        this.#call.off('drain', done);
        this.signal.removeEventListener('abort', done);
        resolve();
      };
      this.#call.on('drain', done);
      this.signal.addEventListener('abort', done, { once: true });
    });
  }

  /**
   * Sends without waiting (for live followers; grpc-js buffers what the socket cannot take).
   * A client that lets more than PUSH_LIMIT messages pile up is cut off (RESOURCE_EXHAUSTED),
   * so that a stalled follower cannot grow machined's memory without bound.
   */
  push(msg: T): void {
    if (this.closed) return;
    if ((this.#call.writableLength ?? 0) >= PUSH_LIMIT) {
      this.fail(new ApiError(grpc.status.RESOURCE_EXHAUSTED, `the client fell more than ${PUSH_LIMIT} messages behind`));
      return;
    }
    this.#call.write(msg);
  }

  /** Resolves when the stream is over (see signal). */
  untilCancelled(): Promise<void> {
    if (this.signal.aborted) return Promise.resolve();
    return new Promise((resolve) => this.signal.addEventListener('abort', () => resolve(), { once: true }));
  }

  end(): void {
    if (this.closed) return;
    this.#ended = true;
    this.#call.end();
    this.#abort.abort();
  }

  fail(err: unknown): void {
    if (this.closed) return;
    this.#ended = true;
    this.#call.emit('error', toServiceError(err));
    this.#abort.abort();
  }
}

/**
 * The messages a client streams to the server (a bidi call's requests), read one at a time with
 * backpressure: the call is paused while a message waits to be taken, so a slow reader slows
 * the client (HTTP/2 flow control) instead of filling memory.
 *
 * Not Node's `Readable` async iterator: when the handler ends the call with an error
 * (`call.emit('error', status)`, grpc-js's way to send a status) while a read is pending, that
 * iterator takes the error as its own and destroys the call, and grpc-js then sends no status
 * at all: the client, still uploading, waits for good once the flow-control windows are full
 * (issue 17: `upgrade --image` of a 58 MiB non-image stalled at "upload 36 MiB"). This reader
 * only listens; the call's end is the handler's to decide.
 */
export class MessageReader<T> implements AsyncIterator<T> {
  readonly #call: grpc.ServerDuplexStream<T, unknown>;
  readonly #queue: T[] = [];
  #ended = false;
  #failure: Error | undefined;
  #waiting: { resolve: (r: IteratorResult<T>) => void; reject: (e: Error) => void } | undefined;

  constructor(call: grpc.ServerDuplexStream<T, unknown>) {
    this.#call = call;
    call.on('data', (msg: T) => {
      this.#queue.push(msg);
      call.pause();
      this.#wake();
    });
    call.on('end', () => {
      this.#ended = true;
      this.#wake();
    });
    const gone = () => {
      this.#failure ??= new ApiError(grpc.status.CANCELLED, 'the client cancelled the call');
      this.#wake();
    };
    call.on('cancelled', gone);
    call.on('close', () => {
      if (!this.#ended) gone();
    });
  }

  #wake(): void {
    const w = this.#waiting;
    if (!w) return;
    const msg = this.#queue.shift();
    if (msg !== undefined) {
      this.#waiting = undefined;
      return w.resolve({ done: false, value: msg });
    }
    if (this.#ended) {
      this.#waiting = undefined;
      return w.resolve({ done: true, value: undefined });
    }
    if (this.#failure) {
      this.#waiting = undefined;
      w.reject(this.#failure);
    }
  }

  next(): Promise<IteratorResult<T>> {
    if (this.#waiting) return Promise.reject(new Error('MessageReader: one read at a time'));
    return new Promise((resolve, reject) => {
      this.#waiting = { resolve, reject };
      this.#wake();
      if (this.#waiting && this.#queue.length === 0) this.#call.resume();
    });
  }
}

// ---------------------------------------------------------------------------------------------
// Wire conversions.

export interface Timestamp {
  seconds: number;
  nanos: number;
}

export function toTimestamp(date: Date | number): Timestamp {
  const ms = typeof date === 'number' ? date : date.getTime();
  const seconds = Math.floor(ms / 1000);
  return { seconds, nanos: Math.round((ms - seconds * 1000) * 1e6) };
}

/** Seconds and nanos as grpc-js decodes them (int64 as string with longs: String). */
export function fromTimestamp(ts: { seconds?: string | number; nanos?: number } | null | undefined): Date | undefined {
  if (!ts) return undefined;
  return new Date(Number(ts.seconds ?? 0) * 1000 + Math.floor((ts.nanos ?? 0) / 1e6));
}
