import { describe, expect, it } from 'vitest';
import { type LogSource, type ServiceLogSource, logsHandlers, tailLines } from './logs.ts';
import { callStream, collect } from './testing.ts';
import { MemoryWorkloads } from '../../containerd/testing.ts';

class FakeLog implements LogSource {
  readonly ring: string[] = [];
  readonly followers = new Set<(line: string) => void>();
  lines = () => [...this.ring];
  follow = (fn: (line: string) => void) => {
    this.followers.add(fn);
    return () => void this.followers.delete(fn);
  };
  add(line: string) {
    this.ring.push(line);
    for (const f of this.followers) f(line);
  }
}

function setup(workloads: MemoryWorkloads | null = new MemoryWorkloads()) {
  const machined = new FakeLog();
  const apid = new FakeLog();
  for (let i = 1; i <= 5; i++) apid.add(`apid line ${i}`);
  machined.add('machined started');
  const supervisor: ServiceLogSource = {
    get: (id) => (id === 'apid' ? {} : undefined),
    logs: () => apid.lines(),
    followLogs: (_id, fn) => apid.follow(fn),
  };
  return { machined, apid, workloads, h: logsHandlers({ supervisor, log: machined, workloads: () => workloads ?? undefined }) };
}

const text = (msgs: Array<{ bytes: Buffer }>) => msgs.map((m) => m.bytes.toString()).join('');

describe('tailLines', () => {
  it('negative: all; 0: none; N: the last N', () => {
    const lines = ['a', 'b', 'c'];
    expect(tailLines(lines, -1)).toEqual(lines);
    expect(tailLines(lines, 0)).toEqual([]);
    expect(tailLines(lines, 2)).toEqual(['b', 'c']);
    expect(tailLines(lines, 10)).toEqual(lines);
  });
});

describe('Logs', () => {
  it('one common.Data per line, newline included', async () => {
    const { h } = setup();
    const msgs = await collect(h.Logs, { namespace: 'system', id: 'apid', tail_lines: 2 });
    expect(msgs).toHaveLength(2);
    expect(text(msgs)).toBe('apid line 4\napid line 5\n');
    expect(text(await collect(h.Logs, { id: 'apid', tail_lines: -1 }))).toContain('apid line 1\n');
    expect(await collect(h.Logs, { id: 'apid', tail_lines: 0 })).toEqual([]);
  });

  it("id 'machined' is machined's own log", async () => {
    const { h } = setup();
    expect(text(await collect(h.Logs, { id: 'machined', tail_lines: -1 }))).toBe('machined started\n');
  });

  it('follow: history, then new lines, until cancelled (and then unsubscribes)', async () => {
    const { h, apid } = setup();
    const s = callStream(h.Logs, { id: 'apid', tail_lines: 1, follow: true });
    await s.waitFor(1);
    apid.add('apid line 6');
    await s.waitFor(2);
    expect(text(s.messages)).toBe('apid line 5\napid line 6\n');
    expect(apid.followers.size).toBe(1);
    s.cancel();
    await s.done;
    expect(apid.followers.size).toBe(0);
    expect(s.error).toBeUndefined();
  });

  it('unknown id → NOT_FOUND naming it; no id → INVALID_ARGUMENT', async () => {
    const { h } = setup();
    await expect(collect(h.Logs, { id: 'etcd' })).rejects.toEqual({ code: 5, message: `no logs for "etcd": no such service (a container's log is in its namespace: taloscontainers)` });
    await expect(collect(h.Logs, {})).rejects.toMatchObject({ code: 3 });
  });
});

describe("Logs of a container (a namespace other than 'system')", () => {
  it('streams what the runtime reads, tail_lines and all', async () => {
    const { h, workloads } = setup();
    workloads!.addContainer('taloscontainers', { id: 'web' }, { log: ['one', 'two', 'three'] });
    expect(text(await collect(h.Logs, { namespace: 'taloscontainers', id: 'web', tail_lines: 2 }))).toBe('two\nthree\n');
    expect(text(await collect(h.Logs, { namespace: 'taloscontainers', id: 'web', tail_lines: -1 }))).toBe('one\ntwo\nthree\n');
    expect(workloads!.calls).toContain('logs taloscontainers web');
  });

  it('follow: new lines until cancelled', async () => {
    const { h, workloads } = setup();
    workloads!.addContainer('taloscontainers', { id: 'web' }, { log: ['one'] });
    const s = callStream(h.Logs, { namespace: 'taloscontainers', id: 'web', tail_lines: -1, follow: true });
    await s.waitFor(1);
    workloads!.write('taloscontainers', 'web', 'two');
    await s.waitFor(2);
    expect(text(s.messages)).toBe('one\ntwo\n');
    s.cancel();
    await s.done;
    expect(s.error).toBeUndefined();
  });

  it("services stay under 'system' (and no namespace), never the runtime", async () => {
    const { h, workloads } = setup();
    expect(text(await collect(h.Logs, { namespace: 'system', id: 'apid', tail_lines: 1 }))).toBe('apid line 5\n');
    expect(workloads!.calls).toEqual([]);
  });

  it('unknown container → NOT_FOUND naming it; bad namespace → INVALID_ARGUMENT; no runtime → UNAVAILABLE', async () => {
    const { h } = setup();
    await expect(collect(h.Logs, { namespace: 'taloscontainers', id: 'nope' })).rejects.toEqual({ code: 5, message: 'container taloscontainers/nope not found' });
    await expect(collect(h.Logs, { namespace: 'taloscontainers' })).rejects.toEqual({ code: 3, message: 'container id is required' });
    await expect(collect(h.Logs, { namespace: 'bad/ns', id: 'web' })).rejects.toMatchObject({ code: 3, message: expect.stringContaining('invalid containerd namespace "bad/ns"') });
    await expect(collect(h.Logs, { namespace: 'taloscontainers', driver: 'CRI', id: 'web' })).rejects.toMatchObject({ code: 3 });
    const none = setup(null);
    await expect(collect(none.h.Logs, { namespace: 'taloscontainers', id: 'web' })).rejects.toEqual({ code: 14, message: 'containerd is not running yet' });
  });
});
