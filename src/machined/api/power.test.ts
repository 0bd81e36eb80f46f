import { describe, expect, it } from 'vitest';
import { powerHandlers, type PowerSequence } from './power.ts';
import { callUnary } from './testing.ts';

describe('Reboot and Shutdown', () => {
  it('reply with an actor id first, then request the sequence with it', async () => {
    const order: string[] = [];
    const requests: Array<[PowerSequence, string, string]> = [];
    let requested!: () => void;
    const done = new Promise<void>((r) => (requested = r));
    const h = powerHandlers({
      afterReplyMs: 5,
      requestSequence: (seq, reason, actor) => {
        order.push('sequence');
        requests.push([seq, reason, actor]);
        requested();
      },
    });
    const reply = await callUnary(h.Reboot, { mode: 'DEFAULT' });
    order.push('reply');
    await done;
    expect(order).toEqual(['reply', 'sequence']);
    expect(reply.messages).toHaveLength(1);
    expect(reply.messages[0].actor_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(requests).toEqual([['reboot', 'API Reboot request', reply.messages[0].actor_id]]);
  });

  it('Shutdown (force noted in the reason); a failing request is reported', async () => {
    const errors: unknown[] = [];
    let seen!: (v: [PowerSequence, string]) => void;
    const got = new Promise<[PowerSequence, string]>((r) => (seen = r));
    const h = powerHandlers({
      afterReplyMs: 0,
      requestSequence: async (seq, reason) => {
        seen([seq, reason]);
        throw new Error('already rebooting');
      },
      onError: (e) => errors.push(e),
    });
    await callUnary(h.Shutdown, { force: true });
    expect(await got).toEqual(['shutdown', 'API Shutdown request (force)']);
    await new Promise((r) => setTimeout(r, 5));
    expect(errors).toHaveLength(1);
  });
});
