// Machine events: machined publishes what happens (service state changes, sequences) to an
// EventBus, which keeps a bounded history; the Events RPC streams the requested part of the
// history, then live events, until the client cancels.
//
// As in Talos: with no tail option only new events are sent; tail_events N replays the last N
// kept events (negative: all of them), tail_id those after that event id, tail_seconds those
// of the last N seconds; at most one tail option may be set. with_actor_id keeps only the
// events of that actor (e.g. the actor_id a Reboot reply carried), applied after the tail.
// Each event is a machine.Event whose data is an Any with type URL
// "talos/runtime/<full message name>"; ids are ULIDs: unique and sortable by time.

import { randomBytes } from 'node:crypto';
import type * as grpc from '@grpc/grpc-js';
import { messageType } from '../../contract/protos.ts';
import type { ServiceEvent, ServiceInfo } from '../supervisor/types.ts';
import { invalidArgument, serverStream } from './common.ts';
import { serviceHealth } from './services.ts';

export const TYPE_URL_PREFIX = 'talos/runtime/';

export type ServiceAction = 'INITIALIZED' | 'PREPARING' | 'WAITING' | 'RUNNING' | 'STOPPING' | 'FINISHED' | 'FAILED' | 'SKIPPED' | 'STARTING';
export type SequenceAction = 'NOOP' | 'START' | 'STOP';

export interface ServiceStateEventData {
  service: string;
  action: ServiceAction;
  message: string;
  health?: ReturnType<typeof serviceHealth>;
}

export interface SequenceEventData {
  sequence: string;
  action: SequenceAction;
  error?: { code: 'FATAL' | 'LOCKED' | 'CANCELED'; message: string };
}

/** Payload message names (package machine) and their data. */
export interface EventPayloads {
  'machine.ServiceStateEvent': ServiceStateEventData;
  'machine.SequenceEvent': SequenceEventData;
  'machine.PhaseEvent': { phase: string; action: 'START' | 'STOP' };
  'machine.TaskEvent': { task: string; action: 'START' | 'STOP' };
  'machine.MachineStatusEvent': Record<string, unknown>;
  'machine.AddressEvent': { hostname: string; addresses: string[] };
  'machine.ConfigLoadErrorEvent': { error: string };
  'machine.ConfigValidationErrorEvent': { error: string };
}
export type EventType = keyof EventPayloads;

export interface MachineEvent<T extends EventType = EventType> {
  /** A ULID: unique, sorts in publication order. */
  id: string;
  /** ms since the epoch. */
  ts: number;
  /** Who caused it ('' when nobody in particular). */
  actorId: string;
  type: T;
  data: EventPayloads[T];
}

// ---------------------------------------------------------------------------------------------
// Ids.

const CROCKFORD = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

function base32(value: bigint, chars: number): string {
  let out = '';
  for (let i = 0; i < chars; i++) {
    out = CROCKFORD[Number(value & 31n)]! + out;
    value >>= 5n;
  }
  return out;
}

/** Makes ULIDs that strictly increase, even within one millisecond or when the clock steps back. */
export class UlidGenerator {
  #lastTime = -1;
  #lastRand = 0n;
  constructor(private readonly now: () => number = Date.now) {}

