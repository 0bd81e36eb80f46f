import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ClusterDir, checkClusterName, type ClusterState } from './state.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
});
const tmp = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-cluster-state-'));
  dirs.push(d);
  return d;
};
const state: ClusterState = { name: 'demo', provisioner: 'qemu', arch: 'amd64', namespace: 'bronze-demo', cidr: '10.5.0.0/24', gateway: '10.5.0.1', nodes: [] };

describe('ClusterDir', () => {
  it('writes the state whole and reads it back; refuses a second create; remove leaves nothing', () => {
    const root = tmp();
    const d = new ClusterDir(root, 'demo');
    d.create();
    d.write(state);
    expect(d.read()).toEqual(state);
    expect(fs.readdirSync(d.dir)).toEqual(['state.json']);
    expect(() => new ClusterDir(root, 'demo').create()).toThrow(/cluster "demo" exists already .*bronzectl cluster destroy --name demo/);
    d.remove();
    expect(fs.readdirSync(root)).toEqual([]);
  });

  it('says which cluster is missing, and when a state file is not one', () => {
    const root = tmp();
    expect(() => new ClusterDir(root, 'nope').read()).toThrow(/no cluster "nope"/);
    const d = new ClusterDir(root, 'bad');
    d.create();
    fs.writeFileSync(d.stateFile, '{');
    expect(() => d.read()).toThrow(/state.json: not a cluster's state/);
  });

  it('takes names that can be a directory, a namespace and a context', () => {
    for (const ok of ['a', 'bronze-default', 'c3']) expect(() => checkClusterName(ok)).not.toThrow();
    for (const bad of ['', '-a', 'a-', 'A', 'a/b', '../x', 'x'.repeat(33)]) expect(() => checkClusterName(bad), bad).toThrow(/cluster name/);
  });
});
