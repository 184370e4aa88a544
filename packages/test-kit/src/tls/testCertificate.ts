import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * A self-signed certificate for localhost and 127.0.0.1, for fake providers that serve https
 * as every hosted one does. `certFile` is what NODE_EXTRA_CA_CERTS names to trust it.
 */
export const testCertificateFile = fileURLToPath(new URL('localhost.cert.pem', import.meta.url));

export function testCertificate(): { key: Buffer; cert: Buffer } {
  return { key: readFileSync(new URL('localhost.key.pem', import.meta.url)), cert: readFileSync(testCertificateFile) };
}
