import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, readFileSync, writeFileSync } from 'node:fs';

/**
 * Seals the provider keys owners connect (decision 0031): AES-256-GCM under a key kept in the
 * data folder, mode 0600, apart from the database — a copy of the database (a backup, a dump
 * sent for support) holds no usable key without that file.
 */
export interface SecretBox {
  seal(plain: string): string;
  /** Null when the text was sealed under another key or altered. */
  open(sealed: string): string | null;
}

export function secretBox(key: Buffer): SecretBox {
  if (key.length !== 32) throw new Error(`secretBox: the key must be 32 bytes, not ${key.length}`);
  return {
    seal(plain) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()]);
      return ['v1', iv.toString('base64'), cipher.getAuthTag().toString('base64'), body.toString('base64')].join('.');
    },
    open(sealed) {
      const [version, iv, tag, body] = sealed.split('.');
      if (version !== 'v1' || iv === undefined || tag === undefined || body === undefined) return null;
      try {
        const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64'));
        decipher.setAuthTag(Buffer.from(tag, 'base64'));
        return Buffer.concat([decipher.update(Buffer.from(body, 'base64')), decipher.final()]).toString('utf8');
      } catch {
        // Another key or altered text: the caller treats the connection as needing its key again.
        return null;
      }
    },
  };
}

/** The key file at `path`, made (32 random bytes, mode 0600) the first time. */
export function secretBoxAt(path: string): SecretBox {
  if (!existsSync(path)) {
    writeFileSync(path, randomBytes(32).toString('base64'), { mode: 0o600, flag: 'wx' });
    chmodSync(path, 0o600);
  }
  return secretBox(Buffer.from(readFileSync(path, 'utf8').trim(), 'base64'));
}
