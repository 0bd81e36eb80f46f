// What the `bronzectl gen` commands do once they run (see gen.ts for their flags): the PKI, the
// secrets bundle and the configurations. Imported when a command runs, not when bronzectl starts.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import path from 'node:path';
import { applyPatches, loadPatches, PatchError } from '../../config/patch.ts';
import { formatIssues, validateConfig } from '../../config/validate.ts';
import { newClientConfig, save } from '../../contract/clientconfig.ts';
import { generateConfigs, normaliseEndpoint } from '../../contract/genconfig.ts';
import { generateSecrets, parseSecrets, serializeSecrets } from '../../contract/secrets.ts';
import { loadCA, newCA, NOT_BEFORE_SKEW_MS, randomSerial, type CertAndKey } from '../../pki/ca.ts';
import { newCSR } from '../../pki/certs.ts';
import { generateKeyPair, privateKeyToPem } from '../../pki/keys.ts';
import { pemDecode } from '../../pki/pem.ts';
import { x509 } from '../../pki/x509.ts';
import type { Ctx } from '../session.ts';
import { UserError } from '../session.ts';
import type { CAFlags, ConfigFlags, CrtFlags, CSRFlags, KeyFlags, SecretsFlags } from './gen.ts';

// What commands get from `load('gen')` (lazy.ts): named here, not in lazy.ts, so that lazy.ts
// names no command file (the commands import it: that would be an import circle).
declare module '../lazy.ts' {
  interface LazyModules {
    gen: {
      genSecrets: typeof genSecrets;
      genConfig: typeof genConfig;
      genCA: typeof genCA;
      genKey: typeof genKey;
      genCSR: typeof genCSR;
      genCrt: typeof genCrt;
    };
  }
}

const HOUR = 3_600_000;

/** Fails naming every file that exists, unless force. */
async function refuseOverwrite(files: string[], force: boolean | undefined): Promise<void> {
  if (force) return;
  const taken: string[] = [];
  for (const f of files) if (existsSync(f)) taken.push(f);
  if (taken.length > 0) throw new UserError(`${taken.map((f) => JSON.stringify(f)).join(', ')} already exist${taken.length === 1 ? 's' : ''}, use --force to overwrite`);
}

async function writePrivate(file: string, data: string): Promise<void> {
  await writeFile(file, data, { mode: 0o600 });
  await chmod(file, 0o600); // an existing file keeps its mode otherwise
}

