import { invalid } from '../../lib/errors.js';

const EMAIL_RE = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const PHONE_RE = /^\+[1-9]\d{6,14}$/;
const MAX_EMAIL = 254;

/** Trimmed and lowercased, so one address is one account however it is typed. */
export function normaliseEmail(raw: string, field = 'email'): string {
  const email = raw.trim().toLowerCase();
  if (email.length > MAX_EMAIL || !EMAIL_RE.test(email)) {
    throw invalid(`invalid field ${field}: not an email address`, [
      { field, reason: 'must be an email address' },
    ]);
  }
  return email;
}

/** E.164: `+`, country code, up to 15 digits; spaces, dashes and brackets are dropped. */
export function normalisePhone(raw: string, field = 'phone_number'): string {
  const phone = raw.trim().replace(/[\s\-().]/g, '');
  if (!PHONE_RE.test(phone)) {
    throw invalid(`invalid field ${field}: not an E.164 phone number`, [
      { field, reason: 'must be an E.164 phone number such as +14155550100' },
    ]);
  }
  return phone;
}

export type Contact =
  | { channel: 'email'; email: string; phoneNumber?: undefined }
  | { channel: 'sms'; phoneNumber: string; email?: undefined };

/** Exactly one of email or phone number, normalised. */
export function oneContact(input: { email?: string; phone_number?: string }): Contact {
  if (input.email !== undefined && input.phone_number !== undefined) {
    throw invalid('give either email or phone_number, not both', [
      { field: 'phone_number', reason: 'not allowed together with email' },
    ]);
  }
  if (input.email !== undefined) return { channel: 'email', email: normaliseEmail(input.email) };
  if (input.phone_number !== undefined) {
    return { channel: 'sms', phoneNumber: normalisePhone(input.phone_number) };
  }
  throw invalid('email or phone_number is required', [
    { field: 'email', reason: 'email or phone_number is required' },
  ]);
}

export function recipientOf(c: Contact): string {
  return c.channel === 'email' ? c.email : c.phoneNumber;
}
