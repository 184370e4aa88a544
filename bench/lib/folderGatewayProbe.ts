/**
 * Preloaded (`--import`) into `npm start`'s gateway (apps/gateway/src/main.ts) by
 * FolderGateway.ts, so B12 measures the real entry point and still reads its memory
 * after a full GC: it answers `{op: 'stats'}` over the IPC channel with process.memoryUsage()
 * after two collections (node --expose-gc). With BENCH_CPU_PROF=1 it profiles the process from
 * before main.ts loads until `{op: 'profileStop', path}`. It changes nothing else in the process.
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';

const profiling = process.env.BENCH_CPU_PROF === '1';
const inspector = profiling ? new Session() : null;
const post = (method: string, params?: object) =>
  new Promise<unknown>((resolve, reject) => inspector!.post(method, params, (error, result) => (error ? reject(error) : resolve(result))));

if (inspector) {
  inspector.connect();
  await post('Profiler.enable');
  await post('Profiler.setSamplingInterval', { interval: 200 });
  await post('Profiler.start');
}

process.on('message', (message: { id: number; op: string; path?: string }) => {
  const reply = (value: unknown) => process.send?.({ id: message.id, value });
  if (message.op === 'stats') {
    const gc = (globalThis as { gc?: () => void }).gc;
    // Twice: the first pass can leave garbage that only finalisers freed.
    gc?.();
    gc?.();
    reply({ memory: process.memoryUsage(), cpu: process.cpuUsage() });
  } else if (message.op === 'profileStop' && inspector && message.path) {
    void post('Profiler.stop').then((result) => {
      writeFileSync(message.path!, JSON.stringify((result as { profile: unknown }).profile));
      inspector.disconnect();
      reply(message.path);
    });
  } else reply(null);
});
// The IPC channel must not keep the gateway alive on its own, nor outlive the runner.
process.channel?.unref();
process.on('disconnect', () => process.exit(0));
