// Quorum safety: whether taking this node's etcd member away (a reboot, an upgrade, a reset)
// would leave the cluster without a quorum of healthy voting members. As Talos's
// ValidateForUpgrade, but by the numbers: a member that is only away for a while (reboot,
// upgrade with --preserve) still counts in the cluster's size; a member that leaves (reset,
// upgrade without --preserve, etcd leave) makes the cluster one smaller.
import { EtcdClient, type EtcdMember } from '../../etcd/client.ts';

export interface MemberHealth {
  id: string;
  name: string;
  isLearner: boolean;
  healthy: boolean;
  error?: string;
}

/** 'absent': the member goes away for a while; 'leave': it leaves the cluster. */
export type Disruption = 'absent' | 'leave';

export const quorumOf = (voters: number) => Math.floor(voters / 2) + 1;

/** Why `operation` must not take member `selfId` away, or undefined when it is safe. */
export function quorumRefusal(members: readonly MemberHealth[], selfId: string, what: Disruption, operation: string): string | undefined {
  const voters = members.filter((m) => !m.isLearner);
  if (!voters.some((m) => m.id === selfId)) return undefined; // a learner, or no member: no vote to lose
  const others = voters.filter((m) => m.id !== selfId);
  const healthy = others.filter((m) => m.healthy);
  const sick = others.filter((m) => !m.healthy).map((m) => `${m.name || m.id}${m.error ? ` (${m.error})` : ''}`);
  const size = what === 'leave' ? voters.length - 1 : voters.length;
  if (size === 0) return `${operation} would remove the only etcd member, and the cluster's data with it`;
  if (what === 'absent' && voters.length === 1) return undefined; // a one-member cluster: nothing else depends on it
  const need = quorumOf(size);
  if (healthy.length >= need) return undefined;
  return (
    `${operation} would break etcd quorum: ${healthy.length} of the other ${others.length} voting member${others.length === 1 ? ' is' : 's are'} healthy, ` +
    `${need} of ${size} must stay up${sick.length ? `; not healthy: ${sick.join(', ')}` : ''}`
  );
}

/** Every member and whether its own endpoint answers Status (within timeoutMs). */
export async function memberHealth(client: EtcdClient, timeoutMs = 3000): Promise<MemberHealth[]> {
  const members: EtcdMember[] = await client.memberList();
  return Promise.all(
    members.map(async (m) => {
      if (!m.name || m.clientURLs.length === 0) return { id: m.id, name: m.name, isLearner: m.isLearner, healthy: false, error: 'not started' };
      const errors: string[] = [];
      for (const url of m.clientURLs) {
        try {
          const s = await client.status(url.replace(/^https?:\/\//, ''), timeoutMs);
          if (s.errors.length) errors.push(s.errors.join('; '));
          else return { id: m.id, name: m.name, isLearner: m.isLearner, healthy: true };
        } catch (err) {
          errors.push((err as Error).message);
        }
      }
      return { id: m.id, name: m.name, isLearner: m.isLearner, healthy: false, error: errors.join('; ') };
    }),
  );
}
