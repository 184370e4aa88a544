import * as zlib from 'node:zlib';
import { strToU8, zipSync, type Zippable } from 'fflate';
import { describe, expect, it } from 'vitest';
import { readZipUpload } from './zipUpload';

const limits = { maxEntries: 100, maxEntryBytes: 1024 * 1024, maxUnpackedBytes: 4 * 1024 * 1024 };
const centralSignature = Buffer.from('PK\u0001\u0002', 'latin1');
const localSignature = Buffer.from('PK\u0003\u0004', 'latin1');

function zipOf(files: Zippable, level: 0 | 9 = 9): Buffer {
  return Buffer.from(zipSync(files, { level }));
}

/** Where each entry's central directory header starts: its flags at +8, method +10, size +24, name +46. */
function centralHeaders(zip: Buffer): number[] {
  const found: number[] = [];
  for (let at = zip.indexOf(centralSignature); at !== -1; at = zip.indexOf(centralSignature, at + 1)) found.push(at);
  return found;
}

describe('reading an uploaded zip', () => {
  it('gives every file with its bytes, and leaves out directories and macOS resource forks', async () => {
    const zip = zipOf({ 'src/': new Uint8Array(), 'src/a.ts': strToU8('a\n'), '__MACOSX/src/._a.ts': strToU8('fork'), 'empty.txt': new Uint8Array(), 'caf\u00e9.md': strToU8('☕') });
    expect(await readZipUpload(zip, limits)).toEqual({
      ok: true,
      entries: [
        { path: 'src/a.ts', bytes: strToU8('a\n') },
        { path: 'empty.txt', bytes: new Uint8Array() },
        { path: 'caf\u00e9.md', bytes: strToU8('☕') },
      ],
    });
  });

  it('keeps names that would escape the workspace, for the caller to skip one by one', async () => {
    const read = await readZipUpload(zipOf({ '../evil.txt': strToU8('x'), 'sub\\..\\win.txt': strToU8('y'), 'fine.txt': strToU8('z') }), limits);
    expect(read.ok && read.entries.map((entry) => entry.path)).toEqual(['../evil.txt', 'sub\\..\\win.txt', 'fine.txt']);
  });

  it('an entry whose header understates its size is refused at once, not inflated to its real size', async () => {
    const zip = zipOf({ 'bomb.txt': new Uint8Array(16 * 1024 * 1024) });
    zip.writeUInt32LE(100, centralHeaders(zip)[0]! + 24);
    zip.writeUInt32LE(100, 22); // the local header's size too
    const started = performance.now();
    expect(await readZipUpload(zip, limits)).toEqual({ ok: false, reason: 'damaged', message: expect.stringMatching(/"bomb\.txt" does not unpack to the 100 bytes its header says/) });
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('an entry whose header overstates its size is refused', async () => {
    const zip = zipOf({ 'short.txt': strToU8('x'.repeat(1000)) });
    zip.writeUInt32LE(2000, centralHeaders(zip)[0]! + 24);
    expect(await readZipUpload(zip, limits)).toMatchObject({ ok: false, reason: 'damaged', message: expect.stringMatching(/"short\.txt" does not unpack to the 2000 bytes/) });
  });

  it.runIf(typeof (zlib as Partial<typeof zlib>).crc32 === 'function')('a stored entry whose bytes no longer match its checksum is refused (zlib.crc32, Node 20.15+)', async () => {
    const zip = zipOf({ 'good.ts': strToU8('good\n'), 'bad.ts': strToU8('x'.repeat(100)) }, 0);
    const inData = zip.lastIndexOf(localSignature) + 30 + 'bad.ts'.length + 10;
    zip.writeUInt8(zip.readUInt8(inData) ^ 0xff, inData);
    expect(await readZipUpload(zip, limits)).toMatchObject({ ok: false, reason: 'damaged', message: expect.stringMatching(/"bad\.ts" does not match its checksum/) });
  });

  it('damaged compressed data, or something that is not a zip, is refused with a sentence', async () => {
    const zip = zipOf({ 'bad.ts': strToU8('x'.repeat(1000)) });
    const inData = zip.indexOf(localSignature) + 30 + 'bad.ts'.length;
    zip.writeUInt8(zip.readUInt8(inData) ^ 0xff, inData);
    expect(await readZipUpload(zip, limits)).toMatchObject({ ok: false, reason: 'damaged', message: expect.stringMatching(/"bad\.ts"/) });
    const notZip = await readZipUpload(Buffer.from('this is not a zip'), limits);
    expect(notZip).toMatchObject({ ok: false, reason: 'damaged', message: expect.stringMatching(/^The upload is not a valid zip archive: .*\. Zip the files again and retry\.$/) });
  });

  it('entries that are too large, encrypted, compressed another way or not named in UTF-8 are skipped with a reason', async () => {
    const zip = zipOf({ 'big.bin': new Uint8Array(2 * 1024 * 1024), 'secret.txt': strToU8('s'), 'bz.txt': strToU8('b'), 'x.txt': strToU8('x'), 'small.txt': strToU8('s') });
    const [, secret = 0, bz = 0, x = 0] = centralHeaders(zip);
    zip.writeUInt16LE(zip.readUInt16LE(secret + 8) | 1, secret + 8);
    zip.writeUInt16LE(12, bz + 10);
    zip.writeUInt8(0xff, x + 46);
    const read = await readZipUpload(zip, limits);
    expect(read).toEqual({
      ok: true,
      entries: [
        { path: 'big.bin', skipped: expect.stringMatching(/larger than 1 MB/) },
        { path: 'secret.txt', skipped: 'It is encrypted.' },
        { path: 'bz.txt', skipped: expect.stringMatching(/method 12/) },
        { path: '\u00ff.txt', skipped: expect.stringMatching(/not UTF-8/) },
        { path: 'small.txt', bytes: strToU8('s') },
      ],
    });
  });

  it('more entries than the limit, or more unpacked bytes in all, refuse the whole zip as too large', async () => {
    const many = zipOf(Object.fromEntries(Array.from({ length: 101 }, (_, i) => [`f${i}.txt`, strToU8('x')])));
    expect(await readZipUpload(many, limits)).toEqual({ ok: false, reason: 'too-large', message: 'The zip holds 101 entries; at most 100 are read.' });
    const heavy = zipOf(Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`f${i}.bin`, new Uint8Array(1024 * 1024)])));
    expect(await readZipUpload(heavy, limits)).toMatchObject({ ok: false, reason: 'too-large', message: expect.stringMatching(/unpacks to 5 MB, more than the 4 MB one upload may hold/) });
  });

  it('refuses on the declared sizes before any entry is inflated (a damaged first entry is never read), and asks the caller first', async () => {
    const files = Object.fromEntries([['a.txt', strToU8('x'.repeat(1000))], ...Array.from({ length: 5 }, (_, i) => [`f${i}.bin`, new Uint8Array(1024 * 1024)])]);
    const zip = zipOf(files, 0);
    // The first entry is stored: flip a byte of its data, which only inflating it would notice.
    const data = zip.indexOf(localSignature) + 30 + 'a.txt'.length;
    zip.writeUInt8(zip.readUInt8(data) ^ 0xff, data);
    expect(await readZipUpload(zip, limits)).toMatchObject({ ok: false, reason: 'too-large' });
    const asked: Array<{ path: string; bytes: number }>[] = [];
    const refused = await readZipUpload(zip, { ...limits, maxUnpackedBytes: 64 * 1024 * 1024 }, (declared, total) => (asked.push([...declared]), `no room for ${total} bytes`));
    expect(refused).toEqual({ ok: false, reason: 'too-large', message: `no room for ${1000 + 5 * 1024 * 1024} bytes` });
    expect(asked[0]!.map((item) => item.path)).toEqual(['a.txt', 'f0.bin', 'f1.bin', 'f2.bin', 'f3.bin', 'f4.bin']);
  });
});
