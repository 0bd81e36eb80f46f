import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import {
  InputError,
  appliesTo,
  evaluate,
  formatReport,
  loadTable,
  main,
  parseCmdline,
  parseKernelConfig,
  type Result,
} from './kspp-check.ts';

const TABLE_PATH = fileURLToPath(new URL('../kernel-config/kspp.yaml', import.meta.url));

function statusOf(results: Result[], name: string): Result {
  const r = results.find((x) => x.entry.name === name);
  if (!r) throw new Error(`no result for ${name}`);
  return r;
}

function tableError(yamlText: string): string {
  try {
    loadTable(yamlText, 't.yaml');
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    return (err as Error).message;
  }
  throw new Error('expected loadTable to throw');
}

describe('parseKernelConfig', () => {
  it('reads y, strings, numbers and "is not set", ignoring other comments', () => {
    const config = parseKernelConfig(
      [
        '#',
        '# Automatically generated file; DO NOT EDIT.',
        'CONFIG_BUG=y',
        'CONFIG_LSM="landlock,lockdown,yama"',
        'CONFIG_STATIC_USERMODEHELPER_PATH=""',
        'CONFIG_PANIC_TIMEOUT=-1',
        'CONFIG_MAGIC_SYSRQ_DEFAULT_ENABLE=0x1',
        '# CONFIG_MODULES is not set',
        '',
      ].join('\n'),
    );
    expect(config.get('CONFIG_BUG')).toBe('y');
    expect(config.get('CONFIG_LSM')).toBe('landlock,lockdown,yama');
    expect(config.get('CONFIG_STATIC_USERMODEHELPER_PATH')).toBe('');
    expect(config.get('CONFIG_PANIC_TIMEOUT')).toBe('-1');
    expect(config.get('CONFIG_MAGIC_SYSRQ_DEFAULT_ENABLE')).toBe('0x1');
    expect(config.get('CONFIG_MODULES')).toBeNull();
    expect(config.has('CONFIG_DEVMEM')).toBe(false);
    expect(config.size).toBe(6);
  });

  it('unescapes quoted strings and lets a later line win', () => {
    const config = parseKernelConfig('CONFIG_X="a \\"b\\""\nCONFIG_Y=y\n# CONFIG_Y is not set\n');
    expect(config.get('CONFIG_X')).toBe('a "b"');
    expect(config.get('CONFIG_Y')).toBeNull();
  });

  it('rejects a line that is not kconfig, naming the line', () => {
    expect(() => parseKernelConfig('CONFIG_A=y\nthis is junk\n', 'my.config')).toThrow(/my\.config:2: not a kconfig line/);
    expect(() => parseKernelConfig('CONFIG_A="open\n', 'my.config')).toThrow(InputError);
  });
});

describe('parseCmdline', () => {
  it('reads bare flags and key=value pairs', () => {
    const cmdline = parseCmdline('console=ttyS0,115200 slab_nomerge init_on_alloc=1 page_alloc.shuffle=1\n');
    expect(cmdline.get('slab_nomerge')).toBe(true);
    expect(cmdline.get('init_on_alloc')).toBe('1');
    expect(cmdline.get('page_alloc.shuffle')).toBe('1');
    expect(cmdline.get('console')).toBe('ttyS0,115200');
  });

  it('joins lines, honours quotes, treats - as _, keeps the last value and stops at --', () => {
    const cmdline = parseCmdline('a=1 dyndbg="file x.c +p"\nrandomize-kstack-offset=on a=2 -- nosmt init=/x\n');
    expect(cmdline.get('dyndbg')).toBe('file x.c +p');
    expect(cmdline.get('randomize_kstack_offset')).toBe('on');
    expect(cmdline.get('a')).toBe('2');
    expect(cmdline.has('nosmt')).toBe(false);
  });

  it('rejects an unbalanced quote', () => {
    expect(() => parseCmdline('a="b c', 'cl')).toThrow(/cl: unbalanced double quote/);
  });
});

