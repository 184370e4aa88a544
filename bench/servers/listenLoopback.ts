import type http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { WebSocketServer } from 'ws';

export interface LoopbackWsServer {
  /** ws://127.0.0.1:<port> */
  url: string;
  close(): Promise<void>;
}

/** Listens on a free loopback port; `close` drops every socket and connection, then the server. */
export async function listenLoopback(server: http.Server, wss: WebSocketServer, beforeClose: () => void = () => {}): Promise<LoopbackWsServer> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `ws://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      for (const ws of wss.clients) ws.terminate();
      beforeClose();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
