// `bronzectl get <type> [id] [-o table|yaml|json] [-w] [--namespace ns]`: resources over the COSI
// State API (List, Get, Watch), one call per node with `node` metadata as talosctl does (COSI
// replies carry no node metadata). The type may be any name the node's resource definitions
// know (type, plural, display type, alias, any case); the definitions, read from namespace
// `meta`, also give the default namespace and the table's extra columns. A node that cannot list
// its definitions gets the type passed through as typed.
// The work itself is in get-impl.ts, imported when the command runs.
import { Option, type Command } from 'commander';
import type { Ctx } from '../session.ts';
import { load } from '../lazy.ts';

export type Format = 'table' | 'yaml' | 'json';

export interface GetFlags {
  output: Format;
  watch?: boolean;
  namespace?: string;
  insecure?: boolean;
}

export function register(program: Command, ctx: Ctx): void {
  program
    .command('get')
    .description('Get a specific resource or list of resources (use `bronzectl get rd` to see all available resource types)')
    .argument('<type>', 'resource type, plural, display type or alias (e.g. services, svc)')
    .argument('[id]', 'resource id')
    .addOption(new Option('-o, --output <format>', 'output mode').choices(['table', 'yaml', 'json']).default('table'))
    .option('-w, --watch', 'watch resource changes')
    .option('--namespace <namespace>', 'resource namespace (default is to use default namespace per resource)')
    .option('-i, --insecure', 'get resources using the insecure (encrypted with no auth) maintenance service')
    .action(async (typeName: string, id: string | undefined, opts: GetFlags) => {
      await (await load('get')).get(ctx, typeName, id, opts);
    });
}
