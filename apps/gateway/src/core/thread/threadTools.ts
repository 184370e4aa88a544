import type { ToolSpec } from '../ports/ModelProvider';
import type { Clock } from '../ports/Clock';
import { searchFiles } from '../search/searchFiles';
import type { CommandOutcome } from '../TerminalHost';

/** What the tools can see and do: the workspace's files, by path, confined to it. */
export interface ToolWorkspace {
  /** Every file path, sorted. */
  paths(): string[];
  /** A file's current text; null when there is no such file. */
  read(path: string): { fileId: string; text: string } | null;
  /** A file's text for a search: no document is made or kept for it (a folder's file no one opened; issue 36). */
  peek?(path: string): string | null;
  rename(from: string, to: string): { ok: true } | { ok: false; message: string };
  remove(path: string): { ok: true } | { ok: false; message: string };
  /** Runs a shell command in the workspace's sandbox, as its owner's policy allows ([P45]). */
  runCommand?(command: string, signal: AbortSignal): Promise<CommandOutcome>;
}

export interface ToolOutcome {
  /** What the model is told. */
  output: string;
  /** The thread's one-line summary of the step ("read src/a.ts"). */
  summary: string;
  ok: boolean;
  path?: string;
  line?: number;
  /** The file text the model now knows (read_file): a later patch is checked against it. */
  read?: { fileId: string; text: string };
}

const maxReadLines = 2000;
const maxReadChars = 200_000;
const maxListed = 2000;
const maxMatches = 100;

const pathParam = (description: string) => ({ type: 'string', description });

export const APPLY_PATCH = 'apply_patch';
export const RUN_COMMAND = 'run_command';

/** The tools offered to models that call tools (Chat Completions `tools`, Responses function tools). */
export const THREAD_TOOLS: ToolSpec[] = [
  {
    name: 'list_files',
    description: 'List the files of the workspace (paths relative to its root), optionally only those under a folder.',
    parameters: { type: 'object', properties: { path: pathParam('A folder to list; omit for the whole workspace.') }, additionalProperties: false },
  },
  {
    name: 'read_file',
    description: 'Read a file, or a range of its lines (1-based, inclusive). Read a file before patching it.',
    parameters: {
      type: 'object',
      properties: { path: pathParam('The file to read.'), start_line: { type: 'integer', minimum: 1 }, end_line: { type: 'integer', minimum: 1 } },
      required: ['path'],
      additionalProperties: false,
    },
  },
  {
    name: 'search',
    description: 'Search the text of every file (or those under `path`) for a string, or a regular expression in RE2 syntax with `regex: true` (as in JavaScript, but without backreferences or lookaround). Returns path:line: text.',
    parameters: {
      type: 'object',
      properties: { query: { type: 'string' }, regex: { type: 'boolean' }, path: pathParam('Only files under this folder.') },
      required: ['query'],
      additionalProperties: false,
    },
  },
  {
    name: APPLY_PATCH,
    description:
      'Edit files with a patch in the apply_patch format: "*** Begin Patch", then per file "*** Update File: path" (hunks: "@@ optional line to find", then lines starting with " " context, "-" removed, "+" added), "*** Add File: path" (every line "+"), or "*** Delete File: path"; "*** Move to: path" after an Update File renames it; end with "*** End Patch". Give 3 lines of context around each change so it is found exactly once.',
    parameters: { type: 'object', properties: { patch: { type: 'string', description: 'The whole patch.' } }, required: ['patch'], additionalProperties: false },
  },
  {
    name: RUN_COMMAND,
    description:
      "Run a shell command (bash) in the workspace's folder, in a sandbox: tests, type checks, builds. No network unless the owner allows it. The people in the workspace may have to approve it first. Returns the exit code and the output (long output is cut in the middle).",
    parameters: { type: 'object', properties: { command: { type: 'string', description: 'The command line, e.g. "npm test".' } }, required: ['command'], additionalProperties: false },
  },
  {
    name: 'rename_file',
    description: 'Rename or move a file or folder.',
    parameters: { type: 'object', properties: { from: { type: 'string' }, to: { type: 'string' } }, required: ['from', 'to'], additionalProperties: false },
  },
  {
    name: 'delete_file',
    description: 'Delete a file or folder.',
    parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false },
  },
];

const under = (path: string, folder: string | undefined) => !folder || folder === '.' || path === folder || path.startsWith(`${folder.replace(/\/+$/, '')}/`);
const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);
const int = (value: unknown): number | undefined => (typeof value === 'number' && Number.isInteger(value) ? value : undefined);

/**
 * Runs one tool call (all but apply_patch, which streams: see PatchStream). Arguments come from
 * the model: anything malformed is an answer telling it so, never an exception. A search yields
 * to I/O through `clock` between slices of its work (searchFiles).
 */
