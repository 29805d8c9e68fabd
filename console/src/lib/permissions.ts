/**
 * The resources and operations an API key's permissions name (docs/permissions.md), as the
 * service's own table lists them (test/console-permissions.test.ts compares the two).
 */
export const RESOURCES = [
  'objects',
  'templates',
  'actions',
  'webhooks',
  'api-keys',
  'organizations',
  'members',
  'balance',
  'deposits',
  'support',
  'storage',
  'wallets',
] as const;

export const OPERATIONS = ['read', 'create', 'update', 'delete'] as const;
