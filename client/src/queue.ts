/** An async iterator fed by pushes: what a subscription hands its `for await` loop. */
export interface Feed<T> extends AsyncIterableIterator<T> {
  push(item: T): void;
  end(error?: Error): void;
}

export function createFeed<T>(onReturn?: () => void): Feed<T> {
  const items: T[] = [];
  const waiting: { resolve: (r: IteratorResult<T>) => void; reject: (e: Error) => void }[] = [];
  let ended = false;
  let failure: Error | undefined;
  const feed: Feed<T> = {
    push(item) {
      if (ended) return;
      const w = waiting.shift();
      if (w) w.resolve({ value: item, done: false });
      else items.push(item);
    },
    end(error) {
      if (ended) return;
      ended = true;
      failure = error;
      for (const w of waiting.splice(0)) (error ? w.reject(error) : w.resolve({ value: undefined, done: true }));
    },
    next() {
      if (items.length) return Promise.resolve({ value: items.shift()!, done: false });
      if (ended) return failure ? Promise.reject(failure) : Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve, reject) => waiting.push({ resolve, reject }));
    },
    return() {
      feed.end();
      onReturn?.();
      return Promise.resolve({ value: undefined, done: true });
    },
    [Symbol.asyncIterator]() {
      return feed;
    },
  };
  return feed;
}
