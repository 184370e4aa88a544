// Monaco ships no types for its worker-side modules; the parts Flint's TypeScript worker uses.

declare module 'monaco-editor/languages/features/typescript/tsWorker' {
  /** What Monaco's worker host gives a language worker: the models mirrored from the page. */
  export interface WorkerContext {
    getMirrorModels(): Array<{ uri: { path: string; toString(skipEncoding?: boolean): string }; version: number; getValue(): string }>;
  }
  /** A diagnostic as the worker sends it (TypeScript's, its file left out). */
  export interface WorkerDiagnostic {
    start?: number;
    length?: number;
    code: number;
    /** 0 warning, 1 error, 2 suggestion, 3 message. */
    category: number;
    messageText: string | { messageText: string; next?: Array<WorkerDiagnostic['messageText']> };
  }
  export class TypeScriptWorker {
    constructor(context: WorkerContext, createData: unknown);
    getScriptVersion(fileName: string): string;
    getScriptSnapshot(fileName: string): unknown;
    /** The text of a model, a bundled lib file or an extra lib; undefined for anything else. */
    _getScriptText(fileName: string): string | undefined;
    getSyntacticDiagnostics(fileName: string): Promise<WorkerDiagnostic[]>;
    getSemanticDiagnostics(fileName: string): Promise<WorkerDiagnostic[]>;
  }
}

declare module 'monaco-editor/internal/common/initialize' {
  import type { WorkerContext } from 'monaco-editor/languages/features/typescript/tsWorker';
  export function initialize(create: (context: WorkerContext, createData: unknown) => object): void;
}

declare module 'monaco-editor/languages/features/typescript/lib/typescriptServices' {
  interface Node {
    kind: number;
    pos: number;
    end: number;
  }
  /** The TypeScript compiler bundled with Monaco (only what Flint's tests walk trees with). */
  export const typescript: { forEachChild(node: Node, visit: (child: Node) => void): void };
}
