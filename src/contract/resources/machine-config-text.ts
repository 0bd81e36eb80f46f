// A machine configuration's text and its parsed form (MachineConfigs' spec in the State): a YAML
// stream of the v1alpha1 document and the kind documents.
import YAML from 'yaml';
import type { MachineConfigSpec } from './machine-config.ts';

export function machineConfigSpec(text: string): MachineConfigSpec {
  const docs = YAML.parseAllDocuments(text).map((d) => (d.toJS() ?? {}) as Record<string, any>);
  return { v1alpha1: docs.find((d) => d.version === 'v1alpha1') ?? {}, documents: docs.filter((d) => d.kind) };
}

/**
 * The configuration as a YAML stream: the validator's warnings as comments (`# warning: ...`,
 * which any YAML reader skips), the v1alpha1 document, then each kind document.
 */
export function machineConfigText(spec: MachineConfigSpec): string {
  const docs = [spec.v1alpha1, ...spec.documents].filter((d) => d && Object.keys(d).length > 0);
  const notes = (spec.warnings ?? []).map((w) => `# warning: ${w.replace(/\n/g, ' ')}\n`).join('');
  return notes + docs.map((d) => YAML.stringify(d, { lineWidth: 0 })).join('---\n');
}
