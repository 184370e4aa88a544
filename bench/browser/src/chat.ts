/**
 * B6's transport floor in the browser: a key pressed on one page goes as one WebSocket message
 * through a raw broadcast server to the other page, which only notes when it arrived.
 */
const query = new URLSearchParams(location.search);
const socket = new WebSocket(query.get('server') ?? '');
const probe = () => (window as unknown as { __benchProbe?: { received(): void } }).__benchProbe;
socket.onopen = () => ((window as unknown as { __benchReady?: boolean }).__benchReady = true);
socket.onmessage = () => probe()?.received();
document.querySelector('textarea')!.addEventListener('keydown', (event) => socket.send(event.key));
