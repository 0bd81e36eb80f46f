// End-to-end: the README, top to bottom. Every command of its ```sh blocks runs as written
// (test/lib/readme.ts extracts them), in order, from a shell in this directory, so that a
// README command can never break silently. What the test changes, and nothing else:
//   - ports: the node's API is on a free port instead of 50000 (`make run` and `make stop` get
//     PORT=<it>, `127.0.0.1:50000` becomes `127.0.0.1:<it>`);
//   - scratch paths: `_out/demo`, `_out/node1` and `_out/node1.raw` go to a temporary
//     directory, so that the test never touches a user's own;
//   - `bronzectl` is bin/bronzectl.mjs on this Node, with HOME in the temporary directory.
// The lines that set up and start this very suite (`scripts/deps.sh && make ...`) are not run:
// NOT_RUN lists them, and a command the test does not know fails it.
//
// Between commands the test waits for what a user would wait for (the node booted, installed,
// rebooted), and after some it checks what the issue (17) was about: `make run` and `make stop`
// by port, the bronzeconfig's endpoint, the ISO booting the installed disk, one kernel message
// per dmesg line, NODE naming the node, the rollback in `get bootstatus`, the reset's new STATE
// and EPHEMERAL filesystems (lifecycle.test.ts leaves reset to this test), the hostname kept
// across boots. Every command runs even when one before it failed (expect.soft), and the test
// then fails naming each failed command.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { QemuVM } from '../../image-builder/qemu.ts';
import { bronzectlUntilOk, type CliResult } from '../lib/bronzectl.ts';
import { consoleFile } from '../lib/console-log.ts';
import { freePort } from '../lib/ports.ts';
import { readmeCommands, substitute, type ReadmeCommand } from '../lib/readme.ts';
import { xfsUuid } from '../lib/xfs.ts';

const REPO = path.resolve('.');
const BOOT = 300_000;
const RUNNING = /machined\[1\]: all 6 services Running/;
const MAINTENANCE = /machined\[1\]: maintenance mode: no machine configuration/;

/** README lines this test does not run, and why. */
const NOT_RUN: ReadonlyArray<[RegExp, string]> = [
  [/^scripts\/deps\.sh && make run$/, 'the setup and the first `make run`: the suite is set up already, and the next section runs `make run` itself'],
  [/^scripts\/deps\.sh && make test$/, 'this test is part of `make test`'],
];

type Kind = 'not-run' | 'start' | 'stop' | 'export' | 'cli';
function kindOf(c: ReadmeCommand): Kind {
  if (NOT_RUN.some(([re]) => re.test(c.text))) return 'not-run';
  if (/^make run\b/.test(c.text)) return 'start';
  if (/^make stop\b/.test(c.text)) return 'stop';
  if (/^export \w+=\S+$/.test(c.text)) return 'export';
  if (/^bronzectl\s/.test(c.text)) return 'cli';
  throw new Error(`README line ${c.line}: the test does not know how to run ${JSON.stringify(c.text)} (teach test/e2e/readme.test.ts)`);
}

