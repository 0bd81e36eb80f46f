// The command line as a whole: usage errors and their exit codes, help, completion scripts
// (run through a real bash), and the real executable: bin/bronzectl.mjs spawned on the host's
// Node and on the pinned Node 24 — exit codes, and a clean end of `logs -f` on SIGINT.
import { AmbiguousResourceTypeError, DefinitionRegistry, RESOURCE_DEFINITIONS } from '../../../src/contract/resources/registry.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cli, makePki, md, startApi, workspace, type FakeApi, type Pki, type Workspace } from './testing.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const BIN = path.join(ROOT, 'bin', 'bronzectl.mjs');
const NODE24 = path.join(ROOT, 'node_modules', '.bin', 'node');
/** The host's own node (v20 on these machines), not the pinned one. */
const HOST_NODE = ['/usr/bin/node', '/usr/local/bin/node'].find((p) => existsSync(p));

let pki: Pki;
let api: FakeApi;
let ws: Workspace;

beforeAll(async () => {
  pki = await makePki();
  api = await startApi(pki, {
    '/machine.MachineService/Version': { unary: () => ({ messages: [{ metadata: md('n1'), version: { tag: 'v1' } }, { metadata: md('n2', 'node n2 is down') }] }) },
    '/machine.MachineService/Logs': {
      stream: async (_req, call) => {
        call.write({ metadata: md('n1'), bytes: Buffer.from('hello\n') });
        await new Promise<void>((resolve) => call.on('cancelled', () => resolve()));
      },
    },
  });
  ws = await workspace(pki, [api.endpoint]);
});

afterAll(async () => {
  await api.close();
  await ws.cleanup();
});

describe('usage', () => {
  it('an unknown flag, command or missing argument exits 2 naming it', async () => {
    expect(await cli(ws, ['memory', '--bogus'])).toMatchObject({ code: 2, err: expect.stringContaining("error: unknown option '--bogus'") });
    const cmd = await cli(ws, ['memroy']);
    expect(cmd.code).toBe(2);
    expect(cmd.err).toMatch(/unknown command 'memroy'\n\(Did you mean memory\?\)/);
    expect(await cli(ws, ['get'])).toMatchObject({ code: 2, err: expect.stringContaining("missing required argument 'type'") });
    expect(await cli(ws, ['logs', 'x', '--tail', 'many'])).toMatchObject({ code: 2, err: expect.stringContaining('"many" is not an integer') });
    expect(await cli(ws, ['-n'])).toMatchObject({ code: 2, err: expect.stringContaining("option '-n, --nodes <nodes>' argument missing") });
  });

  it('--help exits 0 and lists the commands and global flags', async () => {
    const r = await cli(ws, ['--help']);
    expect(r.code).toBe(0);
    for (const c of ['version', 'memory', 'processes', 'mounts', 'services', 'service', 'logs', 'dmesg', 'events', 'get', 'list', 'read', 'reboot', 'shutdown', 'config', 'gen', 'completion']) {
      expect(r.out).toMatch(new RegExp(`^  ${c}\\b`, 'm'));
    }
    const sub = await cli(ws, ['get', '--help']);
    expect(sub.out).toContain('--bronzeconfig <path>');
    expect(sub.out).toContain('-w, --watch');
  });
});

