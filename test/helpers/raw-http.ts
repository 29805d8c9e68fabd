import net from 'node:net';

/** Raw HTTP/1.1 over a socket to 127.0.0.1, for what app.inject cannot send. */

export interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/**
 * The status and headers of the answer at the start of `text`, and where its head ends (the
 * index of the blank line), or null while the head has not all arrived.
 */
export function parseHead(
  text: string,
): { status: number; headers: Record<string, string>; end: number } | null {
  const end = text.indexOf('\r\n\r\n');
  if (end === -1) return null;
  const [statusLine, ...lines] = text.slice(0, end).split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine!.split(' ')[1]), headers, end };
}

/**
 * Sends `text` as it is and reads the first answer: its head, then `content-length` bytes, or
 * what comes until the server closes. A second answer after a `100 Continue` is the one read.
 */
export function exchange(port: number, text: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    let data = Buffer.alloc(0);
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new Error(`no whole answer within 5 s; got ${JSON.stringify(data.toString())}`));
    }, 5000);
    const parse = (closed: boolean): RawAnswer | null => {
      let text = data.toString('latin1');
      while (/^HTTP\/1\.1 100 /.test(text) && text.includes('\r\n\r\n')) {
        text = text.slice(text.indexOf('\r\n\r\n') + 4);
      }
      const head = parseHead(text);
      if (!head) return null;
      const { status, headers, end } = head;
      const body = text.slice(end + 4);
      const length = headers['content-length'];
      if (length === undefined ? !closed : body.length < Number(length)) return null;
      return { status, headers, body };
    };
    const finish = (closed: boolean) => {
      const answer = parse(closed);
      if (!answer && !closed) return;
      clearTimeout(timer);
      socket.destroy();
      if (answer) resolve(answer);
      else reject(new Error(`closed without an answer; got ${JSON.stringify(data.toString())}`));
    };
    socket.on('data', (d: Buffer) => {
      data = Buffer.concat([data, d]);
      finish(false);
    });
    socket.on('close', () => finish(true));
    socket.on('error', () => undefined);
    socket.write(text);
  });
}
