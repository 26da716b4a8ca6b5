/**
 * The join rule of `send_book.ts` on its own (no platform): which repeats join a send, which
 * are new intents, and how long a finished send stays joinable. The same rule through real
 * clients, the emulator and anvil is in tests/e2e/rpc_slow_custody_test.ts.
 */
import assert from "node:assert/strict";
import { SendBook, type SendClient } from "../../lib/rpc/send_book.ts";
import { type SendIdentity, sendIdentity } from "../../lib/rpc/send_identity.ts";
import type { TransactionRequest } from "../../lib/platform/mod.ts";
import { toTransactionRequest } from "../../lib/rpc/transaction_request.ts";
import { waitFor } from "../support/wait_for.ts";

const FROM = "0xf39Fd6e51aad88F6F4ce6aB8827279cffFb92266";
const TO = "0x70997970C51812dc3A010C7d01b50e0d17dc79C8";

function identity(nonce?: bigint, value = "0x1"): SendIdentity {
  const body: TransactionRequest = toTransactionRequest(
    { from: FROM, to: TO, value },
    { assetId: "ETH", chainId: 1n },
  );
  return sendIdentity(1n, FROM, nonce, body);
}

/** A send under the test's control: `finish` settles it. */
function controlled() {
  let starts = 0;
  let resolve!: (hash: string) => void;
  let reject!: (e: Error) => void;
  const start = () => {
    starts++;
    return new Promise<string>((res, rej) => {
      resolve = res;
      reject = rej;
    });
  };
  return {
    start,
    get starts() {
      return starts;
    },
    finish: (hash: string) => resolve(hash),
    fail: (e: Error) => reject(e),
  };
}

/** A send for `client` answered `0xaa`, once `client` has its answer; the send's control. */
async function answered(book: SendBook, client: SendClient) {
  const s = controlled();
  const first = book.send(identity(), client, s.start);
  s.finish("0xaa");
  assert.equal(await first, "0xaa");
  return s;
}

Deno.test("identity: spellings of the same transaction are one identity; a field changed is another", () => {
  const a = toTransactionRequest({ from: FROM, to: TO, value: "0x01", input: "0xABCD" }, {
    assetId: "ETH",
    chainId: 1n,
  });
  const b = toTransactionRequest({ from: FROM, to: TO.toLowerCase(), value: "1", data: "0xabcd" }, {
    assetId: "ETH",
    chainId: 1n,
  });
  const c = toTransactionRequest({ from: FROM, to: TO, value: "0x2", data: "0xabcd" }, {
    assetId: "ETH",
    chainId: 1n,
  });
  assert.equal(
    sendIdentity(1n, FROM, 3n, a).key,
    sendIdentity(1n, FROM.toLowerCase(), 3n, b).key,
  );
  assert.notEqual(sendIdentity(1n, FROM, 3n, a).key, sendIdentity(1n, FROM, 4n, a).key);
  assert.notEqual(sendIdentity(1n, FROM, 3n, a).key, sendIdentity(1n, FROM, 3n, c).key);
  assert.notEqual(sendIdentity(1n, FROM, 3n, a).key, sendIdentity(1n, FROM, undefined, a).key);
  assert.notEqual(sendIdentity(1n, FROM, 3n, a).key, sendIdentity(2n, FROM, 3n, a).key);
});

Deno.test("with a nonce: a repeat joins the send in flight even while the first still waits", async () => {
  const book = new SendBook();
  const s = controlled();
  const first = book.send(identity(0n), undefined, s.start);
  const repeat = book.send(identity(0n), undefined, s.start);
  s.finish("0xaa");
  assert.deepEqual(await Promise.all([first, repeat]), ["0xaa", "0xaa"]);
  assert.equal(s.starts, 1);
  // finished and delivered: a later repeat within the keep time still gets the hash
  assert.equal(await book.send(identity(0n), undefined, s.start), "0xaa");
  assert.equal(s.starts, 1);
});

Deno.test("without a nonce: two identical sends both awaited are two; a repeat after the client left joins once", async () => {
  const book = new SendBook({ repeatGraceMs: 20 });
  const s = controlled();
  const gone = new AbortController();
  const first = book.send(identity(), { clientGone: gone.signal }, s.start);
  // both awaited: a second intent (once the grace has passed with the first's client still there)
  const t = controlled();
  const second = book.send(identity(), undefined, t.start);
  await waitFor("the send to start", () => t.starts === 1, 5_000, 5);
  assert.equal(s.starts, 1);
  t.finish("0xbb");
  assert.equal(await second, "0xbb");
  // the first's client gives up: its repeat joins it
  gone.abort();
  const u = controlled();
  const repeat = book.send(identity(), undefined, u.start);
  assert.equal(u.starts, 0);
  s.finish("0xaa");
  assert.equal(await repeat, "0xaa");
  assert.equal(await first, "0xaa");
  // the repeat received the answer: a further identical request is a new intent
  const v = controlled();
  const again = book.send(identity(), undefined, v.start);
  assert.equal(v.starts, 1);
  v.finish("0xcc");
  assert.equal(await again, "0xcc");
});

Deno.test("without a nonce: the next request on the answered client's connection proves the answer read: the identical send after it starts without the grace", async () => {
  const book = new SendBook({ repeatGraceMs: 60_000 });
  const next = Promise.withResolvers<void>();
  const s = await answered(book, {
    clientGone: new AbortController().signal,
    nextRequest: next.promise,
  });
  next.resolve(); // its HTTP/1.1 connection carries the next request: the answer was written whole
  const t = controlled();
  const second = book.send(identity(), { clientGone: new AbortController().signal }, t.start);
  // a new intent: it starts now (before, it waited out the grace, here 60 s, to see the first
  // client leave), and it is a second transaction
  await waitFor("the identical send to start", () => t.starts === 1, 5_000, 10);
  t.finish("0xbb");
  assert.equal(await second, "0xbb");
  assert.equal(s.starts, 1);
});

