// machine.registries and Talos's RegistryMirrorConfig, RegistryAuthConfig and RegistryTLSConfig:
// accepted and applied, refused with Talos's messages (its registry_*_test.go cases), and
// resolved into the puller's RegistryConfig (accessors/registries.ts), documents over v1alpha1.
import { createPrivateKey } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { newCA } from '../pki/ca.ts';
import { toBase64Pem } from '../pki/pem.ts';
import { registries } from './accessors/registries.ts';
import { formatIssues, parseConfig, validateConfig } from './validate.ts';

let ca: { crt: string; key: string };
beforeAll(async () => {
  ca = await newCA({ commonName: 'registry', organization: 'registry', validityDays: 1 });
});

const kind = (k: string, body: string) => `apiVersion: v1alpha1\nkind: ${k}\n${body}\n`;
const indent = (pem: string, n: number) => pem.trim().split('\n').join(`\n${' '.repeat(n)}`);
const messages = (yaml: string) => {
  const r = validateConfig(yaml);
  return r.ok ? [] : r.errors.map((e) => `${e.path}: ${e.message}`);
};

describe('the registry documents', () => {
  it('accepts Talos\'s documents and resolves them for the puller, PEM as written', () => {
    const yaml = [
      kind('RegistryMirrorConfig', 'name: docker.io\nendpoints:\n  - url: https://mirror.example:5000\n  - url: http://10.0.2.2:5000\nskipFallback: true'),
      kind('RegistryAuthConfig', 'name: mirror.example:5000\nusername: agent007\npassword: topsecret'),
      kind('RegistryTLSConfig', `name: mirror.example:5000\nca: |-\n  ${indent(ca.crt, 2)}\nclientIdentity:\n  cert: |-\n    ${indent(ca.crt, 4)}\n  key: |-\n    ${indent(ca.key, 4)}\ninsecureSkipVerify: false`),
    ].join('---\n');
    const r = validateConfig(yaml);
    expect(r.ok, r.ok ? '' : formatIssues(r.errors)).toBe(true);
    expect(r.warnings).toEqual([]);
    expect(registries(parseConfig(yaml))).toEqual({
      'docker.io': { endpoints: ['https://mirror.example:5000', 'http://10.0.2.2:5000'], skipFallback: true },
      // The key as Node's TLS reads it: PKCS#8 PEM, ending in a newline as PEM files do.
      'mirror.example:5000': { endpoints: [], auth: { username: 'agent007', password: 'topsecret' }, tls: { ca: ca.crt.trim(), clientCert: ca.crt.trim(), clientKey: ca.key } },
    });
  });

  it('refuses as Talos does', () => {
    expect(messages(kind('RegistryMirrorConfig', 'name: ""'))).toEqual(['RegistryMirrorConfig.name: name must be specified']);
    expect(messages(kind('RegistryMirrorConfig', 'name: ghcr.io\nendpoints:\n  - url: ftp://my-registry.local:5000'))).toEqual(['RegistryMirrorConfig(ghcr.io).endpoints[0].url: url has unsupported scheme: "ftp"']);
    expect(messages(kind('RegistryAuthConfig', 'name: k8s.io\nusername: user\nidentityToken: token'))).toEqual([
      'RegistryAuthConfig(k8s.io).identityToken: only one of username/password or identityToken authentication can be specified',
    ]);
    expect(messages(kind('RegistryAuthConfig', 'name: k8s.io\nauth: abc\nusername: user'))).toEqual(['RegistryAuthConfig(k8s.io).auth: only one of auth, username/password or identityToken authentication can be specified']);
    expect(messages(kind('RegistryTLSConfig', 'name: k8s.io\nca: not a certificate'))).toEqual(['RegistryTLSConfig(k8s.io).ca: ca must be a valid PEM-encoded certificate']);
    expect(messages(kind('RegistryTLSConfig', `name: k8s.io\nclientIdentity:\n  cert: |-\n    ${indent(ca.crt, 4)}`))).toEqual(['RegistryTLSConfig(k8s.io).clientIdentity: client identity: key is required']);
    expect(validateConfig(kind('RegistryTLSConfig', 'name: rr.k8s.io\ninsecureSkipVerify: true')).ok).toBe(true);
    // A PRIVATE KEY block that holds no key Node can read (the base64 PEM keys of v1alpha1 are refused so too).
    const junk = '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----';
    expect(messages(kind('RegistryTLSConfig', `name: k8s.io\nclientIdentity:\n  cert: |-\n    ${indent(ca.crt, 4)}\n  key: |-\n    ${indent(junk, 4)}`))).toEqual([
      'RegistryTLSConfig(k8s.io).clientIdentity.key: client identity: key: not a valid PEM-encoded private key',
    ]);
  });

  it("takes an Ed25519 client key in Talos's form (ED25519 PRIVATE KEY) and hands the puller one Node reads", () => {
    const talosKey = ca.key.replace(/PRIVATE KEY/g, 'ED25519 PRIVATE KEY');
    expect(() => createPrivateKey(talosKey), 'Node does not read the form as written').toThrow();
    const doc = kind('RegistryTLSConfig', `name: mirror.example:5000\nclientIdentity:\n  cert: |-\n    ${indent(ca.crt, 4)}\n  key: |-\n    ${indent(talosKey, 4)}`);
    const v1 = `version: v1alpha1\nmachine:\n  type: worker\n  token: abcdef.0123456789abcdef\n  ca:\n    crt: ${toBase64Pem(ca.crt)}\n  registries:\n    config:\n      v1.example:\n        tls:\n          clientIdentity:\n            crt: ${toBase64Pem(ca.crt)}\n            key: ${toBase64Pem(talosKey)}\ncluster:\n  controlPlane:\n    endpoint: https://10.0.0.1:6443\n`;
    const yaml = `${v1}---\n${doc}`;
    const r = validateConfig(yaml);
    expect(r.ok, r.ok ? '' : formatIssues(r.errors)).toBe(true);
    const out = registries(parseConfig(yaml));
    for (const host of ['mirror.example:5000', 'v1.example']) {
      const key = out[host]?.tls?.clientKey;
      expect(key, host).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
      expect(createPrivateKey(key!).asymmetricKeyType, host).toBe('ed25519');
      expect(createPrivateKey(key!).export({ format: 'der', type: 'pkcs8' })).toEqual(createPrivateKey(ca.key).export({ format: 'der', type: 'pkcs8' }));
    }
  });

  it('refuses overridePath: true until the puller can use an endpoint as written', () => {
    const errs = validateConfig(kind('RegistryMirrorConfig', 'name: registry.k8s.io\nendpoints:\n  - url: http://my-harbor/v2/registry-k8s.io/\n    overridePath: true'));
    expect(errs.ok ? [] : errs.errors.map((e) => [e.path, e.kind])).toEqual([['RegistryMirrorConfig(registry.k8s.io).endpoints[0].overridePath', 'unsupported']]);
    expect(validateConfig(kind('RegistryMirrorConfig', 'name: registry.k8s.io\nendpoints:\n  - url: http://h/\n    overridePath: false')).ok).toBe(true);
  });
});

