/**
 * Progress passed on only when what a person sees of it changed. The seconds are not part of
 * that: every view counts them from `since` at the moment it draws, so a report each second
 * would only repeat the one before with a larger number, and cost a redraw and a serialized
 * update for each.
 */
export function whenChanged<P>(fn: (p: P) => void, seen: (p: P) => unknown): (p: P) => void {
  let last: string | undefined;
  return (p) => {
    const key = JSON.stringify(seen(p));
    if (key === last) return;
    last = key;
    fn(p);
  };
}

/** What a person sees of progress items: everything but the seconds counted when they were made. */
export function seenItems<T extends object>(items: readonly T[], clockKey: keyof T): Omit<T, typeof clockKey>[] {
  return items.map((item) => {
    const { [clockKey]: _clock, ...rest } = item;
    return rest;
  });
}
