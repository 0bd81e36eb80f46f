import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { META_SIZE, readMeta, writeMeta } from '../../install/meta.ts';
import { TALOS_META_KEYS, bronzeMetaKey, metaHandlers } from './meta.ts';
import { callUnary } from './testing.ts';

let dir: string;
let file: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'meta-api-'));
  file = path.join(dir, 'meta.img');
  fs.writeFileSync(file, Buffer.alloc(META_SIZE));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const values = () => Object.fromEntries(readMeta(file).values);

describe('bronzeMetaKey', () => {
  it("maps Talos's user keys and refuses the others, saying why", () => {
    expect([12, 13, 14].map(bronzeMetaKey)).toEqual(['user.1', 'user.2', 'user.3']);
    expect(() => bronzeMetaKey(6)).toThrow(/managed by Bronze.*upgrade/);
    expect(() => bronzeMetaKey(9)).toThrow(/managed by Bronze.*state\.encryption/);
    expect(() => bronzeMetaKey(18)).toThrow(/managed by Bronze.*wipe/);
    expect(() => bronzeMetaKey(10)).toThrow(/Bronze does not use META key 10 \(MetalNetworkPlatformConfig\)/);
    expect(() => bronzeMetaKey(0x20)).toThrow(/not a Talos META key/);
    expect(() => bronzeMetaKey(256)).toThrow(/uint8/);
    for (const k of [6, 10, 0x20, 256]) {
      try {
        bronzeMetaKey(k);
      } catch (e) {
        expect((e as { code: number }).code).toBe(grpc.status.INVALID_ARGUMENT);
      }
    }
  });

  it("names every key of Talos's table (6 to 18) once", () => {
    expect(Object.keys(TALOS_META_KEYS).map(Number)).toEqual([6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18]);
  });
});

describe('MetaWrite and MetaDelete', () => {
  it('write and delete a mapped key, leaving what Bronze records alone', async () => {
    writeMeta(file, { 'upgrade.state': 'committed' });
    const h = metaHandlers({ metaDevice: () => file });
    expect(await callUnary(h.MetaWrite, { key: 12, value: Buffer.from('rack 7') })).toEqual({ messages: [{}] });
    expect(values()).toEqual({ 'upgrade.state': 'committed', 'user.1': 'rack 7' });
    expect(await callUnary(h.MetaDelete, { key: 12 })).toEqual({ messages: [{}] });
    expect(values()).toEqual({ 'upgrade.state': 'committed' });
    await expect(callUnary(h.MetaDelete, { key: 12 })).rejects.toMatchObject({ code: grpc.status.NOT_FOUND, message: expect.stringMatching(/meta key not found/) });
  });

  it('refuse managed and unused keys, and values that are not text, without writing', async () => {
    writeMeta(file, { 'upgrade.state': 'trying' });
    const before = readMeta(file).sequence;
    const h = metaHandlers({ metaDevice: () => file });
    await expect(callUnary(h.MetaWrite, { key: 6, value: Buffer.from('x') })).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT, message: expect.stringMatching(/managed by Bronze/) });
    await expect(callUnary(h.MetaDelete, { key: 6 })).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
    await expect(callUnary(h.MetaWrite, { key: 10, value: Buffer.from('{}') })).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT, message: expect.stringMatching(/does not use/) });
    await expect(callUnary(h.MetaWrite, { key: 13, value: Buffer.from([0xff, 0xfe]) })).rejects.toMatchObject({ code: grpc.status.INVALID_ARGUMENT, message: expect.stringMatching(/UTF-8/) });
    expect(readMeta(file).sequence).toBe(before);
  });

  it('answer FAILED_PRECONDITION without a META partition, or on a damaged one', async () => {
    const none = metaHandlers({ metaDevice: () => undefined });
    await expect(callUnary(none.MetaWrite, { key: 12, value: Buffer.from('x') })).rejects.toMatchObject({ code: grpc.status.FAILED_PRECONDITION, message: expect.stringMatching(/no META partition/) });
    await expect(callUnary(none.MetaDelete, { key: 12 })).rejects.toMatchObject({ code: grpc.status.FAILED_PRECONDITION });
    fs.writeFileSync(file, Buffer.alloc(META_SIZE, 0x55));
    const damaged = metaHandlers({ metaDevice: () => file });
    await expect(callUnary(damaged.MetaWrite, { key: 12, value: Buffer.from('x') })).rejects.toMatchObject({ code: grpc.status.FAILED_PRECONDITION, message: expect.stringMatching(/damaged/) });
  });

  it('answer RESOURCE_EXHAUSTED when the value does not fit', async () => {
    const h = metaHandlers({ metaDevice: () => file });
    await expect(callUnary(h.MetaWrite, { key: 14, value: Buffer.alloc(META_SIZE, 0x61) })).rejects.toMatchObject({ code: grpc.status.RESOURCE_EXHAUSTED });
    expect(values()).toEqual({});
  });
});
