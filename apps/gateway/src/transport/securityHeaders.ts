/** Sent with every answer, the API's included: no sniffing, no framing, no Referer leaving the IDE. */
export const securityHeaders: Readonly<Record<string, string>> = {
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  'referrer-policy': 'no-referrer',
};

const hostSyntax = /^(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?$/i;

/**
 * The IDE page's Content-Security-Policy. Everything comes from the gateway's own origin: the
 * app's scripts and Monaco's workers are files in /assets (Flint hands Monaco its workers in
 * `MonacoEnvironment.getWorker`, so Monaco never builds one from a blob: URL). Styles need
 * 'unsafe-inline': Monaco and the remote cursors write `<style>` elements at run time.
 * connect-src names the WebSocket of the page's own host as well, for browsers in which 'self'
 * does not yet cover ws:/wss:. The host is only written when it reads as one, so a forged Host
 * cannot add directives.
 */
export function contentSecurityPolicy(hostHeader: string | undefined): string {
  const host = hostHeader?.trim() ?? '';
  const sockets = hostSyntax.test(host) ? ` ws://${host} wss://${host}` : '';
  return [
    "default-src 'self'",
    "script-src 'self'",
    "worker-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    `connect-src 'self'${sockets}`,
    "img-src 'self' data:",
    "font-src 'self' data:",
    "object-src 'none'",
    "base-uri 'none'",
    "frame-ancestors 'none'",
    "form-action 'self'",
  ].join('; ');
}
