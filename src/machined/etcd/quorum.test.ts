import { describe, expect, it } from 'vitest';
import { quorumRefusal, type MemberHealth } from './quorum.ts';

const m = (id: string, healthy = true, isLearner = false): MemberHealth => ({ id, name: `cp${id}`, isLearner, healthy });

describe('quorumRefusal', () => {
  it('three healthy voters: any one may reboot or leave', () => {
    const all = [m('1'), m('2'), m('3')];
    expect(quorumRefusal(all, '1', 'absent', 'reboot')).toBeUndefined();
    expect(quorumRefusal(all, '1', 'leave', 'reset')).toBeUndefined();
  });

  it('three voters with one down: the others may not go, and the message names the sick one', () => {
    const all = [m('1'), m('2'), m('3', false)];
    const why = quorumRefusal(all, '1', 'absent', 'reboot');
    expect(why).toMatch(/reboot would break etcd quorum: 1 of the other 2 voting members are healthy, 2 of 3 must stay up; not healthy: cp3/);
    // Leaving shrinks the cluster to two, which need both: still refused.
    expect(quorumRefusal(all, '1', 'leave', 'reset')).toMatch(/would break etcd quorum/);
    // The sick member itself may go: the two healthy ones keep the quorum.
    expect(quorumRefusal(all, '3', 'absent', 'reboot')).toBeUndefined();
  });

  it('two voters: neither may be away (Talos refuses too), but one may leave', () => {
    const all = [m('1'), m('2')];
    expect(quorumRefusal(all, '1', 'absent', 'upgrade')).toMatch(/1 of the other 1 voting member is healthy, 2 of 2 must stay up/);
    expect(quorumRefusal(all, '1', 'leave', 'reset')).toBeUndefined();
  });

  it('one voter: a reboot is fine, leaving destroys the cluster', () => {
    expect(quorumRefusal([m('1')], '1', 'absent', 'reboot')).toBeUndefined();
    expect(quorumRefusal([m('1')], '1', 'leave', 'reset')).toMatch(/only etcd member/);
  });

  it('learners do not vote: a learner may always go, and does not count as healthy support', () => {
    const all = [m('1'), m('2'), m('3', true, true)];
    expect(quorumRefusal(all, '3', 'leave', 'reset')).toBeUndefined();
    expect(quorumRefusal(all, '1', 'absent', 'reboot')).toMatch(/2 of 2 must stay up/);
  });

  it('not a member at all: nothing to check', () => {
    expect(quorumRefusal([m('1'), m('2', false), m('3', false)], '9', 'absent', 'reboot')).toBeUndefined();
  });
});
