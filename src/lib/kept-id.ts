// A random id kept in a file (128 bits, hex): read when the file holds one, else made and written
// beside, synced and renamed over, so that a crash leaves the old file or the new one. The
// machine id and the cluster member id in STATE are both kept this way.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';

const ID = /^[0-9a-f]{32}$/;

/** The id in `file`, or (absent, unreadable, not an id) a new one written there with `mode`; throws when it cannot be written. */
export function keptRandomId(file: string, mode: number): { id: string; created: boolean } {
  try {
    const text = fs.readFileSync(file, 'utf8').trim();
    if (ID.test(text)) return { id: text, created: false };
  } catch {
    // no id to keep: make one
  }
  const id = crypto.randomBytes(16).toString('hex');
  const dir = path.dirname(file);
  fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${crypto.randomBytes(4).toString('hex')}.tmp`);
  const fd = fs.openSync(tmp, 'wx', mode);
  try {
    fs.fchmodSync(fd, mode);
    fs.writeFileSync(fd, `${id}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  try {
    fs.renameSync(tmp, file);
  } catch (err) {
    fs.rmSync(tmp, { force: true });
    throw err;
  }
  return { id, created: true };
}
