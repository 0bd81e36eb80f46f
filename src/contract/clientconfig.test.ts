import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import YAML from 'yaml';
import {
  clientConfigPath,
  load,
  merge,
  newClientConfig,
  parseClientConfig,
  save,
  serializeClientConfig,
  type ClientConfig,
} from './clientconfig.ts';
import { FieldError } from './secrets.ts';
import { newCA, type CertAndKey } from '../pki/ca.ts';
import { rolesOf, verifyChain, certificateInfo } from '../pki/certs.ts';
import { pemDecode, pemEncode, toBase64Pem } from '../pki/pem.ts';

const DAY = 86_400_000;
let ca: CertAndKey;
let cfg: ClientConfig;
let tmp: string;

beforeAll(async () => {
  ca = await newCA({ commonName: 'bronze', organization: 'bronze', validityDays: 365 });
  cfg = await newClientConfig({ contextName: 'lab', endpoints: ['10.5.0.2'], ca, roles: ['os:admin'], ttlMs: 365 * DAY });
  tmp = await mkdtemp(path.join(os.tmpdir(), 'bronze-clientconfig-'));
});

afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

describe('clientConfigPath', () => {
  it('prefers the flag, then $BRONZECONFIG, then $XDG_CONFIG_HOME, then ~/.bronze/config', () => {
    const env = { HOME: '/home/op', BRONZECONFIG: '/etc/bc', XDG_CONFIG_HOME: '/home/op/.config' };
    expect(clientConfigPath(env, '/tmp/flag')).toBe('/tmp/flag');
    expect(clientConfigPath(env, '~/x')).toBe('/home/op/x');
    expect(clientConfigPath(env)).toBe('/etc/bc');
    expect(clientConfigPath({ ...env, BRONZECONFIG: '' }, '')).toBe('/home/op/.config/bronze/config.yaml');
    expect(clientConfigPath({ HOME: '/home/op' })).toBe('/home/op/.bronze/config');
    expect(clientConfigPath({ HOME: '/home/op', XDG_CONFIG_HOME: '' })).toBe('/home/op/.bronze/config');
  });
});

describe('newClientConfig', () => {
  it('issues a client certificate with the roles from the OS CA', () => {
    expect(cfg.context).toBe('lab');
    const c = cfg.contexts.lab!;
    expect(c.endpoints).toEqual(['10.5.0.2']);
    expect(c.nodes).toEqual([]);
    expect(c.ca).toBe(ca.crt);
    expect(rolesOf(c.crt)).toEqual(['os:admin']);
    expect(certificateInfo(c.crt).commonName).toBe('admin');
    expect(certificateInfo(c.crt).extKeyUsage).toEqual(['clientAuth']);
    expect(verifyChain(c.crt, ca.crt)).toBe(true);
  });

  it('takes several roles and rejects unknown ones', async () => {
    const r = await newClientConfig({ contextName: 'ro', endpoints: [], nodes: ['n1'], ca, roles: ['os:reader', 'os:etcd:backup'], ttlMs: DAY });
    expect(rolesOf(r.contexts.ro!.crt)).toEqual(['os:reader', 'os:etcd:backup']);
    expect(r.contexts.ro!.nodes).toEqual(['n1']);
    await expect(newClientConfig({ contextName: 'x', endpoints: [], ca, roles: ['os:root'], ttlMs: DAY })).rejects.toThrow(/unknown role "os:root"/);
    await expect(newClientConfig({ contextName: 'x', endpoints: [], ca, roles: [], ttlMs: DAY })).rejects.toThrow(/at least one role/);
    await expect(newClientConfig({ contextName: 'a b', endpoints: [], ca, roles: ['os:admin'], ttlMs: DAY })).rejects.toThrow(/context name/);
  });
});

