/** Test data for the agent thread's tests: two files and a patch that changes both. */

export const taskTs = 'export interface Task {\n  id: string;\n  title: string;\n}\n';
export const formatTs = "import type { Task } from './task';\n\nexport function formatTask(task: Task): string {\n  return task.title;\n}\n";

/** Adds `dueDate` to Task (+1) and shows it in formatTask (+1 −1). */
export const twoFilePatch = `*** Begin Patch
*** Update File: src/task.ts
@@ export interface Task {
   id: string;
   title: string;
+  dueDate?: string;
 }
*** Update File: src/format.ts
@@ export function formatTask(task: Task): string {
-  return task.title;
+  return task.dueDate ? \`\${task.title} (due \${task.dueDate})\` : task.title;
 }
*** End Patch
`;
