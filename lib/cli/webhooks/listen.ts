/**
 * `service webhooks listen`: a local webhook receiver for development, in the spirit of
 * `stripe listen`; its help says what it prints, answers and checks. Beyond the help: it
 * listens on 127.0.0.1 only; the app is reached as `forward.ts` says; a `--record` line is
 * `{"webhookId","notificationId","sentTime","responseCode","duration"}`, `sentTime` being the
 * arrival time, and lines are written in arrival order (what the reader needs), whatever order
 * the answers finish in; a delivery is answered the same whether its signature verified or not
 * (the printed line says which, and why not).
 *
 * @module
 */

import { formatFlag, leaf } from "../command.ts";
import { CliError, UsageError } from "../errors.ts";
import { whenStopped } from "../stop_signals.ts";
import { shown, writeAll } from "../output.ts";
import { checkEndpointUrl } from "./common.ts";
import { jwksFlags, jwksSource } from "./jwks_source.ts";
import {
  type BoundedServer,
  DEFAULT_BODY_TIMEOUT_MS,
  serveBounded,
} from "../../core/bounded_server.ts";
import { BodyRefused, readBody } from "../../core/read_body.ts";

/** Largest delivery body accepted: 1 MiB (a platform delivery is a few KiB); 413 beyond. */
export const MAX_DELIVERY_BYTES = 1024 * 1024;

/** One delivery as the listener saw it (the `--format ndjson` line, `event: "delivery"`). */
export interface DeliveryLine {
  /** Always "delivery". */
  event: "delivery";
  /** Arrival time, ISO 8601. */
  time: string;
  /** From the body; "" when it is not a delivery's JSON. */
  eventType: string;
  /** From the body. */
  resourceId: string | null;
  /** The body's `id`. */
  notificationId: string | null;
  /** The body's `webhookId`. */
  webhookId: string | null;
  /** Whether the signature verified. */
  signatureVerified: boolean;
  /** Why not, when it did not (a reason code and a message). */
  signatureProblem?: string;
  /** The status the platform got. */
  status: number;
  /** ms from arrival to answer. */
  duration: number;
  /** Why the app was not reached, with --forwardTo. */
  forwardProblem?: string;
}

function field(json: unknown, name: string): string | null {
  const v = (json as Record<string, unknown> | null)?.[name];
  return typeof v === "string" ? v : null;
}

