import { beforeAll, describe, expect, it } from 'vitest';
import { createPrivateKey, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { talosCA } from '../../test/lib/talos-pki.ts';
import YAML from 'yaml';
import { FieldError, generateSecrets, generateToken, parseSecrets, serializeSecrets, TOKEN_PATTERN, type SecretsBundle } from './secrets.ts';
import { newCA } from '../pki/ca.ts';
import { issueServerCert } from '../pki/certs.ts';
import { pemDecode, pemEncode, toBase64Pem } from '../pki/pem.ts';

let bundle: SecretsBundle;
let text: string;

beforeAll(async () => {
  bundle = await generateSecrets();
  text = serializeSecrets(bundle);
});

/** The serialized bundle with one field changed (dotted path; undefined deletes). */
function edit(path: string, value: unknown): string {
  const doc = YAML.parse(text) as Record<string, unknown>;
  const keys = path.split('.');
  let o = doc;
  for (const k of keys.slice(0, -1)) o = o[k] as Record<string, unknown>;
  if (value === undefined) delete o[keys.at(-1)!];
  else o[keys.at(-1)!] = value;
  return YAML.stringify(doc);
}

function errorOf(fn: () => unknown): FieldError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(FieldError);
    return e as FieldError;
  }
  throw new Error('expected an error');
}

describe('generateSecrets', () => {
  it('makes tokens, cluster id and secret, and an OS CA', () => {
    expect(bundle.trustdinfo.token).toMatch(TOKEN_PATTERN);
    expect(bundle.secrets.bootstraptoken).toMatch(TOKEN_PATTERN);
    expect(bundle.trustdinfo.token).not.toBe(bundle.secrets.bootstraptoken);
    expect(Buffer.from(bundle.cluster.id, 'base64url')).toHaveLength(32);
    expect(bundle.cluster.id).toMatch(/^[A-Za-z0-9_-]{43}=$/);
    expect(Buffer.from(bundle.cluster.secret, 'base64')).toHaveLength(32);
    const ca = new X509Certificate(bundle.certs.os.crt);
    expect(ca.ca).toBe(true);
    expect(ca.publicKey.asymmetricKeyType).toBe('ed25519');
    // Ten years.
    expect(Date.parse(ca.validTo) - Date.now()).toBeGreaterThan(3649 * 86_400_000);
  });

  it('tokens have the Talos shape and do not repeat', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const t = generateToken();
      expect(t).toMatch(/^[a-z0-9]{6}\.[a-z0-9]{16}$/);
      seen.add(t);
    }
    expect(seen.size).toBe(200);
  });
});

