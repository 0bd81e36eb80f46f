// How this multi-call binary starts another of its roles: inside the single executable the
// role is argv[0] (`apid`, `networkd`, ...); from a plain Node run it is the first argument.
interface SeaApi {
  isSea(): boolean;
}

export function isSea(): boolean {
  try {
    return (process.getBuiltinModule?.('node:sea') as SeaApi | undefined)?.isSea() ?? false;
  } catch {
    return false;
  }
}

export interface Invocation {
  command: string;
  args: string[];
  argv0: string;
}

export function selfInvocation(role: string): Invocation {
  if (isSea()) return { command: process.execPath, args: [], argv0: role };
  const script = process.argv[1];
  if (!script) throw new Error('cannot tell which script to re-run for role ' + role);
  return { command: process.execPath, args: [...process.execArgv, script, role], argv0: role };
}
