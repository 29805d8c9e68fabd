import { describe, expect, it } from 'vitest';
import * as consoleTable from '../../console/src/lib/permissions.js';
import * as serviceTable from './permissions.js';

describe("the console's permission grid", () => {
  it('offers exactly the resources and operations the service knows', () => {
    expect([...consoleTable.RESOURCES]).toEqual([...serviceTable.RESOURCES]);
    expect([...consoleTable.OPERATIONS]).toEqual([...serviceTable.OPERATIONS]);
  });

  it("gives each role exactly the service's permissions", () => {
    expect([...consoleTable.ROLES]).toEqual([...serviceTable.ROLES]);
    for (const role of serviceTable.ROLES) {
      expect([...consoleTable.ROLE_PERMISSIONS[role]].sort(), role).toEqual(
        [...serviceTable.permissionsOfRole(role)].sort(),
      );
    }
  });
});

describe('the API-key presets', () => {
  const owner = consoleTable.ROLE_PERMISSIONS.owner;

  it('read-only holds every read and nothing else', () => {
    const { 'Read-only': read } = consoleTable.presetsOf(owner);
    expect([...read].sort()).toEqual(serviceTable.RESOURCES.map((r) => `${r}.read`).sort());
  });

  it('a minting backend reads templates, mints and acts on objects, and nothing more', () => {
    expect([...consoleTable.presetsOf(owner)['Minting backend']].sort()).toEqual(
      [
        'actions.create',
        'actions.read',
        'actions.update',
        'objects.create',
        'objects.read',
        'objects.update',
        'templates.read',
      ].sort(),
    );
  });

  it('full is everything its creator holds; no preset exceeds the creator', () => {
    const admin = consoleTable.ROLE_PERMISSIONS.admin;
    const presets = consoleTable.presetsOf(admin);
    expect([...presets.Full].sort()).toEqual([...admin].sort());
    for (const name of consoleTable.PRESETS) {
      for (const p of presets[name]) expect(admin.has(p), `${name} ${p}`).toBe(true);
    }
    const viewer = consoleTable.presetsOf(consoleTable.ROLE_PERMISSIONS.viewer);
    expect([...viewer['Minting backend']].sort()).toEqual(['objects.read', 'templates.read']);
  });
});
