// Bootstrap and the Etcd* RPCs (Talos's), on top of the etcd service (../etcd/service.ts).
// Nodes that run no etcd answer as Talos's do: UNIMPLEMENTED "... only available on control
// plane nodes". Member ids go out as numbers on the wire (uint64) and are shown in hex by the CLI.
import fs from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { ApiError, serverStream, unary } from './common.ts';
import type { EtcdService } from '../etcd/service.ts';
import { memberHealth, quorumRefusal } from '../etcd/quorum.ts';

/** What the handlers need of machined besides the etcd service. */
export interface EtcdApiDeps {
  etcd: EtcdService;
  /** Stops the etcd service (after leaving). */
  stopEtcd: () => Promise<void>;
  /** Whether the etcd service is Running (its process started). */
  running: () => boolean;
  log?: (msg: string) => void;
}

function notHere(what: string): ApiError {
  return new ApiError(grpc.status.UNIMPLEMENTED, `${what} is only available on control plane nodes`);
}

/** Leaves the cluster (forfeiting leadership first), stops etcd and clears its data. */
export async function leaveCluster(deps: EtcdApiDeps, opts: { check: boolean; operation: string }): Promise<void> {
  const { etcd } = deps;
  if (!etcd.tls() || !etcd.hasData()) throw new ApiError(grpc.status.FAILED_PRECONDITION, 'this node is not an etcd member');
  const client = await etcd.cluster();
  try {
    const self = (await client.status(etcd.localEndpoint)).memberId;
    if (opts.check) {
      const why = quorumRefusal(await memberHealth(client), self, 'leave', opts.operation);
      if (why) throw new ApiError(grpc.status.FAILED_PRECONDITION, why);
    }
    await forfeit(deps).catch(() => undefined);
    await client.memberRemove(self);
    deps.log?.(`etcd: member ${self} left the cluster`);
  } finally {
    client.close();
  }
  await deps.stopEtcd();
  fs.rmSync(etcd.dataDir, { recursive: true, force: true });
}

/** Hands leadership to another started voting member when this node leads; the new leader's id. */
async function forfeit(deps: EtcdApiDeps): Promise<string> {
  const client = await deps.etcd.cluster();
  try {
    const status = await client.status(deps.etcd.localEndpoint);
    if (status.leader !== status.memberId) return '';
    const health = await memberHealth(client);
    const to = health.find((m) => m.id !== status.memberId && !m.isLearner && m.healthy);
    if (!to) throw new ApiError(grpc.status.FAILED_PRECONDITION, 'no other healthy voting member to hand leadership to');
    await client.moveLeader(deps.etcd.localEndpoint, to.id);
    return to.id;
  } finally {
    client.close();
  }
}

const hex = (id: string) => BigInt(id).toString(16);