describe('machine.registries', () => {
  const v1 = (registriesYaml: string) => `version: v1alpha1\nmachine:\n  type: worker\n  token: abcdef.0123456789abcdef\n  ca:\n    crt: ${toBase64Pem(ca.crt)}\n  registries:\n${registriesYaml}\ncluster:\n  controlPlane:\n    endpoint: https://10.0.0.1:6443\n`;

  it('is applied: mirrors, auth and TLS (base64 PEM, as Talos writes it), documents winning key by key', () => {
    const yaml = v1(`    mirrors:
      docker.io:
        endpoints: [https://a.example, http://10.0.2.2:5000]
      ghcr.io:
        endpoints: [https://g.example]
    config:
      a.example:
        auth:
          username: u
          password: p
        tls:
          ca: ${toBase64Pem(ca.crt)}
          clientIdentity:
            crt: ${toBase64Pem(ca.crt)}
            key: ${toBase64Pem(ca.key)}
      10.0.2.2:5000:
        tls:
          insecureSkipVerify: true`) + '---\n' + kind('RegistryMirrorConfig', 'name: ghcr.io\nendpoints:\n  - url: https://doc.example') + '---\n' + kind('RegistryAuthConfig', 'name: a.example\nidentityToken: t');
    const r = validateConfig(yaml);
    expect(r.ok, r.ok ? '' : formatIssues(r.errors)).toBe(true);
    expect(r.warnings.filter((w) => w.path.includes('registries'))).toEqual([]);
    expect(registries(parseConfig(yaml))).toEqual({
      'docker.io': { endpoints: ['https://a.example', 'http://10.0.2.2:5000'] },
      'ghcr.io': { endpoints: ['https://doc.example'] },
      'a.example': { endpoints: [], auth: { identityToken: 't' }, tls: { ca: ca.crt, clientCert: ca.crt, clientKey: ca.key } },
      '10.0.2.2:5000': { endpoints: [], tls: { insecureSkipVerify: true } },
    });
    expect(registries(undefined)).toEqual({});
  });

  it('refuses what would not work: a bad endpoint, two ways of authenticating, overridePath, an unknown field', () => {
    expect(messages(v1('    mirrors:\n      docker.io:\n        endpoints: [ftp://x]\n        overridePath: true\n    config:\n      x:\n        auth: {auth: a, username: u}\n        tsl: {}'))).toEqual([
      'machine.registries.mirrors["docker.io"].endpoints[0]: endpoint has unsupported scheme: "ftp"',
      expect.stringMatching(/^machine\.registries\.mirrors\["docker\.io"\]\.overridePath: not implemented in Bronze: the image puller always adds \/v2\//),
      'machine.registries.config.x.auth.auth: only one of auth, username/password or identityToken authentication can be specified',
      'machine.registries.config.x.tsl: unknown field "tsl": did you mean "tls"?',
    ]);
  });
});
