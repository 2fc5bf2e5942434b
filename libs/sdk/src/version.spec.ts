import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { VERSION } from './version';

describe('VERSION', () => {
  it('equals the version in package.json (it is sent in the User-Agent)', () => {
    const manifest = JSON.parse(readFileSync(join(__dirname, '..', 'package.json'), 'utf8')) as { version: string };
    expect(VERSION).toBe(manifest.version);
  });
});
