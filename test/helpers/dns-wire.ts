/**
 * The DNS wire format the tests' own name servers need (test/helpers/name-server.ts and the
 * resolver's unit test): a query's question, and an answer of one A record or none.
 */
/** The question's name and where the question ends. */
export function question(msg: Buffer): { name: string; end: number } {
  const labels: string[] = [];
  let at = 12;
  while (msg[at]! !== 0) {
    labels.push(msg.subarray(at + 1, at + 1 + msg[at]!).toString('latin1'));
    at += msg[at]! + 1;
  }
  return { name: labels.join('.').toLowerCase(), end: at + 5 };
}

/** An answer to `query`: rcode 0 with `ip` (an A query) or no records, or rcode 3. */
export function answer(query: Buffer, end: number, rcode: 0 | 3, ip: number[] | null): Buffer {
  const head = Buffer.from(query.subarray(0, end));
  head.writeUInt16BE(0x8180 | rcode, 2); // a response, recursion desired and available
  head.writeUInt16BE(ip ? 1 : 0, 6); // answers
  head.writeUInt16BE(0, 8);
  head.writeUInt16BE(0, 10);
  if (!ip) return head;
  // The question's name by pointer, type A, class IN, TTL 60, 4 bytes of address.
  return Buffer.concat([head, Buffer.from([0xc0, 12, 0, 1, 0, 1, 0, 0, 0, 60, 0, 4, ...ip])]);
}
