import { describe, expect, it } from 'vitest';
import type { ContainerdClient } from './client.ts';
import { stopTask } from './tasks.ts';

/** A client that records Kill calls; `onKill` decides what the task does. */
function fakeClient(onKill: (signal: number, all: boolean) => void): { c: ContainerdClient; kills: string[] } {
  const kills: string[] = [];
  const c = {
    unary: async (_svc: string, method: string, req: { signal: number; all: boolean }) => {
      if (method === 'Kill') {
        kills.push(`${req.signal}${req.all ? ' all' : ''}`);
        onKill(req.signal, req.all);
      }
      return {};
    },
  } as unknown as ContainerdClient;
  return { c, kills };
}

describe('stopTask', () => {
  it('stops with the stop signal when the process obeys', async () => {
    let exit!: () => void;
    const exited = new Promise<void>((r) => (exit = r));
    const { c, kills } = fakeClient(() => exit());
    await stopTask(c, 'ns', 'x', exited, { stopSignal: 15, graceMs: 1000 });
    expect(kills).toEqual(['15']);
  });

  it('SIGKILLs every process after the grace period', async () => {
    let exit!: () => void;
    const exited = new Promise<void>((r) => (exit = r));
    const { c, kills } = fakeClient((sig) => sig === 9 && exit());
    await stopTask(c, 'ns', 'x', exited, { stopSignal: 15, graceMs: 20 });
    expect(kills).toEqual(['15', '9 all']);
  });

  it('gives up with an error when even SIGKILL does not end it', async () => {
    const { c } = fakeClient(() => {});
    await expect(stopTask(c, 'ns', 'x', new Promise(() => {}), { stopSignal: 15, graceMs: 10, killTimeoutMs: 20 })).rejects.toThrow(/did not exit after SIGKILL/);
  });
});
