import { createServer } from 'node:http';
import { verifyWebhook } from '@ons/sdk';

/**
 * A webhook receiver: it checks `X-Webhook-Signature` against the body exactly as it
 * arrived (raw bytes, not re-serialized JSON) before trusting the delivery.
 */
export function webhookReceiver(signingKey: string, onEvent: (event: unknown) => void) {
  return createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      void verifyWebhook(req.headers, body, signingKey).then((check) => {
        if (!check.ok) {
          res.writeHead(401).end(check.reason); // malformed, timestamp or signature
          return;
        }
        onEvent(JSON.parse(body.toString('utf8')));
        res.writeHead(200).end();
      });
    });
  });
}
