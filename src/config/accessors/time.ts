// The time settings (Talos: NetworkTimeSyncConfig()): a TimeSyncConfig document when there is
// one, else machine.time (validation refuses both). Types only from the validator: a daemon may
// import this.
import type { TimeSyncConfig } from '../kinds.ts';
import type { TypedConfig } from './typed.ts';

export interface TimeSyncSettings {
  disabled?: boolean;
  servers?: string[];
  bootTimeout?: number | string;
}

/**
 * Where the time settings come from: the TimeSyncConfig document when there is one (it may appear
 * once), else machine.time. The one place that decides it; the two views below read it.
 */
export function timeSource(c: TypedConfig): { doc: TimeSyncConfig } | { v1: NonNullable<NonNullable<TypedConfig['v1alpha1']>['machine']['time']> | undefined } {
  const doc = c.documents.find((d): d is TimeSyncConfig => d.kind === 'TimeSyncConfig');
  return doc ? { doc } : { v1: c.v1alpha1?.machine.time };
}

/** timed's settings: undefined without a configuration, {} when it sets nothing about time. */
export function timeSync(c: TypedConfig | undefined): TimeSyncSettings | undefined {
  if (!c) return undefined;
  const src = timeSource(c);
  if ('doc' in src) {
    const kind = src.doc;
    return {
      disabled: kind.enabled === false,
      servers: kind.ntp?.servers ?? [],
      ...(kind.bootTimeout ? { bootTimeout: kind.bootTimeout } : {}),
    };
  }
  const t = src.v1;
  if (!t) return {};
  return { ...(t.disabled !== undefined ? { disabled: t.disabled } : {}), ...(t.servers ? { servers: t.servers } : {}), ...(t.bootTimeout ? { bootTimeout: t.bootTimeout } : {}) };
}

/**
 * The time servers networkd publishes for timed when DHCP names none: a TimeSyncConfig's
 * ntp.servers, else machine.time.servers when not empty.
 */
export function timeServers(c: TypedConfig | undefined): string[] | undefined {
  if (!c) return undefined;
  const src = timeSource(c);
  if ('doc' in src) return src.doc.ntp?.servers;
  return src.v1?.servers?.length ? src.v1.servers : undefined;
}