export async function runTool(workspace: ToolWorkspace, name: string, argumentsText: string, clock: Pick<Clock, 'afterIo'>, signal: AbortSignal = new AbortController().signal): Promise<ToolOutcome> {
  let args: Record<string, unknown>;
  try {
    const parsed: unknown = JSON.parse(argumentsText || '{}');
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new Error('not an object');
    args = parsed as Record<string, unknown>;
  } catch {
    return { ok: false, output: `The arguments of ${name} are not a JSON object.`, summary: `${name}: unreadable arguments` };
  }
  switch (name) {
    case 'list_files': {
      const folder = str(args.path);
      const paths = workspace.paths().filter((path) => under(path, folder));
      const shown = paths.slice(0, maxListed);
      const more = paths.length > shown.length ? `\n… and ${paths.length - shown.length} more` : '';
      return { ok: true, output: shown.length ? shown.join('\n') + more : 'No files.', summary: `listed ${folder ? `${folder}/` : 'files'} (${paths.length})` };
    }
    case 'read_file': {
      const path = str(args.path);
      const file = path === undefined ? null : workspace.read(path);
      if (!file || path === undefined) return { ok: false, output: `There is no file "${path ?? ''}". Use list_files to see the paths.`, summary: `read ${path ?? '?'}: no such file` };
      const lines = file.text.split('\n');
      const total = file.text.endsWith('\n') ? lines.length - 1 : lines.length;
      const start = Math.max(1, int(args.start_line) ?? 1);
      let end = Math.min(total, int(args.end_line) ?? total, start + maxReadLines - 1);
      let body = lines.slice(start - 1, end).join('\n');
      if (body.length > maxReadChars) {
        body = body.slice(0, maxReadChars);
        end = start + body.split('\n').length - 1;
      }
      const whole = start === 1 && end >= total;
      const header = whole ? `${path} (${total} lines)` : `${path}, lines ${start}-${end} of ${total}`;
      return {
        ok: true,
        output: `${header}:\n${body}`,
        summary: whole ? `read ${path}` : `read ${path}:${start}-${end}`,
        path,
        line: start,
        read: whole ? file : undefined,
      };
    }
    case 'search': {
      const query = str(args.query);
      if (!query) return { ok: false, output: 'search needs a non-empty query.', summary: 'search: no query' };
      const folder = str(args.path);
      const paths = workspace.paths().filter((path) => under(path, folder));
      const found = await searchFiles({ paths, read: (path) => (workspace.peek ? workspace.peek(path) : (workspace.read(path)?.text ?? null)), afterIo: (fn) => clock.afterIo(fn) }, { query, regex: args.regex === true, maxMatches });
      if (!found.ok) return { ok: false, output: found.message, summary: `search /${query.slice(0, 60)}/: invalid` };
      const { matches, total, stoppedAt } = found;
      const more = total > matches.length ? `\n… ${total - matches.length} more matches; narrow the search.` : '';
      const stopped = stoppedAt === null ? '' : `\nThe search stopped at ${stoppedAt}: it had used its budget. Narrow it with "path" or a more specific query.`;
      return {
        ok: true,
        output: (matches.length ? matches.join('\n') + more : 'No matches.') + stopped,
        summary: `searched "${query.slice(0, 60)}" (${total} match${total === 1 ? '' : 'es'}${stoppedAt === null ? '' : ', stopped early'})`,
      };
    }
    case RUN_COMMAND: {
      const command = str(args.command)?.trim();
      if (!command) return { ok: false, output: 'run_command needs a non-empty "command".', summary: 'run: no command' };
      const shown = command.length > 80 ? `${command.slice(0, 79)}…` : command;
      const outcome: CommandOutcome = workspace.runCommand ? await workspace.runCommand(command, signal) : { ran: false, reason: 'Commands do not run here.' };
      if (!outcome.ran) return { ok: false, output: `The command was not run: ${outcome.reason}`, summary: `not run: ${shown} — ${outcome.reason}` };
      const how = outcome.stopped ? 'stopped' : `exit ${outcome.exitCode}`;
      return {
        ok: !outcome.stopped && outcome.exitCode === 0,
        output: `$ ${command}\n${outcome.output}\n[${how}]`,
        summary: `ran ${shown} → ${how} (approved by ${outcome.approvedBy})`,
      };
    }
    case 'rename_file': {
      const from = str(args.from);
      const to = str(args.to);
      if (!from || !to) return { ok: false, output: 'rename_file needs "from" and "to".', summary: 'rename: missing paths' };
      const result = workspace.rename(from, to);
      return result.ok
        ? { ok: true, output: `Renamed ${from} to ${to}.`, summary: `renamed ${from} → ${to}`, path: to }
        : { ok: false, output: result.message, summary: `rename ${from}: ${result.message}` };
    }
    case 'delete_file': {
      const path = str(args.path);
      if (!path) return { ok: false, output: 'delete_file needs "path".', summary: 'delete: missing path' };
      const result = workspace.remove(path);
      return result.ok ? { ok: true, output: `Deleted ${path}.`, summary: `deleted ${path}` } : { ok: false, output: result.message, summary: `delete ${path}: ${result.message}` };
    }
    default:
      return { ok: false, output: `There is no tool "${name}". The tools are: ${THREAD_TOOLS.map((tool) => tool.name).join(', ')}.`, summary: `unknown tool ${name}` };
  }
}