describe('parse / serialize', () => {
  it('round-trips in the talosconfig layout with base64 PEM', () => {
    const text = serializeClientConfig(cfg);
    const doc = YAML.parse(text);
    expect(doc.context).toBe('lab');
    expect(Object.keys(doc.contexts.lab)).toEqual(['endpoints', 'ca', 'crt', 'key']); // nodes left out when empty
    expect(doc.contexts.lab.crt).toBe(toBase64Pem(cfg.contexts.lab!.crt));
    expect(parseClientConfig(text)).toEqual(cfg);
  });

  it('relabels a Talos "ED25519 PRIVATE KEY"', () => {
    const doc = YAML.parse(serializeClientConfig(cfg));
    const der = pemDecode(cfg.contexts.lab!.key, ['PRIVATE KEY']).der;
    doc.contexts.lab.key = toBase64Pem(pemEncode('ED25519 PRIVATE KEY', der));
    expect(parseClientConfig(YAML.stringify(doc)).contexts.lab!.key).toBe(cfg.contexts.lab!.key);
  });

  it('names the file and the field', async () => {
    const other = await newCA({ commonName: 'o', validityDays: 1 });
    const mut = (f: (d: any) => void) => {
      const d = YAML.parse(serializeClientConfig(cfg));
      f(d);
      return YAML.stringify(d);
    };
    const cases: [string, string][] = [
      [mut((d) => (d.contexts.lab.crt = 'nope!')), 'contexts.lab.crt: not a base64-encoded PEM certificate'],
      [mut((d) => (d.contexts.lab.ca = toBase64Pem('hi'))), 'contexts.lab.ca: not a PEM certificate'],
      [mut((d) => delete d.contexts.lab.key), 'contexts.lab.key: missing'],
      [mut((d) => (d.contexts.lab.key = toBase64Pem(other.key))), 'contexts.lab.key: does not match contexts.lab.crt'],
      [mut((d) => (d.contexts.lab.endpoints = 'x')), 'contexts.lab.endpoints: want a list of strings'],
      [mut((d) => (d.contexts.lab.nodes = [1])), 'contexts.lab.nodes[0]: want a non-empty string'],
      [mut((d) => (d.contexts.lab.auth = {})), 'contexts.lab.auth: unknown field'],
      [mut((d) => (d.context = 'prod')), 'context: "prod" is not one of contexts'],
      [mut((d) => (d.contexts = [])), 'contexts: want a mapping'],
    ];
    for (const [text, want] of cases) {
      let err: unknown;
      try {
        parseClientConfig(text, '/home/op/.bronze/config');
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(FieldError);
      expect((err as Error).message).toBe(`/home/op/.bronze/config: ${want}`);
    }
    expect(parseClientConfig('')).toEqual({ context: '', contexts: {} });
  });
});

describe('load / save', () => {
  it('saves with mode 0600 in a 0700 directory and loads back', async () => {
    const file = path.join(tmp, 'a', 'b', 'config');
    await save(file, cfg);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect((await stat(path.dirname(file))).mode & 0o777).toBe(0o700);
    expect((await stat(path.join(tmp, 'a'))).mode & 0o777).toBe(0o700);
    expect(await load(file)).toEqual(cfg);
    expect(await readdir(path.dirname(file))).toEqual(['config']);
  });

  it('replaces an existing file atomically, leaving mode 0600', async () => {
    const file = path.join(tmp, 'replace');
    await writeFile(file, 'old', { mode: 0o644 });
    await save(file, cfg);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(await load(file)).toEqual(cfg);
  });

  it('leaves no partial file when the write fails', async () => {
    // The target is a non-empty directory: the temporary file is written, the rename fails.
    const dir = path.join(tmp, 'fail');
    const target = path.join(dir, 'config');
    await mkdir(path.join(target, 'inside'), { recursive: true });
    await expect(save(target, cfg)).rejects.toThrow();
    expect((await readdir(dir)).sort()).toEqual(['config']);
    // The parent path is a file: nothing can be created.
    const blocker = path.join(tmp, 'blocker');
    await writeFile(blocker, 'x');
    await expect(save(path.join(blocker, 'config'), cfg)).rejects.toThrow();
    expect(await readFile(blocker, 'utf8')).toBe('x');
  });

  it.skipIf(process.getuid?.() === 0)('leaves no partial file in an unwritable directory', async () => {
    const dir = path.join(tmp, 'ro');
    await mkdir(dir);
    await writeFile(path.join(dir, 'config'), 'old');
    await chmod(dir, 0o500);
    try {
      await expect(save(path.join(dir, 'config'), cfg)).rejects.toThrow();
      expect(await readdir(dir)).toEqual(['config']);
      expect(await readFile(path.join(dir, 'config'), 'utf8')).toBe('old');
    } finally {
      await chmod(dir, 0o700);
    }
  });

  it('load names the missing file', async () => {
    const file = path.join(tmp, 'missing');
    await expect(load(file)).rejects.toThrow(`${file}: no such file`);
    const bad = path.join(tmp, 'bad');
    await writeFile(bad, 'context: x\ncontexts: {}\n');
    await expect(load(bad)).rejects.toThrow(`${bad}: context: "x" is not one of contexts`);
  });
});

describe('merge', () => {
  it('renames clashing contexts -1, -2, … and switches to the incoming context', () => {
    const one = merge(cfg, cfg);
    expect(one.renames).toEqual([{ from: 'lab', to: 'lab-1' }]);
    expect(Object.keys(one.config.contexts)).toEqual(['lab', 'lab-1']);
    expect(one.config.context).toBe('lab-1');
    const two = merge(one.config, cfg);
    expect(two.renames).toEqual([{ from: 'lab', to: 'lab-2' }]);
    expect(two.config.context).toBe('lab-2');
    expect(Object.keys(cfg.contexts)).toEqual(['lab']); // inputs untouched
  });

  it('force overwrites a clashing context', async () => {
    const fresh = await newClientConfig({ contextName: 'lab', endpoints: ['10.5.0.9'], ca, roles: ['os:reader'], ttlMs: DAY });
    const r = merge(cfg, fresh, { force: true });
    expect(r.renames).toEqual([]);
    expect(Object.keys(r.config.contexts)).toEqual(['lab']);
    expect(r.config.contexts.lab!.endpoints).toEqual(['10.5.0.9']);
    expect(r.config.context).toBe('lab');
  });

  it('adds new contexts as they are; keeps the current context when the incoming file has none', async () => {
    const prod = await newClientConfig({ contextName: 'prod', endpoints: ['10.0.0.1'], ca, roles: ['os:admin'], ttlMs: DAY });
    const r = merge(cfg, prod);
    expect(Object.keys(r.config.contexts)).toEqual(['lab', 'prod']);
    expect(r.config.context).toBe('prod');
    expect(merge(cfg, { ...prod, context: '' }).config.context).toBe('lab');
    // Names that exist on Object.prototype are ordinary names.
    const ts = merge(cfg, { context: 'toString', contexts: { toString: prod.contexts.prod! } });
    expect(ts.renames).toEqual([]);
    expect(ts.config.context).toBe('toString');
  });
});
