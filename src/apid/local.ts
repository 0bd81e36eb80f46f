// apid's unary calls to this node's daemons: gRPC over HTTP/2 on their unix sockets, spoken
// with node:http2 directly. apid relays requests and replies as raw bytes, so of a gRPC client
// it needs only the framing: one HTTP/2 connection per socket, and per call a request with the
// caller's roles, one length-prefixed message each way and the status from the trailers. A
// grpc-js client does the same through a stack of layers (resolver, load balancer, retries,
// interceptors, filters, channelz, a captured stack trace per call) that a unix socket to a
// daemon of the same node has no use for: for Version (bench/api.ts) that stack and the
// garbage it leaves were about half of apid's CPU time per call. Streaming calls, and calls
// to other nodes, still go through grpc-js.
//
// Outcomes match grpc-js's client: the daemon's status and message (percent-decoded), HTTP and
// RST_STREAM codes mapped as grpc-js maps them, UNAVAILABLE when the socket cannot be reached,
// DEADLINE_EXCEEDED at the deadline (also sent as grpc-timeout), UNIMPLEMENTED for no or
// several reply messages, RESOURCE_EXHAUSTED past grpc-js's default 4 MiB receive limit. One
// difference, on purpose: a connection lost during a call is UNAVAILABLE (grpc-js says
// CANCELLED when the daemon closes it with GOAWAY(CANCEL), as if the caller had cancelled).
import http2 from 'node:http2';
import net from 'node:net';
import * as grpc from '@grpc/grpc-js';

/** grpc-js's default limit on a received message. */
export const MAX_RECEIVE_MESSAGE_BYTES = 4 * 1024 * 1024;

export interface CallError {
  code: grpc.status;
  details: string;
}

const {
  HTTP2_HEADER_STATUS,
  NGHTTP2_NO_ERROR,
  NGHTTP2_REFUSED_STREAM,
  NGHTTP2_CANCEL,
  NGHTTP2_ENHANCE_YOUR_CALM,
  NGHTTP2_INADEQUATE_SECURITY,
  NGHTTP2_INTERNAL_ERROR,
} = http2.constants;

/** grpc-js's mapping of a non-200 HTTP status without a gRPC status. */
function httpStatusError(status: number): CallError {
  const code =
    status === 400
      ? grpc.status.INTERNAL
      : status === 401
        ? grpc.status.UNAUTHENTICATED
        : status === 403
          ? grpc.status.PERMISSION_DENIED
          : status === 404
            ? grpc.status.UNIMPLEMENTED
            : status === 429 || status === 502 || status === 503 || status === 504
              ? grpc.status.UNAVAILABLE
              : grpc.status.UNKNOWN;
  return { code, details: `Received HTTP status code ${status}` };
}

/** grpc-js's mapping of a stream that closed without a gRPC status. */
function rstError(rstCode: number, httpStatus: number | undefined): CallError {
  switch (rstCode) {
    case NGHTTP2_NO_ERROR:
      return httpStatus && httpStatus !== 200
        ? httpStatusError(httpStatus)
        : { code: grpc.status.INTERNAL, details: `Received RST_STREAM with code ${rstCode} (Call ended without gRPC status)` };
    case NGHTTP2_REFUSED_STREAM:
      return { code: grpc.status.UNAVAILABLE, details: 'Stream refused by server' };
    case NGHTTP2_CANCEL:
      return { code: grpc.status.CANCELLED, details: 'Call cancelled' };
    case NGHTTP2_ENHANCE_YOUR_CALM:
      return { code: grpc.status.RESOURCE_EXHAUSTED, details: 'Bandwidth exhausted or memory limit exceeded' };
    case NGHTTP2_INADEQUATE_SECURITY:
      return { code: grpc.status.PERMISSION_DENIED, details: 'Protocol not secure enough' };
    case NGHTTP2_INTERNAL_ERROR:
      return { code: grpc.status.INTERNAL, details: `Received RST_STREAM with code ${rstCode} (Internal server error)` };
    default:
      return { code: grpc.status.INTERNAL, details: `Received RST_STREAM with code ${rstCode}` };
  }
}

/** The status a response's headers or trailers carry, if any. */
function statusOf(headers: http2.IncomingHttpHeaders): CallError | undefined {
  const status = headers['grpc-status'];
  if (typeof status !== 'string') return undefined;
  const message = headers['grpc-message'];
  let details = '';
  if (typeof message === 'string') {
    try {
      details = decodeURI(message);
    } catch {
      details = message;
    }
  }
  return { code: Number(status), details };
}

/** gRPC's timeout header for a deadline `ms` away (as grpc-js writes it). */
function timeoutHeader(ms: number): string {
  const t = Math.max(ms, 0);
  return t < 1e8 ? `${Math.ceil(t)}m` : t / 1000 < 1e8 ? `${Math.ceil(t / 1000)}S` : t / 60_000 < 1e8 ? `${Math.ceil(t / 60_000)}M` : `${Math.ceil(t / 3_600_000)}H`;
}

function callError(e: CallError): Error & CallError {
  return Object.assign(new Error(e.details), e);
}

function tooLarge(len: number): CallError {
  return { code: grpc.status.RESOURCE_EXHAUSTED, details: `Received message larger than max (${len} vs ${MAX_RECEIVE_MESSAGE_BYTES})` };
}

/** The one message of a unary reply, from the DATA bytes. */
function unaryMessage(chunks: Buffer[], size: number): Buffer | CallError {
  const data = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
  if (data.length < 5) return { code: grpc.status.UNIMPLEMENTED, details: data.length === 0 ? 'No message received' : 'Incomplete message received' };
  if (data[0] !== 0) return { code: grpc.status.INTERNAL, details: 'the daemon sent a compressed message, which apid did not ask for' };
  const len = data.readUInt32BE(1);
  if (len > MAX_RECEIVE_MESSAGE_BYTES) return tooLarge(len);
  if (data.length < 5 + len) return { code: grpc.status.INTERNAL, details: 'Incomplete message received' };
  if (data.length > 5 + len) return { code: grpc.status.UNIMPLEMENTED, details: 'Too many responses received' };
  return data.subarray(5);
}