describe('evaluate', () => {
  const table = loadTable(
    [
      '- option: CONFIG_BUG',
      '  want: y',
      '- option: CONFIG_DEBUG_LIST',
      '  want: y',
      '- option: CONFIG_MODULES',
      '  want: n',
      '- option: CONFIG_DEVMEM',
      '  want: n',
      '- option: CONFIG_KEXEC',
      '  want: n',
      '- option: CONFIG_DEFAULT_MMAP_MIN_ADDR',
      '  want: "65536"',
      '  arch: [amd64]',
      '- option: CONFIG_ARM64_BTI_KERNEL',
      '  want: y',
      '  arch: [arm64]',
      '- option: CONFIG_MODULE_SIG',
      '  want: y',
      '  waived: "no modules"',
      '- option: CONFIG_CFI_PERMISSIVE',
      '  want: n',
      '  waived: "stale"',
      '- cmdline: slab_nomerge',
      '  want: true',
      '- cmdline: init_on_alloc',
      '  want: "1"',
      '- cmdline: mitigations',
      '  want: "auto,nosmt"',
      '- cmdline: nokaslr',
      '  want: false',
      '- cmdline: pti',
      '  want: "on"',
    ].join('\n'),
  );
  const config = parseKernelConfig(
    'CONFIG_BUG=y\n# CONFIG_DEBUG_LIST is not set\n# CONFIG_MODULES is not set\nCONFIG_KEXEC=y\nCONFIG_DEFAULT_MMAP_MIN_ADDR=4096\n',
  );
  const cmdline = parseCmdline('slab_nomerge init_on_alloc=0 mitigations=auto,nosmt nokaslr pti\n');
  const results = evaluate(table, config, cmdline, 'amd64');

  it('passes what is met', () => {
    expect(statusOf(results, 'CONFIG_BUG').status).toBe('ok');
    expect(statusOf(results, 'mitigations').status).toBe('ok');
  });

  it('detects misses for options', () => {
    expect(statusOf(results, 'CONFIG_DEBUG_LIST')).toMatchObject({ status: 'MISS', have: 'not set' });
    expect(statusOf(results, 'CONFIG_KEXEC')).toMatchObject({ status: 'MISS', have: 'y' });
    expect(statusOf(results, 'CONFIG_DEFAULT_MMAP_MIN_ADDR')).toMatchObject({ status: 'MISS', have: '4096' });
  });

  it('satisfies n by "is not set" and by absence', () => {
    expect(statusOf(results, 'CONFIG_MODULES')).toMatchObject({ status: 'ok', have: 'not set' });
    expect(statusOf(results, 'CONFIG_DEVMEM')).toMatchObject({ status: 'ok', have: 'absent' });
  });

  it('honours a waiver, and reports waivers that are no longer needed as ok', () => {
    expect(statusOf(results, 'CONFIG_MODULE_SIG')).toMatchObject({ status: 'waived', satisfied: false });
    expect(statusOf(results, 'CONFIG_CFI_PERMISSIVE')).toMatchObject({ status: 'ok', satisfied: true });
    const report = formatReport(results, 'amd64');
    expect(report).toMatch(/CONFIG_MODULE_SIG\s+y\s+absent\s+waived \(no modules\)/);
    expect(report).toMatch(/waiver no longer needed.*CONFIG_CFI_PERMISSIVE/);
  });

  it('checks cmdline flags, absence and key=value exactly', () => {
    expect(statusOf(results, 'slab_nomerge')).toMatchObject({ status: 'ok', have: 'present' });
    expect(statusOf(results, 'init_on_alloc')).toMatchObject({ status: 'MISS', have: '0' });
    expect(statusOf(results, 'nokaslr')).toMatchObject({ status: 'MISS', have: 'present' });
    // A bare flag does not satisfy a value requirement.
    expect(statusOf(results, 'pti')).toMatchObject({ status: 'MISS', have: 'present' });
  });

  it('evaluates only the entries for the requested arch', () => {
    expect(results.map((r) => r.entry.name)).not.toContain('CONFIG_ARM64_BTI_KERNEL');
    const arm = evaluate(table, config, cmdline, 'arm64').map((r) => r.entry.name);
    expect(arm).toContain('CONFIG_ARM64_BTI_KERNEL');
    expect(arm).not.toContain('CONFIG_DEFAULT_MMAP_MIN_ADDR');
  });
});

