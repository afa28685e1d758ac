import { pino, type Level } from 'pino';
import type { AppConfig } from '@/common/config/app-config';
import { readableLine } from './readable-lines';

type LineConfig = Pick<AppConfig, 'logLevel' | 'logFormat'>;

/**
 * A line about the process itself (`api listening`, `worker started`, `api stopping`...), written
 * at once (not through the buffered logger: it must be out before the process exits). As JSON (and
 * before the configuration is known) it is always written, as scripts, benches and orchestrators
 * wait for it; with LOG_FORMAT=text it is for a person: readable, and only at LOG_LEVEL `level` or
 * below (so `npm start`'s quiet development logs show no boot lines).
 */
export function processLine(config: LineConfig | undefined, level: Level, msg: string, fields: Record<string, unknown> = {}): string | undefined {
  const json = JSON.stringify({ level: pino.levels.values[level], ...('time' in fields ? { time: fields.time } : {}), msg, ...fields });
  if (config?.logFormat !== 'text') return `${json}\n`;
  const threshold = config.logLevel === 'silent' ? Infinity : pino.levels.values[config.logLevel];
  return threshold > pino.levels.values[level] ? undefined : readableLine(json);
}

/** The info line a process prints once it is up (`api listening`, `worker started`). */
export function startupLine(config: LineConfig, msg: string, fields: Record<string, unknown>): string | undefined {
  return processLine(config, 'info', msg, fields);
}
