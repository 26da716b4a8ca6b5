/**
 * The system's OpenSSL `libcrypto`, loaded with `Deno.dlopen`: the symbols
 * the RSA signer and verifier use (`openssl_signer.ts`, `openssl_verifier.ts`),
 * where the library is looked for, loading it once per process (OpenSSL told
 * not to clean up at exit), and the two helpers both callers share.
 *
 * @module
 */

/** `(ctx, sig, siglen, data, datalen)`: EVP_DigestSign and EVP_PKEY_sign alike. */
const SIGN_CALL = {
  parameters: ["pointer", "buffer", "buffer", "buffer", "usize"],
  result: "i32",
} as const;

/** The functions of libcrypto used here (and whether a call runs on the blocking thread pool). */
export const SYMBOLS = {
  OPENSSL_init_crypto: { parameters: ["u64", "pointer"], result: "i32" },
  BIO_new_mem_buf: { parameters: ["buffer", "i32"], result: "pointer" },
  BIO_free: { parameters: ["pointer"], result: "i32" },
  d2i_PrivateKey_bio: { parameters: ["pointer", "pointer"], result: "pointer" },
  EVP_PKEY_free: { parameters: ["pointer"], result: "void" },
  EVP_sha256: { parameters: [], result: "pointer" },
  EVP_sha512: { parameters: [], result: "pointer" },
  EVP_MD_CTX_new: { parameters: [], result: "pointer" },
  EVP_MD_CTX_free: { parameters: ["pointer"], result: "void" },
  EVP_DigestSignInit: {
    parameters: ["pointer", "pointer", "pointer", "pointer", "pointer"],
    result: "i32",
  },
  EVP_DigestSign: SIGN_CALL,
  EVP_DigestSignAsync: { ...SIGN_CALL, name: "EVP_DigestSign", nonblocking: true },
  EVP_PKEY_CTX_new: { parameters: ["pointer", "pointer"], result: "pointer" },
  EVP_PKEY_CTX_free: { parameters: ["pointer"], result: "void" },
  EVP_PKEY_sign_init: { parameters: ["pointer"], result: "i32" },
  // a function from OpenSSL 3.0 on (a macro before): absent, signatures take EVP_DigestSign
  EVP_PKEY_CTX_set_signature_md: {
    parameters: ["pointer", "pointer"],
    result: "i32",
    optional: true,
  },
  EVP_PKEY_sign: SIGN_CALL,
  EVP_PKEY_signAsync: { ...SIGN_CALL, name: "EVP_PKEY_sign", nonblocking: true },
  EVP_Digest: {
    parameters: ["buffer", "usize", "buffer", "pointer", "pointer", "pointer"],
    result: "i32",
  },
  ERR_clear_error: { parameters: [], result: "void" },
  d2i_PUBKEY_bio: { parameters: ["pointer", "pointer"], result: "pointer" },
  EVP_DigestVerifyInit: {
    parameters: ["pointer", "pointer", "pointer", "pointer", "pointer"],
    result: "i32",
  },
  EVP_DigestVerify: {
    parameters: ["pointer", "buffer", "usize", "buffer", "usize"],
    result: "i32",
  },
} as const satisfies Deno.ForeignLibraryInterface;

/** The loaded library with its symbols. */
export type Lib = Deno.DynamicLibrary<typeof SYMBOLS>;

/**
 * Libraries loaded so far, by name. They are never unloaded: OpenSSL keeps
 * per-thread state whose destructors must stay mapped (it pins itself too).
 */
const loaded = new Map<string, Lib>();

/**
 * `OPENSSL_INIT_NO_ATEXIT` (OpenSSL 1.1.1b+): no clean-up handler at process
 * exit. Without it, a process that exits while a `nonblocking` signature is
 * still running on Deno's thread pool (Ctrl-C during a platform request)
 * has OpenSSL free its global state under that signature: SIGSEGV, exit 139
 * (seen 2 runs in 20 of `rpc --http` stopped right after start).
 */
