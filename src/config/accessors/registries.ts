// Where images are pulled from (Talos: RegistryMirrorConfigs(), RegistryAuthConfigs(),
// RegistryTLSConfigs()): machine.registries of the v1alpha1 document, each RegistryMirrorConfig,
// RegistryAuthConfig and RegistryTLSConfig document replacing the v1alpha1 entry of its name for
// what it configures (Talos's container.go: the documents win, key by key). One record by host
// (src/containerd/types.ts RegistryConfig): a registry's mirrors under the registry's name
// (`docker.io`, `*`), auth and TLS under the endpoint host they are for (`mirror:5000`);
// certificates and keys always as PEM text (v1alpha1 keeps them base64-encoded), a client key
// as PKCS#8 "PRIVATE KEY" whatever form it came in (Talos writes Ed25519 keys as "ED25519
// PRIVATE KEY", which Node's TLS does not read; the validator has read each key so). Light:
// types only from the validator.
import type { RegistryConfig, RegistryHostConfig } from '../../containerd/types.ts';
import { fromBase64Pem, normalizePrivateKeyPem } from '../../pki/pem.ts';
import type { TypedConfig } from './typed.ts';

type Auth = NonNullable<RegistryHostConfig['auth']>;
type Tls = NonNullable<RegistryHostConfig['tls']>;

/** The set fields of an auth block (empty strings are not set, as in Talos). */
function authOf(a: { username?: string; password?: string; auth?: string; identityToken?: string }): Auth | undefined {
  const out: Auth = {};
  for (const k of ['username', 'password', 'auth', 'identityToken'] as const) if (a[k]) out[k] = a[k];
  return Object.keys(out).length ? out : undefined;
}

export function registries(c: TypedConfig | undefined): RegistryConfig {
  const mirrors = new Map<string, { endpoints: string[]; skipFallback?: boolean }>();
  const auths = new Map<string, Auth>();
  const tlss = new Map<string, Tls>();
  const v1 = c?.v1alpha1?.machine.registries;
  for (const [host, m] of Object.entries(v1?.mirrors ?? {})) mirrors.set(host, { endpoints: [...m.endpoints], ...(m.skipFallback ? { skipFallback: true } : {}) });
  for (const [host, cfg] of Object.entries(v1?.config ?? {})) {
    const a = cfg.auth && authOf(cfg.auth);
    if (a) auths.set(host, a);
    const t = cfg.tls;
    if (t) {
      tlss.set(host, {
        ...(t.ca ? { ca: fromBase64Pem(t.ca) } : {}),
        ...(t.clientIdentity?.crt && t.clientIdentity.key ? { clientCert: fromBase64Pem(t.clientIdentity.crt), clientKey: normalizePrivateKeyPem(fromBase64Pem(t.clientIdentity.key)) } : {}),
        ...(t.insecureSkipVerify ? { insecureSkipVerify: true } : {}),
      });
    }
  }
  for (const d of c?.documents ?? []) {
    if (d.kind === 'RegistryMirrorConfig') mirrors.set(d.name, { endpoints: (d.endpoints ?? []).map((e) => e.url), ...(d.skipFallback ? { skipFallback: true } : {}) });
    else if (d.kind === 'RegistryAuthConfig') {
      const a = authOf(d);
      if (a) auths.set(d.name, a);
      else auths.delete(d.name);
    } else if (d.kind === 'RegistryTLSConfig') {
      tlss.set(d.name, {
        ...(d.ca ? { ca: d.ca } : {}),
        ...(d.clientIdentity?.cert && d.clientIdentity.key ? { clientCert: d.clientIdentity.cert, clientKey: normalizePrivateKeyPem(d.clientIdentity.key) } : {}),
        ...(d.insecureSkipVerify ? { insecureSkipVerify: true } : {}),
      });
    }
  }
  const out: RegistryConfig = {};
  const entry = (host: string) => (out[host] ??= { endpoints: [] });
  for (const [host, m] of mirrors) Object.assign(entry(host), m);
  for (const [host, a] of auths) entry(host).auth = a;
  for (const [host, t] of tlss) entry(host).tls = t;
  return out;
}
