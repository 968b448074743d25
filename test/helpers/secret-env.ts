/** Variables that look like secrets (and some that do not), set in this process for a test and removed after it. */

export const SECRETS = {
  KC_TEST_PROVIDER_API_KEY: "sk-secret-1",
  kc_test_lower_token: "secret-2",
  KC_TEST_CLIENT_SECRET: "secret-3",
  KC_TEST_DB_PASSWORD_FILE: "secret-4",
  KC_TEST_GITHUB_TOKEN: "secret-5",
};
/** Kept by the default policy: the patterns match whole names (`_KEY` at the end, not `KEY` anywhere). */
export const KEPT = { KC_TEST_PLAIN: "plain-value", KC_TEST_KEYBOARD: "us", KC_TEST_TOKENS_USED: "12" };

/** Registers mocha hooks that set SECRETS and KEPT before each test and remove them after it. */
export function withTestVariables(): void {
  beforeEach(() => Object.assign(process.env, SECRETS, KEPT));
  afterEach(() => {
    for (const name of [...Object.keys(SECRETS), ...Object.keys(KEPT)]) delete process.env[name];
  });
}
