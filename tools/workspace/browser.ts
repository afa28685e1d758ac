/**
 * Debian's chromium for the browser tests (test/e2e/merge-queue-page.e2e-spec.ts, driven by
 * playwright-core): found at /usr/bin/chromium, or installed with apt-get when this runs as root
 * where apt is available. Otherwise the reason it cannot be, which the tests print as they skip.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const CHROMIUM = '/usr/bin/chromium';

export function ensureChromium(log: (line: string) => void): { executablePath: string } | { skipReason: string } {
  if (existsSync(CHROMIUM)) return { executablePath: CHROMIUM };
  if (process.getuid?.() !== 0) return { skipReason: `${CHROMIUM} is missing and installing it needs root (apt-get install chromium)` };
  if (spawnSync('apt-get', ['--version'], { stdio: 'ignore' }).status !== 0) return { skipReason: `${CHROMIUM} is missing and apt-get is not available` };
  log('installing chromium for the browser tests (apt-get install -y chromium)…');
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  const install = () => spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], { env, stdio: 'ignore', timeout: 600_000 }).status === 0;
  // A fresh image has no package lists yet: read them once and try again.
  if (!install() && !(spawnSync('apt-get', ['update'], { env, stdio: 'ignore', timeout: 300_000 }).status === 0 && install()))
    return { skipReason: 'apt-get could not install chromium (no network to the Debian mirrors?)' };
  return existsSync(CHROMIUM) ? { executablePath: CHROMIUM } : { skipReason: `chromium was installed but ${CHROMIUM} is missing` };
}
