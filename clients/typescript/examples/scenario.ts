/**
 * A game server's day with the typed client, run against a live service by
 * tests/clients/test_typescript_client.py: post a batch, read a rank, the top, around-me, store
 * friends and read the friends view, then meet a conflict (409) and the rate limit (429 with
 * Retry-After). It prints what it was answered as one JSON object and exits non-zero on any
 * answer it did not expect.
 *
 *   node dist/examples/scenario.js http://127.0.0.1:8000 <game-server key> <player id prefix>
 */
import { type ApiError, createLeaderboardClient, retryAfterSeconds } from "../src/index.js";

const [baseUrl, apiKey, prefix] = process.argv.slice(2);
if (!baseUrl || !apiKey || !prefix) {
  console.error("usage: scenario.js BASE_URL API_KEY PLAYER_ID_PREFIX");
  process.exit(2);
}

const api = createLeaderboardClient({ baseUrl, apiKey });
const [ana, bo, cy] = [`${prefix}-ana`, `${prefix}-bo`, `${prefix}-cy`];
const MIRROR_SECONDS = 30;
// The rate limit the test sets is far below this: the loop ends with a 429 long before.
const MAX_POSTS = 100;

function expect(condition: boolean, message: string): asserts condition {
  if (!condition) {
    throw new Error(message);
  }
}

async function waitFor<T>(what: string, read: () => Promise<T | undefined>): Promise<T> {
  // A confirmed result reaches the ranks within about a second (the mirror is asynchronous).
  const deadline = Date.now() + MIRROR_SECONDS * 1000;
  for (;;) {
    const value = await read();
    if (value !== undefined) {
      return value;
    }
    expect(Date.now() < deadline, `${what}: not within ${MIRROR_SECONDS} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const batch = await api.POST("/api/v1/scores", {
  body: [
    { player_id: ana, points: 50, match_id: `${prefix}-m1` },
    { player_id: bo, points: 80, match_id: `${prefix}-m1` },
    { player_id: cy, points: 30, match_id: `${prefix}-m1` },
  ],
});
expect(batch.response.status === 200, `batch: ${batch.response.status}`);

const top = await waitFor("the batch in the top", async () => {
  const { data } = await api.GET("/api/v1/leaderboard/top", { params: { query: { limit: 10 } } });
  return data && data.total_players === 3 ? data : undefined;
});

const rank = await api.GET("/api/v1/leaderboard/players/{player_id}", {
  params: { path: { player_id: ana } },
});
expect(rank.data !== undefined, `rank: ${rank.response.status}`);

const around = await api.GET("/api/v1/leaderboard/players/{player_id}/around", {
  params: { path: { player_id: ana }, query: { n: 1 } },
});
expect(around.data !== undefined, `around: ${around.response.status}`);

const friends = await api.PUT("/api/v1/players/{player_id}/friends", {
  params: { path: { player_id: ana } },
  body: { friends: [bo, `${prefix}-not-played-yet`] },
});
expect(friends.data !== undefined, `friends: ${friends.response.status}`);

const friendsView = await api.GET("/api/v1/leaderboard/players/{player_id}/friends", {
  params: { path: { player_id: ana } },
});
expect(friendsView.data !== undefined, `friends view: ${friendsView.response.status}`);

// The same match and player with other points: a conflict, nothing written.
const conflict = await api.POST("/api/v1/scores", {
  body: { player_id: ana, points: 99, match_id: `${prefix}-m1` },
});
expect(conflict.error !== undefined, `conflict: ${conflict.response.status}`);

// Posting the same result again is harmless (a duplicate) until the key's rate runs out.
let limited: { status: number; body: ApiError; retryAfter: number | null } | undefined;
for (let post = 0; post < MAX_POSTS && limited === undefined; post++) {
  const { response, error } = await api.POST("/api/v1/scores", {
    body: { player_id: ana, points: 50, match_id: `${prefix}-m1` },
  });
  if (response.status === 429 && error !== undefined) {
    limited = { status: response.status, body: error, retryAfter: retryAfterSeconds(response) };
  } else {
    expect(response.status === 200, `duplicate: ${response.status}`);
  }
}
expect(limited !== undefined, `no 429 in ${MAX_POSTS} posts`);

console.log(
  JSON.stringify({
    batch: batch.data,
    rank: rank.data,
    top,
    around: around.data,
    friends: friends.data,
    friends_view: friendsView.data,
    conflict: { status: conflict.response.status, body: conflict.error },
    rate_limited: { status: limited.status, body: limited.body },
    retry_after: limited.retryAfter,
  }),
);
