/** Readable fixed-width tables for the console; the same rows go to the JSON result. */

export type Cell = string | number | boolean | null | undefined;

export interface Table {
  title: string;
  columns: string[];
  rows: Cell[][];
  /** Printed under the table: how to read it, what the peer is. */
  notes?: string[];
}

/** Formats a number with a sensible number of digits for a table cell. */
export function formatCell(value: Cell): string {
  if (value === null || value === undefined) return '–';
  if (typeof value === 'boolean') return value ? 'yes' : 'no';
  if (typeof value === 'string') return value;
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  if (abs >= 100_000) return Math.round(value).toLocaleString('en-US');
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  if (abs === 0) return '0';
  return value.toFixed(3);
}

export function renderTable(table: Table): string {
  const cells = table.rows.map((row) => row.map(formatCell));
  const widths = table.columns.map((column, i) => Math.max(column.length, ...cells.map((row) => (row[i] ?? '').length)));
  const line = (values: string[]) =>
    values.map((value, i) => (i === 0 ? value.padEnd(widths[i]!) : value.padStart(widths[i]!))).join('  ');
  const out = [`\n${table.title}`, line(table.columns), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.map(line)];
  for (const note of table.notes ?? []) out.push(`  · ${note}`);
  return out.join('\n');
}

/** Prints a table to stdout. */
export function printTable(table: Table): void {
  console.log(renderTable(table));
}

/** The same table as GitHub markdown, for bench/README.md. */
export function markdownTable(table: Table): string {
  const row = (values: string[]) => `| ${values.join(' | ')} |`;
  return [row(table.columns), row(table.columns.map(() => '---')), ...table.rows.map((r) => row(r.map(formatCell)))].join('\n');
}
