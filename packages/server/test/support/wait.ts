/**
 * Polls `probe` until it returns a value (anything but undefined, null or false) and returns it;
 * throws `timed out waiting for {what}` (with `context()` appended, e.g. a server's output) after
 * `timeoutMs`. An error thrown by the probe ends the wait at once.
 */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | null | false>,
  options: { timeoutMs?: number; everyMs?: number; context?: () => string } = {},
): Promise<T> {
  const { timeoutMs = 30_000, everyMs = 200 } = options;
  const started = Date.now();
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() - started > timeoutMs)
      throw new Error(`timed out waiting for ${what}${options.context ? `\n${options.context()}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}
