// `bronzectl etcd members|status|leave|remove-member|forfeit-leadership|defrag|alarm|snapshot`:
// talosctl's etcd commands, their output and flags. Member ids are shown (and taken) in hex.
import fs from 'node:fs';
import type { Command } from 'commander';
import type { Ctx } from '../session.ts';
import { UserError } from '../session.ts';
import { table } from '../output.ts';
import type { EtcdMemberStatus__Output } from '../../contract/wire/machine/EtcdMemberStatus.ts';

const hex = (id: string | undefined) => BigInt(id || '0').toString(16);

/** Sizes as talosctl prints them (go-humanize's Bytes: SI units, 3 significant digits at most). */
export function bytes(n: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let i = 0;
  let v = n;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return i === 0 ? `${v} B` : `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

export const STATUS_HEADER = ['NODE', 'MEMBER', 'DB SIZE', 'IN USE', 'LEADER', 'RAFT INDEX', 'RAFT TERM', 'RAFT APPLIED INDEX', 'LEARNER', 'PROTOCOL', 'STORAGE', 'ERRORS'];

/** One row of `etcd status` (talosctl's columns): the DB size, and the part of it in use. */
export function statusRow(node: string, st: EtcdMemberStatus__Output): string[] {
  const size = Number(st.db_size);
  const inUse = Number(st.db_size_in_use);
  return [
    node,
    hex(st.member_id),
    bytes(size),
    `${bytes(inUse)} (${size ? ((inUse / size) * 100).toFixed(2) : '0.00'}%)`,
    hex(st.leader),
    st.raft_index,
    st.raft_term,
    st.raft_applied_index,
    String(st.is_learner),
    st.protocol_version,
    st.storage_version,
    st.errors.join(', '),
  ];
}

export function register(program: Command, ctx: Ctx): void {
  const etcd = program.command('etcd').description('Manage etcd');

  etcd
    .command('members')
    .description('Get the list of etcd cluster members')
    .action(async () => {
      const s = ctx.session();
      const replies = await s.fanOut((c, o) => c.machine.EtcdMemberList({ query_local: true }, o));
      const rows = [['NODE', 'ID', 'HOSTNAME', 'PEER URLS', 'CLIENT URLS', 'LEARNER']];
      for (const { node, msg } of replies) {
        for (const m of msg.members ?? []) rows.push([node, hex(m.id), m.hostname, m.peer_urls.join(','), m.client_urls.join(','), String(m.is_learner)]);
      }
      if (rows.length > 1) s.out(table(rows));
    });

  etcd
    .command('status')
    .description('Get the status of etcd cluster member')
    .action(async () => {
      const s = ctx.session();
      const replies = await s.fanOut((c, o) => c.machine.EtcdStatus({}, o));
      const rows = [STATUS_HEADER];
      for (const { node, msg } of replies) if (msg.member_status) rows.push(statusRow(node, msg.member_status));
      if (rows.length > 1) s.out(table(rows));
    });

  etcd
    .command('leave')
    .description('Tell nodes to leave etcd cluster')
    .action(async () => {
      const s = ctx.session();
      await s.fanOut((c, o) => c.machine.EtcdLeaveCluster({}, o));
    });

  etcd
    .command('remove-member')
    .description('Remove the node from etcd cluster')
    .argument('<member ID>', "the member's id, in hex (as `bronzectl etcd members` shows it)")
    .action(async (id: string) => {
      const s = ctx.session();
      if (!/^[0-9a-fA-F]{1,16}$/.test(id)) throw new UserError(`member ID ${JSON.stringify(id)} is not a hexadecimal etcd member id (see bronzectl etcd members)`);
      await s.fanOut((c, o) => c.machine.EtcdRemoveMemberByID({ member_id: BigInt(`0x${id}`).toString() }, o));
    });

  etcd
    .command('forfeit-leadership')
    .description('Tell node to forfeit etcd cluster leadership')
    .action(async () => {
      const s = ctx.session();
      await s.fanOut((c, o) => c.machine.EtcdForfeitLeadership({}, o));
    });

  etcd
    .command('defrag')
    .description('Defragment etcd database on the node')
    .action(async () => {
      const s = ctx.session();
      await s.fanOut((c, o) => c.machine.EtcdDefragment({}, o));
    });

  const alarm = etcd.command('alarm').description('Manage etcd alarms');
  const alarmTable = (replies: Array<{ node: string; msg: { member_alarms: Array<{ member_id: string; alarm: string }> } }>) => {
    const rows = [['NODE', 'MEMBER', 'ALARM']];
    for (const { node, msg } of replies) for (const a of msg.member_alarms ?? []) rows.push([node, hex(a.member_id), a.alarm]);
    return rows.length > 1 ? table(rows) : '';
  };
  alarm
    .command('list')
    .description('List the etcd alarms for the node')
    .action(async () => {
      const s = ctx.session();
      const out = alarmTable(await s.fanOut((c, o) => c.machine.EtcdAlarmList({}, o)));
      if (out) s.out(out);
    });
  alarm
    .command('disarm')
    .description('Disarm the etcd alarms for the node')
    .action(async () => {
      const s = ctx.session();
      const out = alarmTable(await s.fanOut((c, o) => c.machine.EtcdAlarmDisarm({}, o)));
      if (out) s.out(out);
    });

  etcd
    .command('snapshot')
    .description('Stream snapshot of the etcd node to the path.')
    .argument('<path>', 'where to write the snapshot')
    .action(async (dbPath: string) => {
      const s = ctx.session();
      if ((await s.nodes()).length > 1) throw new UserError('"etcd snapshot" command is not supported with multiple nodes');
      const part = `${dbPath}.part`;
      const fd = fs.openSync(part, 'w', 0o600);
      let size = 0;
      try {
        await s.streamFanOut(
          (c, o) => c.machine.EtcdSnapshot({}, o),
          (_node, msg) => {
            if (msg.bytes?.length) {
              fs.writeSync(fd, msg.bytes);
              size += msg.bytes.length;
            }
          },
        );
        fs.fsyncSync(fd);
      } finally {
        fs.closeSync(fd);
      }
      // etcd appends the database's sha256 to the snapshot (etcdctl's check).
      if (size % 512 !== 32) {
        fs.rmSync(part, { force: true });
        throw new UserError(`sha256 checksum not found (size ${size})`);
      }
      fs.renameSync(part, dbPath);
      s.out(`etcd snapshot saved to ${JSON.stringify(dbPath)} (${size} bytes)\n`);
    });
}
