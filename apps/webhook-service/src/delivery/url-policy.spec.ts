import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { checkUrl, isPublicAddress, UrlRefused } from './url-policy';
import { sendAttempt } from './sender';

describe('url policy (server-side request forgery)', () => {
  it.each(['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '::1', '::', 'fe80::1', 'fd00:ec2::254', '::ffff:127.0.0.1', '::ffff:10.0.0.1', '64:ff9b::a00:1', '2001:0:4136:e378:8000:63bf:3fff:fdd2', '3fff::1', '0:0:0:0:0:ffff:7f00:1', 'not-an-ip'])(
    'refuses %s',
    (address) => expect(isPublicAddress(address)).toBe(false),
  );

  it.each(['93.184.215.14', '1.1.1.1', '2606:4700:4700::1111', '2001:4860:4860::8888', '::ffff:93.184.215.14'])('allows the public address %s', (address) => expect(isPublicAddress(address)).toBe(true));

  const resolveTo = (addresses: string[]) => ({ allowPrivate: false, resolve: async () => addresses });

  it('refuses a name that resolves to loopback, or to a private address among public ones', async () => {
    await expect(checkUrl('https://hooks.example.com/x', resolveTo(['127.0.0.1']))).rejects.toBeInstanceOf(UrlRefused);
    await expect(checkUrl('https://hooks.example.com/x', resolveTo(['93.184.215.14', '10.0.0.1']))).rejects.toBeInstanceOf(UrlRefused);
    await expect(checkUrl('https://hooks.example.com/x', resolveTo(['93.184.215.14']))).resolves.toBeInstanceOf(URL);
  });

  it('refuses what is not an https URL without credentials, unless private URLs are allowed (http then too)', async () => {
    for (const url of ['http://hooks.example.com/x', 'ftp://hooks.example.com', 'https://u:p@hooks.example.com/', 'https://hooks.example.com/#frag', 'hooks.example.com']) {
      await expect(checkUrl(url, resolveTo(['93.184.215.14']))).rejects.toBeInstanceOf(UrlRefused);
    }
    await expect(checkUrl('http://127.0.0.1:8080/x', { allowPrivate: true })).resolves.toBeInstanceOf(URL);
  });

  it('checks again at the connection: a name that resolved to a public address and now resolves to loopback (DNS rebinding) is not connected to', async () => {
    let hits = 0;
    const server = createServer((_req, res) => {
      hits++;
      res.end('ok');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    try {
      let answers = [['93.184.215.14'], ['127.0.0.1']];
      const resolve = async () => answers.shift() ?? ['127.0.0.1'];
      // Registration: the name resolves to a public address.
      const url = await checkUrl(`https://rebind.example.test:${port}/x`, { allowPrivate: false, resolve });
      const result = await sendAttempt(url, '{}', {}, { allowPrivate: false, resolve, timeoutMs: 2000 });
      expect(result).toMatchObject({ ok: false, status: null, error: 'address_not_allowed' });
      // A literal private address never gets as far as a lookup.
      expect(await sendAttempt(new URL(`http://127.0.0.1:${port}/x`), '{}', {}, { allowPrivate: false, timeoutMs: 2000 })).toMatchObject({ ok: false, error: 'address_not_allowed' });
      expect(hits).toBe(0);
      // Allowed (local development), the same request arrives.
      answers = [['127.0.0.1']];
      expect(await sendAttempt(new URL(`http://rebind.example.test:${port}/x`), '{}', {}, { allowPrivate: true, resolve, timeoutMs: 2000 })).toMatchObject({ ok: true, status: 200 });
      expect(hits).toBe(1);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });
});
