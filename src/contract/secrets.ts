// The secrets bundle: everything a cluster's machine configs are generated from, in the format of
// Talos's `secrets.yaml` for the parts Bronze uses. Certificates and keys are base64 of PEM in the
// file (as Talos stores them) and plain PEM in memory.
//
//   cluster:    { id, secret }
//   secrets:    { bootstraptoken? }
//   trustdinfo: { token }              # the join token trustd checks: [a-z0-9]{6}.[a-z0-9]{16}
//   certs:      { os: { crt, key } }   # the OS CA: signs apid/trustd server certs and client certs
//               etcd: { crt, key }     # the etcd CA (cluster.etcd.ca): each control plane signs its
//                                      # own etcd peer and server certificates with it
//
// Fields a Talos bundle carries that Bronze has no use for (Kubernetes CAs, encryption secrets)
// are accepted and dropped, so `talosctl gen secrets` output can be reused.
import { randomBytes, createPrivateKey, X509Certificate } from 'node:crypto';
import YAML from 'yaml';
import { newCA, type CertAndKey } from '../pki/ca.ts';
import { fromBase64Pem, normalizePrivateKeyPem, toBase64Pem } from '../pki/pem.ts';

export interface SecretsBundle {
  cluster: { id: string; secret: string };
  secrets: { bootstraptoken?: string };
  trustdinfo: { token: string };
  /** etcd: absent in bundles made before Bronze ran etcd (their control planes cannot run it). */
  certs: { os: CertAndKey; etcd?: CertAndKey };
}

/** A validation failure in a YAML file: `path` is the dotted field path, `reason` what is wrong with it. */
export class FieldError extends Error {
  readonly path: string;
  readonly reason: string;
  readonly source: string | undefined;

  constructor(path: string, reason: string, source?: string) {
    super(`${source ? `${source}: ` : ''}${path ? `${path}: ` : ''}${reason}`);
    this.name = 'FieldError';
    this.path = path;
    this.reason = reason;
    this.source = source;
  }
}

/** Talos's token format (kubeadm's bootstrap token shape). */
export const TOKEN_PATTERN = /^[a-z0-9]{6}\.[a-z0-9]{16}$/;

const TOKEN_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

function randomToken(n: number): string {
  // Rejection sampling keeps the distribution uniform (252 = 7 * 36).
  let out = '';
  while (out.length < n) {
    for (const b of randomBytes(n * 2)) {
      if (b < 252 && out.length < n) out += TOKEN_ALPHABET[b % 36];
    }
  }
  return out;
}

/** A new token in Talos's format, `[a-z0-9]{6}.[a-z0-9]{16}`. */
export function generateToken(): string {
  return `${randomToken(6)}.${randomToken(16)}`;
}

export interface GenerateSecretsOptions {
  /** Validity of the OS CA; default ten years, as Talos. */
  caValidityDays?: number;
  now?: Date;
}

export async function generateSecrets(opts: GenerateSecretsOptions = {}): Promise<SecretsBundle> {
  const os = await newCA({
    commonName: 'bronze',
    organization: 'bronze',
    validityDays: opts.caValidityDays ?? 3650,
    ...(opts.now ? { now: opts.now } : {}),
  });
  const etcd = await newCA({ commonName: 'etcd', organization: 'etcd', validityDays: opts.caValidityDays ?? 3650, ...(opts.now ? { now: opts.now } : {}) });
  return {
    cluster: {
      // As Talos: 32 random bytes each; the id URL-safe base64, the secret standard base64.
      id: randomBytes(32).toString('base64url') + '=',
      secret: randomBytes(32).toString('base64'),
    },
    secrets: { bootstraptoken: generateToken() },
    trustdinfo: { token: generateToken() },
    certs: { os, etcd },
  };
}

export function serializeSecrets(b: SecretsBundle): string {
  const doc = {
    cluster: { id: b.cluster.id, secret: b.cluster.secret },
    secrets: b.secrets.bootstraptoken !== undefined ? { bootstraptoken: b.secrets.bootstraptoken } : {},
    trustdinfo: { token: b.trustdinfo.token },
    certs: {
      os: { crt: toBase64Pem(b.certs.os.crt), key: toBase64Pem(b.certs.os.key) },
      ...(b.certs.etcd ? { etcd: { crt: toBase64Pem(b.certs.etcd.crt), key: toBase64Pem(b.certs.etcd.key) } } : {}),
    },
  };
  return YAML.stringify(doc, { lineWidth: 0 });
}

// ---- validation helpers shared by the operator-facing files (secrets bundle, client config) ----

/** Reads YAML text into plain data; syntax errors become a FieldError with the line. */
export function parseYamlText(text: string, source?: string): unknown {
  const doc = YAML.parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  const err = doc.errors[0];
  if (err) throw new FieldError('', `invalid YAML: ${err.message.split('\n')[0]}`, source);
  return doc.toJS({ maxAliasCount: 100 }) as unknown;
}

type Obj = Record<string, unknown>;

/** Field access with paths in errors; `source` (the file name) prefixes every message. */
export class Fields {
  readonly source: string | undefined;

  constructor(source?: string) {
    this.source = source;
  }

  fail(path: string, reason: string): never {
    throw new FieldError(path, reason, this.source);
  }

