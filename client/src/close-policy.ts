/**
 * What a `/ws` client does when its socket ends (D-526), for every close code and refused
 * upgrade the API's stream document (api-reference/asyncapi.yaml) names:
 * - `resume`: reconnect with backoff, subscribe again with `resumeFrom` the last seq seen;
 * - `start-over`: reconnect, subscribe afresh and take a new REST snapshot (4010: the tenant's
 *   tables were rebuilt and sequences start over, D-410);
 * - `fatal`: reconnecting would only repeat it; the subscriptions end with the error.
 */
export type ClosePolicy = 'resume' | 'start-over' | 'fatal';

export function closePolicy(code: number, reason: string): ClosePolicy {
  switch (code) {
    case 4010:
      return 'start-over';
    case 1008:
      // Repeating bad signatures or unknown markets would be closed the same way again.
      if (/failed authentications|unknown markets/i.test(reason)) return 'fatal';
      // Backpressure (a slow reader) or too many queued messages: a fresh socket, resumed.
      return 'resume';
    case 1009:
      // A message of ours over 4,096 bytes: a bug here, not a network fault.
      return 'fatal';
    case 1000: // the server ended it normally
    case 1001: // the server is shutting down: another replica will answer
    case 1005: // closed without a status
    case 1006: // the network (or a refused upgrade a browser cannot see)
    case 1011:
    case 1012:
    case 1013:
      return 'resume';
    default:
      return 'resume';
  }
}

/** A refused upgrade (the REST error envelope instead of 101): 429 and 503 are waited out, 404 is a wrong URL. */
export function upgradePolicy(status: number): ClosePolicy {
  return status === 429 || status === 503 || status >= 500 ? 'resume' : 'fatal';
}
