import type http from 'node:http';
import type { Duplex } from 'node:stream';

/** What Node's HTTP parser answers, by error code, when no `clientError` listener is installed. */
function answerFor(code: string | undefined): { status: number; reason: string; body?: { error: string; code: string } } {
  switch (code) {
    case 'HPE_HEADER_OVERFLOW':
      return { status: 431, reason: 'Request Header Fields Too Large', body: { error: 'Request headers are too large', code: 'LIMIT_EXCEEDED' } };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { status: 413, reason: 'Payload Too Large', body: { error: 'Chunk extensions are too large', code: 'LIMIT_EXCEEDED' } };
    // The client did not send its headers (or body) in time: nothing was asked, nothing to explain.
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return { status: 408, reason: 'Request Timeout' };
    default:
      return { status: 400, reason: 'Bad Request', body: { error: 'Malformed HTTP request', code: 'VALIDATION_ERROR' } };
  }
}

/**
 * Decision D-76: a request Node's HTTP parser refuses (a raw space, control or non-ASCII byte in
 * the request target, a malformed header, headers over the size limit) is answered with the
 * REST error envelope instead of Node's bare status line, and the connection is closed, as
 * Node does. Express never sees these requests: they are neither rate limited nor logged.
 */
export function answerClientErrors(server: http.Server): void {
  server.on('clientError', (err: Error & { code?: string }, socket: Duplex & { bytesWritten?: number }) => {
    // A reset or a socket already answered: there is nobody to tell.
    if (!socket.writable || (socket.bytesWritten ?? 0) > 0 || err.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const a = answerFor(err.code);
    const json = a.body ? JSON.stringify(a.body) : '';
    const head = [`HTTP/1.1 ${a.status} ${a.reason}`, 'Connection: close'];
    if (a.body) head.push('Content-Type: application/json; charset=utf-8', `Content-Length: ${Buffer.byteLength(json)}`);
    // Closed once written, as Node does: a client that sent garbage gets no second request.
    socket.end(`${head.join('\r\n')}\r\n\r\n${json}`, () => socket.destroy());
  });
}
