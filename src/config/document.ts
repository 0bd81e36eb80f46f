// A machine configuration file is a YAML stream of documents: the v1alpha1 document and typed
// documents (`apiVersion` + `kind`). This reads the stream into plain data per document and keeps
// the YAML nodes, so a problem found at a path (machine.network.interfaces[0].addresses[1]) can be
// reported at its line and column in the original text.
//
// Scalars are read as go-yaml v3 (Talos) reads them where YAML 1.2 differs: `0644` is octal, as
// `0o644` is. A null value in a mapping (`hostname:` with nothing after it) means "not set", as in Go,
// and is dropped from the data. YAML merge keys (`<<`) are resolved, as go-yaml resolves them.
import YAML, { type Document, type Node, type ParsedNode } from 'yaml';
import type { PathSegment } from './fields.ts';

export interface SourcePosition {
  /** 1-based. */
  line: number;
  /** 1-based. */
  column: number;
}

export interface SourceDocument {
  /** Index in the stream, counting only non-empty documents. */
  readonly index: number;
  /** The document as plain data (mappings are objects, sequences arrays); nulls in mappings dropped. */
  readonly value: unknown;
  /** Where the document's content starts. */
  readonly start: SourcePosition;
  /**
   * Where the node at `path` is: for a scalar, the scalar itself; for a mapping or list reached
   * through a key, that key; with `at: 'key'`, the key of the last segment. When the path goes
   * further than the document (a missing field), the position of the deepest part that exists.
   */
  position(path: readonly PathSegment[], at?: 'key' | 'value'): SourcePosition;
}

export interface YamlSyntaxError extends SourcePosition {
  message: string;
}

export interface YamlStream {
  documents: SourceDocument[];
  errors: YamlSyntaxError[];
}

/** YAML 1.1 octal integers (`0644`), which go-yaml v3 still reads as octal. */
const octalInt = {
  identify: (v: unknown) => typeof v === 'number',
  default: true,
  tag: 'tag:yaml.org,2002:int',
  format: 'OCT',
  test: /^0[0-7]+$/,
  resolve: (s: string) => parseInt(s, 8),
};

/** Drops null values from mappings. Keys are defined, not assigned: a "__proto__" key stays data. */
function dropNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropNulls);
  if (v !== null && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, val] of Object.entries(v)) {
      if (val !== null) Object.defineProperty(out, k, { value: dropNulls(val), enumerable: true, writable: true, configurable: true });
    }
    return out;
  }
  return v;
}

function syntaxMessage(message: string): string {
  return message.split('\n')[0]!.replace(/ at line \d+, column \d+:?\s*$/, '');
}

export function parseYamlStream(text: string): YamlStream {
  const lineCounter = new YAML.LineCounter();
  const docs = YAML.parseAllDocuments(text, {
    lineCounter,
    uniqueKeys: true,
    prettyErrors: true,
    // YAML merge keys (`<<: *anchor`), which go-yaml (Talos) reads too.
    merge: true,
    customTags: (tags) => [octalInt, ...tags],
  });
  const pos = (offset: number): SourcePosition => {
    const p = lineCounter.linePos(offset);
    return { line: p.line, column: p.col };
  };
  const list = Array.isArray(docs) ? docs : [docs];
  const errors: YamlSyntaxError[] = [];
  const documents: SourceDocument[] = [];
  for (const doc of list as Document.Parsed[]) {
    for (const err of doc.errors) {
      const at = err.linePos?.[0] ?? lineCounter.linePos(err.pos[0]);
      const e = { line: at.line, column: at.col, message: syntaxMessage(err.message) };
      // The parser may report one problem more than once (e.g. `a: b: c: d`): say it once.
      if (!errors.some((o) => o.line === e.line && o.message === e.message)) errors.push(e);
    }
    if (doc.errors.length || doc.contents === null) continue;
    let value: unknown;
    try {
      value = dropNulls(doc.toJS({ maxAliasCount: 100 }));
    } catch (err) {
      const at = pos(doc.contents.range[0]);
      errors.push({ ...at, message: (err as Error).message });
      continue;
    }
    if (value === null || value === undefined) continue;
    documents.push(sourceDocument(documents.length, doc, value, pos));
  }
  return { documents, errors };
}

function keyText(key: unknown): string {
  return YAML.isScalar(key) ? String(key.value) : String(key);
}

function sourceDocument(index: number, doc: Document.Parsed, value: unknown, pos: (offset: number) => SourcePosition): SourceDocument {
  const startOf = (n: unknown): SourcePosition | undefined => {
    const r = (n as Node | null)?.range;
    return r ? pos(r[0]) : undefined;
  };
  const start = startOf(doc.contents) ?? { line: 1, column: 1 };
  return {
    index,
    value,
    start,
    position(path, at = 'value') {
      let node: unknown = doc.contents;
      let here = start;
      for (let i = 0; i < path.length; i++) {
        const seg = path[i]!;
        if (YAML.isAlias(node)) node = node.resolve(doc);
        if (YAML.isMap(node)) {
          const pair = node.items.find((p) => keyText(p.key) === String(seg));
          if (!pair) return here;
          const keyPos = startOf(pair.key) ?? here;
          if (i === path.length - 1 && at === 'key') return keyPos;
          node = pair.value;
          here = YAML.isCollection(node) ? keyPos : (startOf(node) ?? keyPos);
        } else if (YAML.isSeq(node)) {
          const item = typeof seg === 'number' ? (node.items[seg] as ParsedNode | undefined) : undefined;
          if (!item) return here;
          node = item;
          here = startOf(item) ?? here;
        } else {
          return here;
        }
      }
      return here;
    },
  };
}
