// The client's message conventions without a daemon (test/integration/containerd-images.test.ts
// drives it against a real containerd): Any fields, int64 as strings, Timestamps.
import { describe, expect, it } from 'vitest';
import { RUNTIME_SPEC_TYPE_URL, containerdType, dateToTimestamp, decodeAny, encodeAny, jsonAny, timestampToDate } from './client.ts';

const CONVERSION = { longs: String, enums: String, defaults: true };

describe('containerd client messages', () => {
  it('carries the OCI spec as JSON in an Any and runc options as an encoded Any', async () => {
    const t = await containerdType('containerd.services.containers.v1.CreateContainerRequest');
    const msg = {
      container: {
        id: 'web',
        spec: jsonAny(RUNTIME_SPEC_TYPE_URL, { ociVersion: '1.0.2' }),
        runtime: { name: 'io.containerd.runc.v2', options: await encodeAny('containerd.runc.v1.Options', 'containerd.runc.v1.Options', { systemd_cgroup: true }) },
      },
    };
    const back = t.toObject(t.decode(t.encode(t.fromObject(msg)).finish()), CONVERSION) as typeof msg;
    expect(back.container.spec.type_url).toBe(RUNTIME_SPEC_TYPE_URL);
    expect(JSON.parse(Buffer.from(back.container.spec.value).toString('utf8'))).toEqual({ ociVersion: '1.0.2' });
    expect(await decodeAny(back.container.runtime.options)).toMatchObject({ systemd_cgroup: true });
  });

  it('hands int64 out as decimal strings and takes numbers or strings', async () => {
    const t = await containerdType('containerd.services.content.v1.WriteContentRequest');
    const enc = (v: object) => t.toObject(t.decode(t.encode(t.fromObject(v)).finish()), CONVERSION) as { offset: string; total: string; action: string };
    expect(enc({ action: 'WRITE', offset: 5, total: '9007199254740993' })).toMatchObject({ action: 'WRITE', offset: '5', total: '9007199254740993' });
  });

  it('converts Timestamps', () => {
    const d = new Date('2026-01-02T03:04:05.678Z');
    expect(timestampToDate(dateToTimestamp(d))).toEqual(d);
    expect(timestampToDate({ seconds: '1', nanos: 5e8 })).toEqual(new Date(1500));
  });
});
