import { describe, expect, it } from 'vitest';
import { DiskSpelling } from './DiskSpelling';

describe('the disk’s spelling of a path', () => {
  it('is kept for NFD files and folders, and used for paths under a spelled folder', () => {
    const spelling = new DiskSpelling();
    const nfd = 'Re\u0301sume\u0301/cafe\u0301.txt';
    expect(spelling.note(nfd)).toBe('Résumé/café.txt');
    expect(spelling.onDisk('Résumé/café.txt')).toBe(nfd);
    expect(spelling.onDisk('Résumé/new.txt')).toBe('Re\u0301sume\u0301/new.txt');
    expect(spelling.onDisk('plain.txt')).toBe('plain.txt');
    spelling.forget('Résumé/café.txt');
    expect(spelling.onDisk('Résumé/café.txt')).toBe('Re\u0301sume\u0301/café.txt');
  });
});
