import { pino } from 'pino';
import type { AppConfig } from '@/common/config/app-config';
import { readableLine } from './readable-lines';

/**
 * The line a process prints once it is up (`api listening`, `worker started`), written at once (not
 * through the buffered logger: scripts and tests wait for it). An info line: not written when
 * LOG_LEVEL is above info, readable with LOG_FORMAT=text.
 */
export function startupLine(config: Pick<AppConfig, 'logLevel' | 'logFormat'>, msg: string, fields: Record<string, unknown>): string | undefined {
  const threshold = config.logLevel === 'silent' ? Infinity : pino.levels.values[config.logLevel];
  if (threshold > pino.levels.values.info) return undefined;
  const json = JSON.stringify({ level: 30, msg, ...fields });
  return config.logFormat === 'text' ? readableLine(json) : `${json}\n`;
}