describe('loadTable rejects malformed tables', () => {
  it('names the entry index and the problem', () => {
    expect(tableError('- option: CONFIG_A\n  want: y\n- option: CONFIG_B\n')).toMatch(/entry 1 \(line 3\) CONFIG_B: missing want/);
    expect(tableError('- option: CONFIG_A\n  want: 65536\n')).toMatch(/entry 0 .*quote numeric values/);
    expect(tableError('- option: CONFIG_A\n  want: true\n')).toMatch(/entry 0 .*want for an option must be y, n or a quoted value/);
    expect(tableError('- option: config_a\n  want: y\n')).toMatch(/entry 0 .*CONFIG_ name/);
    expect(tableError('- option: CONFIG_A\n  cmdline: a\n  want: y\n')).toMatch(/exactly one of option or cmdline/);
    expect(tableError('- want: y\n')).toMatch(/exactly one of option or cmdline/);
    expect(tableError('- option: CONFIG_A\n  want: y\n  waive: "typo"\n')).toMatch(/unknown key "waive"/);
    expect(tableError('- option: CONFIG_A\n  want: y\n  waived: ""\n')).toMatch(/waived must be a non-empty reason/);
    expect(tableError('- option: CONFIG_A\n  want: y\n  arch: [x86]\n')).toMatch(/unknown arch/);
    expect(tableError('- option: CONFIG_A\n  want: y\n  arch: amd64\n')).toMatch(/arch must be a non-empty list/);
    expect(tableError('- cmdline: a=1\n  want: true\n')).toMatch(/cmdline must be a parameter name/);
    expect(tableError('- cmdline: a\n  want: 1\n')).toMatch(/want for a cmdline parameter must be true, false or a quoted value/);
    expect(tableError('- just a string\n')).toMatch(/entry 0: must be a mapping/);
  });

  it('rejects a non-list, an empty table and invalid YAML', () => {
    expect(tableError('option: CONFIG_A\nwant: y\n')).toMatch(/must be a YAML list/);
    expect(tableError('[]\n')).toMatch(/no entries/);
    expect(tableError('- option: [\n')).toMatch(/invalid YAML/);
  });

  it('rejects duplicates that apply to the same arch, but allows per-arch variants', () => {
    expect(tableError('- option: CONFIG_A\n  want: y\n- option: CONFIG_A\n  want: n\n')).toMatch(/entry 1 CONFIG_A: duplicates entry 0/);
    expect(tableError('- cmdline: page-alloc.x\n  want: "1"\n- cmdline: page_alloc.x\n  want: "1"\n  arch: [amd64]\n')).toMatch(
      /duplicates entry 0/,
    );
    const ok = loadTable(
      '- option: CONFIG_DEFAULT_MMAP_MIN_ADDR\n  want: "65536"\n  arch: [amd64]\n- option: CONFIG_DEFAULT_MMAP_MIN_ADDR\n  want: "32768"\n  arch: [arm64]\n',
    );
    expect(ok).toHaveLength(2);
  });
});

