/**
 * A minimal HTTP/1.1 keep-alive client for load generation, in the manner of wrk: one socket
 * per lane, the request bytes built once, the answer read by its Content-Length. It does a
 * fraction of a general client's work per request, which matters when the load generator
 * shares the machine's two cores with the service and PostgreSQL (bench/ebus.ts).
 * Answers must carry Content-Length (the service's do); anything else fails the lane.
 */
import net from 'node:net';

const HEADER_END = Buffer.from('\r\n\r\n');

export class RawLane {
  private readonly socket: net.Socket;
  private buf: Buffer = Buffer.alloc(0);
  private waiting: ((r: { status: number; body: Buffer }) => void) | null = null;
  private failure: Error | null = null;

  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => {
      this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
      this.tryAnswer();
    });
    socket.on('error', (err) => (this.failure = err));
    socket.on('close', () => (this.failure ??= new Error('connection closed')));
  }

  static connect(port: number): Promise<RawLane> {
    return new Promise((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => resolve(new RawLane(s)));
      s.once('error', reject);
    });
  }

  /** The bytes of a POST with a JSON body. */
  static post(path: string, headers: Record<string, string>, body: string): Buffer {
    const bytes = Buffer.from(body, 'utf8');
    const head = [
      `POST ${path} HTTP/1.1`,
      'host: 127.0.0.1',
      'content-type: application/json',
      `content-length: ${bytes.length}`,
      ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
      '',
      '',
    ].join('\r\n');
    return Buffer.concat([Buffer.from(head, 'latin1'), bytes]);
  }

  /** Sends one request and resolves with its answer. */
  send(request: Buffer): Promise<{ status: number; body: Buffer }> {
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve) => {
      this.waiting = resolve;
      this.socket.write(request);
    });
  }

  close(): void {
    this.socket.destroy();
  }

  private tryAnswer(): void {
    const end = this.buf.indexOf(HEADER_END);
    if (end < 0 || !this.waiting) return;
    const head = this.buf.toString('latin1', 0, end);
    const status = Number(head.slice(9, 12));
    const m = /\r\ncontent-length: *(\d+)/i.exec(head);
    if (!m) {
      this.failure = new Error('answer without content-length');
      this.socket.destroy();
      return;
    }
    const total = end + 4 + Number(m[1]);
    if (this.buf.length < total) return;
    const body = this.buf.subarray(end + 4, total);
    this.buf = this.buf.subarray(total);
    const done = this.waiting;
    this.waiting = null;
    done({ status, body });
  }
}
