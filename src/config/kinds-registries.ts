// Where images come from: Talos's machine.registries (v1alpha1: mirrors by registry, auth and TLS
// by endpoint host, certificates as base64 PEM) and its multi-document kinds RegistryMirrorConfig,
// RegistryAuthConfig and RegistryTLSConfig (pkg/machinery/config/types/cri/: PEM as text), with
// Talos's rules and messages. machined's image puller reads them through
// accessors/registries.ts; they apply without a reboot (the next pull uses them).
import { X509Certificate } from 'node:crypto';
import { z } from '../lib/zod.ts';
import { asObject, base64Certificate, base64KeyOrEmpty, bool, checked, scalarString, type Obj, type Reporter } from './fields.ts';
import { pemError } from './formats.ts';
import type { KindSpec } from './kind-spec.ts';
import { OVERRIDE_PATH_REASON, ruleMessage } from './policy.ts';
import { pemDecodeAll } from '../pki/pem.ts';

const q = (v: unknown) => JSON.stringify(v);

/** Why a mirror endpoint is not one: Talos takes http and https URLs only. */
export function endpointError(url: string): string | undefined {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return `${q(url)} is not a URL: expected e.g. https://mirror.example:5000`;
  }
  return u.protocol === 'http:' || u.protocol === 'https:' ? undefined : `has unsupported scheme: ${q(u.protocol.replace(/:$/, ''))}`;
}

/** The PEM blocks of `text` with one of `labels`, or undefined when it has none or is not PEM. */
function pemBlocks(text: string, labels: readonly string[]) {
  try {
    const blocks = pemDecodeAll(text).filter((b) => labels.includes(b.label));
    return blocks.length ? blocks : undefined;
  } catch {
    return undefined;
  }
}

/** Talos's RegistryTLSConfig ca rule (x509.CertPool.AppendCertsFromPEM): at least one certificate that parses. */
export function caBundleError(text: string): string | undefined {
  const ok = pemBlocks(text, ['CERTIFICATE'])?.some((b) => {
    try {
      return Boolean(new X509Certificate(b.der));
    } catch {
      return false;
    }
  });
  return ok ? undefined : 'ca must be a valid PEM-encoded certificate';
}

function build() {
  const apiVersion = z.literal('v1alpha1');
  const url = () => checked((s) => ((why) => (why ? `url ${why}` : undefined))(endpointError(s)));
  const auth = {
    username: scalarString().optional(),
    password: scalarString().optional(),
    auth: scalarString().optional(),
    identityToken: scalarString().optional(),
  };

  /** v1alpha1 machine.registries. */
  const registriesSchema = z.strictObject({
    mirrors: z
      .record(
        z.string(),
        z.strictObject({
          endpoints: z.array(checked((s) => ((why) => (why ? `endpoint ${why}` : undefined))(endpointError(s)))),
          overridePath: bool().optional(),
          skipFallback: bool().optional(),
        }),
      )
      .optional(),
    config: z
      .record(
        z.string(),
        z.strictObject({
          tls: z
            .strictObject({
              clientIdentity: z.strictObject({ crt: base64Certificate(), key: base64KeyOrEmpty() }).optional(),
              ca: base64Certificate().optional(),
              insecureSkipVerify: bool().optional(),
            })
            .optional(),
          auth: z.strictObject(auth).optional(),
        }),
      )
      .optional(),
  });

  const name = () => checked((s) => (s === '' ? 'name must be specified' : undefined));

  const registryMirrorConfigSchema = z.strictObject({
    apiVersion,
    kind: z.literal('RegistryMirrorConfig'),
    name: name(),
    endpoints: z.array(z.strictObject({ url: url(), overridePath: bool().optional() })).optional(),
    skipFallback: bool().optional(),
  });

  const registryAuthConfigSchema = z.strictObject({
    apiVersion,
    kind: z.literal('RegistryAuthConfig'),
    name: name(),
    ...auth,
  });

  const registryTLSConfigSchema = z.strictObject({
    apiVersion,
    kind: z.literal('RegistryTLSConfig'),
    name: name(),
    clientIdentity: z.strictObject({ cert: z.string().optional(), key: z.string().optional() }).optional(),
    ca: checked(caBundleError).optional(),
    insecureSkipVerify: bool().optional(),
  });
  return { registriesSchema, registryMirrorConfigSchema, registryAuthConfigSchema, registryTLSConfigSchema };
}

