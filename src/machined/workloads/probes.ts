// One health probe of a container, as Kubernetes names them: exec (a command in the container,
// healthy on exit 0), HTTP GET (healthy on a 2xx or 3xx answer) and TCP (healthy when a
// connection opens). HTTP and TCP probes dial from the node, so they reach a container on the
// host's network (the host address, 127.0.0.1 by default); a container without a network is
// probed with exec.
import http from 'node:http';
import net from 'node:net';
import type { ContainerProbe } from '../../config/accessors/containers.ts';

/** A ContainerHealthConfig with every default filled in (the accessor's). */
export type HealthProbe = ContainerProbe;

export interface ProbeDeps {
  exec(argv: string[], timeoutMs: number): Promise<number>;
}

/** Runs the probe once: undefined when healthy, else why not. */
export async function probeOnce(p: HealthProbe, d: ProbeDeps): Promise<string | undefined> {
  const ms = p.timeoutSeconds * 1000;
  try {
    if (p.exec) {
      const code = await d.exec(p.exec.command, ms);
      return code === 0 ? undefined : `${p.exec.command.join(' ')} exited with ${code}`;
    }
    if (p.httpGet) return await httpProbe(p.httpGet, ms);
    if (p.tcpSocket) return await tcpProbe(p.tcpSocket, ms);
    return 'no probe action';
  } catch (err) {
    return (err as Error).message;
  }
}

function httpProbe(g: NonNullable<HealthProbe['httpGet']>, ms: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const req = http.get({ host: g.host, port: g.port, path: g.path, timeout: ms, agent: false, headers: { 'user-agent': 'bronze-probe' } }, (res) => {
      res.resume();
      const code = res.statusCode ?? 0;
      resolve(code >= 200 && code < 400 ? undefined : `GET ${g.path} on ${g.host}:${g.port}: HTTP ${code}`);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${g.path} on ${g.host}:${g.port}: no answer in ${ms} ms`)));
    req.on('error', (err) => resolve(`GET ${g.path} on ${g.host}:${g.port}: ${err.message}`));
  });
}

function tcpProbe(t: NonNullable<HealthProbe['tcpSocket']>, ms: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const s = net.connect({ host: t.host, port: t.port });
    const done = (why: string | undefined) => {
      s.destroy();
      clearTimeout(timer);
      resolve(why);
    };
    const timer = setTimeout(() => done(`tcp ${t.host}:${t.port}: no connection in ${ms} ms`), ms);
    s.once('connect', () => done(undefined));
    s.once('error', (err) => done(`tcp ${t.host}:${t.port}: ${err.message}`));
  });
}
