import type { ClusterBus } from '../ports/ClusterBus';

/** One gateway alone: nothing to tell, no one to hear. */
export class SoloBus implements ClusterBus {
  readonly clustered = false;
  constructor(readonly gatewayId: string) {}
  async start(): Promise<void> {}
  follow(): void {}
  unfollow(): void {}
  publish(): void {}
  announce(): void {}
  readonly connected = true;
  readonly member = true;
  isAlive(gatewayId: string): boolean {
    return gatewayId === this.gatewayId;
  }
  aliveGateways(): number {
    return 1;
  }
  async claim(): Promise<boolean> {
    return true;
  }
  async close(): Promise<void> {}
}