export function etcdHandlers(deps: EtcdApiDeps | undefined): Record<string, grpc.UntypedHandleCall> {
  const need = (what: string): EtcdApiDeps => {
    if (!deps || !deps.etcd.isControlPlane()) throw notHere(what);
    if (!deps.running() || !deps.etcd.tls()) throw new ApiError(grpc.status.FAILED_PRECONDITION, `${what}: etcd is not running on this node${deps.etcd.waiting ? ' (it waits for bronzectl bootstrap, or to join the cluster)' : ''}`);
    return deps;
  };
  const local = async <T>(what: string, fn: (d: EtcdApiDeps) => Promise<T>): Promise<T> => fn(need(what));

  return {
    Bootstrap: unary(async (req: { recover_etcd?: boolean; recover_skip_hash_check?: boolean }) => {
      if (!deps) throw new ApiError(grpc.status.FAILED_PRECONDITION, 'bootstrap is only available on control plane nodes');
      await deps.etcd.bootstrap({ recover: Boolean(req.recover_etcd), skipHashCheck: Boolean(req.recover_skip_hash_check) });
      deps.log?.(`Bootstrap: ${req.recover_etcd ? 'recovering etcd from the uploaded snapshot' : 'bootstrapping etcd'}`);
      return { messages: [{}] };
    }),

    EtcdMemberList: unary(() =>
      local('member list', async ({ etcd }) => {
        const client = await etcd.cluster();
        try {
          const members = await client.memberList();
          return {
            messages: [
              {
                legacy_members: members.map((m) => m.name),
                members: members.map((m) => ({ id: m.id, hostname: m.name, peer_urls: m.peerURLs, client_urls: m.clientURLs, is_learner: m.isLearner })),
              },
            ],
          };
        } finally {
          client.close();
        }
      }),
    ),

    EtcdStatus: unary(() =>
      local('etcd status', async ({ etcd }) => {
        const client = await etcd.cluster();
        try {
          const s = await client.status(etcd.localEndpoint);
          return {
            messages: [
              {
                member_status: {
                  member_id: s.memberId,
                  protocol_version: s.version,
                  db_size: s.dbSize,
                  db_size_in_use: s.dbSizeInUse,
                  leader: s.leader,
                  raft_index: s.raftIndex,
                  raft_term: s.raftTerm,
                  raft_applied_index: s.raftAppliedIndex,
                  errors: s.errors,
                  is_learner: s.isLearner,
                  storage_version: s.storageVersion,
                },
              },
            ],
          };
        } finally {
          client.close();
        }
      }),
    ),

    EtcdRemoveMemberByID: unary((req: { member_id?: string | number }) =>
      local('etcd member removal', async ({ etcd, log }) => {
        const id = String(req.member_id ?? '0');
        if (id === '0') throw new ApiError(grpc.status.INVALID_ARGUMENT, 'member_id is required');
        const client = await etcd.cluster();
        try {
          const members = await client.memberList();
          if (!members.some((m) => m.id === id)) throw new ApiError(grpc.status.NOT_FOUND, `etcd member ${hex(id)} not found (members: ${members.map((m) => `${hex(m.id)} ${m.name}`).join(', ')})`);
          const self = (await client.status(etcd.localEndpoint)).memberId;
          if (self === id) throw new ApiError(grpc.status.FAILED_PRECONDITION, `etcd member ${hex(id)} is this node: use bronzectl etcd leave on it instead`);
          await client.memberRemove(id);
          log?.(`etcd: removed member ${hex(id)}`);
          return { messages: [{}] };
        } finally {
          client.close();
        }
      }),
    ),

    EtcdLeaveCluster: unary(async () => {
      await leaveCluster(need('etcd leave'), { check: true, operation: 'leaving etcd' });
      return { messages: [{}] };
    }),

    EtcdForfeitLeadership: unary(() =>
      local('etcd forfeit leadership', async (d) => {
        const to = await forfeit(d);
        return { messages: [{ member: to ? hex(to) : '' }] };
      }),
    ),

    EtcdAlarmList: unary(() =>
      local('etcd alarm list', async ({ etcd }) => {
        const client = await etcd.cluster();
        try {
          const alarms = await client.alarms(etcd.localEndpoint);
          return { messages: [{ member_alarms: alarms.map((a) => ({ member_id: a.memberId, alarm: a.alarm })) }] };
        } finally {
          client.close();
        }
      }),
    ),

    EtcdAlarmDisarm: unary(() =>
      local('etcd alarm disarm', async ({ etcd }) => {
        const client = await etcd.cluster();
        try {
          const self = (await client.status(etcd.localEndpoint)).memberId;
          const alarms = await client.disarm(self, etcd.localEndpoint);
          return { messages: [{ member_alarms: alarms.map((a) => ({ member_id: a.memberId, alarm: a.alarm })) }] };
        } finally {
          client.close();
        }
      }),
    ),

    EtcdDefragment: unary(() =>
      local('etcd defragment', async ({ etcd }) => {
        const client = await etcd.cluster();
        try {
          await client.defragment(etcd.localEndpoint);
          return { messages: [{}] };
        } finally {
          client.close();
        }
      }),
    ),

    EtcdSnapshot: serverStream(async (_req: unknown, stream) => {
      const { etcd } = need('etcd snapshot');
      const client = await etcd.cluster();
      try {
        for await (const chunk of client.snapshot(etcd.localEndpoint)) {
          if (stream.closed) break;
          await stream.send({ bytes: chunk });
        }
      } finally {
        client.close();
      }
    }),

    EtcdRecover: (call: grpc.ServerReadableStream<{ bytes?: Buffer }, unknown>, callback: grpc.sendUnaryData<unknown>) => {
      const chunks = (async function* () {
        for await (const msg of call) if (msg.bytes?.length) yield Buffer.from(msg.bytes);
      })();
      Promise.resolve()
        .then(() => {
          if (!deps) throw notHere('etcd recovery');
          return deps.etcd.recoverUpload(chunks);
        })
        .then(
          (size) => {
            deps?.log?.(`EtcdRecover: kept a snapshot of ${size} bytes for Bootstrap`);
            callback(null, { messages: [{}] });
          },
          (err: unknown) => callback(err instanceof ApiError ? { code: err.code, details: err.message } : { code: grpc.status.INTERNAL, details: (err as Error).message }),
        );
    },
  };
}
