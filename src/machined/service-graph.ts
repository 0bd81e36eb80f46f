// The service graph machined supervises, as data: each daemon, what it waits for, and the
// environment it runs in. Light on purpose (no gRPC, no heavy imports): machined's first moments
// as PID 1 (src/machined/early.ts) read it before machined's own bundle has loaded.
import type { DaemonName } from '../contract/paths.ts';

export interface ServiceNode {
  id: DaemonName;
  dependsOn: DaemonName[];
  /** Stopped only once these have stopped (shutdown order only). */
  stopAfter?: DaemonName[];
  /** The nice value it starts at, until its socket is there (ServiceSpec.startNice). */
  startNice?: number;
  description: string;
}

// No daemon needs another to work: they meet only through machined's state, where each
// publishes what it owns and watches what it reads, so an input that appears later is picked up
// when it appears. The order is for start-up time alone: apid and networkd (the API needs both:
// apid serves it, networkd brings the links up) start at once, before machined has loaded
// (early.ts); udevd, timed and trustd start with the supervisor, at nice 19 until their sockets
// are there, so that on a small machine they load on the CPU the API's services leave instead
// of taking an equal share from them (make bench under QEMU/TCG with 2 vCPUs: the API answered
// 0.83x as late as when they waited for apid's first health check, Running unchanged). At
// shutdown networkd is stopped last: apid's last replies (the end of an upgrade's, install's or
// repair's stream) leave through the addresses networkd removes when it stops.
export const SERVICE_GRAPH: readonly ServiceNode[] = [
  { id: 'apid', dependsOn: [], description: 'the mTLS API gateway on :50000' },
  { id: 'networkd', dependsOn: [], stopAfter: ['apid'], description: 'links, addresses, routes, DHCP, hostname, resolvers' },
  { id: 'udevd', dependsOn: [], startNice: 19, description: 'device events and /dev/disk links' },
  { id: 'timed', dependsOn: [], startNice: 19, description: 'time synchronisation (SNTP)' },
  { id: 'trustd', dependsOn: [], startNice: 19, description: 'certificate signing for joining nodes' },
];

/**
 * V8 flags per daemon, as NODE_OPTIONS (the single executable reads it; none of these changes
 * V8's flag hash, so the code caches still apply). One V8 worker thread each: six processes
 * share two CPUs on a small node. A 1 MiB semi-space for the daemons that only idle and watch;
 * apid keeps V8's default, since every API call allocates there. Measured on a host run of
 * machined with apid, trustd and timed: 2.5% less PSS in total, no slower start.
 */
export const DAEMON_V8_FLAGS: Readonly<Record<DaemonName, readonly string[]>> = {
  apid: ['--v8-pool-size=1'],
  networkd: ['--v8-pool-size=1', '--max-semi-space-size=1'],
  udevd: ['--v8-pool-size=1', '--max-semi-space-size=1'],
  timed: ['--v8-pool-size=1', '--max-semi-space-size=1'],
  trustd: ['--v8-pool-size=1', '--max-semi-space-size=1'],
};

/**
 * Node options for every role: preinit puts them in machined's NODE_OPTIONS (its envp, which
 * names this list) and daemonEnv in each daemon's. `--use-openssl-ca`: without it, loading
 * `tls` (which grpc-js loads in every role) starts a thread that parses Node's ~120 bundled
 * root certificates, and no role's gRPC uses them: every TLS connection a role makes or
 * accepts names its own CA. Under qemu-x86_64 a process that loads http2 used 0.87-0.89 s of
 * CPU with it against 1.05-1.08 s without (natively 38.5 against 56.8 ms). OpenSSL's store is
 * empty on a node (there is no /etc/ssl), so the HTTPS fetches that trust public CAs (a
 * configuration or an image from a URL) set Node's bundled roots first (lib/bundled-roots.ts).
 */
export const ROLE_NODE_OPTIONS: readonly string[] = ['--use-openssl-ca'];

/**
 * A daemon's whole environment: `env`, with ROLE_NODE_OPTIONS and its V8 flags appended to
 * NODE_OPTIONS, each only when NODE_OPTIONS does not hold it already. What NODE_OPTIONS held
 * stays as it was, repeats included (`-r a -r b` are two options, not one said twice).
 */
export function daemonEnv(id: string, env: Record<string, string>, pid1 = process.pid === 1): Record<string, string> {
  if (!Object.hasOwn(DAEMON_V8_FLAGS, id)) return env; // not one of Bronze's own (etcd)
  const inherited = (env.NODE_OPTIONS ?? '').split(/\s+/).filter(Boolean);
  const have = new Set(inherited);
  const added = [...new Set([...ROLE_NODE_OPTIONS, ...DAEMON_V8_FLAGS[id as DaemonName]])].filter((o) => !have.has(o));
  const out: Record<string, string> = { ...env, NODE_OPTIONS: [...inherited, ...added].join(' ') };
  // timed cannot tell by itself that it runs on a node once it is not root (/proc/1/exe is not
  // readable to it): machined as PID 1 says so, at every start (the env controller's restarts too).
  if (id === 'timed' && pid1 && out.BRONZE_TIMED_CLOCK === undefined) out.BRONZE_TIMED_CLOCK = 'adjust';
  return out;
}

/** machined's own environment plus `extraEnv`: what every daemon starts from. */
export function baseServiceEnv(extraEnv: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined) env[k] = v;
  return Object.assign(env, extraEnv);
}

/** What machined adds to its own environment for every daemon. */
export const SERVICE_ENV: Readonly<Record<string, string>> = { UV_THREADPOOL_SIZE: '4' };

/**
 * The nice value the first services (firstServices) load at while machined loads its own
 * bundle; machined sets them back to 0 once it has (src/main.ts). All three are Node starts
 * on the same CPUs, and machined's is the one everything else waits for: its API, the
 * certificates apid waits for, the supervisor. make bench under QEMU/TCG with 2 vCPUs, two sets
 * of 5 interleaved runs against the same build without it: machined loaded 0.6-0.7 s sooner
 * after its exec (2.0-2.3 s against 2.7-3.0 s), API answering 0.99 and 0.94, Running 0.96
 * and 0.95 (apid and networkd then finish their own start later, which takes back part of it).
 */
export const FIRST_SERVICES_LOAD_NICE = 10;

/** The services with no dependency and no startNice: machined as PID 1 starts them first of all (early.ts), at FIRST_SERVICES_LOAD_NICE until it has loaded. */
export function firstServices(): DaemonName[] {
  return SERVICE_GRAPH.filter((n) => n.dependsOn.length === 0 && n.startNice === undefined).map((n) => n.id);
}