let built: ReturnType<typeof build> | undefined;

/** The registry schemas (the kinds' and v1alpha1 machine.registries'), built once, when first asked for. */
export function registrySchemas(): ReturnType<typeof build> {
  return (built ??= build());
}

/** Talos's RegistryAuthConfig rule: one way of authenticating. */
function checkAuth(a: Obj, report: Reporter, base: readonly (string | number)[]): void {
  const has = (k: string) => typeof a[k] === 'string' && a[k] !== '';
  if (has('username') && has('identityToken')) report([...base, 'identityToken'], 'only one of username/password or identityToken authentication can be specified', 'key');
  if (has('auth') && (has('username') || has('identityToken'))) report([...base, 'auth'], 'only one of auth, username/password or identityToken authentication can be specified', 'key');
}

/** Talos's meta.CertificateAndKey.Validate(false): both halves, each PEM; the key one Node's TLS reads once normalised, as v1alpha1's base64 keys. */
function checkClientIdentity(id: Obj, report: Reporter): void {
  const at = ['clientIdentity'];
  if (typeof id.cert !== 'string' || id.cert === '') return report(at, 'client identity: certificate is required');
  if (typeof id.key !== 'string' || id.key === '') return report(at, 'client identity: key is required');
  if (!pemBlocks(id.cert, ['CERTIFICATE'])) report([...at, 'cert'], 'client identity: certificate: not a valid PEM-encoded CERTIFICATE');
  if (pemError(id.key, 'private key')) report([...at, 'key'], 'client identity: key: not a valid PEM-encoded private key');
}

/**
 * machine.registries' checks beyond its schema (checks.ts calls it for the v1alpha1 document).
 * overridePath is refused here, for the reason policy.ts gives RegistryMirrorConfig's: a policy
 * path cannot name "any mirror" (a map key) yet, only list items.
 */
export function checkRegistries(registries: Obj, report: Reporter): void {
  const base = ['machine', 'registries'];
  for (const [host, m] of Object.entries(asObject(registries.mirrors) ?? {})) {
    if (asObject(m)?.overridePath === true) report([...base, 'mirrors', host, 'overridePath'], ruleMessage('refuse', OVERRIDE_PATH_REASON), 'key', 'unsupported');
  }
  for (const [host, c] of Object.entries(asObject(registries.config) ?? {})) {
    const a = asObject(asObject(c)?.auth);
    if (a) checkAuth(a, report, [...base, 'config', host, 'auth']);
  }
}

export const REGISTRY_KINDS: readonly KindSpec[] = [
  {
    kind: 'RegistryMirrorConfig',
    get schema() {
      return registrySchemas().registryMirrorConfigSchema;
    },
    named: true,
    example: { name: 'docker.io', endpoints: [{ url: 'https://mirror.example:5000' }] },
    conflicts: [],
  },
  {
    kind: 'RegistryAuthConfig',
    get schema() {
      return registrySchemas().registryAuthConfigSchema;
    },
    named: true,
    example: { name: 'mirror.example:5000', username: 'user', password: 'secret' },
    check: (doc, report) => checkAuth(doc, report, []),
    conflicts: [],
  },
  {
    kind: 'RegistryTLSConfig',
    get schema() {
      return registrySchemas().registryTLSConfigSchema;
    },
    named: true,
    example: { name: 'mirror.example:5000', insecureSkipVerify: true },
    check(doc, report) {
      const id = asObject(doc.clientIdentity);
      if (id) checkClientIdentity(id, report);
    },
    conflicts: [],
  },
];

type Schemas = ReturnType<typeof build>;
export type RegistryMirrorConfig = z.output<Schemas['registryMirrorConfigSchema']>;
export type RegistryAuthConfig = z.output<Schemas['registryAuthConfigSchema']>;
export type RegistryTLSConfig = z.output<Schemas['registryTLSConfigSchema']>;
