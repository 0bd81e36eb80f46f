import { describe, expect, it } from 'vitest';
import { bytes, STATUS_HEADER, statusRow } from './etcd.ts';
import { table } from '../output.ts';

describe('bronzectl etcd status', () => {
  it('sizes as talosctl prints them', () => {
    expect(bytes(0)).toBe('0 B');
    expect(bytes(999)).toBe('999 B');
    expect(bytes(20480)).toBe('20 kB');
    expect(bytes(5_439_488)).toBe('5.4 MB');
    expect(bytes(2_147_483_648)).toBe('2.1 GB');
  });

  it('shows the DB size and the part of it in use (after compaction, before defragment)', () => {
    const row = statusRow('10.5.0.2', {
      member_id: '14538719347372447013',
      protocol_version: '3.4.23',
      db_size: '12550144',
      db_size_in_use: '2076672',
      leader: '14538719347372447013',
      raft_index: '2410',
      raft_term: '2',
      raft_applied_index: '2410',
      errors: [],
      is_learner: false,
      storage_version: '',
    });
    expect(row.slice(0, 4)).toEqual(['10.5.0.2', 'c9c3e8378d3bd525', '13 MB', '2.1 MB (16.55%)']);
    const out = table([STATUS_HEADER, row]);
    expect(out).toMatch(/^NODE\s+MEMBER\s+DB SIZE\s+IN USE\s+LEADER\s+RAFT INDEX\s+RAFT TERM\s+RAFT APPLIED INDEX\s+LEARNER\s+PROTOCOL\s+STORAGE\s+ERRORS\n/);
    expect(out).toContain('2.1 MB (16.55%)');
  });

  it('an empty database is 0% in use, not NaN', () => {
    const row = statusRow('n', { member_id: '1', protocol_version: '', db_size: '0', db_size_in_use: '0', leader: '0', raft_index: '0', raft_term: '0', raft_applied_index: '0', errors: [], is_learner: true, storage_version: '' });
    expect(row[3]).toBe('0 B (0.00%)');
  });
});
