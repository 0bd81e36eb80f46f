// Every entry of the policy table behaves as listed: an ignored field or kind is accepted with a
// warning naming it and saying why, a kept one is accepted with a "kept for later" warning, a
// refused one is refused as not implemented (not as invalid), and an `accept` value is taken
// without a word.
import { beforeAll, describe, expect, it } from 'vitest';
import YAML from 'yaml';
import { newCA } from '../pki/ca.ts';
import { toBase64Pem } from '../pki/pem.ts';
import { config } from '../../test/unit/config/invalid-cases.ts';
import { kindSpec } from './kinds.ts';
import { FIELD_RULES, KIND_RULES, ruleMessage, type FieldRule } from './policy.ts';
import { formatIssues, validateConfig, type ConfigIssue } from './validate.ts';

let base: Record<string, unknown>;

beforeAll(async () => {
  const ca = await newCA({ commonName: 'bronze', validityDays: 1 });
  base = YAML.parse(config().replace('$CRT', toBase64Pem(ca.crt)).replace('$KEY', toBase64Pem(ca.key)));
});

/** List items a path goes through need their own required fields. */
const ITEM_BASES: Record<string, Record<string, unknown>> = {
  'machine.network.interfaces': { interface: 'eth0' },
  vlans: { vlanId: 10 },
  routes: { gateway: '10.0.0.1' },
  nameservers: { address: '1.1.1.1' },
  'encryption.keys': { slot: 0, nodeID: {} },
};

/** Sets `path` ("a.b[].c") in `doc` to `value`, making the objects and one-item lists on the way. */
function setPath(doc: Record<string, unknown>, path: string, value: unknown, prefix = ''): void {
  const [head, ...rest] = path.split('.');
  const list = head!.endsWith('[]');
  const key = list ? head!.slice(0, -2) : head!;
  const full = prefix ? `${prefix}.${key}` : key;
  if (rest.length === 0 && !list) {
    doc[key] = value;
    return;
  }
  if (list) {
    const items = (doc[key] ??= [structuredClone(ITEM_BASES[full] ?? ITEM_BASES[key] ?? {})]) as Array<Record<string, unknown>>;
    setPath(items[0]!, rest.join('.'), value, full);
    return;
  }
  const next = (doc[key] ??= {}) as Record<string, unknown>;
  setPath(next, rest.join('.'), value, full);
}

/** The YAML of the base config with the rule's field set to `value`. */
function withField(rule: FieldRule, value: unknown): string {
  const v1 = structuredClone(base);
  if (rule.doc === 'v1alpha1') {
    setPath(v1, rule.path, value);
    return YAML.stringify(v1);
  }
  const spec = kindSpec(rule.doc)!;
  const doc: Record<string, unknown> = { apiVersion: 'v1alpha1', kind: rule.doc, ...structuredClone(spec.example) };
  setPath(doc, rule.path, value);
  return `${YAML.stringify(v1)}---\n${YAML.stringify(doc)}`;
}

/** `machine.network.interfaces[0].bond`, `ResolverConfig.hostDNS`, ... as the validator names it. */
function shownPath(rule: FieldRule): RegExp {
  const body = rule.path.replace(/\./g, '\\.').replace(/\[\]/g, '\\[0\\]');
  return new RegExp(rule.doc === 'v1alpha1' ? `^${body}$` : `^${rule.doc}(\\([^)]*\\))?\\.${body}$`);
}

const at = (issues: readonly ConfigIssue[], re: RegExp) => issues.filter((i) => re.test(i.path));

describe('policy: Talos fields Bronze does not implement', () => {
  it('has a rule for each field at most once, and documents that exist', () => {
    const keys = FIELD_RULES.map((r) => `${r.doc}:${r.path}`);
    expect(new Set(keys).size).toBe(keys.length);
    for (const r of FIELD_RULES) if (r.doc !== 'v1alpha1') expect(kindSpec(r.doc), r.doc).toBeDefined();
  });

  it.each(FIELD_RULES.map((r) => [`${r.doc} ${r.path}: ${r.action}`, r] as const))('%s', (_, rule) => {
    const r = validateConfig(withField(rule, rule.sample));
    const message = ruleMessage(rule.action, rule.reason);
    if (rule.action === 'refuse') {
      expect(r.ok, 'refused').toBe(false);
      const errors = r.ok ? [] : r.errors;
      const mine = at(errors, shownPath(rule));
      expect(mine, formatIssues(errors)).toHaveLength(1);
      expect(mine[0]).toMatchObject({ kind: 'unsupported', message });
      expect(formatIssues(mine)).toMatch(/\(line \d+\): unsupported: not implemented in Bronze: /);
      expect(errors, formatIssues(errors)).toHaveLength(1);
    } else {
      expect(r.ok, r.ok ? '' : formatIssues(r.errors)).toBe(true);
      const mine = at(r.warnings, shownPath(rule));
      expect(mine, formatIssues(r.warnings)).toHaveLength(1);
      expect(mine[0]).toMatchObject({ kind: rule.action === 'ignore' ? 'ignored' : 'kept', message });
    }
    if (rule.accept !== undefined) {
      const ok = validateConfig(withField(rule, rule.accept));
      expect(ok.ok, ok.ok ? '' : formatIssues(ok.errors)).toBe(true);
      expect(at(ok.warnings, shownPath(rule))).toEqual([]);
    }
  });
});

describe('policy: Talos kinds Bronze does not implement', () => {
  it('names each kind once, none of them implemented', () => {
    const kinds = KIND_RULES.map((r) => r.kind);
    expect(new Set(kinds).size).toBe(kinds.length);
    for (const k of kinds) expect(kindSpec(k), k).toBeUndefined();
  });

  it.each(KIND_RULES.map((r) => [`${r.kind}: ${r.action}`, r] as const))('%s', (_, rule) => {
    const text = `${YAML.stringify(base)}---\napiVersion: v1alpha1\nkind: ${rule.kind}\nname: example\n`;
    const r = validateConfig(text);
    const message = ruleMessage(rule.action, rule.reason);
    if (rule.action === 'refuse') {
      expect(r.ok).toBe(false);
      const errors = r.ok ? [] : r.errors;
      expect(errors, formatIssues(errors)).toEqual([expect.objectContaining({ path: `${rule.kind}(example)`, kind: 'unsupported', message })]);
    } else {
      expect(r.ok, r.ok ? '' : formatIssues(r.errors)).toBe(true);
      expect(r.warnings).toEqual([expect.objectContaining({ path: `${rule.kind}(example)`, kind: rule.action === 'ignore' ? 'ignored' : 'kept', message })]);
      // Kept as data: a patch or an edit of the running configuration keeps it.
      if (r.ok) expect(r.config.data.documents).toEqual([{ apiVersion: 'v1alpha1', kind: rule.kind, name: 'example' }]);
    }
  });

  it('an unknown kind is unknown, not "not implemented"', () => {
    const r = validateConfig(`${YAML.stringify(base)}---\napiVersion: v1alpha1\nkind: HostnamConfig\nauto: stable\n`);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0]).toMatchObject({ kind: 'invalid', message: expect.stringMatching(/^unknown kind "HostnamConfig": Bronze implements HostnameConfig, /) });
  });
});