describe('completion', () => {
  const complete = (script: string, words: string[]) => {
    const file = path.join(ws.dir, 'bronzectl.bash');
    writeFileSync(file, script);
    const cword = words.length - 1;
    const line = `source ${file}; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${cword}; _bronzectl; printf '%s\\n' "\${COMPREPLY[@]}"`;
    const r = spawnSync('bash', ['--norc', '-c', line], { encoding: 'utf8' });
    expect(r.stderr).toBe('');
    return r.stdout.split('\n').filter(Boolean);
  };

  it('bash: subcommands, flags, flag values and argument choices at each level', async () => {
    const r = await cli(ws, ['completion', 'bash']);
    expect(r.code).toBe(0);
    expect(spawnSync('bash', ['-n'], { input: r.out }).status).toBe(0);
    expect(complete(r.out, ['bronzectl', 'con'])).toEqual(['config', 'containers']);
    expect(complete(r.out, ['bronzectl', 'config', ''])).toEqual(expect.arrayContaining(['new', 'merge', 'contexts', 'context', 'endpoint', 'node', 'info']));
    expect(complete(r.out, ['bronzectl', '-n', 'x', 'get', '-o', ''])).toEqual(['table', 'yaml', 'json']);
    expect(complete(r.out, ['bronzectl', 'get', '--wa'])).toEqual(['--watch']);
    expect(complete(r.out, ['bronzectl', 'logs', '--no'])).toEqual(['--nodes']);
    expect(complete(r.out, ['bronzectl', 'service', 'apid', 're'])).toEqual(['restart']);
    expect(complete(r.out, ['bronzectl', 'get', 'sv'])).toEqual(['svc']);
    expect(complete(r.out, ['bronzectl', 'get', 'addr'])).toEqual(['address', 'addresses', 'addressstatus', 'addressstatuses']);
    expect(complete(r.out, ['bronzectl', 'gen', 'c'])).toEqual(['config', 'ca', 'csr', 'crt']);
  });

  it('get: offers every type in the registry (each by a name that resolves to it)', async () => {
    const r = await cli(ws, ['completion', 'bash']);
    const offered = complete(r.out, ['bronzectl', 'get', '']);
    const registry = new DefinitionRegistry();
    const reached = new Set<string>();
    for (const name of offered) {
      try {
        reached.add(registry.resolve(name).type);
      } catch (e) {
        expect(e, name).toBeInstanceOf(AmbiguousResourceTypeError); // 'rs' names two types, as in Talos
      }
    }
    expect([...reached].sort()).toEqual(RESOURCE_DEFINITIONS.map((d) => d.type).sort());
    expect(offered).toEqual(expect.arrayContaining(['addresses', 'links', 'disks', 'machineconfig', 'mc', 'discoveredvolumes', 'mounts', 'namespaces', 'rd']));
    const zsh = await cli(ws, ['completion', 'zsh']);
    const fish = await cli(ws, ['completion', 'fish']);
    for (const name of offered) {
      expect(zsh.out).toContain(name);
      expect(fish.out).toContain(name);
    }
  });

  it('zsh and fish scripts name every command; an unknown shell is a usage error', async () => {
    const zsh = await cli(ws, ['completion', 'zsh']);
    expect(zsh.out).toMatch(/^#compdef bronzectl\n/);
    expect(zsh.out).toContain("'/|memory') print -r -- '/memory' ;;");
    expect(zsh.out).toContain("'--watch:watch resource changes'");
    const fish = await cli(ws, ['completion', 'fish']);
    expect(fish.out).toContain("complete -c bronzectl -n '__bronzectl_at /' -f -a 'logs' -d 'Retrieve logs for a service'");
    expect(fish.out).toContain("complete -c bronzectl -n '__bronzectl_at /get' -s o -l output -x -a 'table yaml json' -d 'output mode'");
    expect(fish.out).toContain("complete -c bronzectl -s n -l nodes -r");
    expect((await cli(ws, ['completion', 'tcsh'])).code).toBe(2);
  });
});

describe('the executable (bin/bronzectl.mjs)', () => {
  const env = () => ({ ...process.env, HOME: ws.dir, BRONZECONFIG: ws.config });

  /** Spawns without blocking: the test server lives in this process. */
  const runBin = (node: string, args: string[]) =>
    new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn(node, [BIN, ...args], { env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    });

  it.each([
    ['the host node', HOST_NODE],
    ['node 24', NODE24],
  ])('runs on %s: exit 0, exit 1 on a partial failure, exit 2 on bad usage', async (_name, node) => {
    if (!node) return;
    const ok = await runBin(node, ['version', '--client', '--short']);
    expect(ok.stderr).toBe('');
    expect(ok).toMatchObject({ status: 0, stdout: expect.stringMatching(/^Client:\nBronze \S+\n$/) });
    const partial = await runBin(node, ['-n', 'n1,n2', 'version']);
    expect(partial.stderr).toBe('n2: node n2 is down\n');
    expect(partial.status).toBe(1);
    expect(partial.stdout).toContain('\tNODE:        n1\n\tTag:         v1\n');
    expect((await runBin(node, ['nonsense'])).status).toBe(2);
  });

  it('logs -f ends cleanly on SIGINT (exit 0)', async () => {
    const child = spawn(NODE24, [BIN, '-n', 'n1', 'logs', '-f', 'apid'], { env: env(), stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stderr.on('data', (d) => (err += d));
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (d) => {
        out += d;
        if (out.includes('\n')) resolve();
      });
    });
    child.kill('SIGINT');
    const code = await new Promise<number | null>((resolve) => child.on('exit', (c) => resolve(c)));
    expect({ code, out, err }).toEqual({ code: 0, out: 'n1: hello\n', err: '' });
  });
});
