/**
 * The proxy decision against curl's reading of the variables (curl(1) ENVIRONMENT and
 * `--noproxy`, lib/noproxy.c), plus what the header says Flint adds: upper-case `HTTP_PROXY`,
 * ports in NO_PROXY entries, `*` among other entries.
 */
import { describe, expect, it } from 'vitest';
import { anyProxyConfigured, ProxyConfigError, proxyForUrl, type ProxyEnv } from './proxyForUrl';

const proxy = 'http://proxy.corp:3128';
const other = 'http://other.corp:8080';

/** [what, target URL, environment, the proxy it goes through or null for direct] */
const cases: Array<[string, string, ProxyEnv, string | null]> = [
  // Which variable, by the target's scheme.
  ['https: takes HTTPS_PROXY', 'https://api.openai.com/v1', { HTTPS_PROXY: proxy }, proxy],
  ['wss: takes HTTPS_PROXY, as https:', 'wss://api.openai.com/v1/responses', { HTTPS_PROXY: proxy }, proxy],
  ['http: takes HTTP_PROXY', 'http://vllm.internal:8000/v1', { HTTP_PROXY: proxy }, proxy],
  ['ws: takes HTTP_PROXY, as http:', 'ws://vllm.internal:8000/v1/responses', { http_proxy: proxy }, proxy],
  ['https: ignores HTTP_PROXY', 'https://api.openai.com/v1', { HTTP_PROXY: proxy }, null],
  ['http: ignores HTTPS_PROXY', 'http://vllm.internal:8000/v1', { HTTPS_PROXY: proxy }, null],
  ['ALL_PROXY alone serves https:', 'https://api.openai.com/v1', { ALL_PROXY: proxy }, proxy],
  ['ALL_PROXY alone serves wss:', 'wss://api.openai.com/v1/responses', { all_proxy: proxy }, proxy],
  ['ALL_PROXY alone serves http:', 'http://vllm.internal:8000/v1', { ALL_PROXY: proxy }, proxy],
  ['the scheme\'s own variable wins over ALL_PROXY', 'https://api.openai.com/v1', { ALL_PROXY: other, HTTPS_PROXY: proxy }, proxy],
  ['lower case wins over upper case', 'https://api.openai.com/v1', { https_proxy: proxy, HTTPS_PROXY: other }, proxy],
  ['an empty lower-case value counts as unset', 'https://api.openai.com/v1', { https_proxy: '', HTTPS_PROXY: proxy }, proxy],
  ['no variable: direct', 'https://api.openai.com/v1', {}, null],
  ['a proxy without a scheme is http://', 'https://api.openai.com/v1', { HTTPS_PROXY: 'proxy.corp:3128' }, proxy],
  ['an https:// proxy is kept as it is', 'https://api.openai.com/v1', { HTTPS_PROXY: 'https://proxy.corp:3129' }, 'https://proxy.corp:3129'],

  // NO_PROXY: names, suffixes, dots.
  ['NO_PROXY names the host', 'https://api.openai.com/v1', { HTTPS_PROXY: proxy, NO_PROXY: 'api.openai.com' }, null],
  ['NO_PROXY names a parent domain', 'https://api.openai.com/v1', { HTTPS_PROXY: proxy, NO_PROXY: 'openai.com' }, null],
  ['… for the WebSocket too', 'wss://api.openai.com/v1/responses', { HTTPS_PROXY: proxy, NO_PROXY: 'openai.com' }, null],
  ['a leading dot is optional: .openai.com matches a subdomain', 'https://api.openai.com/v1', { HTTPS_PROXY: proxy, NO_PROXY: '.openai.com' }, null],
  ['… and the domain itself', 'https://openai.com/v1', { HTTPS_PROXY: proxy, NO_PROXY: '.openai.com' }, null],
  ['a suffix that is not a whole label does not match', 'https://notopenai.com/v1', { HTTPS_PROXY: proxy, NO_PROXY: 'openai.com' }, proxy],
  ['a subdomain entry does not match its parent', 'https://openai.com/v1', { HTTPS_PROXY: proxy, NO_PROXY: 'api.openai.com' }, proxy],
  ['case and trailing dots do not count', 'https://API.OpenAI.com./v1', { HTTPS_PROXY: proxy, NO_PROXY: 'openai.COM.' }, null],
  ['entries are separated by commas and blanks', 'https://api.groq.com/v1', { HTTPS_PROXY: proxy, NO_PROXY: 'localhost, openai.com  groq.com' }, null],
  ['lower-case no_proxy wins over NO_PROXY', 'https://api.openai.com/v1', { HTTPS_PROXY: proxy, no_proxy: 'groq.com', NO_PROXY: 'openai.com' }, proxy],
  ['NO_PROXY applies to ALL_PROXY', 'https://api.openai.com/v1', { ALL_PROXY: proxy, NO_PROXY: 'openai.com' }, null],
  ['* alone matches every host', 'https://api.openai.com/v1', { HTTPS_PROXY: proxy, NO_PROXY: '*' }, null],
  ['* among other entries matches every host', 'https://api.openai.com/v1', { HTTPS_PROXY: proxy, NO_PROXY: 'groq.com,*' }, null],
  ['*.domain reads as .domain', 'https://api.openai.com/v1', { HTTPS_PROXY: proxy, NO_PROXY: '*.openai.com' }, null],
  ['an empty NO_PROXY bypasses nothing', 'https://api.openai.com/v1', { HTTPS_PROXY: proxy, NO_PROXY: '' }, proxy],

  // NO_PROXY: ports.
  ['an entry with the target\'s port matches', 'https://api.openai.com/v1', { HTTPS_PROXY: proxy, NO_PROXY: 'openai.com:443' }, null],
  ['an entry with another port does not', 'https://api.openai.com:8443/v1', { HTTPS_PROXY: proxy, NO_PROXY: 'openai.com:443' }, proxy],
  ['an entry without a port matches every port', 'http://vllm.internal:8000/v1', { HTTP_PROXY: proxy, NO_PROXY: 'vllm.internal' }, null],

  // NO_PROXY: IP literals.
  ['an IPv4 address matches itself', 'http://10.1.2.3:8000/v1', { HTTP_PROXY: proxy, NO_PROXY: '10.1.2.3' }, null],
  ['… and no other', 'http://10.1.2.4:8000/v1', { HTTP_PROXY: proxy, NO_PROXY: '10.1.2.3' }, proxy],
  ['a CIDR network matches its addresses', 'http://10.1.2.3:8000/v1', { HTTP_PROXY: proxy, NO_PROXY: '10.0.0.0/8' }, null],
  ['… and not others', 'http://192.168.1.2:8000/v1', { HTTP_PROXY: proxy, NO_PROXY: '10.0.0.0/8' }, proxy],
  ['an address is not a domain suffix', 'http://110.1.2.3:8000/v1', { HTTP_PROXY: proxy, NO_PROXY: '0.1.2.3' }, proxy],
  ['an IPv4 address with a port', 'http://127.0.0.1:8080/v1', { HTTP_PROXY: proxy, NO_PROXY: '127.0.0.1:8080' }, null],
  ['IPv6 without brackets', 'http://[::1]:8000/v1', { HTTP_PROXY: proxy, NO_PROXY: '::1' }, null],
  ['IPv6 in brackets, with a port', 'http://[::1]:8000/v1', { HTTP_PROXY: proxy, NO_PROXY: '[::1]:8000' }, null],
  ['an IPv6 network', 'http://[fd00::12]:8000/v1', { HTTP_PROXY: proxy, NO_PROXY: 'fd00::/8' }, null],
  ['a name never matches an address', 'http://127.0.0.1:8000/v1', { HTTP_PROXY: proxy, NO_PROXY: 'localhost' }, proxy],
];