async function readText(file: string, what: string): Promise<string> {
  try {
    return await readFile(file, 'utf8');
  } catch (e) {
    throw new UserError(`${what} ${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
}

/** The host of a control plane endpoint: what the generated client config talks to (apid on :50000). */
export function endpointHost(endpoint: string): string {
  const host = new URL(normaliseEndpoint(endpoint)).hostname;
  return host.startsWith('[') ? host.slice(1, -1) : host;
}

/** The SHA-256 of a certificate's public key, as talosctl's `gen ca` writes it: "sha256:<hex>". */
export function spkiHash(crtPem: string): string {
  const cert = new x509.X509Certificate(pemDecode(crtPem, ['CERTIFICATE']).der);
  return `sha256:${createHash('sha256').update(Buffer.from(cert.publicKey.rawData)).digest('hex')}`;
}

/**
 * Signs a CSR with the CA as talosctl's `gen crt` does: the CSR's subject (its Organizations are
 * the roles it asks for) and its DNS/IP names, for client and server authentication.
 */
export async function signCSRWithRoles(ca: CertAndKey, csrPem: string, ttlMs: number, now = new Date()): Promise<string> {
  const { cert: caCert, signingKey, signingAlgorithm } = await loadCA(ca);
  let csr: x509.Pkcs10CertificateRequest;
  try {
    csr = new x509.Pkcs10CertificateRequest(pemDecode(csrPem, ['CERTIFICATE REQUEST', 'NEW CERTIFICATE REQUEST']).der);
  } catch (e) {
    throw new Error(`not a PEM certificate request (${(e as Error).message})`);
  }
  if (!(await csr.verify().catch(() => false))) throw new Error('the certificate request signature does not verify');
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth, x509.ExtendedKeyUsage.clientAuth]),
    await x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey),
  ];
  const san = csr.getExtension('2.5.29.17');
  if (san) extensions.push(new x509.SubjectAlternativeNameExtension(san.rawData));
  const t = now.getTime();
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: csr.subjectName,
    issuer: caCert.subjectName,
    notBefore: new Date(t - NOT_BEFORE_SKEW_MS),
    notAfter: new Date(t + ttlMs),
    publicKey: csr.publicKey.rawData,
    signingKey,
    signingAlgorithm,
    extensions,
  });
  return cert.toString('pem') + '\n';
}

/** `gen secrets`. */
export async function genSecrets(ctx: Ctx, opts: SecretsFlags): Promise<void> {
  const file = path.resolve(ctx.io.cwd, opts.outputFile);
  await refuseOverwrite([file], opts.force);
  await writePrivate(file, serializeSecrets(await generateSecrets()));
}

/** A generated configuration with `patches` applied (@file or inline), checked by the validator. */
function patchGenerated(ctx: Ctx, text: string, patches: readonly string[], type: string): string {
  if (patches.length === 0) return text;
  let out: string;
  try {
    out = applyPatches(text, loadPatches(patches, (p) => readFileSync(path.resolve(ctx.io.cwd, p), 'utf8')));
  } catch (e) {
    if (e instanceof PatchError) throw new UserError(`${type}.yaml: ${e.message}`);
    throw e;
  }
  const v = validateConfig(out);
  if (!v.ok) throw new UserError(`${type}.yaml: the patched configuration is not valid, nothing written:\n${formatIssues(v.errors)}`);
  if (v.warnings.length) ctx.io.stderr.write(`${type}.yaml: ${v.warnings.length} ${v.warnings.length === 1 ? 'warning' : 'warnings'}:\n${formatIssues(v.warnings).replace(/^/gm, '  ')}\n`);
  return out;
}

/** `gen config <cluster-name> <cluster-endpoint>`. */
export async function genConfig(ctx: Ctx, clusterName: string, endpoint: string, opts: ConfigFlags): Promise<void> {
  const dir = path.resolve(ctx.io.cwd, opts.outputDir);
  const files = { controlplane: path.join(dir, 'controlplane.yaml'), worker: path.join(dir, 'worker.yaml'), client: path.join(dir, 'bronzeconfig') };
  await refuseOverwrite(Object.values(files), opts.force);
  // Check the arguments before the (slower) key generation.
  let host: string;
  try {
    host = endpointHost(endpoint);
  } catch (e) {
    throw new UserError((e as Error).message);
  }
  if (!clusterName.trim() || /[\s\p{Cc}]/u.test(clusterName.trim())) throw new UserError(`cluster name: invalid ${JSON.stringify(clusterName)}`);
  let secrets;
  if (opts.withSecrets) {
    const file = path.resolve(ctx.io.cwd, opts.withSecrets);
    try {
      secrets = parseSecrets(await readText(file, 'secrets file'), file);
    } catch (e) {
      throw new UserError((e as Error).message);
    }
  } else {
    ctx.io.stderr.write('generating PKI and tokens\n');
    secrets = await generateSecrets();
  }
  let configs;
  try {
    configs = generateConfigs({
      clusterName,
      endpoint,
      additionalSANs: opts.additionalSans ?? [],
      secrets,
      ...(opts.installDisk ? { installDisk: opts.installDisk } : {}),
      ...(opts.installImage ? { installImage: opts.installImage } : {}),
    });
  } catch (e) {
    throw new UserError((e as Error).message);
  }
  // Patches, as talosctl applies them: --config-patch to both, then the type's own; the results
  // must be valid configurations, or nothing is written.
  const patched = {
    controlplane: patchGenerated(ctx, configs.controlplane, [...(opts.configPatch ?? []), ...(opts.configPatchControlPlane ?? [])], 'controlplane'),
    worker: patchGenerated(ctx, configs.worker, [...(opts.configPatch ?? []), ...(opts.configPatchWorker ?? [])], 'worker'),
  };
  configs = patched;
  // The client config's endpoints: the global --endpoints when given (as talosctl's gen config
  // takes them: e.g. a port QEMU forwards, when the node's own address is not reachable from
  // here), else the control plane endpoint's host. --nodes become the context's nodes.
  const { endpoints: given, nodes } = ctx.session().globals;
  const client = await newClientConfig({
    contextName: clusterName.trim(),
    endpoints: given.length ? given : [host],
    ...(nodes.length ? { nodes } : {}),
    ca: secrets.certs.os,
    roles: ['os:admin'],
    ttlMs: 365 * 24 * HOUR,
  });
  await mkdir(dir, { recursive: true });
  await writePrivate(files.controlplane, configs.controlplane);
  ctx.io.stdout.write(`Created ${files.controlplane}\n`);
  await writePrivate(files.worker, configs.worker);
  ctx.io.stdout.write(`Created ${files.worker}\n`);
  await save(files.client, client);
  ctx.io.stdout.write(`Created ${files.client}\n`);
}

/** `gen ca`. */
export async function genCA(ctx: Ctx, opts: CAFlags): Promise<void> {
  const base = path.resolve(ctx.io.cwd, opts.organization);
  const files = [`${base}.crt`, `${base}.sha256`, `${base}.key`];
  await refuseOverwrite(files, opts.force);
  const ca = await newCA({ commonName: opts.organization, organization: opts.organization, validityDays: opts.hours / 24 });
  await writePrivate(files[0]!, ca.crt);
  await writePrivate(files[1]!, spkiHash(ca.crt));
  await writePrivate(files[2]!, ca.key);
}

/** `gen key`. */
export async function genKey(ctx: Ctx, opts: KeyFlags): Promise<void> {
  const file = path.resolve(ctx.io.cwd, `${opts.name}.key`);
  await refuseOverwrite([file], opts.force);
  await writePrivate(file, await privateKeyToPem((await generateKeyPair()).privateKey));
}

/** `gen csr`. */
export async function genCSR(ctx: Ctx, opts: CSRFlags): Promise<void> {
  if (isIP(opts.ip) === 0) throw new UserError(`--ip: invalid IP address ${JSON.stringify(opts.ip)}`);
  const keyFile = path.resolve(ctx.io.cwd, opts.key);
  const file = keyFile.slice(0, keyFile.length - path.extname(keyFile).length) + '.csr';
  await refuseOverwrite([file], opts.force);
  const keyPem = await readText(keyFile, 'key');
  let csr: string;
  try {
    csr = await newCSR(keyPem, { commonName: '', ipAddresses: [opts.ip], organization: opts.roles?.length ? opts.roles : ['os:admin'] });
  } catch (e) {
    throw new UserError(`${opts.key}: ${(e as Error).message}`);
  }
  await writePrivate(file, csr);
}

/** `gen crt`. */
export async function genCrt(ctx: Ctx, opts: CrtFlags): Promise<void> {
  const caBase = path.resolve(ctx.io.cwd, opts.ca).replace(/\.(crt|key)$/, '');
  const file = path.resolve(ctx.io.cwd, `${opts.name}.crt`);
  await refuseOverwrite([file], opts.force);
  const ca = { crt: await readText(`${caBase}.crt`, 'CA certificate'), key: await readText(`${caBase}.key`, 'CA key') };
  const csr = await readText(path.resolve(ctx.io.cwd, opts.csr), 'CSR');
  let crt: string;
  try {
    crt = await signCSRWithRoles(ca, csr, opts.hours * HOUR);
  } catch (e) {
    throw new UserError((e as Error).message);
  }
  await writePrivate(file, crt);
}