describe('kernel-config/kspp.yaml', () => {
  const text = readFileSync(TABLE_PATH, 'utf8');
  const entries = loadTable(text, TABLE_PATH);

  it('loads, and every entry is well-formed', () => {
    expect(entries.length).toBeGreaterThan(100);
    for (const e of entries) {
      if (e.kind === 'option') {
        expect(e.name).toMatch(/^CONFIG_[A-Z0-9_]+$/);
        expect(typeof e.want).toBe('string');
      } else {
        expect(e.name).toMatch(/^[a-z0-9_.]+$/);
        expect(['string', 'boolean']).toContain(typeof e.want);
      }
      if (e.waived !== undefined) expect(e.waived.length).toBeGreaterThan(10);
      for (const a of e.arch ?? []) expect(['amd64', 'arm64']).toContain(a);
    }
  });

  it('names no option or cmdline parameter twice for one architecture', () => {
    for (const arch of ['amd64', 'arm64'] as const) {
      const names = entries.filter((e) => appliesTo(e, arch)).map((e) => `${e.kind}:${e.name.replace(/-/g, '_')}`);
      const dupes = names.filter((n, i) => names.indexOf(n) !== i);
      expect(dupes, arch).toEqual([]);
    }
  });

  it('covers the core KSPP recommendations', () => {
    const names = new Set(entries.map((e) => e.name));
    for (const n of [
      'CONFIG_STRICT_KERNEL_RWX',
      'CONFIG_HARDENED_USERCOPY',
      'CONFIG_INIT_ON_ALLOC_DEFAULT_ON',
      'CONFIG_MODULES',
      'CONFIG_RANDOMIZE_BASE',
      'slab_nomerge',
      'init_on_free',
      'mitigations',
    ]) {
      expect(names).toContain(n);
    }
  });
});

describe('main', () => {
  const dir = mkdtempSync(join(tmpdir(), 'kspp-check-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const write = (name: string, text: string): string => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return path;
  };
  const run = (args: string[]): { code: number; out: string; err: string } => {
    let out = '';
    let err = '';
    const code = main(args, { out: (t) => (out += `${t}\n`), err: (t) => (err += `${t}\n`) });
    return { code, out, err };
  };
  const table = write('t.yaml', '- option: CONFIG_BUG\n  want: y\n- cmdline: slab_nomerge\n  want: true\n');
  const cmdline = write('cmdline', 'slab_nomerge\n');

  it('exits 0 when everything is met, 1 on a miss', () => {
    const good = write('good.config', 'CONFIG_BUG=y\n');
    const bad = write('bad.config', '# CONFIG_BUG is not set\n');
    expect(run(['--config', good, '--cmdline', cmdline, '--table', table]).code).toBe(0);
    const miss = run(['--config', bad, '--cmdline', cmdline, '--table', table]);
    expect(miss.code).toBe(1);
    expect(miss.out).toMatch(/CONFIG_BUG\s+y\s+not set\s+MISS/);
  });

  it('exits 2 with a clear message on bad input', () => {
    const good = write('good2.config', 'CONFIG_BUG=y\n');
    const missing = run(['--config', join(dir, 'nope'), '--cmdline', cmdline, '--table', table]);
    expect(missing.code).toBe(2);
    expect(missing.err).toMatch(/cannot read --config .*nope: ENOENT/);
    expect(run(['--config', good]).err).toMatch(/--config and --cmdline are required/);
    expect(run(['--config', good, '--cmdline', cmdline, '--table', table, '--arch', 'mips']).code).toBe(2);
    expect(run(['--bogus']).code).toBe(2);
    const badTable = write('bad.yaml', '- option: CONFIG_BUG\n  want: 1\n');
    const r = run(['--config', good, '--cmdline', cmdline, '--table', badTable]);
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/entry 0 .*CONFIG_BUG.*quote numeric values/);
    expect(run(['--config', write('empty.config', '\n'), '--cmdline', cmdline, '--table', table]).err).toMatch(/no CONFIG_ lines/);
  });

  it('uses kernel-config/kspp.yaml by default', () => {
    const r = run(['--config', write('min.config', 'CONFIG_BUG=y\n'), '--cmdline', cmdline]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/kspp-check \(amd64\): \d+ requirements/);
  });
});

