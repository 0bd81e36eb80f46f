// What `bronzectl cluster create` made, kept so that `cluster show` and `cluster destroy` find it:
// one directory per cluster (talosctl's ~/.talos/clusters/<name>, here ~/.bronze/clusters/<name>)
// with state.json, each node's configuration, its console log and its QEMU monitor socket.
// state.json is written before anything is started and after every node, so a create that
// fails half way leaves a record that destroy can clean up from.
import fs from 'node:fs';
import path from 'node:path';

export type NodeType = 'controlplane' | 'worker';

export interface NodeState {
  name: string;
  type: NodeType;
  /** The node's address on the cluster's bridge. */
  ip: string;
  /** The MAC of its link on the bridge (the configuration selects the link by it). */
  mac: string;
  /** The host's 127.0.0.1 port forwarded to the node's API (:50000). */
  apiPort: number;
  /** The tap device QEMU made for it (in the cluster's namespace once attached). */
  tap: string;
  /** QEMU's process; absent until it is started. */
  pid?: number;
  memoryMiB: number;
  cpus: number;
}

export interface ClusterState {
  name: string;
  provisioner: 'qemu';
  arch: string;
  /** The network namespace holding the bridge. */
  namespace: string;
  cidr: string;
  gateway: string;
  nodes: NodeState[];
  /** The client config the context went into, and the context's name there. */
  bronzeconfig?: string;
  context?: string;
}


/** A name that can be a directory, a namespace and a client-config context. */
export function checkClusterName(name: string): void {
  if (!/^[a-z0-9]([a-z0-9-]{0,30}[a-z0-9])?$/.test(name)) {
    throw new Error(`cluster name ${JSON.stringify(name)}: use 1-32 lower-case letters, digits and '-', starting and ending with a letter or digit`);
  }
}

export class ClusterDir {
  readonly dir: string;
  constructor(stateDir: string, readonly name: string) {
    checkClusterName(name);
    this.dir = path.join(stateDir, name);
  }

  get stateFile(): string {
    return path.join(this.dir, 'state.json');
  }
  exists(): boolean {
    return fs.existsSync(this.stateFile);
  }
  file(name: string): string {
    return path.join(this.dir, name);
  }
  consoleLog(node: string): string {
    return this.file(`${node}.log`);
  }
  monitor(node: string): string {
    return this.file(`${node}.monitor`);
  }

  /** Makes the directory; refuses one that holds a cluster already. */
  create(): void {
    if (this.exists()) throw new Error(`cluster ${JSON.stringify(this.name)} exists already (${this.dir}): \`bronzectl cluster destroy --name ${this.name}\` first`);
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
  }

  read(): ClusterState {
    let text: string;
    try {
      text = fs.readFileSync(this.stateFile, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') throw new Error(`no cluster ${JSON.stringify(this.name)} (nothing at ${this.dir})`);
      throw e;
    }
    try {
      return JSON.parse(text) as ClusterState;
    } catch (e) {
      throw new Error(`${this.stateFile}: not a cluster's state (${(e as Error).message})`);
    }
  }

  /** Written whole to a temporary file and renamed: never half a state. */
  write(state: ClusterState): void {
    const tmp = `${this.stateFile}.tmp`;
    fs.writeFileSync(tmp, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
    fs.renameSync(tmp, this.stateFile);
  }

  remove(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
