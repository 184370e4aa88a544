/**
 * The demo workspace every fresh gateway seeds once: a small TypeScript project with
 * cross-file imports, so diagnostics, navigation and the AI have something real to work on.
 */
export const demoWorkspaceFiles: Record<string, string> = {
  'README.md': `# Tally

A tiny task tracker, the demo workspace of Flint.

- \`src/model/task.ts\` — the Task type and helpers
- \`src/store/taskStore.ts\` — an in-memory store with change events
- \`src/format.ts\` — formatting for the terminal
- \`src/index.ts\` — wires it together

Share this workspace with the Share button; everyone on the link edits the same files live.
`,
  'package.json': `{
  "name": "tally",
  "version": "0.1.0",
  "type": "module",
  "main": "src/index.ts"
}
`,
  'tsconfig.json': `{
  "compilerOptions": {
    "target": "ES2022",
    "module": "ESNext",
    "moduleResolution": "bundler",
    "strict": true
  },
  "include": ["src"]
}
`,
  'src/model/task.ts': `export type Priority = 'low' | 'normal' | 'high';

export interface Task {
  id: number;
  title: string;
  done: boolean;
  priority: Priority;
  createdAt: Date;
}

let nextId = 1;

export function createTask(title: string, priority: Priority = 'normal'): Task {
  const trimmed = title.trim();
  if (trimmed.length === 0) throw new Error('A task needs a title.');
  return { id: nextId++, title: trimmed, done: false, priority, createdAt: new Date() };
}

export function toggle(task: Task): Task {
  return { ...task, done: !task.done };
}

const weight: Record<Priority, number> = { high: 0, normal: 1, low: 2 };

export function byPriority(a: Task, b: Task): number {
  return weight[a.priority] - weight[b.priority] || a.id - b.id;
}
`,
  'src/store/taskStore.ts': `import { byPriority, createTask, toggle, type Priority, type Task } from '../model/task';

type Listener = (tasks: readonly Task[]) => void;

export class TaskStore {
  private tasks: Task[] = [];
  private listeners = new Set<Listener>();

  add(title: string, priority?: Priority): Task {
    const task = createTask(title, priority);
    this.tasks = [...this.tasks, task];
    this.emit();
    return task;
  }

  toggle(id: number): void {
    this.tasks = this.tasks.map((task) => (task.id === id ? toggle(task) : task));
    this.emit();
  }

  remove(id: number): void {
    this.tasks = this.tasks.filter((task) => task.id !== id);
    this.emit();
  }

  get open(): readonly Task[] {
    return this.tasks.filter((task) => !task.done).sort(byPriority);
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(): void {
    for (const listener of this.listeners) listener(this.tasks);
  }
}
`,
  'src/format.ts': `import type { Task } from './model/task';

const marks = { high: '!!', normal: ' !', low: '  ' } as const;

export function formatTask(task: Task): string {
  const box = task.done ? '[x]' : '[ ]';
  return \`\${box} \${marks[task.priority]} #\${task.id} \${task.title}\`;
}

export function formatList(tasks: readonly Task[]): string {
  if (tasks.length === 0) return 'Nothing to do.';
  return tasks.map(formatTask).join('\\n');
}
`,
  'src/index.ts': `import { formatList } from './format';
import { TaskStore } from './store/taskStore';

const store = new TaskStore();
store.subscribe((tasks) => console.log(\`\${tasks.length} tasks\`));

store.add('Write the release notes', 'high');
store.add('Review the share-link PR');
const chore = store.add('Water the plants', 'low');
store.toggle(chore.id);

console.log(formatList(store.open));
`,
};
