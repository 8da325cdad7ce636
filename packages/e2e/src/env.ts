import { inject } from 'vitest';

declare module 'vitest' {
  export interface ProvidedContext {
    /** The Lamina server of this run, e.g. http://127.0.0.1:40123 (test/globalSetup.ts). */
    baseUrl: string;
    /** DEMO_PASSWORD of that server: the password of every demo account. */
    demoPassword: string;
  }
}

export function baseUrl(): string {
  return inject('baseUrl');
}

export function demoPassword(): string {
  return inject('demoPassword');
}

/** Absolute URL of a path on the server under test. */
export function appUrl(pathname: string): string {
  return new URL(pathname, baseUrl()).toString();
}
