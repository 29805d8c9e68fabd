/**
 * What other modules may use of notify: the interface of the sender that delivers a code or
 * a notice (src/container.ts builds the one in use).
 */
export type { MessageSender, OutgoingMessage } from './sender.js';