describe('kernel-config/kspp.yaml for arm64', () => {
  const entries = loadTable(readFileSync(TABLE_PATH, 'utf8'), TABLE_PATH);
  const arm64 = entries.filter((e) => appliesTo(e, 'arm64'));
  const names = new Set(arm64.map((e) => e.name));

  it('requires the arm64 protections KSPP lists, and none of x86\'s', () => {
    for (const n of [
      'CONFIG_ARM64_SW_TTBR0_PAN',
      'CONFIG_UNMAP_KERNEL_AT_EL0',
      'CONFIG_RANDOMIZE_BASE',
      'CONFIG_ARM64_PTR_AUTH',
      'CONFIG_ARM64_PTR_AUTH_KERNEL',
      'CONFIG_ARM64_BTI',
      'CONFIG_ARM64_BTI_KERNEL',
      'CONFIG_ARM64_PAN',
      'CONFIG_ARM64_EPAN',
      'CONFIG_ARM64_E0PD',
      'CONFIG_ARM64_MTE',
      'CONFIG_KASAN_HW_TAGS',
      'CONFIG_SHADOW_CALL_STACK',
      'CONFIG_RODATA_FULL_DEFAULT_ENABLED',
      'CONFIG_MITIGATE_SPECTRE_BRANCH_HISTORY',
      'CONFIG_STACKPROTECTOR_PER_TASK',
      'CONFIG_COMPAT',
      'arm64.nobti',
      'arm64.nopauth',
      'kpti',
    ]) {
      expect(names, n).toContain(n);
    }
    expect([...names].filter((n) => /^CONFIG_X86|^CONFIG_(INTEL|AMD)_IOMMU|^(pti|vsyscall|nopti|nosmap|nosmep)$/.test(n))).toEqual([]);
    const mmap = arm64.find((e) => e.name === 'CONFIG_DEFAULT_MMAP_MIN_ADDR');
    expect(mmap?.want).toBe('32768');
  });

  it('waives an arm64 requirement only with an arm64 reason', () => {
    const waived = arm64.filter((e) => e.waived !== undefined && e.arch?.includes('arm64'));
    expect(waived.map((e) => e.name).sort()).toEqual(
      ['CONFIG_ARM64_BTI_KERNEL', 'CONFIG_CFI_CLANG', 'CONFIG_HARDEN_BRANCH_PREDICTOR', 'CONFIG_HARDEN_EL2_VECTORS', 'CONFIG_UNWIND_PATCH_PAC_INTO_SCS'].sort(),
    );
    for (const e of waived) expect(e.waived, e.name).not.toMatch(/X86_KERNEL_IBT/);
  });

  it('passes a kernel with those options and fails one without pointer authentication', () => {
    const config = [
      'CONFIG_ARM64=y',
      ...arm64.filter((e) => e.kind === 'option' && e.want !== 'n').map((e) => `${e.name}=${(e as { want: string }).want}`),
    ].join('\n');
    const cmdlineText = arm64
      .filter((e) => e.kind === 'cmdline' && e.want !== false)
      .map((e) => (e.want === true ? e.name : `${e.name}=${e.want as string}`))
      .join(' ');
    const ok = evaluate(entries, parseKernelConfig(config), parseCmdline(cmdlineText), 'arm64');
    expect(ok.filter((r) => r.status === 'MISS')).toEqual([]);
    const bad = evaluate(entries, parseKernelConfig(config.replace('CONFIG_ARM64_PTR_AUTH_KERNEL=y', '# CONFIG_ARM64_PTR_AUTH_KERNEL is not set')), parseCmdline(`${cmdlineText} arm64.nopauth`), 'arm64');
    expect(bad.filter((r) => r.status === 'MISS').map((r) => r.entry.name).sort()).toEqual(['CONFIG_ARM64_PTR_AUTH_KERNEL', 'arm64.nopauth']);
  });
});