  /** A mapping at `path`, with only `known` keys (plus `ignored` ones, dropped silently). */
  object(v: unknown, path: string, known: readonly string[], ignored: readonly string[] = []): Obj {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) this.fail(path, 'want a mapping');
    for (const k of Object.keys(v as Obj)) {
      if (!known.includes(k) && !ignored.includes(k)) this.fail(join(path, k), 'unknown field');
    }
    return v as Obj;
  }

  string(o: Obj, key: string, path: string, opts: { optional?: boolean; allowEmpty?: boolean } = {}): string | undefined {
    const p = join(path, key);
    const v = o[key];
    if (v === undefined || v === null) {
      if (opts.optional) return undefined;
      this.fail(p, 'missing');
    }
    if (typeof v !== 'string') this.fail(p, 'want a string');
    if (v === '' && !opts.allowEmpty) this.fail(p, 'empty');
    return v;
  }

  required(o: Obj, key: string, path: string): string {
    return this.string(o, key, path)!;
  }

  stringList(o: Obj, key: string, path: string, optional = false): string[] {
    const p = join(path, key);
    const v = o[key];
    if (v === undefined || v === null) {
      if (optional) return [];
      this.fail(p, 'missing');
    }
    if (!Array.isArray(v)) this.fail(p, 'want a list of strings');
    return v.map((item, i) => {
      if (typeof item !== 'string' || item === '') this.fail(`${p}[${i}]`, 'want a non-empty string');
      return item;
    });
  }

  /** A base64-of-PEM certificate; returns the PEM. */
  certificate(o: Obj, key: string, path: string): string {
    const p = join(path, key);
    const pem = this.base64Pem(this.required(o, key, path), p, 'certificate');
    try {
      new X509Certificate(pem);
    } catch {
      this.fail(p, 'not a PEM certificate');
    }
    return pem;
  }

  /**
   * A base64-of-PEM private key (Ed25519, ECDSA P-256/P-384 or RSA; PKCS#8, Talos's "ED25519
   * PRIVATE KEY", SEC1 "EC PRIVATE KEY" or PKCS#1 "RSA PRIVATE KEY"); returns it as PKCS#8 PEM.
   */
  privateKey(o: Obj, key: string, path: string): string {
    const p = join(path, key);
    const pem = this.base64Pem(this.required(o, key, path), p, 'private key');
    try {
      return normalizePrivateKeyPem(pem);
    } catch (e) {
      return this.fail(p, `not a PEM private key Bronze can use: ${(e as Error).message}`);
    }
  }

  /** Fails unless `keyPem` is the private key of `crtPem`. */
  keyMatches(crtPem: string, keyPem: string, crtPath: string, keyPath: string): void {
    if (!new X509Certificate(crtPem).checkPrivateKey(createPrivateKey(keyPem))) {
      this.fail(keyPath, `does not match ${crtPath}`);
    }
  }

  private base64Pem(v: string, path: string, what: string): string {
    try {
      return fromBase64Pem(v);
    } catch {
      return this.fail(path, `not a base64-encoded PEM ${what}`);
    }
  }
}

export function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** Talos secrets.yaml fields Bronze does not use. */
const TALOS_ONLY = {
  secrets: ['secretboxencryptionsecret', 'aescbcencryptionsecret'],
  certs: ['k8s', 'k8saggregator', 'k8sserviceaccount'],
} as const;

/** Parses and validates a secrets bundle; errors name the field, e.g. `certs.os.crt: not a PEM certificate`. */
export function parseSecrets(yamlText: string, source?: string): SecretsBundle {
  const f = new Fields(source);
  const root = f.object(parseYamlText(yamlText, source), '', ['cluster', 'secrets', 'trustdinfo', 'certs']);

  const cluster = f.object(root.cluster ?? f.fail('cluster', 'missing'), 'cluster', ['id', 'secret']);
  const id = f.required(cluster, 'id', 'cluster');
  const secret = f.required(cluster, 'secret', 'cluster');

  const secretsIn = root.secrets === undefined || root.secrets === null ? {} : f.object(root.secrets, 'secrets', ['bootstraptoken'], TALOS_ONLY.secrets);
  const bootstraptoken = f.string(secretsIn, 'bootstraptoken', 'secrets', { optional: true });
  if (bootstraptoken !== undefined && !TOKEN_PATTERN.test(bootstraptoken)) {
    f.fail('secrets.bootstraptoken', 'not a token of the form [a-z0-9]{6}.[a-z0-9]{16}');
  }

  const trustd = f.object(root.trustdinfo ?? f.fail('trustdinfo', 'missing'), 'trustdinfo', ['token']);
  const token = f.required(trustd, 'token', 'trustdinfo');
  if (!TOKEN_PATTERN.test(token)) f.fail('trustdinfo.token', 'not a token of the form [a-z0-9]{6}.[a-z0-9]{16}');

  const certs = f.object(root.certs ?? f.fail('certs', 'missing'), 'certs', ['os', 'etcd'], TALOS_ONLY.certs);
  const caAt = (name: 'os' | 'etcd'): CertAndKey => {
    const at = `certs.${name}`;
    const o = f.object(certs[name] ?? f.fail(at, 'missing'), at, ['crt', 'key']);
    const crt = f.certificate(o, 'crt', at);
    if (!new X509Certificate(crt).ca) f.fail(`${at}.crt`, 'not a CA certificate');
    const key = f.privateKey(o, 'key', at);
    f.keyMatches(crt, key, `${at}.crt`, `${at}.key`);
    return { crt, key };
  };
  const { crt, key } = caAt('os');
  const etcd = certs.etcd === undefined || certs.etcd === null ? undefined : caAt('etcd');

  return {
    cluster: { id, secret },
    secrets: bootstraptoken !== undefined ? { bootstraptoken } : {},
    trustdinfo: { token },
    certs: { os: { crt, key }, ...(etcd ? { etcd } : {}) },
  };
}