/** The `listen` verb. */
export const listenCommand = leaf({
  summary: "Run a local receiver: print each delivery, forward it to your app, record attempts.",
  usage:
    "[--port P] [--forwardTo URL | --respond STATUS] [--record FILE] [--jwks URL|FILE] [--apiBaseUrl URL]",
  description:
    "Prints its address (http://127.0.0.1:PORT/) as the first line of standard output, then one\n" +
    "line per delivery; runs until Ctrl-C. With --forwardTo, the platform gets the app's status\n" +
    "(502 when the app is unreachable, 504 when it does not answer in --forwardTimeout);\n" +
    "otherwise --respond STATUS (default 200). --record appends breaker simulate input lines.\n" +
    "Signatures: --jwks, else <--apiBaseUrl's origin>/.well-known/jwks.json, else the build's.",
  flags: {
    ...formatFlag,
    port: {
      type: "integer",
      default: 0,
      min: 0,
      max: 65535,
      description: "Port on 127.0.0.1 (0: a free one).",
    },
    forwardTo: {
      type: "string",
      placeholder: "URL",
      description: "Pass each delivery on to this URL; answer with its status.",
    },
    respond: {
      type: "integer",
      min: 100,
      max: 599,
      placeholder: "STATUS",
      description: "Answer every delivery with this status (default 200).",
    },
    record: {
      type: "string",
      placeholder: "FILE",
      description: "Append each attempt as a breaker simulate input line.",
    },
    forwardTimeout: {
      type: "duration",
      default: 30_000,
      min: 100,
      max: 600_000,
      placeholder: "DURATION",
      description: "With --forwardTo: how long to wait for the app (then 504).",
    },
    ...jwksFlags,
  },
  examples: [
    "service webhooks listen --port 4000 --forwardTo http://127.0.0.1:3000/hook --apiBaseUrl $BASE",
    "service webhooks listen --respond 503 --record attempts.ndjson --format ndjson",
  ],
  async run({ flags }, ctx) {
    if (flags.forwardTo !== undefined && flags.respond !== undefined) {
      throw new UsageError(
        "--forwardTo and --respond exclude each other: the answer is the app's, or --respond's.",
      );
    }
    const forwardTo = flags.forwardTo !== undefined
      ? checkEndpointUrl(flags.forwardTo, "--forwardTo")
      : undefined;
    const respond = flags.respond ?? 200;
    const source = await jwksSource(flags.jwks, flags.apiBaseUrl);
    const { verifyWebhookSignatureWithKeys, SIGNATURE_HEADER } = await import(
      "../../webhooks/signature.ts"
    );
    const { forwardDelivery } = await import("./forward.ts");
    const record = flags.record === undefined
      ? undefined
      : await Deno.open(flags.record, { append: true, create: true, mode: 0o600 }).catch((e) => {
        throw new UsageError(`Cannot open --record ${JSON.stringify(flags.record)}: ${e.message}.`);
      });
    const out = ctx.out;
    // the printer writes one at a time, in call order; record lines go in arrival order
    const print = (text: string) => void out.write(text).catch(() => {});
    let recording: Promise<void> = Promise.resolve();

    const handler = (req: Request): Promise<Response> => {
      const answered = answer(req, Date.now());
      if (record) {
        // in arrival order: each line waits for the one of the delivery before
        recording = recording.then(async () => {
          const { recorded } = await answered;
          if (recorded !== null) await writeAll(record, recorded);
        }).catch(() => {});
      }
      return answered.then((a) => a.response);
    };

    /** The answer to one request, and its --record line (none for a request that is not POST). */
    const answer = async (
      req: Request,
      arrived: number,
    ): Promise<{ response: Response; recorded: string | null }> => {
      let raw: Uint8Array;
      try {
        // the body's time to arrive: the server's, 10 s; 408 beyond
        raw = await readBody(req, {
          maxBytes: MAX_DELIVERY_BYTES,
          timeoutMs: DEFAULT_BODY_TIMEOUT_MS,
        });
      } catch (e) {
        if (!(e instanceof BodyRefused)) throw e;
        void out.log(`refused a request: ${e.message}`);
        const headers = e.status === 408 ? { connection: "close" } : undefined;
        return {
          response: new Response(e.message + "\n", { status: e.status, headers }),
          recorded: null,
        };
      }
      let json: unknown = null;
      try {
        json = JSON.parse(new TextDecoder().decode(raw));
      } catch { /* not JSON: printed with empty fields */ }
      const check = verifyWebhookSignatureWithKeys(
        raw,
        req.headers.get(SIGNATURE_HEADER),
        source.keys,
      );
      const post = req.method === "POST";
      const forwarded = post && forwardTo
        ? await forwardDelivery(forwardTo, req.headers, raw, flags.forwardTimeout)
        : undefined;
      const status = post ? forwarded?.status ?? respond : 405;
      const forwardProblem = forwarded?.problem;
      const duration = Date.now() - arrived;
      const webhookId = field(json, "webhookId");
      const notificationId = field(json, "id");
      const recorded = post
        ? JSON.stringify({
          webhookId: webhookId ?? "unknown",
          notificationId: notificationId ?? undefined,
          sentTime: new Date(arrived).toISOString(),
          responseCode: status,
          duration,
        }) + "\n"
        : null;
      void check.then((c) => {
        const line: DeliveryLine = {
          event: "delivery",
          time: new Date(arrived).toISOString(),
          eventType: field(json, "eventType") ?? "",
          resourceId: field(json, "resourceId"),
          notificationId,
          webhookId,
          signatureVerified: c.ok,
          ...(c.ok ? {} : { signatureProblem: `${c.reason}: ${c.message}` }),
          status,
          duration,
          ...(forwardProblem ? { forwardProblem } : {}),
        };
        if (out.format === "table") {
          print(
            shown(
              [
                line.time,
                line.eventType || "-",
                line.resourceId ?? "-",
                line.notificationId ?? "-",
                c.ok ? "signature ok" : `signature INVALID (${c.reason})`,
                `-> ${status}`,
                `${duration} ms`,
              ].join("  ") + (forwardProblem ? `  (${forwardProblem})` : ""),
            ) + "\n",
          );
        } else print(JSON.stringify(line) + "\n");
      }).catch(() => {});
      const body = status === 204 || status === 304 ? null : forwarded?.body as BodyInit ?? null;
      const type = forwarded?.contentType;
      return {
        response: new Response(body, { status, headers: type ? { "content-type": type } : {} }),
        recorded,
      };
    };

    const release = ctx.takeSignals?.(["SIGINT", "SIGTERM"]) ?? (() => {});
    let server: BoundedServer;
    try {
      server = await serveBounded(handler, {
        hostname: "127.0.0.1",
        port: flags.port,
        onError: () => new Response("internal error", { status: 500 }),
      });
    } catch (e) {
      release();
      record?.close();
      const inUse = e instanceof Deno.errors.AddrInUse;
      throw new CliError(
        inUse
          ? `Port ${flags.port} on 127.0.0.1 is in use: choose another --port (0 picks a free one).`
          : `Cannot listen on 127.0.0.1:${flags.port}: ${(e as Error).message}`,
      );
    }
    const address = `http://127.0.0.1:${server.port}/`;
    if (out.format === "table") await out.write(address + "\n");
    else await out.write(JSON.stringify({ event: "listening", url: address }) + "\n");
    await out.log(
      `listening on ${address}; ${
        forwardTo ? `forwarding to ${forwardTo}` : `answering ${respond}`
      }; signatures checked against ${source.where}; Ctrl-C to stop`,
    );
    const why = await whenStopped(ctx.signal);
    try {
      await server.close();
      await recording;
      record?.close();
      await out.log(`stopped (${why})`);
    } finally {
      release();
    }
    return 0;
  },
});
