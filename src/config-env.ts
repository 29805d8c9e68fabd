import { isTimestamp } from './lib/timestamp.js';

/**
 * Reading one environment variable each (src/config.ts is their one caller): empty is unset,
 * and a bad value throws a ConfigError naming the variable.
 */
export type Env = Record<string, string | undefined>;

/** A setting with a bad value: its message names the variable (never a secret's value). */
export class ConfigError extends Error {}

export function int(
  env: Env,
  name: string,
  fallback: number,
  min = 0,
  max = Number.MAX_SAFE_INTEGER,
) {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}"`);
  }
  return n;
}

export function bigint(env: Env, name: string, fallback: bigint): bigint {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d{1,78}$/.test(raw)) throw new ConfigError(`${name} must be a whole number of wei`);
  return BigInt(raw);
}

export function str(env: Env, name: string, fallback: string): string {
  const raw = env[name];
  return raw === undefined || raw === '' ? fallback : raw;
}

export function optional(env: Env, name: string): string | null {
  const raw = env[name];
  return raw === undefined || raw === '' ? null : raw;
}

export function timestamp(env: Env, name: string, fallback: string): Date {
  const raw = str(env, name, fallback);
  if (!isTimestamp(raw)) {
    throw new ConfigError(`${name} must be a date-time such as 2026-06-30T00:00:00Z, got "${raw}"`);
  }
  return new Date(raw);
}

export function list(env: Env, name: string, fallback: string[]): string[] {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

export function oneOf<T extends string>(
  env: Env,
  name: string,
  values: readonly T[],
  fallback: T,
): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!(values as readonly string[]).includes(raw)) {
    throw new ConfigError(`${name} must be one of ${values.join(', ')}, got "${raw}"`);
  }
  return raw as T;
}

export function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(`${name} must be true or false`);
}
