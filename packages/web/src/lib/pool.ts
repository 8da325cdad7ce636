/**
 * Runs `run` for every item, at most `concurrency` at a time, starting them in the items' order
 * (a small pool: the upload dialogs send a few files at once, never all of them).
 */
export async function forEachPooled<T>(
  items: readonly T[],
  concurrency: number,
  run: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      await run(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
}
