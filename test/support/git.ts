import type { NestExpressApplication } from '@nestjs/platform-express';
import { APP_CONFIG } from '@/common/config/config.module';
import { loadConfig, type AppConfig, type GitConfig } from '@/common/config/app-config';
import { GitProviderEmulator } from '@tools/git-emulator/emulator';
import { createTestApp } from './app';

export { GitProviderEmulator };

/** The configuration with its GitHub cloud endpoints on the emulator and `git` overrides (SSRF policy, timeouts...). */
export function gitTestConfig(emulator: GitProviderEmulator, git: Partial<GitConfig> = {}): AppConfig {
  const base = loadConfig();
  return {
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
}

/** The app configured by gitTestConfig. */
export async function createGitTestApp(emulator: GitProviderEmulator, git: Partial<GitConfig> = {}): Promise<NestExpressApplication> {
  return createTestApp({}, (builder) => builder.overrideProvider(APP_CONFIG).useValue(gitTestConfig(emulator, git)));
}
