// The shared screen of one terminal, off the gateway's event loop (decision 0033): xterm's
// headless parser takes every byte a terminal prints; on the main thread a flood's parsing
// delayed everyone's keystrokes. Plain JavaScript: a worker gets no TypeScript loader.
import { parentPort, workerData } from 'node:worker_threads';
import xtermHeadless from '@xterm/headless';
import { SerializeAddon } from '@xterm/addon-serialize';

const term = new xtermHeadless.Terminal({ allowProposedApi: true, cols: workerData.cols, rows: workerData.rows, scrollback: workerData.scrollback });
const serializer = new SerializeAddon();
term.loadAddon(serializer);

parentPort.on('message', (message) => {
  if (message.type === 'write') term.write(message.data, () => parentPort.postMessage({ type: 'parsed', chars: message.data.length }));
  else if (message.type === 'resize') term.resize(message.cols, message.rows);
  // After every write before it: the screen at exactly that point of the output.
  else if (message.type === 'screen') term.write('', () => parentPort.postMessage({ type: 'screen', id: message.id, data: serializer.serialize() }));
});
