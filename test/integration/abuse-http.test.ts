import { verifyEd25519, type SignatureVerifier } from '../../core/ed25519';
import { testWallet, walletHeaders } from '../support/api';
import { apiSuite } from '../support/api-servers';
import { rawGet } from '../support/raw-http';

/** Issue 23 findings 2 and 3 under a concurrent flood, at the default log level (D-75, D-77, D-105). */
describe('HTTP floods from one address (real sockets, real Redis)', () => {
  const suite = apiSuite();

  async function api(env: Record<string, string>, verifySignature: SignatureVerifier) {
    const bytes = { written: 0 };
    const s = await suite.startProcess(env, suite.db, { verifySignature, logTo: (line) => void (bytes.written += line.length) });
    return { ...s, bytes };
  }

  it('verifies no more than the budget of a concurrent burst of bad signatures, and logs nothing for it or for malformed escapes', async () => {
    let calls = 0;
    const s = await api({ RATE_LIMIT_MAX_REQUESTS: '5' }, (m, sig, k) => (calls++, verifyEd25519(m, sig, k)));
    const startup = s.bytes.written;
    try {
      const forged = walletHeaders(testWallet(), 'GET /stats', { forge: true });
      const [bad, malformed] = await Promise.all([
        Promise.all(Array.from({ length: 300 }, () => rawGet(s.port, '/api/v1/stats', { localAddress: '127.0.0.2', headers: forged }))),
        Promise.all(Array.from({ length: 300 }, (_, i) => rawGet(s.port, `/api/v1/markets/%ff${i}`, { localAddress: '127.0.0.3' }))),
      ]);
      const count = (rs: { status: number }[], st: number) => rs.filter((r) => r.status === st).length;
      expect([count(bad, 401), count(bad, 429)]).toEqual([5, 295]);
      expect(calls).toBe(5);
      expect([count(malformed, 400), count(malformed, 429)]).toEqual([5, 295]);
      // Client errors are not the server's: nothing at the default level, whatever the volume.
      expect(s.bytes.written - startup).toBe(0);
    } finally {
      await s.close();
    }
  });
});
