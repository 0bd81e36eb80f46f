// The shape of a typed document kind Bronze implements, as data: its schema, whether documents
// are named, a minimal example, the checks across its own fields, what it conflicts with in the
// v1alpha1 document, and whether it is only kept for later.
import type { z } from 'zod';
import type { Obj, Reporter } from './fields.ts';

/** A v1alpha1 field that a kind replaces: setting both is a conflict. */
export interface V1Alpha1Conflict {
  path: readonly string[];
  /** Whether the v1alpha1 value counts as set (e.g. a non-empty list, `disabled: true`). */
  isSet(value: unknown): boolean;
  /** The document's own field that configures the same thing; default: the whole document. */
  when?: string;
  /** Only for the document of this name (a VolumeConfig for EPHEMERAL conflicts with EPHEMERAL's setting). */
  name?: string;
}

/** A typed document of a configuration, with a reporter at its place (for checks across documents). */
export interface KindEntry {
  kind: string;
  data: Obj;
  report: Reporter;
}

export interface KindSpec {
  kind: string;
  schema: z.ZodType;
  /** Named documents (one per link, volume, ...) are identified by `name`; others may appear once. */
  named: boolean;
  /** Documents without a name that may appear more than once. */
  repeatable?: boolean;
  /** A minimal valid document, without apiVersion and kind (tests, examples). */
  example: Obj;
  /** Checks across the document's fields, on raw data (run whatever the schema found). */
  check?(doc: Obj, report: Reporter): void;
  /** Checks across documents (a reference to another document, a cycle): its kind's documents, and all typed ones. */
  checkAcross?(own: readonly KindEntry[], all: readonly KindEntry[]): void;
  conflicts: readonly V1Alpha1Conflict[];
  /** Validated, stored and published, but not acted on yet: accepted with this warning. */
  keptForLater?: string;
}
