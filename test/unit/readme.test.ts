// The README's command extraction (test/lib/readme.ts), and that the README the e2e test walks
// has its commands where the test expects them.
import fs from 'node:fs';
import { describe, expect, it } from 'vitest';
import { readmeCommands, stripComment, substitute } from '../lib/readme.ts';

describe('README commands', () => {
  it('takes the lines of sh blocks without their trailing comments, quotes respected', () => {
    const md = ['text', '```sh', 'make run        # terminal 1', '', "bronzectl patch mc --patch '{\"a\":\"#x\"}'  # c", '# a comment line', '```', '```yaml', 'not: run', '```'].join('\n');
    expect(readmeCommands(md)).toEqual([
      { block: 1, line: 3, text: 'make run' },
      { block: 1, line: 5, text: "bronzectl patch mc --patch '{\"a\":\"#x\"}'" },
    ]);
    expect(stripComment('export A=$PWD/x#y')).toBe('export A=$PWD/x#y');
    expect(() => readmeCommands('```sh\nmake run\n')).toThrow(/not closed/);
  });

  it('substitutes longest first, once', () => {
    expect(substitute('-o _out/node1 DISK=_out/node1.raw 127.0.0.1:50000', [['_out/node1', '/t/n'], ['_out/node1.raw', '/t/n.raw'], ['127.0.0.1:50000', '127.0.0.1:4']])).toBe('-o /t/n DISK=/t/n.raw 127.0.0.1:4');
  });

  it('the README has the make run lines and bronzectl commands the e2e test walks', () => {
    const cmds = readmeCommands(fs.readFileSync('README.md', 'utf8')).map((c) => c.text);
    expect(cmds).toContain('make run');
    expect(cmds.some((c) => /^make run DISK=\S+$/.test(c))).toBe(true);
    expect(cmds.filter((c) => c === 'make stop')).toHaveLength(2);
    expect(cmds.some((c) => /^bronzectl gen config .* --endpoints 127\.0\.0\.1:50000 /.test(c))).toBe(true);
    expect(cmds.some((c) => /tsx /.test(c)), 'no tsx: it is not on a plain shell\'s PATH').toBe(false);
  });
});