Deno.test("without a nonce: an answer with no next request on its connection waits the grace before it counts as read", async () => {
  const book = new SendBook({ repeatGraceMs: 300 });
  const gone = new AbortController();
  await answered(book, { clientGone: gone.signal, nextRequest: new Promise(() => {}) });
  const t = controlled();
  const second = book.send(identity(), undefined, t.start);
  await Promise.resolve();
  assert.equal(t.starts, 0); // still in the grace: the first client may yet be seen leaving
  gone.abort(); // it is: the answer never reached it, and this request is its repeat
  assert.equal(await second, "0xaa");
  assert.equal(t.starts, 0);
});

Deno.test("without a nonce: a repeat that arrives just before its client is seen leaving still joins (the grace)", async () => {
  const book = new SendBook({ repeatGraceMs: 60_000 });
  const s = controlled();
  const gone = new AbortController();
  const first = book.send(identity(), { clientGone: gone.signal }, s.start);
  const t = controlled();
  const repeat = book.send(identity(), undefined, t.start); // the old connection's close not seen yet
  gone.abort(); // now it is: the repeat joins at once, without waiting for the grace
  s.finish("0xaa");
  assert.equal(await repeat, "0xaa");
  assert.equal(await first, "0xaa");
  assert.equal(t.starts, 0);
});

Deno.test("without a nonce: a send finished while nobody waited is joined by its repeat, once", async () => {
  const book = new SendBook();
  const s = controlled();
  const gone = new AbortController();
  const first = book.send(identity(), { clientGone: gone.signal }, s.start);
  gone.abort();
  s.finish("0xaa");
  assert.equal(await first, "0xaa");
  const u = controlled();
  assert.equal(await book.send(identity(), undefined, u.start), "0xaa");
  assert.equal(u.starts, 0);
  const v = controlled();
  const next = book.send(identity(), undefined, v.start);
  assert.equal(v.starts, 1);
  v.finish("0xdd");
  assert.equal(await next, "0xdd");
});

Deno.test("joinAbandoned false (--joinRetries false): every no-nonce request is a new transaction", async () => {
  const book = new SendBook({ joinAbandoned: false });
  const s = controlled();
  const gone = new AbortController();
  const first = book.send(identity(), { clientGone: gone.signal }, s.start);
  gone.abort();
  const t = controlled();
  const repeat = book.send(identity(), undefined, t.start);
  assert.equal(t.starts, 1);
  s.finish("0xaa");
  t.finish("0xbb");
  assert.deepEqual(await Promise.all([first, repeat]), ["0xaa", "0xbb"]);
});

Deno.test("failures: the joined get the same error; one before any creation is forgotten at once", async () => {
  const created = new Set<unknown>();
  const book = new SendBook({ createdBy: (e) => created.has(e) });
  // created, then rejected: the waiting repeat gets the same error
  const s = controlled();
  const first = book.send(identity(1n), undefined, s.start);
  const repeat = book.send(identity(1n), undefined, s.start);
  const rejected = new Error("ended REJECTED");
  created.add(rejected);
  s.fail(rejected);
  await assert.rejects(first, (e) => e === rejected);
  await assert.rejects(repeat, (e) => e === rejected);
  // delivered: asked again, it is a new attempt
  const t = controlled();
  const again = book.send(identity(1n), undefined, t.start);
  assert.equal(t.starts, 1);
  t.finish("0xee");
  assert.equal(await again, "0xee");
  // refused before creation: the repeat tries again even though nobody received the error
  const u = controlled();
  const gone = new AbortController();
  const refused = book.send(identity(2n), { clientGone: gone.signal }, u.start);
  gone.abort();
  u.fail(new Error("nonce too low"));
  await assert.rejects(refused);
  const v = controlled();
  const retry = book.send(identity(2n), undefined, v.start);
  assert.equal(v.starts, 1);
  v.finish("0xff");
  assert.equal(await retry, "0xff");
});

Deno.test("a finished send is kept for keepMs, then forgotten", async () => {
  let now = 0;
  const book = new SendBook({ keepMs: 1000, now: () => now });
  const s = controlled();
  const first = book.send(identity(5n), undefined, s.start);
  s.finish("0xaa");
  await first;
  now = 999;
  assert.equal(await book.send(identity(5n), undefined, s.start), "0xaa");
  assert.equal(book.size, 1);
  now = 1000;
  assert.equal(book.size, 0);
});

Deno.test("the book tells the send when its last client left and when a repeat joined", async () => {
  const book = new SendBook();
  const events: string[] = [];
  const s = controlled();
  const a = new AbortController();
  const b = new AbortController();
  const first = book.send(identity(7n), { clientGone: a.signal }, (watch) => {
    watch.onAllGone = () => events.push(`gone`);
    watch.onJoin = () => events.push(`joined ${watch.waiting}`);
    return s.start();
  });
  const second = book.send(identity(7n), { clientGone: b.signal }, s.start);
  a.abort();
  assert.deepEqual(events, ["joined 2"]);
  b.abort();
  assert.deepEqual(events, ["joined 2", "gone"]);
  const third = book.send(identity(7n), undefined, s.start);
  assert.deepEqual(events, ["joined 2", "gone", "joined 1"]);
  s.finish("0x01");
  assert.deepEqual(await Promise.all([first, second, third]), ["0x01", "0x01", "0x01"]);
});
