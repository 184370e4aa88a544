import type { ModelEvent } from '../core/ports/ModelProvider';
import { RECORDING_FORMAT, RECORDING_VERSION, type RecordedFrame, type Recording } from '../recording/Recording';

/**
 * The scripted agent turn of the demo workspace (issue 37): what a real model does with the
 * prompt below on the seed's files — read two files, patch both, sum up — written by hand and
 * timed like a model streaming ~70 tokens a second. The agent panel offers it as a replay,
 * labelled so, before any model is connected; it plays through the thread engine like a live
 * turn (ReplayProvider), so its edits stream into the files with the agent's cursor and wait
 * for review.
 */
const prompt = 'Give tasks an optional due date, and mark overdue ones in the list.';

const patch = `*** Begin Patch
*** Update File: src/model/task.ts
@@
   priority: Priority;
   createdAt: Date;
+  /** When it should be done by; none by default. */
+  dueDate?: Date;
 }
@@
-export function createTask(title: string, priority: Priority = 'normal'): Task {
+export function createTask(title: string, priority: Priority = 'normal', dueDate?: Date): Task {
   const trimmed = title.trim();
   if (trimmed.length === 0) throw new Error('A task needs a title.');
-  return { id: nextId++, title: trimmed, done: false, priority, createdAt: new Date() };
+  return { id: nextId++, title: trimmed, done: false, priority, createdAt: new Date(), dueDate };
 }
+
+/** Open, with a due date in the past. */
+export function isOverdue(task: Task, now: Date = new Date()): boolean {
+  return !task.done && task.dueDate !== undefined && task.dueDate.getTime() < now.getTime();
+}
*** Update File: src/format.ts
@@
-import type { Task } from './model/task';
+import { isOverdue, type Task } from './model/task';
@@
   const box = task.done ? '[x]' : '[ ]';
-  return \`\${box} \${marks[task.priority]} #\${task.id} \${task.title}\`;
+  const late = isOverdue(task) ? ' (overdue)' : '';
+  return \`\${box} \${marks[task.priority]} #\${task.id} \${task.title}\${late}\`;
 }
*** End Patch
`;

/** Milliseconds per streamed piece of ~4 characters (about one token): ~70 tokens a second. */
const pieceMs = 14;
const pieceChars = 4;

function pieces(text: string): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; i += pieceChars) out.push(text.slice(i, i + pieceChars));
  return out;
}

type Step = { text: string } | { call: string; args: string };

function answers(script: Step[][], firstTokenMs = 350): RecordedFrame[] {
  const frames: RecordedFrame[] = [];
  let t = 0;
  script.forEach((steps, answer) => {
    t += firstTokenMs;
    const push = (event: ModelEvent, gapMs = pieceMs) => {
      frames.push({ t, ch: 'model', answer, event });
      t += gapMs;
    };
    let calls = 0;
    for (const step of steps) {
      if ('text' in step) {
        for (const piece of pieces(step.text)) push({ type: 'text', text: piece });
        continue;
      }
      const index = calls++;
      push({ type: 'tool-call', index, id: `call_demo_${answer}_${index}`, name: step.call });
      for (const piece of pieces(step.args)) push({ type: 'tool-call-delta', index, arguments: piece });
    }
    push({ type: 'done', finishReason: calls > 0 ? 'tool_calls' : 'stop' }, 0);
  });
  return frames;
}

export const demoTurnRecording: Recording = {
  format: RECORDING_FORMAT,
  version: RECORDING_VERSION,
  title: 'Due dates for Tally',
  prompt,
  label: 'replay · scripted demo turn',
  frames: answers([
    [
      { text: "I'll look at the task model and the formatter first." },
      { call: 'read_file', args: JSON.stringify({ path: 'src/model/task.ts' }) },
      { call: 'read_file', args: JSON.stringify({ path: 'src/format.ts' }) },
    ],
    [
      { text: 'Adding `dueDate` to `Task` and `createTask`, an `isOverdue` helper, and an overdue mark in `formatTask`.' },
      { call: 'apply_patch', args: JSON.stringify({ patch }) },
    ],
    [
      {
        text:
          'Done. `Task` has an optional `dueDate`, `createTask` takes it as a third argument, and `isOverdue(task)` says whether an open task is past it. ' +
          '`formatTask` appends "(overdue)" to such tasks. Existing calls keep working: the date is optional.\n\nReview each file below, or accept or reject the whole turn.',
      },
    ],
  ]),
};
