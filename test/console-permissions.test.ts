import { describe, expect, it } from 'vitest';
import * as consoleTable from '../console/src/lib/permissions.js';
import * as serviceTable from '../src/lib/permissions.js';

describe("the console's permission grid", () => {
  it('offers exactly the resources and operations the service knows', () => {
    expect([...consoleTable.RESOURCES]).toEqual([...serviceTable.RESOURCES]);
    expect([...consoleTable.OPERATIONS]).toEqual([...serviceTable.OPERATIONS]);
  });
});
