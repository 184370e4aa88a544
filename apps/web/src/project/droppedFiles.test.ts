import { strFromU8, strToU8, unzipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import {
  collectDroppedFiles,
  collectPickedFiles,
  isLoneZip,
  totalBytes,
  uploadBody,
  zipFiles,
  type DroppedDirectoryEntry,
  type DroppedEntry,
  type DroppedFileEntry,
} from './droppedFiles';

/** Entries shaped as the browser's webkitGetAsEntry gives them; directories answer in batches, as Chrome's do. */
function file(name: string, text = name): DroppedFileEntry {
  return { name, isFile: true, isDirectory: false, file: (success) => success(new File([text], name)) };
}

function folder(name: string, children: DroppedEntry[], batchSize = 2): DroppedDirectoryEntry {
  return {
    name,
    isFile: false,
    isDirectory: true,
    createReader() {
      let next = 0;
      return {
        readEntries(success) {
          const batch = children.slice(next, next + batchSize);
          next += batch.length;
          queueMicrotask(() => success(batch));
        },
      };
    },
  };
}

async function texts(files: ReadonlyMap<string, Blob>): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const [path, blob] of files) out[path] = await blob.text();
  return out;
}

describe('collecting a drop', () => {
  it('reads dropped folders recursively, every batch of every directory, into paths under the folder', async () => {
    const site = folder('site', [file('index.html'), folder('img', [file('a.png'), file('b.png'), file('c.png')]), file('style.css'), folder('empty', [])]);
    const { files, leftOut } = await collectDroppedFiles([site, file('README.md')]);
    expect(await texts(files)).toEqual({
      'site/index.html': 'index.html',
      'site/img/a.png': 'a.png',
      'site/img/b.png': 'b.png',
      'site/img/c.png': 'c.png',
      'site/style.css': 'style.css',
      'README.md': 'README.md',
    });
    expect(leftOut).toEqual([]);
  });

  it('leaves out version control, dependency folders and OS litter, and says so', async () => {
    const project = folder('app', [folder('.git', [file('HEAD')]), folder('node_modules', [file('x.js')]), file('.DS_Store'), file('main.ts')]);
    const { files, leftOut } = await collectDroppedFiles([project]);
    expect([...files.keys()]).toEqual(['app/main.ts']);
    expect(leftOut).toEqual(['app/.git/', 'app/node_modules/', 'app/.DS_Store']);
  });

  it('a file the browser cannot read fails the collection', async () => {
    const unreadable: DroppedFileEntry = { name: 'gone.txt', isFile: true, isDirectory: false, file: (_ok, failure) => failure?.(new DOMException('gone', 'NotFoundError')) };
    await expect(collectDroppedFiles([unreadable])).rejects.toThrow('gone');
  });

  it('picked files are taken by name', async () => {
    const { files } = collectPickedFiles([new File(['1'], 'a.txt'), new File(['22'], 'b.txt')]);
    expect(await texts(files)).toEqual({ 'a.txt': '1', 'b.txt': '22' });
    expect(totalBytes(files)).toBe(3);
  });
});

describe('the upload body', () => {
  it('zips the collected files under their paths', async () => {
    const files = new Map<string, Blob>([
      ['site/index.html', new Blob(['<h1>hi</h1>'])],
      ['site/img/logo.png', new Blob([new Uint8Array([137, 80, 78, 71])])],
    ]);
    const unzipped = unzipSync(await uploadBody(files));
    expect(Object.keys(unzipped).sort()).toEqual(['site/img/logo.png', 'site/index.html']);
    expect(strFromU8(unzipped['site/index.html']!)).toBe('<h1>hi</h1>');
    expect([...unzipped['site/img/logo.png']!]).toEqual([137, 80, 78, 71]);
  });

  it('sends a lone dropped .zip as it is, for the gateway to unpack', async () => {
    const archive = zipFiles(new Map([['inner.txt', strToU8('inside')]]));
    const files = new Map<string, Blob>([['bundle.ZIP', new Blob([archive])]]);
    expect(isLoneZip(files)).toBe(true);
    expect([...(await uploadBody(files))]).toEqual([...archive]);
  });

  it('zips a .zip that comes with other files, or inside a folder, as a file like any other', async () => {
    expect(isLoneZip(new Map([['a.zip', new Blob([])], ['b.txt', new Blob([])]]))).toBe(false);
    expect(isLoneZip(new Map([['dist/a.zip', new Blob([])]]))).toBe(false);
    const body = await uploadBody(new Map([['dist/a.zip', new Blob(['not really a zip'])]]));
    expect(strFromU8(unzipSync(body)['dist/a.zip']!)).toBe('not really a zip');
  });

  it('keeps a file named __proto__ inside a folder, and leaves out one at the top, which zip libraries cannot hold', async () => {
    const unzipped = unzipSync(zipFiles(new Map([['a/__proto__', strToU8('y')]])));
    expect(Object.keys(unzipped)).toEqual(['a/__proto__']);
    const { files, leftOut } = await collectDroppedFiles([file('__proto__'), folder('a', [file('__proto__')])]);
    expect([...files.keys()]).toEqual(['a/__proto__']);
    expect(leftOut).toEqual(['__proto__']);
  });

  it('stores already-compressed formats and deflates text', () => {
    const text = strToU8('a line of text\n'.repeat(1_000));
    const zip = zipFiles(new Map([['notes.txt', text], ['photo.jpg', text]]));
    // Each local header's compression method: 8 deflate, 0 stored.
    const methods = new Map<string, number>();
    const view = new DataView(zip.buffer);
    for (let at = 0; view.getUint32(at, true) === 0x04034b50; ) {
      const compressedSize = view.getUint32(at + 18, true);
      const nameLength = view.getUint16(at + 26, true);
      const extraLength = view.getUint16(at + 28, true);
      methods.set(strFromU8(zip.subarray(at + 30, at + 30 + nameLength)), view.getUint16(at + 8, true));
      at += 30 + nameLength + extraLength + compressedSize;
    }
    expect(Object.fromEntries(methods)).toEqual({ 'notes.txt': 8, 'photo.jpg': 0 });
  });
});
