/** A metric family as the registry prints it (the shape prom-client's own get() returns). */
export interface ExposedMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram';
  aggregator: 'sum';
  values: { metricName: string; labels: Record<string, string | number>; value: number }[];
}

/** Upper bounds (seconds) of the tile latency buckets: a tile from the page cache takes microseconds. */
export const TILE_SECONDS_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;

/**
 * Tile counts and latency, kept in plain typed arrays: recording one tile is a few additions and a
 * short scan of the bucket bounds, with no allocation, labels or hashing (the tile fast path answers
 * tens of thousands of tiles a second; prom-client's own observe() hashes its labels every time).
 * The registry reads them at scrape time (tileMetricObjects).
 */
export class TileMetrics {
  /** Answers by status class (index: status / 100 − 2). */
  readonly byClass = new Float64Array(STATUS_CLASSES.length);
  /** Answers per latency bucket (not cumulative; the last one is above every bound). */
  readonly buckets = new Float64Array(TILE_SECONDS_BUCKETS.length + 1);
  count = 0;
  sumSeconds = 0;

  record(status: number, milliseconds: number): void {
    const seconds = milliseconds / 1000;
    const index = ((status / 100) | 0) - 2;
    if (index >= 0 && index < STATUS_CLASSES.length) this.byClass[index] = (this.byClass[index] ?? 0) + 1;
    let b = 0;
    while (b < TILE_SECONDS_BUCKETS.length && seconds > (TILE_SECONDS_BUCKETS[b] as number)) b += 1;
    this.buckets[b] = (this.buckets[b] ?? 0) + 1;
    this.count += 1;
    this.sumSeconds += seconds;
  }
}

/** The exposition of the tile counters: what prom-client's get() returns for a counter and a histogram. */
export function tileMetricObjects(tiles: TileMetrics): ExposedMetric[] {
  const requests: ExposedMetric['values'] = STATUS_CLASSES.map((statusClass, i) => ({
    metricName: 'lamina_tile_requests_total',
    labels: { status_class: statusClass },
    value: tiles.byClass[i] ?? 0,
  }));
  const histogram: ExposedMetric['values'] = [];
  let cumulative = 0;
  TILE_SECONDS_BUCKETS.forEach((le, i) => {
    cumulative += tiles.buckets[i] ?? 0;
    histogram.push({ metricName: 'lamina_tile_duration_seconds_bucket', labels: { le }, value: cumulative });
  });
  histogram.push(
    { metricName: 'lamina_tile_duration_seconds_bucket', labels: { le: '+Inf' }, value: tiles.count },
    { metricName: 'lamina_tile_duration_seconds_sum', labels: {}, value: tiles.sumSeconds },
    { metricName: 'lamina_tile_duration_seconds_count', labels: {}, value: tiles.count },
  );
  return [
    {
      name: 'lamina_tile_requests_total',
      help: 'Tile requests answered by the tile responder (every path: on the connection, Node HTTP, Fastify), by status class',
      type: 'counter',
      values: requests,
      aggregator: 'sum',
    },
    {
      name: 'lamina_tile_duration_seconds',
      help: 'Time to produce a tile answer (token check, index lookup, read), from the request parsed to the answer ready to send',
      type: 'histogram',
      values: histogram,
      aggregator: 'sum',
    },
  ];
}