const OPENSSL_INIT_NO_ATEXIT = 0x00080000n;

/** Opens `path` once per process, first telling OpenSSL not to clean up at exit. */
function openLibrary(path: string): Lib {
  const known = loaded.get(path);
  if (known) return known;
  const lib = Deno.dlopen(path, SYMBOLS);
  // before any other call, so that it is OpenSSL's first initialisation
  lib.symbols.OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, null);
  loaded.set(path, lib);
  return lib;
}

/**
 * Reads a DER key through a memory BIO with `read` (`d2i_PrivateKey_bio` for
 * PKCS#8, `d2i_PUBKEY_bio` for SPKI); null when libcrypto cannot read it.
 */
export function readDerKey(
  lib: Lib,
  der: Uint8Array,
  read: "d2i_PrivateKey_bio" | "d2i_PUBKEY_bio",
): Deno.PointerValue {
  const bio = lib.symbols.BIO_new_mem_buf(der, der.length);
  if (!bio) throw new Error("BIO_new_mem_buf failed");
  try {
    return lib.symbols[read](bio, null);
  } finally {
    lib.symbols.BIO_free(bio);
  }
}

/** The digest for `hash` (default SHA-512); frees `pkey` and throws when libcrypto has none. */
export function digestFor(
  lib: Lib,
  hash: "SHA-256" | "SHA-512" | undefined,
  pkey: Deno.PointerObject,
): Deno.PointerObject {
  const md = hash === "SHA-256" ? lib.symbols.EVP_sha256() : lib.symbols.EVP_sha512();
  if (!md) {
    lib.symbols.EVP_PKEY_free(pkey);
    throw new Error(`no ${hash ?? "SHA-512"} digest in libcrypto`);
  }
  return md;
}

/**
 * Where `libcrypto` is looked for on this OS, in order. Linux: the dynamic
 * loader's search path. macOS: Homebrew's OpenSSL 3 (never the system's
 * `/usr/lib/libcrypto.dylib`, which aborts a process that loads it directly).
 * Elsewhere: nowhere.
 */
export function defaultLibcryptoPaths(os: typeof Deno.build.os = Deno.build.os): string[] {
  if (os === "linux") return ["libcrypto.so.3", "libcrypto.so"];
  if (os === "darwin") {
    return [
      "/opt/homebrew/opt/openssl@3/lib/libcrypto.3.dylib",
      "/usr/local/opt/openssl@3/lib/libcrypto.3.dylib",
      "/opt/homebrew/lib/libcrypto.3.dylib",
      "/usr/local/lib/libcrypto.3.dylib",
    ];
  }
  return [];
}

/** Loads the first of `paths` that opens (each library is loaded once per process). */
export function loadLibcrypto(paths: readonly string[]): { lib: Lib; library: string } {
  if (paths.length === 0) throw new Error(`no libcrypto location known on ${Deno.build.os}`);
  const failures: string[] = [];
  for (const p of paths) {
    try {
      const lib = openLibrary(p);
      return { lib, library: p };
    } catch (e) {
      failures.push(`${p}: ${firstLine(e)}`);
    }
  }
  throw new Error(`libcrypto not loaded (${failures.join("; ")})`);
}

/**
 * The first line of a thrown value's message (OpenSSL and loader errors can
 * span lines), for a one-line reason.
 *
 * @example
 * ```ts
 * firstLine(new Error("a\nb")); // "a"
 * ```
 */
export function firstLine(e: unknown): string {
  return String((e as Error)?.message ?? e).split("\n")[0];
}

/**
 * Whether this process may load a foreign library without a prompt (so
 * OpenSSL is tried only with `--allow-ffi`).
 *
 * @example
 * ```ts
 * if (ffiGranted()) OpenSslSigner.open(pkcs8);
 * ```
 */
export function ffiGranted(): boolean {
  try {
    return Deno.permissions.querySync({ name: "ffi" }).state === "granted";
  } catch {
    return false;
  }
}
