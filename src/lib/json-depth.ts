/**
 * Whether a parsed JSON value nests deeper than `max` levels (a scalar is depth 0, `{}` and
 * `[]` are 1, `{"a": []}` is 2). Iterative and stops at the first value past the limit, so
 * a hostile million-level body costs no stack and no more than the part it reads; callers
 * run it before anything recursive (canonical JSON, schema validation) touches the value.
 */
export function nestsDeeperThan(value: unknown, max: number): boolean {
  const stack: [unknown, number][] = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (v === null || typeof v !== 'object') continue;
    if (depth + 1 > max) return true;
    const children = Array.isArray(v) ? (v as unknown[]) : Object.values(v);
    for (const c of children) {
      if (c !== null && typeof c === 'object') stack.push([c, depth + 1]);
    }
  }
  return false;
}
