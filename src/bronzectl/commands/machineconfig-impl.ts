// What `machineconfig patch`, `patch`, `edit` and `validate` do with a configuration once they
// run: YAML, the patcher and the validator. Imported by those commands when they run, not when
// bronzectl starts (see machineconfig.ts for their flags and the parts they share up front).
import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import YAML from 'yaml';
import type { CallOptions, Client } from '../../client/client.ts';
import { applyPatches, loadPatches, PatchError, type Patch } from '../../config/patch.ts';
import { formatIssues, validateConfig, type ConfigIssue } from '../../config/validate.ts';
import { writeFileAtomic } from '../../lib/atomic.ts';
import type { Ctx } from '../session.ts';
import { UserError } from '../session.ts';
import { MACHINE_CONFIG } from './machineconfig.ts';

// What commands get from `load('machineconfig')` (lazy.ts): named here, not in lazy.ts, so that lazy.ts
// names no command file (the commands import it: that would be an import circle).
declare module '../lazy.ts' {
  interface LazyModules {
    machineconfig: {
      configIssues: typeof configIssues;
      configWarnings: typeof configWarnings;
      issuesText: typeof issuesText;
      warningsText: typeof warningsText;
      patchFile: typeof patchFile;
      fetchConfig: typeof fetchConfig;
      readPatches: typeof readPatches;
      sameConfig: typeof sameConfig;
    };
  }
}

/**
 * A YAML stream from the resource's spec: the configuration's text as Talos sends it (one YAML
 * string), or, from a node that sends the parsed form, the v1alpha1 document then each kind document.
 */
export function configStream(spec: unknown): string {
  if (typeof spec === 'string') {
    if (spec.trim() === '') throw new Error('the node has no machine configuration');
    return spec;
  }
  const s = spec as { v1alpha1?: unknown; documents?: unknown } | null;
  const v1 = s?.v1alpha1;
  const hasV1 = typeof v1 === 'object' && v1 !== null && Object.keys(v1).length > 0;
  const docs = Array.isArray(s?.documents) ? (s.documents as unknown[]) : [];
  if (!hasV1 && docs.length === 0) throw new Error('the node has no machine configuration');
  return [...(hasV1 ? [v1] : []), ...docs].map((d) => YAML.stringify(d, { lineWidth: 0 })).join('---\n');
}

/** The node's running configuration as a YAML stream. */
export async function fetchConfig(c: Client, o: CallOptions): Promise<string> {
  const r = await c.state.get(MACHINE_CONFIG.namespace, MACHINE_CONFIG.type, MACHINE_CONFIG.id, o);
  const text = r.spec?.yaml_spec;
  if (!text) throw new Error('the node has no machine configuration');
  return configStream(YAML.parse(text) as unknown);
}

/** Whether two YAML streams hold the same documents. */
export function sameConfig(a: string, b: string): boolean {
  const docs = (t: string) => YAML.parseAllDocuments(t).map((d) => d.toJS() as unknown).filter((d) => d !== null && d !== undefined);
  try {
    return JSON.stringify(docs(a)) === JSON.stringify(docs(b));
  } catch {
    return false;
  }
}

/** The validator's errors, or none. */
export function configIssues(yamlText: string): ConfigIssue[] {
  const v = validateConfig(yamlText);
  return v.ok ? [] : v.errors;
}

/** The validator's warnings (fields and documents accepted but ignored or kept for later, deprecations). */
export function configWarnings(yamlText: string): ConfigIssue[] {
  return validateConfig(yamlText).warnings;
}

/** `<n> warning(s):` then one per line, indented; "" for none. */
export function warningsText(warnings: readonly ConfigIssue[]): string {
  if (warnings.length === 0) return '';
  const lines = formatIssues(warnings).split('\n');
  return `${warnings.length} ${warnings.length === 1 ? 'warning' : 'warnings'}:\n${lines.map((l) => `  ${l}`).join('\n')}\n`;
}

/** `<n> error(s)` then one issue per line, indented. */
export function issuesText(issues: readonly ConfigIssue[]): string {
  const lines = formatIssues(issues).split('\n');
  return `${issues.length} ${issues.length === 1 ? 'error' : 'errors'}:\n${lines.map((l) => `  ${l}`).join('\n')}`;
}

/** Reads the patch arguments (and --patch-file paths), relative to `cwd`. */
export function readPatches(cwd: string, patches: readonly string[], patchFiles: readonly string[] = []): Patch[] {
  const args = [...patches, ...patchFiles.map((f) => `@${f}`)];
  if (args.length === 0) throw new UserError('no patches: pass one or more -p/--patch (@file or inline YAML/JSON)');
  try {
    return loadPatches(args, (p) => readFileSync(path.resolve(cwd, p), 'utf8'));
  } catch (e) {
    if (e instanceof PatchError) throw new UserError(e.message);
    throw e;
  }
}

/** `machineconfig patch <file>`: the patched file on stdout, or in --output. */
export async function patchFile(ctx: Ctx, file: string, opts: { patch?: string[]; output?: string }): Promise<void> {
  const patches = readPatches(ctx.io.cwd, opts.patch ?? []);
  let base: string;
  try {
    base = await readFile(path.resolve(ctx.io.cwd, file), 'utf8');
  } catch (e) {
    throw new UserError(`${file}: ${(e as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (e as Error).message}`);
  }
  let patched: string;
  try {
    patched = applyPatches(base, patches);
  } catch (e) {
    if (e instanceof PatchError) throw new UserError(e.source === 'config' ? `${file}: ${e.reason}` : e.message);
    throw e;
  }
  const v = validateConfig(patched);
  if (!v.ok) {
    throw new UserError(`the patched configuration is not valid, nothing written: ${issuesText(v.errors)}`);
  }
  ctx.io.stderr.write(warningsText(v.warnings));
  if (opts.output === undefined) {
    ctx.io.stdout.write(patched);
    return;
  }
  try {
    await writeFileAtomic(path.resolve(ctx.io.cwd, opts.output), patched, { mode: 0o600 });
  } catch (e) {
    throw new UserError(`${opts.output}: ${(e as Error).message}`);
  }
}
