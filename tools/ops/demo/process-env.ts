/**
 * How `npm start` runs the API and the worker as to environment and logs: development unless
 * NODE_ENV says otherwise (an unset NODE_ENV would mean production to them); in development, quiet
 * (warnings and errors only) and readable, unless LOG_LEVEL / LOG_FORMAT are set; in production,
 * JSON logs at the level the processes default to, as in production.
 */
export function startProcessEnv(env: NodeJS.ProcessEnv): { NODE_ENV: string; LOG_LEVEL?: string; LOG_FORMAT?: string } {
  const nodeEnv = env.NODE_ENV || 'development';
  if (nodeEnv !== 'development') return { NODE_ENV: nodeEnv };
  return { NODE_ENV: nodeEnv, LOG_LEVEL: env.LOG_LEVEL || 'warn', LOG_FORMAT: env.LOG_FORMAT || 'text' };
}
