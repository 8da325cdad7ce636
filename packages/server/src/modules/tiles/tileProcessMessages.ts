import type { TileMetricsSnapshot } from '../../platform/metrics/tileMetrics.js';
import type { LiveSessionRow, PyramidRow } from '../../platform/tiles/tileRows.js';

/**
 * The messages between the process that serves the API and its tile process (tileProcess.ts,
 * tileProcessChild.ts), as JSON over Node's IPC channel. A connection travels as the channel's
 * handle beside its message, with the bytes read from it and not answered (latin1 text).
 */

/** From the API's process to the tile process. */
export type ToTileProcess =
  /** A connection whose next request is a tile request (its head first in `unread`); with the socket. */
  | { t: 'connection'; unread: string }
  /** The answer to a read of the database (`ask`): the rows, or what went wrong. */
  | { t: 'rows'; id: number; rows?: PyramidRow | LiveSessionRow[] | null; error?: string }
  /** A scrape of the metrics port: the tile counters, please. */
  | { t: 'metrics'; id: number };

/** From the tile process to the API's process. */
export type FromTileProcess =
  /** Answering tiles from now on; `how`: the fast path's modes, for the log. */
  | { t: 'ready'; how: string }
  /** The fast path is off here (its self-test failed): tiles stay in the API's process. */
  | { t: 'unavailable'; reason: string }
  /** The database reads the tile server makes (platform/tiles/tileRows.ts). */
  | { t: 'image'; id: number; imageId: number }
  | { t: 'sessions'; id: number; ref?: string }
  /** A connection whose next request is not a plain tile request (first in `unread`); with the socket. */
  | { t: 'back'; unread: string }
  | { t: 'metrics'; id: number; snapshot: TileMetricsSnapshot | null };
