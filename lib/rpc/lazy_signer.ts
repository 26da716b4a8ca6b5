/**
 * A {@linkcode Signer} that builds the real one on its first call: the
 * custody signer needs the platform's transaction calls and the custody
 * logic, which a bridge that only passes reads through (`rpc -- true`, a
 * test run without sends) never uses. Concurrent first calls share one load;
 * a load that fails is retried on the next call.
 *
 * @module
 */

import type { CustodyOptions } from "./custody.ts";
import type { Signer } from "./methods.ts";

/**
 * Loads the signer with `load` on the first call.
 *
 * @example
 * ```ts
 * import type { CustodyOptions } from "./custody.ts";
 * declare const options: CustodyOptions;
 * const signer = new LazySigner(async () => new (await import("./custody.ts")).CustodySigner(options));
 * await signer.accounts(); // loads, then asks the platform
 * ```
 */
export class LazySigner implements Signer {
  readonly #load: () => Promise<Signer>;
  #signer: Promise<Signer> | undefined;

  /** Creates the wrapper; nothing is loaded yet. */
  constructor(load: () => Promise<Signer>) {
    this.#load = load;
  }

  #loaded: Signer | undefined;

  /** See {@linkcode Signer.unfinished}: none while nothing was loaded. */
  unfinished(): string[] {
    return this.#loaded?.unfinished?.() ?? [];
  }

  #get(): Promise<Signer> {
    this.#signer ??= this.#load().then((signer) => this.#loaded = signer).catch((e) => {
      this.#signer = undefined;
      throw e;
    });
    return this.#signer;
  }

  /** See {@linkcode Signer.accounts}. */
  async accounts(signal?: AbortSignal): Promise<string[]> {
    return await (await this.#get()).accounts(signal);
  }

  /** See {@linkcode Signer.sendTransaction}. */
  async sendTransaction(...args: Parameters<Signer["sendTransaction"]>): Promise<string> {
    return await (await this.#get()).sendTransaction(...args);
  }

  /** See {@linkcode Signer.signMessage}. */
  async signMessage(address: string, dataHex: string, signal?: AbortSignal): Promise<string> {
    return await (await this.#get()).signMessage(address, dataHex, signal);
  }

  /** See {@linkcode Signer.signTypedData}. */
  async signTypedData(address: string, typedData: unknown, signal?: AbortSignal): Promise<string> {
    return await (await this.#get()).signTypedData(address, typedData, signal);
  }
}

/**
 * The custody signer (`custody.ts`), loaded on its first call: the same
 * options, the same behaviour.
 */
export class LazyCustodySigner extends LazySigner {
  /** Keeps the options; `custody.ts` loads on the first call. */
  constructor(options: CustodyOptions) {
    super(async () => new (await import("./custody.ts")).CustodySigner(options));
  }
}
