/**
 * The account part of the protocol: provider credentials read, stored, signed in and removed from a client
 * (Codex's `account/*` family, for many providers). Spread into protocol.ts's tables, so it is validated and
 * written into the generated schema like every other method.
 */
import { Type } from "@sinclair/typebox";
import type { MethodSpec, NotificationSpec } from "./protocol.js";
import { Arr, Bool, Lit, Num, Obj, Opt, Str } from "./protocol-base.js";

const ProviderName = Str({ minLength: 1, description: "The provider's name, as in model ids (anthropic)" });

/** What auth.json holds for a provider, masked as `knightcode login --list` masks it. */
export const AccountCredential = Obj(
  {
    type: Str({
      description:
        '"none" when auth.json holds nothing for the provider; else what it holds: "api_key", "oauth" (a subscription sign-in), or a login method\'s own type',
    }),
    masked: Opt(
      Str({ description: "The key as ****abcd (its last four characters; **** alone when short)" }),
    ),
    expires: Opt(
      Num({ description: "When a sign-in's access token expires (epoch ms); renewed before use" }),
    ),
  },
  { $id: "AccountCredential" },
);

/** One provider as `account/read` lists it. */
export const AccountProvider = Obj(
  {
    provider: Str(),
    credential: AccountCredential,
    needsKey: Bool({
      description: "false for a provider that takes no key (a local server): it is usable without signing in",
    }),
    acceptsApiKey: Bool({
      description:
        "Whether account/login/start takes {provider, apiKey} for it: not for a provider that needs no key and has no sign-in method",
    }),
    keyVariable: Opt(Str({ description: "The environment variable a key is also read from" })),
    keySource: Opt(
      Type.Union([Lit("sdk"), Lit("auth.json"), Lit("environment"), Lit("models.json")], {
        description: "Where the key requests carry comes from now; absent when none resolves",
      }),
    ),
    loginMethods: Arr(
      Obj({
        id: Str({ description: "What account/login/start's method takes" }),
        label: Str(),
      }),
      { description: "The provider's sign-in methods besides an API key" },
    ),
    loginInProgress: Opt(Str({ description: "The loginId of a sign-in running for the provider" })),
  },
  { $id: "AccountProvider" },
);

export const accountRequests = {
  "account/read": {
    description:
      "The providers with their stored credential (keys masked), what they need, and their sign-in methods",
    params: Obj({}),
    result: Obj({
      providers: Arr(AccountProvider),
      path: Str({ description: "The auth.json file credentials are kept in (mode 0600)" }),
    }),
  },
  "account/login/start": {
    description:
      "Stores an API key ({provider, apiKey}), or starts a provider's sign-in method ({provider, method}) and answers at once with its loginId",
    params: Obj({
      provider: ProviderName,
      apiKey: Opt(Str({ minLength: 1, description: "The key to store; never sent back" })),
      method: Opt(Str({ minLength: 1, description: "A login method's id (account/read)" })),
    }),
    result: Type.Union([
      Obj({ type: Lit("apiKey") }),
      Obj({
        type: Lit("signIn"),
        loginId: Str({ description: "Names the sign-in in its progress, dialogs and completion" }),
      }),
    ]),
  },
  "account/login/cancel": {
    description: "Stops a running sign-in; it ends with account/login/completed {success: false}",
    params: Obj({ loginId: Str({ minLength: 1 }) }),
    result: Obj({
      status: Type.Union([Lit("cancelled"), Lit("notFound")], {
        description: "notFound: no sign-in with that id is running (it ended, or never was)",
      }),
    }),
  },
  "account/logout": {
    description: "Removes the provider's credential from auth.json",
    params: Obj({ provider: ProviderName }),
    result: Obj({ removed: Bool({ description: "false when auth.json held nothing for it" }) }),
  },
} as const satisfies Record<string, MethodSpec>;

export const accountNotifications = {
  "account/login/progress": {
    description:
      "What a running sign-in tells the user (a URL to open, a device code to enter), to the connection that started it",
    params: Obj({
      loginId: Str(),
      provider: Str(),
      message: Str(),
      url: Opt(Str({ description: "The first http(s) URL of the message, to open in a browser" })),
    }),
  },
  "account/login/completed": {
    description: "A sign-in ended: signed in (the credential is stored), failed or cancelled",
    params: Obj({
      loginId: Str(),
      provider: Str(),
      success: Bool(),
      error: Opt(Str({ description: "Why it did not sign in" })),
    }),
  },
  "account/updated": {
    description:
      "A provider's stored credential changed (a key stored, a sign-in, a logout), to every client",
    params: Obj({ provider: Str(), credential: AccountCredential }),
  },
} as const satisfies Record<string, NotificationSpec>;

/** Shared schemas of this part, written as definitions of their own. */
export const accountSharedSchemas = [AccountCredential, AccountProvider] as const;
