/**
 * What webfetch's tool module needs of a fetch before one is made: the redirect limit its description names and
 * the refusal error it tells apart from other failures. The fetch itself (http-get.ts, with Node's http, https,
 * zlib and DNS modules and the address guard) loads with the first call of the tool, not with the session.
 */

export const MAX_REDIRECTS = 5;

/** A refusal or failure with the message the model sees. */
export class FetchRefusedError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "FetchRefusedError";
  }
}
