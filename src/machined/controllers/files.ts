// FilesController: writes machine.files (under /var, as Talos allows): `create` writes a file
// that is not there yet, `overwrite` makes its content the configured one, `append` adds the
// content once. Permissions from the configuration (a number: YAML's 0644 and 0o644 are octal). Errors are per file.
import fs from 'node:fs';
import path from 'node:path';
import type { Controller } from '../../state/controller.ts';
import { MACHINE_CONFIG_ID, MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE, type MachineConfigSpec } from '../../contract/resources/machine-config.ts';
import { files } from '../../config/accessors/machine.ts';

export function filesController(root = '/'): Controller {
  const appended = new Set<string>();
  return {
    name: 'FilesController',
    inputs: [{ namespace: MACHINE_CONFIG_NS, type: MACHINE_CONFIG_TYPE, kind: 'weak' }],
    outputs: [],
    async run(ctx) {
      const cfg = await ctx.state.find<MachineConfigSpec>(MACHINE_CONFIG_NS, MACHINE_CONFIG_TYPE, MACHINE_CONFIG_ID);
      for (const f of files(cfg?.spec)) {
        // Validation allows /var/ only; anything else (Talos's /etc/cri/ containerd parts) was ignored with a warning.
        if (!f.path.startsWith('/var/')) continue;
        const file = path.join(root, f.path);
        const mode = f.permissions ?? 0o644;
        try {
          fs.mkdirSync(path.dirname(file), { recursive: true });
          const op = f.op;
          if (op === 'append') {
            const key = `${f.path}\0${f.content}`;
            if (appended.has(key)) continue;
            fs.appendFileSync(file, f.content, { mode });
            appended.add(key);
          } else if (op === 'overwrite' || !fs.existsSync(file)) {
            if (!fs.existsSync(file) || fs.readFileSync(file, 'utf8') !== f.content) fs.writeFileSync(file, f.content, { mode });
          } else continue;
          fs.chmodSync(file, mode);
          ctx.log.info(`file ${f.path}: ${op}`);
        } catch (err) {
          ctx.log.warn(`file ${f.path}: ${(err as Error).message}`);
        }
      }
    },
  };
}