describe('proxyForUrl: one proxy decision, as curl reads the environment', () => {
  for (const [what, target, env, expected] of cases) {
    it(`${what}: ${target} with ${JSON.stringify(env)} → ${expected ?? 'direct'}`, () => {
      expect(proxyForUrl(new URL(target), env)?.href.replace(/\/$/, '') ?? null).toBe(expected);
    });
  }

  it('refuses a SOCKS proxy and a malformed one by name rather than going around them', () => {
    const target = new URL('https://api.openai.com/v1');
    expect(() => proxyForUrl(target, { ALL_PROXY: 'socks5://127.0.0.1:1080' })).toThrow(ProxyConfigError);
    expect(() => proxyForUrl(target, { ALL_PROXY: 'socks5://127.0.0.1:1080' })).toThrow(/ALL_PROXY names a socks5 proxy/);
    expect(() => proxyForUrl(target, { HTTPS_PROXY: 'http://[oops' })).toThrow(/HTTPS_PROXY is not a proxy URL/);
    // A host in NO_PROXY never reads the proxy at all.
    expect(proxyForUrl(target, { HTTPS_PROXY: 'socks5://127.0.0.1:1080', NO_PROXY: 'openai.com' })).toBeNull();
  });

  it('knows whether any proxy is configured at all', () => {
    expect(anyProxyConfigured({})).toBe(false);
    expect(anyProxyConfigured({ NO_PROXY: '*', HTTPS_PROXY: '' })).toBe(false);
    expect(anyProxyConfigured({ all_proxy: proxy })).toBe(true);
  });
});