  next(): string {
    const t = Math.max(this.now(), this.#lastTime);
    if (t === this.#lastTime) {
      this.#lastRand++;
    } else {
      this.#lastTime = t;
      // 80 random bits with the top one clear, so increments within a ms cannot overflow.
      this.#lastRand = BigInt(`0x${randomBytes(10).toString('hex')}`) >> 1n;
    }
    return base32(BigInt(t), 10) + base32(this.#lastRand, 16);
  }
}

// ---------------------------------------------------------------------------------------------
// The bus.

export interface EventBusOptions {
  /** Events kept for replay. Default 1000. */
  capacity?: number;
  now?: () => number;
}

export interface TailOptions {
  tailEvents?: number;
  tailId?: string;
  tailSeconds?: number;
  actorId?: string;
}

export class EventBus {
  readonly #history: MachineEvent[] = [];
  readonly #subscribers = new Set<(ev: MachineEvent) => void>();
  readonly #capacity: number;
  readonly #now: () => number;
  readonly #ids: UlidGenerator;

  constructor(opts: EventBusOptions = {}) {
    this.#capacity = opts.capacity ?? 1000;
    this.#now = opts.now ?? Date.now;
    this.#ids = new UlidGenerator(this.#now);
  }

  publish<T extends EventType>(type: T, data: EventPayloads[T], actorId = ''): MachineEvent<T> {
    const ev: MachineEvent<T> = { id: this.#ids.next(), ts: this.#now(), actorId, type, data };
    this.#history.push(ev);
    if (this.#history.length > this.#capacity) this.#history.splice(0, this.#history.length - this.#capacity);
    for (const fn of this.#subscribers) {
      try {
        fn(ev);
      } catch {
        // one broken subscriber must not keep the event from the others
      }
    }
    return ev;
  }

  publishServiceState(data: ServiceStateEventData, actorId = ''): MachineEvent<'machine.ServiceStateEvent'> {
    return this.publish('machine.ServiceStateEvent', data, actorId);
  }

  publishSequence(sequence: string, action: SequenceAction, opts: { error?: SequenceEventData['error']; actorId?: string } = {}): MachineEvent<'machine.SequenceEvent'> {
    return this.publish('machine.SequenceEvent', { sequence, action, ...(opts.error ? { error: opts.error } : {}) }, opts.actorId ?? '');
  }

  /** Every kept event, oldest first. */
  history(): MachineEvent[] {
    return [...this.#history];
  }

  /** Calls fn for every event published from now on; returns the unsubscribe function. */
  subscribe(fn: (ev: MachineEvent) => void): () => void {
    this.#subscribers.add(fn);
    return () => {
      this.#subscribers.delete(fn);
    };
  }

  /** The kept events a tail request selects (see the file comment). Throws an ApiError
   *  (INVALID_ARGUMENT) when more than one tail option is set. */
  select(opts: TailOptions): MachineEvent[] {
    return selectEvents(this.#history, opts, this.#now());
  }
}

export function selectEvents(history: readonly MachineEvent[], opts: TailOptions, now: number): MachineEvent[] {
  const tailEvents = opts.tailEvents ?? 0;
  const tailId = opts.tailId ?? '';
  const tailSeconds = opts.tailSeconds ?? 0;
  const set = [tailEvents !== 0, tailId !== '', tailSeconds !== 0].filter(Boolean).length;
  if (set > 1) throw invalidArgument('only one of tail_events, tail_id and tail_seconds may be set');
  if (tailSeconds < 0) throw invalidArgument(`tail_seconds must not be negative (got ${tailSeconds})`);
  let picked: MachineEvent[];
  if (tailEvents < 0) picked = [...history];
  else if (tailEvents > 0) picked = history.slice(-tailEvents);
  else if (tailId !== '') picked = history.filter((ev) => ev.id > tailId);
  else if (tailSeconds > 0) picked = history.filter((ev) => ev.ts >= now - tailSeconds * 1000);
  else picked = [];
  return opts.actorId ? picked.filter((ev) => ev.actorId === opts.actorId) : picked;
}

// ---------------------------------------------------------------------------------------------
// Supervisor → bus.

/** What mirrorServiceEvents needs of the supervisor. */
export interface ServiceEventSource {
  on(event: 'event', fn: (id: string, ev: ServiceEvent) => void): unknown;
  off(event: 'event', fn: (id: string, ev: ServiceEvent) => void): unknown;
  get(id: string): ServiceInfo | undefined;
}

export function serviceAction(state: ServiceEvent['state']): ServiceAction {
  return state.toUpperCase() as ServiceAction;
}

/** Publishes every supervisor state event as a ServiceStateEvent; returns the function that stops it. */
export function mirrorServiceEvents(supervisor: ServiceEventSource, bus: EventBus): () => void {
  const fn = (id: string, ev: ServiceEvent) => {
    const info = supervisor.get(id);
    bus.publishServiceState({
      service: id,
      action: serviceAction(ev.state),
      message: ev.message,
      ...(info ? { health: serviceHealth(info) } : {}),
    });
  };
  supervisor.on('event', fn);
  return () => {
    supervisor.off('event', fn);
  };
}

// ---------------------------------------------------------------------------------------------
// The wire.

export interface WireEvent {
  id: string;
  actor_id: string;
  data: { type_url: string; value: Uint8Array };
}

/** A machine.Event with the payload packed into its Any. */
export function toWireEvent(ev: MachineEvent): WireEvent {
  const type = messageType(ev.type);
  const message = type.fromObject(ev.data as Record<string, unknown>); // before encode: see protos.ts serializer
  const value = type.encode(message).finish();
  return { id: ev.id, actor_id: ev.actorId, data: { type_url: TYPE_URL_PREFIX + ev.type, value } };
}

/** The payload of a wire event (for clients and tests). */
export function decodeWireEvent(ev: { data?: { type_url?: string; value?: Uint8Array } | null }): { type: string; data: Record<string, unknown> } {
  const url = ev.data?.type_url ?? '';
  if (!url.startsWith(TYPE_URL_PREFIX)) throw new Error(`unexpected event type URL ${JSON.stringify(url)}`);
  const name = url.slice(TYPE_URL_PREFIX.length);
  const type = messageType(name);
  const data = type.toObject(type.decode(ev.data?.value ?? new Uint8Array()), { enums: String, longs: String, defaults: true });
  return { type: name, data };
}

export interface EventsRequest {
  tail_events?: number;
  tail_id?: string;
  tail_seconds?: number;
  with_actor_id?: string;
}

export function eventsHandlers(bus: EventBus): Record<string, grpc.handleServerStreamingCall<any, any>> {
  return {
    Events: serverStream<EventsRequest, WireEvent>(async (req, stream) => {
      const actorId = req.with_actor_id ?? '';
      // The replay and the subscription are taken in one tick: nothing falls between them.
      const replay = bus.select({ tailEvents: req.tail_events, tailId: req.tail_id, tailSeconds: req.tail_seconds, actorId });
      let pending: MachineEvent[] | undefined = [];
      const unsubscribe = bus.subscribe((ev) => {
        if (actorId && ev.actorId !== actorId) return;
        if (pending) pending.push(ev);
        else stream.push(toWireEvent(ev));
      });
      try {
        for (const ev of replay) await stream.send(toWireEvent(ev));
        while (pending.length > 0 && !stream.closed) {
          for (const ev of pending.splice(0)) await stream.send(toWireEvent(ev));
        }
        pending = undefined;
        await stream.untilCancelled();
      } finally {
        unsubscribe();
      }
    }),
  };
}
