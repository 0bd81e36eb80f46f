// zod for every Bronze module, configured once: jitless. zod 4 otherwise compiles a parser per
// object schema with `new Function` (and first reads globalThis.navigator, which makes Node
// build its Navigator object) — code no V8 code cache can hold, compiled again in every
// process that validates, for schemas that are mostly used once or twice per boot. Under
// QEMU/TCG that showed in machined's boot profile (bronze.profile=machined: "set Navigator").
import { z } from 'zod';

z.config({ jitless: true });

export { z };
