/**
 * The exit code a shell reports for a process a signal ended: 128 plus the
 * signal's number (Linux numbering; 128 for a signal not in the table). One
 * table for the program's own exit after SIGINT/SIGTERM/SIGHUP and for a
 * child command's status.
 *
 * @module
 */

const SIGNAL_NUMBERS: Readonly<Record<string, number>> = {
  SIGHUP: 1,
  SIGINT: 2,
  SIGQUIT: 3,
  SIGILL: 4,
  SIGTRAP: 5,
  SIGABRT: 6,
  SIGBUS: 7,
  SIGFPE: 8,
  SIGKILL: 9,
  SIGUSR1: 10,
  SIGSEGV: 11,
  SIGUSR2: 12,
  SIGPIPE: 13,
  SIGALRM: 14,
  SIGTERM: 15,
};

/**
 * 128 plus `signal`'s number.
 *
 * @example
 * ```ts
 * signalExitCode("SIGINT"); // 130
 * ```
 */
export function signalExitCode(signal: string): number {
  return 128 + (SIGNAL_NUMBERS[signal] ?? 0);
}