describe('serializeSecrets / parseSecrets', () => {
  it('round-trips, storing certificates as base64 of PEM', () => {
    const doc = YAML.parse(text);
    expect(Object.keys(doc)).toEqual(['cluster', 'secrets', 'trustdinfo', 'certs']);
    expect(doc.certs.os.crt).toBe(toBase64Pem(bundle.certs.os.crt));
    expect(doc.certs.os.crt).toMatch(/^LS0tLS1CRUdJTi/);
    expect(parseSecrets(text)).toEqual(bundle);
  });

  it('bootstraptoken is optional', () => {
    const noBoot = { ...bundle, secrets: {} };
    const t = serializeSecrets(noBoot);
    expect(YAML.parse(t).secrets).toEqual({});
    expect(parseSecrets(t)).toEqual(noBoot);
    expect(parseSecrets(edit('secrets', undefined)).secrets).toEqual({});
  });

  it('accepts a Talos bundle: extra Talos fields dropped, ED25519 PRIVATE KEY relabelled', () => {
    const doc = YAML.parse(text);
    doc.secrets.secretboxencryptionsecret = 'abc';
    doc.certs.k8s = { crt: 'x', key: 'y' };
    doc.certs.k8saggregator = { crt: 'x', key: 'y' };
    doc.certs.k8sserviceaccount = { key: 'y' };
    const der = pemDecode(bundle.certs.os.key, ['PRIVATE KEY']).der;
    doc.certs.os.key = toBase64Pem(pemEncode('ED25519 PRIVATE KEY', der));
    expect(parseSecrets(YAML.stringify(doc))).toEqual(bundle);
  });

  it('keeps the etcd CA (Talos: a SEC1 EC key), checks it as the OS CA, and names a bad one', async () => {
    const etcd = await talosCA('ec-p256');
    const doc = YAML.parse(text);
    doc.certs.etcd = { crt: toBase64Pem(etcd.crt), key: toBase64Pem(etcd.key) };
    const parsed = parseSecrets(YAML.stringify(doc));
    expect(parsed.certs.etcd!.crt).toBe(etcd.crt);
    expect(parsed.certs.etcd!.key).toMatch(/^-----BEGIN PRIVATE KEY-----/);
    expect(parseSecrets(serializeSecrets(parsed)).certs.etcd).toEqual(parsed.certs.etcd);
    doc.certs.etcd = { crt: 'x', key: 'y' };
    expect(() => parseSecrets(YAML.stringify(doc))).toThrow(/certs\.etcd\.crt: not a base64-encoded PEM certificate/);
  });

  it('accepts a Talos bundle whose OS CA key is a SEC1 EC key (P-256) or PKCS#1 RSA key', async () => {
    for (const kind of ['ec-p256', 'ec-p384', 'rsa'] as const) {
      const ca = await talosCA(kind);
      const doc = YAML.parse(text);
      doc.certs.os = { crt: toBase64Pem(ca.crt), key: toBase64Pem(ca.key) };
      const parsed = parseSecrets(YAML.stringify(doc));
      expect(parsed.certs.os.key).toMatch(/^-----BEGIN PRIVATE KEY-----/);
      expect(createPrivateKey(parsed.certs.os.key).equals(createPrivateKey(ca.key))).toBe(true);
    }
  });

  it('names the bad field', async () => {
    const other = await newCA({ commonName: 'x', validityDays: 1 });
    const leaf = await issueServerCert(bundle.certs.os, { commonName: 'leaf', ttlMs: 60_000 });
    const k1 = generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).privateKey.export({ format: 'pem', type: 'sec1' }) as string;
    const cases: [string, string][] = [
      [edit('cluster', undefined), 'cluster: missing'],
      [edit('cluster.id', undefined), 'cluster.id: missing'],
      [edit('cluster.secret', 42), 'cluster.secret: want a string'],
      [edit('cluster.extra', 'x'), 'cluster.extra: unknown field'],
      [edit('trustdinfo.token', 'ABCDEF.0123456789abcdef'), 'trustdinfo.token: not a token of the form [a-z0-9]{6}.[a-z0-9]{16}'],
      [edit('secrets.bootstraptoken', 'short.token'), 'secrets.bootstraptoken: not a token'],
      [edit('certs.os', undefined), 'certs.os: missing'],
      [edit('certs.os', 'x'), 'certs.os: want a mapping'],
      [edit('certs.os.crt', 'not base64!'), 'certs.os.crt: not a base64-encoded PEM certificate'],
      [edit('certs.os.crt', toBase64Pem('hello')), 'certs.os.crt: not a PEM certificate'],
      [edit('certs.os.crt', toBase64Pem(leaf.crt)), 'certs.os.crt: not a CA certificate'],
      [edit('certs.os.key', toBase64Pem(bundle.certs.os.crt)), 'certs.os.key: not a PEM private key Bronze can use'],
      [edit('certs.os.key', toBase64Pem(k1)), 'certs.os.key: not a PEM private key Bronze can use: EC private key on curve secp256k1'],
      [edit('certs.os.key', toBase64Pem(other.key)), 'certs.os.key: does not match certs.os.crt'],
      [edit('nope', 1), 'nope: unknown field'],
      ['- a list', 'want a mapping'],
    ];
    for (const [yamlText, want] of cases) {
      expect(errorOf(() => parseSecrets(yamlText)).message).toContain(want);
    }
    const e = errorOf(() => parseSecrets(edit('certs.os.crt', toBase64Pem('hello')), 'secrets.yaml'));
    expect(e.message).toBe('secrets.yaml: certs.os.crt: not a PEM certificate');
    expect(e.path).toBe('certs.os.crt');
    expect(errorOf(() => parseSecrets('cluster: [\n', 'secrets.yaml')).message).toMatch(/^secrets.yaml: invalid YAML: .*line/);
    expect(errorOf(() => parseSecrets('cluster: {}\ncluster: {}\n')).message).toMatch(/invalid YAML/);
  });
});
