/**
 * An HTTP proxy on loopback that tunnels CONNECT requests, as a company's egress proxy does, and
 * records each tunnel's target: tests see what went through it. Anything but CONNECT is refused
 * with 405 (and recorded), so a client that skipped the tunnel is caught. `hosts` resolves names
 * the test machine's DNS does not know (`api.provider.test`), as a proxy inside a company does.
 */
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';

export class ConnectProxy {
  /** `host:port` of each tunnel asked for, in order; plain requests as `METHOD url`. */
  readonly seen: string[] = [];
  private readonly sockets = new Set<net.Socket>();

  private constructor(private readonly server: http.Server) {}

  static async start(options: { hosts?: Record<string, string> } = {}): Promise<ConnectProxy> {
    const server = http.createServer();
    const proxy = new ConnectProxy(server);
    server.on('request', (req, res) => {
      proxy.seen.push(`${req.method} ${req.url}`);
      res.writeHead(405, { connection: 'close' }).end();
    });
    server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
      proxy.seen.push(req.url ?? '');
      const [host, port] = (req.url ?? '').split(/:(?=\d+$)/);
      const upstream = net.connect(Number(port), options.hosts?.[host!] ?? host!, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length > 0) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      for (const socket of [client, upstream]) {
        proxy.sockets.add(socket);
        socket.on('error', () => socket === client ? upstream.destroy() : client.destroy());
        socket.on('close', () => {
          proxy.sockets.delete(socket);
          (socket === client ? upstream : client).destroy();
        });
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return proxy;
  }

  /** e.g. http://127.0.0.1:54321 — what HTTPS_PROXY / HTTP_PROXY name. */
  get url(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
