// ServiceList, ServiceStart, ServiceStop, ServiceRestart: the supervisor's services in the
// Talos ServiceInfo shape. machined itself is listed too (as in Talos: Running, health
// unknown) but cannot be started, stopped or restarted through the API.
//
// Every call reaches machined through apid: stopping or restarting apid would cut the call
// before its reply. For apid the reply goes first, and the stop or restart follows (as Reboot
// does); `bronzectl service apid restart` then waits for apid to come back.

import * as grpc from '@grpc/grpc-js';
import type { ServiceEvent, ServiceInfo } from '../supervisor/types.ts';
import { ApiError, invalidArgument, notFound, sleep, toTimestamp, unary, type Timestamp } from './common.ts';

/** What these handlers need of the supervisor. */
export interface ServiceControl {
  list(): ServiceInfo[];
  get(id: string): ServiceInfo | undefined;
  startService(id: string): Promise<void>;
  stopService(id: string): Promise<void>;
}

export const MACHINED_ID = 'machined';

/** How long ServiceStart/ServiceRestart wait for the service to come up before replying
 *  (a service whose dependencies are down stays Waiting; the reply does not wait for that). */
export const START_WAIT_MS = 3000;

export interface WireServiceInfo {
  id: string;
  state: string;
  events: { events: Array<{ msg: string; state: string; ts: Timestamp }> };
  health: { unknown: boolean; healthy: boolean; last_message: string; last_change?: Timestamp };
}

/** The health fields of a service as Talos reports them. */
export function serviceHealth(info: Pick<ServiceInfo, 'healthy' | 'lastHealthMessage' | 'events'>): WireServiceInfo['health'] {
  const change = lastHealthChange(info.events);
  return {
    unknown: info.healthy === undefined,
    healthy: info.healthy === true,
    last_message: info.lastHealthMessage ?? '',
    ...(change ? { last_change: toTimestamp(change) } : {}),
  };
}

/** When the health last changed: the supervisor records an event on every change. */
export function lastHealthChange(events: readonly ServiceEvent[]): Date | undefined {
  for (let i = events.length - 1; i >= 0; i--) {
    if (events[i]!.message.startsWith('Health check')) return events[i]!.ts;
  }
  return undefined;
}

export function toWireServiceInfo(info: ServiceInfo): WireServiceInfo {
  return {
    id: info.id,
    state: info.state,
    events: { events: info.events.map((ev) => ({ msg: ev.message, state: ev.state, ts: toTimestamp(ev.ts) })) },
    health: serviceHealth(info),
  };
}

/** machined's own entry: it runs as long as anyone can ask. */
export function machinedServiceInfo(startedAt: Date): ServiceInfo {
  return {
    id: MACHINED_ID,
    state: 'Running',
    pid: process.pid,
    restarts: 0,
    events: [{ ts: startedAt, state: 'Running', message: 'Service started as PID 1 process' }],
  };
}

export interface ServiceHandlerOptions {
  /** When machined started (its ServiceList entry's event); default this module's load. */
  startedAt?: Date;
  /** Delay between the reply and stopping or restarting apid, ms. Default 100. */
  afterReplyMs?: number;
  /** Where a stop or restart that failed after the reply is reported. */
  onError?: (err: unknown) => void;
}

/** The service every API call comes through. */
export const API_SERVICE = 'apid';

const loadedAt = new Date();

export function serviceHandlers(supervisor: ServiceControl, opts: ServiceHandlerOptions = {}): Record<string, grpc.handleUnaryCall<any, any>> {
  const startedAt = opts.startedAt ?? loadedAt;

  const must = (id: unknown, action: string): string => {
    if (typeof id !== 'string' || id === '') throw invalidArgument('service id is required');
    if (id === MACHINED_ID) throw new ApiError(grpc.status.FAILED_PRECONDITION, `service ${MACHINED_ID} cannot be ${action} through the API`);
    if (!supervisor.get(id)) throw notFound(`service ${JSON.stringify(id)} not found`);
    return id;
  };

  /** Runs fn once the reply has had time to leave through apid. */
  const afterReply = (fn: () => Promise<void>) => {
    setTimeout(() => {
      fn().catch((err: unknown) => opts.onError?.(err));
    }, opts.afterReplyMs ?? 100);
  };

  /** Starts and waits a little for it to be up, so that the reply reflects the new process. */
  const startAndWait = async (id: string) => {
    const started = supervisor.startService(id);
    started.catch(() => {}); // reported by the supervisor's events
    await Promise.race([started, sleep(START_WAIT_MS)]);
  };

  return {
    ServiceList: unary(() => {
      const services = [machinedServiceInfo(startedAt), ...supervisor.list()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
      return { messages: [{ services: services.map(toWireServiceInfo) }] };
    }),
    ServiceStart: unary(async (req: { id: string }) => {
      const id = must(req.id, 'started');
      await startAndWait(id);
      return { messages: [{ resp: `Service ${JSON.stringify(id)} started` }] };
    }),
    ServiceStop: unary(async (req: { id: string }) => {
      const id = must(req.id, 'stopped');
      if (id === API_SERVICE) {
        afterReply(() => supervisor.stopService(id));
        return { messages: [{ resp: `Service ${JSON.stringify(id)} stopping: the API is unreachable until it is started again (or the node reboots)` }] };
      }
      await supervisor.stopService(id);
      return { messages: [{ resp: `Service ${JSON.stringify(id)} stopped` }] };
    }),
    ServiceRestart: unary(async (req: { id: string }) => {
      const id = must(req.id, 'restarted');
      if (id === API_SERVICE) {
        afterReply(async () => {
          await supervisor.stopService(id);
          await supervisor.startService(id);
        });
        return { messages: [{ resp: `Service ${JSON.stringify(id)} restarting: the API comes back in a few seconds` }] };
      }
      await supervisor.stopService(id);
      await startAndWait(id);
      return { messages: [{ resp: `Service ${JSON.stringify(id)} restarted` }] };
    }),
  };
}
