/**
 * Runs `work` over the items with at most `width` in flight, in order of the items.
 * `shouldStop` is asked before each new item starts: once true, no more start, and
 * the ones in flight finish. Throws the first error `work` throws, after the others end.
 */
export async function forEachConcurrent<T>(
  items: readonly T[],
  width: number,
  work: (item: T, index: number) => Promise<void>,
  shouldStop: () => boolean = () => false,
): Promise<void> {
  let next = 0;
  let firstError: unknown;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (next < items.length && !failed && !shouldStop()) {
      const index = next++;
      try {
        await work(items[index]!, index);
      } catch (error) {
        if (!failed) firstError = error;
        failed = true;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(width, items.length)) }, worker));
  if (failed) throw firstError;
}
