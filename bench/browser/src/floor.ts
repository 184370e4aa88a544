import { params, streamFromRelay } from './relay';

/** The transport floor: the stream reaches the page and goes nowhere. */
const { relay } = params();
const status = document.getElementById('status')!;
let received = 0;
window.__benchStart = async (tokens) => {
  status.textContent = 'streaming';
  await streamFromRelay(relay, tokens, () => void received++);
  status.textContent = `done: ${received} tokens`;
};
