/**
 * The server's clock as seen from here (D-525): a signed message's timestamp must be within
 * −300/+30 s of the API's, and a laptop's clock can be minutes off. Every answer's `Date`
 * (whole seconds) moves the offset; an offset under a second is noise and is not applied.
 */
export interface Clock {
  /** Milliseconds since the epoch on the server's clock. */
  now(): number;
  /** An answer's `Date`, with when its request was sent and when the answer came. */
  observe(date: string | null, sentAt: number, receivedAt: number): void;
  readonly offsetMs: number;
}

export function createClock(local: () => number = Date.now): Clock {
  let offsetMs = 0;
  return {
    now: () => local() + offsetMs,
    observe(date, sentAt, receivedAt) {
      if (!date) return;
      const server = Date.parse(date);
      if (Number.isNaN(server)) return;
      // `Date` is truncated to the second: the server's time was in [server, server + 1000).
      const measured = server + 500 - (sentAt + receivedAt) / 2;
      offsetMs = Math.abs(measured) < 1000 ? 0 : Math.round(measured);
    },
    get offsetMs() {
      return offsetMs;
    },
  };
}
