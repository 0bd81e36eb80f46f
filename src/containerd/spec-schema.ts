// Checks an OCI runtime spec against the runtime-spec JSON schema Debian ships
// (golang-github-opencontainers-specs-dev). For tests: the node never loads it.
import fs from 'node:fs';
import path from 'node:path';
import AjvDraft04 from 'ajv-draft-04';

// A CommonJS module: under NodeNext its default import is module.exports, whose `default` is the class.
const Ajv = AjvDraft04.default;

export const RUNTIME_SPEC_SCHEMA_DIR = '/usr/share/gocode/src/github.com/opencontainers/runtime-spec/schema';

type Validate = (spec: unknown) => string[];

let cached: Validate | undefined;

/**
 * A validator of config.json: the list of schema errors, empty when the spec is valid. The schema
 * files refer to each other by relative file name and carry no `id`, so each is given one under a
 * common base for the references to resolve.
 */
export function runtimeSpecValidator(dir = RUNTIME_SPEC_SCHEMA_DIR): Validate {
  if (cached && dir === RUNTIME_SPEC_SCHEMA_DIR) return cached;
  const ajv = new Ajv({ allErrors: true, strict: false });
  const base = 'file:///runtime-spec/schema/';
  let main: object | undefined;
  for (const f of fs.readdirSync(dir).filter((n) => n.endsWith('.json'))) {
    const schema = { ...(JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as object), id: base + f };
    if (f === 'config-schema.json') main = schema;
    else if (f !== 'state-schema.json') ajv.addSchema(schema);
  }
  if (!main) throw new Error(`${dir}/config-schema.json is missing: install golang-github-opencontainers-specs-dev`);
  const validate = ajv.compile(main);
  const v: Validate = (spec) => (validate(spec) ? [] : (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`));
  if (dir === RUNTIME_SPEC_SCHEMA_DIR) cached = v;
  return v;
}
