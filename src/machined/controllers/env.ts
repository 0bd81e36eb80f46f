// EnvController: machine.env is the environment of every supervised service (on top of the
// one machined gives them); a service whose environment changes restarts to take it.
import type { Controller } from '../../state/controller.ts';
import { MACHINE_CONFIG_ID, MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE, type MachineConfigSpec } from '../../contract/resources/machine-config.ts';
import { environment } from '../../config/accessors/machine.ts';

export interface EnvTarget {
  list(): Array<{ id: string }>;
  setServiceEnv(id: string, env: Record<string, string>): Promise<boolean>;
}

/** `envFor(id, env)`: service `id`'s whole environment from the shared one (e.g. its V8 flags added). */
export function envController(target: EnvTarget, baseEnv: Record<string, string>, envFor: (id: string, env: Record<string, string>) => Record<string, string> = (_id, env) => env): Controller {
  return {
    name: 'EnvController',
    inputs: [{ namespace: MACHINE_CONFIG_NS, type: MACHINE_CONFIG_TYPE, kind: 'weak' }],
    outputs: [],
    async run(ctx) {
      const cfg = await ctx.state.find<MachineConfigSpec>(MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE, MACHINE_CONFIG_ID);
      // machine.env with Talos's EnvironmentConfig documents over it, in order (the last one wins).
      const env = { ...baseEnv, ...environment(cfg?.spec) };
      for (const { id } of target.list()) {
        if (await target.setServiceEnv(id, envFor(id, env))) ctx.log.info(`service ${id} restarted with the new environment`);
      }
    },
  };
}
