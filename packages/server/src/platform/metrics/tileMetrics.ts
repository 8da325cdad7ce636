/** A metric family as the registry prints it (the shape prom-client's own get() returns). */
export interface ExposedMetric {
  name: string;
  help: string;
  type: 'counter' | 'histogram' | 'gauge';
  aggregator: 'sum';
  values: { metricName: string; labels: Record<string, string | number>; value: number }[];
}

/** Upper bounds (seconds) of the tile latency buckets: a tile from the page cache takes microseconds. */
export const TILE_SECONDS_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1];

const STATUS_CLASSES = ['2xx', '3xx', '4xx', '5xx'] as const;

/**
 * Counters of the tile range cache (modules/tiles/tileRangeCache.ts: tiles read from object
 * storage, kept in memory), plain numbers bumped once per tile and read at scrape time.
 */
export interface TileRangeCacheCounters {
  /** Tiles answered from memory. */
  hits: number;
  /** Tiles not in memory: each started a ranged GET, or joined one under way (`joined`). */
  misses: number;
  /** Misses that waited for a GET another request had started for the same range (single-flight). */
  joined: number;
  /** Ranged GETs of tiles that failed (nothing is remembered: the next request reads again). */
  failures: number;
  /** Entries dropped to stay within the bound (least recently used first). */
  evictions: number;
}

/** What the metrics read of the tile range cache at scrape time. */
export interface TileRangeCacheStats {
  /** TILE_CACHE_MB in bytes (0: off). */
  readonly maxBytes: number;
  /** Bytes of tiles held. */
  readonly bytes: number;
  /** Tiles held. */
  readonly size: number;
  readonly counters: TileRangeCacheCounters;
}

/** The counters of a tile process, as the process that started it reads them at scrape (over IPC). */
export interface TileMetricsSnapshot {
  byClass: number[];
  buckets: number[];
  count: number;
  sumSeconds: number;
  rangeCache: { maxBytes: number; bytes: number; size: number; counters: TileRangeCacheCounters } | null;
}

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
  /** The tile range cache of a tile process on object storage (its counters are read at scrape); null otherwise. */
  rangeCache: TileRangeCacheStats | null = null;
  /** 1 when tiles are answered on the connections (the fast path's self-test passed), else 0. */
  fastPath = 0;
  /**
   * The tile process this process started (`npm start`, TILE_PROCESS=separate: tileProcess.ts):
   * whether it answers tiles now (1), how often it was started again after it ended, and how its
   * counters are read at scrape (null: no such process, or it does not answer).
   */
  readonly tileProcess = {
    serving: 0,
    restarts: 0,
    read: null as (() => Promise<TileMetricsSnapshot | null>) | null,
  };

  /** The counters as plain numbers (what a tile process sends its parent). */
  snapshot(): TileMetricsSnapshot {
    const cache = this.rangeCache;
    return {
      byClass: [...this.byClass],
      buckets: [...this.buckets],
      count: this.count,
      sumSeconds: this.sumSeconds,
      rangeCache: cache
        ? { maxBytes: cache.maxBytes, bytes: cache.bytes, size: cache.size, counters: { ...cache.counters } }
        : null,
    };
  }

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

/**
 * The exposition of the tile counters: what prom-client's get() returns for a counter and a
 * histogram. With a tile process (`child`: its counters, read at this scrape), each figure is the
 * sum of both processes' (a connection is answered by one or the other); its range cache is the
 * one reported, as it holds the tiles of every connection it has.
 */
export function tileMetricObjects(tiles: TileMetrics, child: TileMetricsSnapshot | null = null): ExposedMetric[] {
  const requests: ExposedMetric['values'] = STATUS_CLASSES.map((statusClass, i) => ({
    metricName: 'lamina_tile_requests_total',
    labels: { status_class: statusClass },
    value: (tiles.byClass[i] ?? 0) + (child?.byClass[i] ?? 0),
  }));
  const histogram: ExposedMetric['values'] = [];
  let cumulative = 0;
  TILE_SECONDS_BUCKETS.forEach((le, i) => {
    cumulative += (tiles.buckets[i] ?? 0) + (child?.buckets[i] ?? 0);
    histogram.push({ metricName: 'lamina_tile_duration_seconds_bucket', labels: { le }, value: cumulative });
  });
  const count = tiles.count + (child?.count ?? 0);
  histogram.push(
    { metricName: 'lamina_tile_duration_seconds_bucket', labels: { le: '+Inf' }, value: count },
    { metricName: 'lamina_tile_duration_seconds_sum', labels: {}, value: tiles.sumSeconds + (child?.sumSeconds ?? 0) },
    { metricName: 'lamina_tile_duration_seconds_count', labels: {}, value: count },
  );
  const cache = child?.rangeCache ?? tiles.rangeCache;
  const counter = (name: string, help: string, value: number): ExposedMetric => ({
    name,
    help,
    type: 'counter',
    values: [{ metricName: name, labels: {}, value }],
    aggregator: 'sum',
  });
  const gauge = (name: string, help: string, value: number): ExposedMetric => ({
    ...counter(name, help, value),
    type: 'gauge',
  });
  const cacheFamilies: ExposedMetric[] = [
    counter(
      'lamina_tile_cache_hits_total',
      'Tiles from object storage answered from the tile range cache (TILE_CACHE_MB)',
      cache?.counters.hits ?? 0,
    ),
    counter(
      'lamina_tile_cache_misses_total',
      'Tiles from object storage not in the tile range cache: a ranged GET, or waiting for the same one under way',
      cache?.counters.misses ?? 0,
    ),
    counter(
      'lamina_tile_cache_evictions_total',
      'Tiles dropped from the tile range cache to stay within TILE_CACHE_MB (least recently used first)',
      cache?.counters.evictions ?? 0,
    ),
    gauge('lamina_tile_cache_bytes', 'Bytes of tiles held by the tile range cache', cache?.bytes ?? 0),
    gauge(
      'lamina_tile_cache_max_bytes',
      'The bound of the tile range cache (TILE_CACHE_MB; 0: off)',
      cache?.maxBytes ?? 0,
    ),
  ];
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
    ...cacheFamilies,
    gauge(
      'lamina_tile_fast_path',
      "1: tiles answered on the connections (TILE_HTTP=connections, the start-up self-test passed); 0: through Node's HTTP server (TILE_HTTP=http, the self-test failed: the log says why, or no tiles role)",
      tiles.fastPath,
    ),
    gauge(
      'lamina_tile_process',
      'npm start and other processes with the tiles role beside another (TILE_PROCESS=separate): 1 while the tile process they started answers the tile connections; 0 when tiles are answered in this process (none started, not ready yet, or ended and being started again)',
      tiles.tileProcess.serving,
    ),
    counter(
      'lamina_tile_process_restarts_total',
      'Times the tile process ended without being asked to and was started again (tiles answered in this process meanwhile)',
      tiles.tileProcess.restarts,
    ),
  ];
}
