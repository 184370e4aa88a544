type Labels = Record<string, string | number>;

/** A gauge's value, or one value per label set (each route's breaker). */
export type GaugeReading = number | Array<{ labels: Labels; value: number }>;

const labelKey = (labels: Labels | undefined): string =>
  labels
    ? Object.entries(labels)
        .map(([k, v]) => `${k}="${String(v).replace(/["\\\n]/g, '_')}"`)
        .join(',')
    : '';

/**
 * Counters and gauges in Prometheus text format. Deliberately tiny: the gateway exports a
 * handful of series, and a client library would be a dependency for forty lines.
 */
export class Metrics {
  private readonly counters = new Map<string, Map<string, number>>();
  private readonly gauges = new Map<string, () => GaugeReading>();
  private readonly help = new Map<string, string>();
  private readonly histograms = new Map<string, { bounds: number[]; counts: number[]; sum: number; count: number }>();

  /** Declares a histogram with upper bounds (`le`), ascending. */
  histogram(name: string, bounds: number[], help: string): void {
    this.help.set(name, help);
    this.histograms.set(name, { bounds, counts: bounds.map(() => 0), sum: 0, count: 0 });
  }

  observe(name: string, value: number): void {
    const h = this.histograms.get(name);
    if (!h) throw new Error(`histogram ${name} was not declared`);
    h.sum += value;
    h.count++;
    for (let i = 0; i < h.bounds.length; i++) if (value <= h.bounds[i]!) h.counts[i]!++;
  }

  describe(name: string, help: string): void {
    this.help.set(name, help);
  }

  inc(name: string, labels?: Labels, by = 1): void {
    let series = this.counters.get(name);
    if (!series) this.counters.set(name, (series = new Map()));
    const key = labelKey(labels);
    series.set(key, (series.get(key) ?? 0) + by);
  }

  /** A gauge read when metrics are scraped, so it never drifts from the truth. */
  gauge(name: string, read: () => GaugeReading): void {
    this.gauges.set(name, read);
  }

  counter(name: string, labels?: Labels): number {
    return this.counters.get(name)?.get(labelKey(labels)) ?? 0;
  }

  render(): string {
    const lines: string[] = [];
    const header = (name: string, type: string) => {
      const help = this.help.get(name);
      if (help) lines.push(`# HELP ${name} ${help}`);
      lines.push(`# TYPE ${name} ${type}`);
    };
    for (const [name, series] of this.counters) {
      header(name, 'counter');
      for (const [key, value] of series) lines.push(key ? `${name}{${key}} ${value}` : `${name} ${value}`);
    }
    for (const [name, read] of this.gauges) {
      header(name, 'gauge');
      const reading = read();
      if (typeof reading === 'number') lines.push(`${name} ${reading}`);
      else for (const { labels, value } of reading) lines.push(`${name}{${labelKey(labels)}} ${value}`);
    }
    for (const [name, h] of this.histograms) {
      header(name, 'histogram');
      h.bounds.forEach((bound, i) => lines.push(`${name}_bucket{le="${bound}"} ${h.counts[i]}`));
      lines.push(`${name}_bucket{le="+Inf"} ${h.count}`, `${name}_sum ${h.sum}`, `${name}_count ${h.count}`);
    }
    return lines.join('\n') + '\n';
  }
}
