import type { NestExpressApplication } from '@nestjs/platform-express';
import { APP_CONFIG } from '@/common/config/config.module';
import { loadConfig, type AppConfig, type GitConfig } from '@/common/config/app-config';
import { GitProviderEmulator } from '../../tools/git-emulator/emulator';
import { createTestApp } from './app';

export { GitProviderEmulator };

/** The app with its GitHub cloud endpoints on the emulator and `git` overrides (SSRF policy, timeouts...). */
export async function createGitTestApp(emulator: GitProviderEmulator, git: Partial<GitConfig> = {}): Promise<NestExpressApplication> {
  const base = loadConfig();
  const config: AppConfig = {
    ...base,
    git: {
      ...base.git,
      github: { apiUrl: emulator.url, webUrl: emulator.url, clientId: emulator.clientId, clientSecret: emulator.clientSecret, appSlug: emulator.appSlug },
      publicUrl: 'http://api.test',
      redirectAllowedOrigins: ['https://app.example.com'],
      repositoryCacheTtlMs: 0,
      ...git,
    },
  };
  return createTestApp({}, (builder) => builder.overrideProvider(APP_CONFIG).useValue(config));
}
