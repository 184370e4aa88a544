/**
 * `BENCH_TLS=1`: the token sources serve https, as every hosted provider does, with the gateway's
 * test certificate (test-kit's `testCertificate`: localhost and 127.0.0.1, self-signed).
 * The runner sets `NODE_EXTRA_CA_CERTS` to it before any server process starts, so the gateway
 * and the relay trust it the way a deployment trusts a private certificate authority.
 */
import { testCertificate, testCertificateFile } from '@flint/test-kit';

export const benchCertFile = testCertificateFile;

export function benchTls(): { key: Buffer; cert: Buffer } | null {
  if (process.env.BENCH_TLS !== '1') return null;
  return testCertificate();
}
