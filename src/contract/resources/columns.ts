// Print columns: the subset of kubectl's JSONPath that resource definitions use, over the YAML
// form of a spec: '{.a.b}', '{.list[0].x}', "{.map['some key']}", '{.}', and '[:]' or '[*]' for
// every element of a list (braces optional).

type Step = string | number | '*';

export function parseJsonPath(path: string): Step[] {
  let p = path.trim();
  if (p.startsWith('{') && p.endsWith('}')) p = p.slice(1, -1).trim();
  if (!p.startsWith('.') && !p.startsWith('[')) throw new Error(`unsupported JSONPath ${JSON.stringify(path)}: must start with "."`);
  if (p === '.') return [];
  if (p.startsWith('.[')) p = p.slice(1);
  const steps: Step[] = [];
  const re = /\.([A-Za-z_][A-Za-z0-9_-]*)|\[(\d+)\]|\['([^']*)'\]|\["([^"]*)"\]|\[(:|\*)\]/y;
  while (re.lastIndex < p.length) {
    const at = re.lastIndex;
    const m = re.exec(p);
    if (!m) throw new Error(`unsupported JSONPath ${JSON.stringify(path)} at ${JSON.stringify(p.slice(at))}`);
    steps.push(m[5] !== undefined ? '*' : m[2] !== undefined ? Number(m[2]) : (m[1] ?? m[3] ?? m[4])!);
  }
  return steps;
}

/** Every value path reaches in value (more than one after a wildcard); none when a step is missing. */
export function evaluateJsonPath(value: unknown, path: string): unknown[] {
  let cur: unknown[] = [value];
  for (const step of parseJsonPath(path)) {
    const next: unknown[] = [];
    for (const v of cur) {
      if (v === null || typeof v !== 'object') continue;
      if (step === '*') {
        if (Array.isArray(v)) next.push(...v);
      } else if (typeof step === 'number') {
        if (Array.isArray(v) && step < v.length) next.push(v[step]);
      } else if (!Array.isArray(v) && Object.hasOwn(v, step)) {
        next.push((v as Record<string, unknown>)[step]);
      }
    }
    cur = next;
  }
  return cur;
}

/** A column's cell text, as kubectl prints it: strings as they are, other values as JSON, several separated by spaces, missing as ''. */
export function printColumnValue(spec: unknown, column: { jsonPath: string }): string {
  return evaluateJsonPath(spec, column.jsonPath)
    .filter((v) => v !== undefined)
    .map((v) => (typeof v === 'string' ? v : JSON.stringify(v)))
    .join(' ');
}