/**
 * A daemon's unix socket: one HTTP/2 connection, opened on the first call and again after it
 * closes or the daemon says GOAWAY (a restarting daemon); calls in flight on a closing
 * connection finish on it.
 */
export class LocalChannel {
  private session: http2.ClientHttp2Session | undefined;
  private closed = false;

  constructor(readonly socket: string) {}

  private connection(): http2.ClientHttp2Session {
    const current = this.session;
    if (current && !current.closed && !current.destroyed) return current;
    const s = http2.connect('http://localhost', { createConnection: () => net.connect(this.socket) });
    const forget = () => {
      if (this.session === s) this.session = undefined;
    };
    // A connection's failure reaches its streams (and so the calls); the session only goes.
    s.on('error', forget);
    s.on('goaway', forget);
    s.on('close', forget);
    // An idle connection to a daemon never keeps apid alive.
    s.unref();
    this.session = s;
    return s;
  }

  /**
   * One unary call: `request` is the encoded request message, `metadata` the request's
   * metadata (ASCII keys and values); resolves with the encoded reply message or rejects with
   * an Error carrying a gRPC `code` and `details`.
   */
  unary(path: string, request: Buffer, metadata: Readonly<Record<string, string>>, deadline: number): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(callError({ code: grpc.status.UNAVAILABLE, details: 'apid is shutting down' }));
      const headers: http2.OutgoingHttpHeaders = {
        ':method': 'POST',
        ':path': path,
        'content-type': 'application/grpc',
        te: 'trailers',
        ...metadata,
      };
      const remaining = deadline - Date.now();
      if (Number.isFinite(remaining)) headers['grpc-timeout'] = timeoutHeader(remaining);

      let session: http2.ClientHttp2Session;
      let stream: http2.ClientHttp2Stream;
      try {
        session = this.connection();
        stream = session.request(headers);
      } catch (err) {
        return reject(callError({ code: grpc.status.UNAVAILABLE, details: (err as Error).message }));
      }
      const chunks: Buffer[] = [];
      let size = 0;
      let httpStatus: number | undefined;
      let status: CallError | undefined;
      let streamError: Error | undefined;
      let done = false;
      let timer: NodeJS.Timeout | undefined;

      const finish = (outcome: Buffer | CallError) => {
        if (done) return;
        done = true;
        if (timer) clearTimeout(timer);
        if (Buffer.isBuffer(outcome)) resolve(outcome);
        else reject(callError(outcome));
      };
      const settle = () => {
        if (!status) return;
        if (status.code !== grpc.status.OK) return finish(status);
        finish(unaryMessage(chunks, size));
      };

      if (Number.isFinite(remaining)) {
        timer = setTimeout(() => {
          finish({ code: grpc.status.DEADLINE_EXCEEDED, details: 'Deadline exceeded' });
          stream.close(NGHTTP2_CANCEL);
        }, Math.min(Math.max(remaining, 0), 2_147_483_647));
      }
      stream.on('response', (h) => {
        httpStatus = Number(h[HTTP2_HEADER_STATUS]);
        status = statusOf(h); // a trailers-only reply (an error) carries its status here
      });
      stream.on('data', (chunk: Buffer) => {
        if (done) return;
        chunks.push(chunk);
        size += chunk.length;
        // An oversized reply is refused as soon as its length prefix says so, not buffered.
        if (size >= 5 && size - chunk.length < 5) {
          const len = (chunks.length === 1 ? chunk : Buffer.concat(chunks, size)).readUInt32BE(1);
          if (len > MAX_RECEIVE_MESSAGE_BYTES) {
            finish(tooLarge(len));
            stream.close(NGHTTP2_CANCEL);
          }
        }
      });
      stream.on('trailers', (t) => {
        status = statusOf(t) ?? (httpStatus ? httpStatusError(httpStatus) : { code: grpc.status.UNKNOWN, details: 'No status information received' });
      });
      stream.on('end', settle);
      stream.on('error', (err) => {
        streamError = err;
      });
      stream.on('close', () => {
        if (done) return;
        if (status) return settle();
        // No status: the connection never opened or went away (the daemon is down or
        // restarting: UNAVAILABLE, which a client may retry), or the daemon reset the stream.
        const code = (streamError as { code?: string } | undefined)?.code;
        if (code === 'ERR_HTTP2_STREAM_CANCEL' && streamError!.cause instanceof Error) {
          return finish({ code: grpc.status.UNAVAILABLE, details: `No connection established. Last error: ${streamError!.cause.message}` });
        }
        if (streamError && code !== 'ERR_HTTP2_STREAM_ERROR') return finish({ code: grpc.status.UNAVAILABLE, details: `Connection dropped: ${streamError.message}` });
        const rst = stream.rstCode ?? NGHTTP2_INTERNAL_ERROR;
        // Node resets a lost connection's open streams with CANCEL.
        if (rst === NGHTTP2_CANCEL && session.destroyed) return finish({ code: grpc.status.UNAVAILABLE, details: 'Connection dropped' });
        finish(rstError(rst, httpStatus));
      });

      const frame = Buffer.allocUnsafe(5 + request.length);
      frame[0] = 0;
      frame.writeUInt32BE(request.length, 1);
      request.copy(frame, 5);
      stream.end(frame);
    });
  }

  close(): void {
    this.closed = true;
    this.session?.close();
    this.session = undefined;
  }
}