describe('the README, command by command', () => {
  const commands = readmeCommands(fs.readFileSync('README.md', 'utf8'));
  let dir: string;
  let port: number;
  let subs: Array<[string, string]>;
  let env: NodeJS.ProcessEnv;
  const exports: string[] = [];
  const failed: string[] = [];
  let vm: QemuVM | undefined;
  let vms = 0;

  /** A README command through bash, with the exports so far. */
  const sh = (text: string, timeoutMs = 300_000): Promise<CliResult> =>
    new Promise((resolve) => {
      const p = spawn('bash', ['-c', [...exports, text].join('\n')], { cwd: REPO, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      p.stdout.on('data', (d) => (stdout += d));
      p.stderr.on('data', (d) => (stderr += d));
      const timer = setTimeout(() => p.kill('SIGKILL'), timeoutMs);
      p.on('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, stdout, stderr });
      });
    });
  const target = () => `127.0.0.1:${port}`;
  /** The client config the README exported last. */
  const config = () => exports.at(-1)?.replace(/^export BRONZECONFIG=/, '');
  /** The disk the README installs to (`make run DISK=_out/node1.raw`, moved to the scratch directory). */
  const installDisk = () => path.join(dir, 'node1.raw');

  /** Waits for the node to reboot (from console line `from`) into `slot` and be Running again. */
  const rebootedInto = async (from: number, slot: 'A' | 'B') => {
    const reboot = await vm!.waitFor(/machined\[1\]: rebooting|Kernel panic/, BOOT, from);
    const booting = await vm!.waitFor(new RegExp(`bronze: booting slot ${slot}`), BOOT, reboot);
    await vm!.waitFor(RUNNING, BOOT, booting);
    await bronzectlUntilOk(['version'], { config: config(), timeoutMs: 120_000 });
  };

  /** What the test waits for, or checks, after a command (matched on the command as written). */
  // `before` reads what `then` compares with, before the command runs.
  const AFTER: ReadonlyArray<{ match: RegExp; before?: () => unknown; then: (r: CliResult, from: number, before: unknown) => Promise<void> }> = [
    {
      // Maintenance mode ends; apid then takes the cluster's certificates.
      match: /apply-config --insecure .*_out\/demo\//,
      then: async (r, from) => {
        expect.soft(r.stderr, 'a node without a disk says the configuration lasts until power-off').toMatch(/STATE is in memory on this node/);
        await vm!.waitFor(/machined\[1\]: left maintenance mode/, BOOT, from);
      },
    },
    {
      match: /^export BRONZECONFIG=/,
      then: async () => {
        const v = await bronzectlUntilOk(['version'], { config: config(), timeoutMs: 120_000 });
        expect(v.code, `mTLS through the bronzeconfig's endpoint (gen config --endpoints): ${v.stderr}`).toBe(0);
      },
    },
    {
      // networkd applies the hostname live; the README's `get hostname` comes after it has.
      match: /patch mc --patch .*"hostname":"demo1"/,
      then: async () => {
        for (const until = Date.now() + 60_000; Date.now() < until; await new Promise((res) => setTimeout(res, 1000))) {
          const h = await bronzectlUntilOk(['get', 'hostname'], { config: config(), timeoutMs: 30_000 });
          if (/demo1/.test(h.stdout)) return;
        }
      },
    },
    {
      match: /get hostname$/,
      then: async (r) => {
        expect.soft(r.stdout).toMatch(/^127\.0\.0\.1 +network +HostnameStatus +hostname +\d+ +demo1/m);
      },
    },
    {
      match: /dmesg$/,
      then: async (r) => {
        const lines = r.stdout.trimEnd().split('\n');
        expect.soft(lines.length, 'one line per kernel message').toBeGreaterThan(50);
        expect.soft(lines.filter((l) => !/^127\.0\.0\.1: \w+: +\w+: \[[^\]]+\]: /.test(l)).slice(0, 3), 'each line is <node>: <facility>: <level>: [time]: message').toEqual([]);
      },
    },
    {
      // The install: said in the reply, done, and the reboot goes through the ISO to the disk.
      match: /apply-config --insecure .*_out\/node1\//,
      then: async (r, from) => {
        expect.soft(r.stderr).toMatch(/An install to \/dev\/vda starts now; the node reboots into it when it is done/);
        const done = await vm!.waitFor(/machined\[1\]: install done: rebooting into the installed disk/, BOOT, from);
        const iso = await vm!.waitFor(/bronze: an installed Bronze disk is here/, BOOT, done);
        const booting = await vm!.waitFor(/bronze: booting slot A/, BOOT, iso);
        await vm!.waitFor(RUNNING, BOOT, booting);
      },
    },
    {
      match: /^bronzectl upgrade --image /,
      then: async (_r, from) => rebootedInto(from, 'B'),
    },
    {
      match: /^bronzectl rollback$/,
      then: async (_r, from) => rebootedInto(from, 'A'),
    },
    {
      // The default labels: STATE and EPHEMERAL wiped (new filesystems), back in maintenance mode.
      match: /^bronzectl reset --reboot$/,
      before: () => ({ state: xfsUuid(installDisk(), 'STATE'), ephemeral: xfsUuid(installDisk(), 'EPHEMERAL') }),
      then: async (_r, from, before) => {
        await vm!.waitFor(/wiped STATE/, BOOT, from);
        await vm!.waitFor(/wiped EPHEMERAL/, BOOT, from);
        const booting = await vm!.waitFor(/bronze: booting slot A/, BOOT, from);
        const maintenance = await vm!.waitFor(MAINTENANCE, BOOT, booting);
        // Up (machined watches the power button from then on) before the README's next step.
        await vm!.waitFor(RUNNING, BOOT, maintenance);
        const was = before as { state: string; ephemeral: string };
        expect.soft(xfsUuid(installDisk(), 'STATE'), 'STATE is a new xfs').not.toBe(was.state);
        expect.soft(xfsUuid(installDisk(), 'EPHEMERAL'), 'EPHEMERAL is a new xfs').not.toBe(was.ephemeral);
      },
    },
  ];

  let bootstatusSeen = 0;
  const checkBootstatus = (r: CliResult) => {
    const lines = r.stdout.trimEnd().split('\n');
    expect.soft(lines[0], 'one VERSION column').toMatch(/^NODE +NAMESPACE +TYPE +ID +VERSION +BOOTED +DEFAULT +NEXT +RUNNING VERSION +LAST CHANGE$/);
    if (bootstatusSeen++ === 0) expect.soft(lines[1], 'after the upgrade').toMatch(/^127\.0\.0\.1 +runtime +BootStatus +boot +\d+ +B +B +v\S+ +upgrade A->B \(v\S+\) committed$/);
    else expect.soft(lines[1], 'after the rollback: recorded (issue 17)').toMatch(/^127\.0\.0\.1 +runtime +BootStatus +boot +\d+ +A +A +v\S+ +rollback B->A \(v\S+\) committed$/);
  };

  beforeAll(async () => {
    for (const f of ['_out/amd64/bronze.iso', '_out/amd64/vmlinuz', '_out/amd64/upgrade.tar']) if (!fs.existsSync(f)) throw new Error(`${f} is missing: run \`make image\` first`);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bronze-readme-'));
    port = await freePort();
    subs = [
      ['127.0.0.1:50000', `127.0.0.1:${port}`],
      ['$PWD/_out/demo', path.join(dir, 'demo')],
      ['_out/demo', path.join(dir, 'demo')],
      ['$PWD/_out/node1', path.join(dir, 'node1')],
      ['_out/node1.raw', path.join(dir, 'node1.raw')],
      ['_out/node1', path.join(dir, 'node1')],
    ];
    const bin = path.join(dir, 'bin');
    fs.mkdirSync(path.join(dir, 'home'), { recursive: true });
    fs.mkdirSync(bin);
    fs.writeFileSync(path.join(bin, 'bronzectl'), `#!/bin/sh\nHOME='${path.join(dir, 'home')}' exec '${process.execPath}' '${path.join(REPO, 'bin/bronzectl.mjs')}' "$@"\n`, { mode: 0o755 });
    env = { ...process.env, PATH: `${bin}:${process.env.PATH}` };
    delete env.BRONZECONFIG;
    delete env.XDG_CONFIG_HOME;
  });

  afterAll(() => {
    vm?.kill();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('knows every command of the README (anything new must be taught, not skipped)', () => {
    expect(commands.length).toBeGreaterThan(20);
    const kinds = commands.map((c) => kindOf(c));
    expect(kinds.filter((k) => k === 'start').length, 'the README boots its nodes with make run').toBeGreaterThanOrEqual(2);
    expect(kinds.filter((k) => k === 'not-run')).toHaveLength(NOT_RUN.length);
  });

  it(
    'runs every command, in order, against the nodes its make run lines boot',
    async () => {
      for (const c of commands) {
        const kind = kindOf(c);
        if (kind === 'not-run') continue;
        const text = substitute(c.text, subs);
        const label = `README line ${c.line}: ${c.text}`;
        console.log(`readme: ${label}`);
        if (kind === 'start') {
          vms++;
          vm = new QemuVM({ apiPort: port, command: { bin: 'bash', args: ['-c', `${text} PORT=${port}`], cwd: REPO, env } }, consoleFile(`readme-node-${vms}`)).start();
          const maintenance = await vm.waitFor(MAINTENANCE, BOOT + 300_000); // `make run` may build first
          await vm.waitFor(RUNNING, BOOT, maintenance);
          // In maintenance mode the node answers the reader API without credentials (as Talos).
          const v = await bronzectlUntilOk(['get', 'resourcedefinitions', '--insecure', '-n', target()], { timeoutMs: 180_000 });
          expect(v.code, `${label}: the node's API on 127.0.0.1:${port}: ${v.stderr}`).toBe(0);
          continue;
        }
        if (kind === 'export') {
          exports.push(text);
          await AFTER.find((a) => a.match.test(c.text))?.then({ code: 0, stdout: '', stderr: '' }, vm!.lines.length, undefined);
          continue;
        }
        const from = vm!.lines.length;
        const hook = AFTER.find((a) => a.match.test(c.text));
        const before = hook?.before?.();
        const r = await sh(kind === 'stop' ? `${text} PORT=${port}` : text);
        if (r.code !== 0) failed.push(`${label}\n    exit ${r.code}: ${r.stderr.trim().split('\n').slice(-3).join('\n    ')}`);
        expect.soft(r.code, `${label}\n${r.stderr}`).toBe(0);
        if (kind === 'stop') {
          expect.soft(r.stderr).toMatch(new RegExp(`power button pressed on the node with API port ${port}`));
          expect(await vm!.waitExit(180_000), 'make run ends when QEMU exits').toBe(0);
          expect.soft(vm!.lines.some((l) => /machined\[1\]: powering off/.test(l))).toBe(true);
          continue;
        }
        if (/get bootstatus$/.test(c.text)) checkBootstatus(r);
        await hook?.then(r, from, before);
      }
      expect(vms).toBe(2);
      // Item 7: the same machine keeps its name across every boot (install, upgrade, rollback,
      // reset), derived from the SMBIOS UUID make run gives it.
      const names = vm!.lines.flatMap((l) => /machined\[1\]: hostname set to (\S+) \((.*)\)/.exec(l)?.slice(1, 3) ?? []);
      const boots = names.filter((_, i) => i % 2 === 0);
      expect.soft(boots.length, 'boots of the installed node').toBeGreaterThanOrEqual(5);
      expect.soft(new Set(boots).size, `one name across boots: ${boots.join(', ')}`).toBe(1);
      expect.soft(names.filter((_, i) => i % 2 === 1).every((why) => /^derived from the SMBIOS UUID$/.test(why)), names.join('; ')).toBe(true);
      expect(failed, `README commands that failed:\n  ${failed.join('\n  ')}`).toEqual([]);
    },
    5 * BOOT + 15 * 60_000,
  );
});
