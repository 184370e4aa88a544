/**
 * `BENCH_TLS=1`: the token sources serve https, as every hosted provider does, with the gateway's
 * test certificate (apps/gateway/src/models/testdata: localhost and 127.0.0.1, self-signed).
 * The runner sets `NODE_EXTRA_CA_CERTS` to it before any server process starts, so the gateway
 * and the relay trust it the way a deployment trusts a private certificate authority.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const testdata = new URL('../../apps/gateway/src/models/testdata/', import.meta.url);
export const benchCertFile = fileURLToPath(new URL('localhost.cert.pem', testdata));

export function benchTls(): { key: Buffer; cert: Buffer } | null {
  if (process.env.BENCH_TLS !== '1') return null;
  return { key: readFileSync(new URL('localhost.key.pem', testdata)), cert: readFileSync(benchCertFile) };
}
