/**
 * One replay of `breaker simulate|explain`: the records of a log (a file's
 * or the platform's) fed to a {@linkcode Simulation}, with only what the
 * command asked for paid for: the window witness for `explain` and the
 * platform's findings, the notification spill for `--notifications`, the
 * buffer for `--sort`. A plain replay is the simulation alone.
 *
 * @module
 */

import {
  type BreakerConfig,
  copyRecord,
  type LogRecord,
  notificationRecord,
  Simulation,
  type SimulationResult,
} from "../webhooks/mod.ts";
import { NotificationSpill } from "./notification_spill.ts";
import { WindowWitness } from "./window_witness.ts";

/** What a {@linkcode Replay} keeps besides the simulation. */
export interface ReplayOptions {
  /** The policies: the first is the one told; the others are compared or tried. */
  policies: BreakerConfig[];
  /** Keep a line per notification (the final ones go to a spill file). */
  notifications?: boolean;
  /** Keep each webhook's rate series for a plot. */
  plot?: boolean;
  /** Keep what the window held at each suspension (`explain`, the platform's findings). */
  witness?: boolean;
  /** Buffer every record and replay them in time order at {@linkcode Replay.finish}. */
  sort?: boolean;
  /** Told once when the times look like epoch seconds. */
  onWarning?: (text: string) => void;
}

/**
 * See the module doc. {@linkcode Replay.feed} each record (the reader's
 * reused object is fine), then {@linkcode Replay.finish}; always
 * {@linkcode Replay.close}.
 *
 * @example
 * ```ts
 * import { DEFAULT_BREAKER_CONFIG, readDeliveryLog } from "../webhooks/mod.ts";
 * import { fileChunks } from "./file_chunks.ts";
 * const replay = await Replay.create({ policies: [DEFAULT_BREAKER_CONFIG] });
 * try {
 *   await readDeliveryLog(fileChunks("log.ndjson"), replay.feed);
 *   const result = replay.finish();
 *   console.log(result.policies[0].suspensions);
 * } finally {
 *   replay.close();
 * }
 * ```
 */
export class Replay {
  /** What the window held at each suspension, when asked for. */
  readonly witness: WindowWitness | null;
  /** The notifications that reached their final status, when asked for. */
  readonly spill: NotificationSpill | null;
  /** Takes one record (bound: pass it as a callback). */
  readonly feed: (r: LogRecord) => void;
  readonly #sim: Simulation;
  readonly #sorted: LogRecord[] | null;
  readonly #take: (r: LogRecord) => void;

  private constructor(options: ReplayOptions, spill: NotificationSpill | null) {
    const witness = options.witness ? new WindowWitness(options.policies[0].windowMs) : null;
    this.witness = witness;
    this.spill = spill;
    const sim = new Simulation({
      policies: options.policies,
      notifications: spill !== null,
      plot: options.plot === true,
      onNotificationFinal: spill === null
        ? undefined
        : (n, line) => spill.add(line, JSON.stringify(notificationRecord(n))),
      onEvent: witness === null ? undefined : (i, e) => witness.onEvent(i, e),
    });
    this.#sim = sim;
    let warned = options.onWarning === undefined;
    const take = (r: LogRecord) => {
      if (!warned && r.time > 0 && r.time < 1e11) {
        warned = true;
        options.onWarning!(
          `line ${r.line}: time ${r.time} is in ${
            new Date(r.time).getUTCFullYear()
          }; sentTime is epoch milliseconds, not seconds.`,
        );
      }
      witness?.before(r);
      sim.feed(r);
    };
    this.#take = take;
    const sorted: LogRecord[] | null = options.sort ? [] : null;
    this.#sorted = sorted;
    this.feed = sorted !== null ? (r) => sorted.push(copyRecord(r)) : take;
  }

  /** A replay; makes the spill file when `notifications` (a BreakerError when it cannot). */
  static async create(options: ReplayOptions): Promise<Replay> {
    const spill = options.notifications ? await NotificationSpill.create() : null;
    return new Replay(options, spill);
  }

  /** Replays what `sort` buffered, then ends the simulation. */
  finish(): SimulationResult {
    if (this.#sorted !== null) {
      this.#sorted.sort((x, y) => x.time - y.time); // stable: ties keep input order
      for (const r of this.#sorted) this.#take(r);
      this.#sorted.length = 0;
    }
    return this.#sim.finish();
  }

  /** Deletes the spill file. */
  close(): void {
    this.spill?.close();
  }
}
