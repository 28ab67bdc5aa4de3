/**
 * The Leaderboard API's typed client: openapi-fetch over the types openapi-typescript generates
 * from the schema (src/schema.ts, written by `make clients`; never edited by hand). Every path,
 * parameter, body and answer, errors included, is typed from the schema.
 */
import createClient, { type Client } from "openapi-fetch";

import type { components, paths } from "./schema.js";

export type { components, operations, paths } from "./schema.js";

/** The error body every failed request answers with: `{"error": {"code", "message", "details"}}`. */
export type ApiError = components["schemas"]["Error"];

export type LeaderboardClient = Client<paths>;

export interface LeaderboardClientOptions {
  /** The service's address, e.g. `https://leaderboard.example.com` (no `/api/v1`). */
  baseUrl: string;
  /** A game server's key, for the writes; the reads need none. */
  apiKey?: string;
  /** Another fetch (a test's, or one with retries); the global one by default. */
  fetch?: typeof globalThis.fetch;
}

export function createLeaderboardClient(options: LeaderboardClientOptions): LeaderboardClient {
  return createClient<paths>({
    baseUrl: options.baseUrl,
    headers: options.apiKey ? { Authorization: `Api-Key ${options.apiKey}` } : {},
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
}

/** Seconds to wait before trying again, from a 429's (or a 503's) `Retry-After` header. */
export function retryAfterSeconds(response: Response): number | null {
  const value = response.headers.get("Retry-After");
  if (value === null || !/^\d+$/.test(value)) {
    return null;
  }
  return Number(value);
}
