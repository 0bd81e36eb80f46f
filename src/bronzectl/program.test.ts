// The command tree's quick start: a run registers only the command it names (the same help and
// errors as with every command registered), and the front hands off every action it does not run
// itself before writing anything.
import { describe, expect, it } from 'vitest';
import { Command } from 'commander';
import * as esbuild from 'esbuild';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { COMMANDS, HAND_OFF, buildProgram, commandWord, runProgram } from './program.ts';
import type { Ctx } from './session.ts';

const here = path.dirname(fileURLToPath(import.meta.url));

function capture() {
  let out = '';
  let err = '';
  const io = { stdout: { write: (s: string | Uint8Array) => (out += String(s)) }, stderr: { write: (s: string | Uint8Array) => (err += String(s)) }, env: {}, cwd: '/' };
  return { io, text: () => ({ out, err }) };
}

const noSession = () => {
  throw new Error('no session in this test');
};

/** Every command path (`config new`, ...) and alias path. */
function paths(): string[][] {
  const c = capture();
  const all: string[][] = [];
  const walk = (cmd: Command, prefix: string[]) => {
    for (const sub of cmd.commands) {
      for (const name of [sub.name(), ...sub.aliases()]) all.push([...prefix, name]);
      walk(sub, [...prefix, sub.name()]);
    }
  };
  walk(buildProgram({ io: c.io, session: noSession }), []);
  return all;
}

/** Parses `argv` with every command registered (as before the quick start), for comparison. */
async function withAllCommands(argv: string[]): Promise<{ out: string; err: string }> {
  const c = capture();
  const program = buildProgram({ io: c.io, session: noSession } as Ctx);
  await program.parseAsync(argv, { from: 'user' }).catch(() => undefined);
  return c.text();
}

describe('COMMANDS', () => {
  it('names each command by its name and aliases, as it registers itself', () => {
    for (const [names, register] of COMMANDS) {
      const program = new Command('bronzectl');
      register(program, { io: capture().io, session: noSession });
      expect(program.commands).toHaveLength(1);
      const cmd = program.commands[0]!;
      // completion prints the whole tree: it is never registered alone.
      expect(names).toEqual(cmd.name() === 'completion' ? [] : [cmd.name(), ...cmd.aliases()]);
    }
  });
});

describe('commandWord', () => {
  const program = buildProgram({ io: capture().io, session: noSession }, []);
  it.each([
    [['version', '--client'], 'version'],
    [['-n', 'a,b', 'services'], 'services'],
    [['--nodes=a', '-eb', '--bronzeconfig', 'x', '--context', 'y', 'get', 'svc'], 'get'],
    [['-n', 'version'], undefined],
    [['--help', 'version'], undefined],
    [['-h'], undefined],
    [['--bogus', 'version'], undefined],
    [['--', 'version'], undefined],
    [[], undefined],
  ])('%j → %s', (argv, word) => {
    expect(commandWord(program, argv)).toBe(word);
  });
});

describe('a run registering only its command', () => {
  it('prints the same help, for every command and alias, as with every command registered', async () => {
    for (const p of paths()) {
      for (const argv of [[...p, '--help'], [...p, '--bogus-flag'], ['-n', 'x', ...p, '-h']]) {
        const c = capture();
        await runProgram(argv, c.io);
        expect(c.text(), argv.join(' ')).toEqual(await withAllCommands(argv));
      }
    }
  });
});

describe('the front', () => {
  const front = async (argv: string[]) => {
    const c = capture();
    const code = await runProgram(argv, c.io, { front: true });
    return { code, ...c.text() };
  };

  it('runs help, usage errors, version --client and completion itself', async () => {
    expect(await front(['version', '--client', '--short'])).toEqual({ code: 0, out: expect.stringMatching(/^Client:\nBronze /), err: '' });
    expect(await front(['--help'])).toMatchObject({ code: 0, out: expect.stringContaining('Usage: bronzectl') });
    expect(await front(['get', '--help'])).toMatchObject({ code: 0, out: expect.stringContaining('-w, --watch') });
    expect(await front(['bogus'])).toMatchObject({ code: 2, err: expect.stringContaining("unknown command 'bogus'") });
    expect(await front(['logs', 'x', '--tail', 'many'])).toMatchObject({ code: 2, err: expect.stringContaining('"many" is not an integer') });
    expect(await front(['completion', 'bash'])).toMatchObject({ code: 0, out: expect.stringContaining('complete -o default -F _bronzectl bronzectl') });
  });

  it('hands off every other action before it starts, having written nothing', async () => {
    for (const argv of [['version'], ['-n', 'a', 'services'], ['get', 'svc'], ['config', 'info'], ['gen', 'key', '--name', 'x'], ['validate', '-c', 'x']]) {
      expect(await front(argv), argv.join(' ')).toEqual({ code: HAND_OFF, out: '', err: '' });
    }
  });

  it('bundles nothing heavy: no API client, protos, YAML, PKI or config validation (the resource definitions, which are data, yes)', async () => {
    const r = await esbuild.build({
      entryPoints: [path.join(here, 'front.ts')],
      bundle: true,
      platform: 'node',
      format: 'cjs',
      write: false,
      metafile: true,
      logLevel: 'silent',
      define: { __BRONZE_VERSION__: '""', __BRONZE_SHA__: '""', __BRONZE_BUILT__: '""' },
    });
    const inputs = Object.keys(r.metafile.inputs);
    // The resource definitions are data (completion offers every type): they may come, with the
    // IP helper their codecs use, but not the wire codec (protos, YAML).
    const light = /^src\/contract\/resources\/(?!wire\.ts|machine-config-text\.ts)[a-z-]+\.ts$|^src\/lib\/(role-source|ip|duration)\.ts$/;
    expect(inputs.filter((f) => !light.test(f) && /node_modules\/(?!commander\/)|src\/(contract|config|pki|lib)|src\/client\/(?!types\.ts)|-impl\.ts$/.test(f))).toEqual([]);
    expect(inputs).toContain('src/contract/resources/registry.ts');
  });
});
