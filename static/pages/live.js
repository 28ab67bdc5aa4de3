/*
 * Live updates of the player pages. The server renders every page complete; this script only
 * keeps it current:
 *  - a board's first page and a player's seasons follow the WebSocket stream
 *    (docs/websocket.md): a snapshot on connect, then `top` and `player` messages;
 *  - deeper pages of a board, which the stream does not cover, read the REST API every few
 *    seconds while the page is visible.
 * Rows are updated in place, keyed by player id, and moved (with a short slide) rather than
 * re-created, so nothing flickers. A dropped socket reconnects with exponential backoff and the
 * new connection's snapshot resynchronises the page; so does a gap in the message sequence.
 * Numbers are formatted like the server's template filters (pages/templatetags/pages.py).
 */
(function () {
  "use strict";

  const POLL_SECONDS = 10;
  const MAX_BACKOFF_MS = 30000;
  // Close codes after which reconnecting cannot help (docs/websocket.md).
  const FINAL_CLOSE_CODES = new Set([4400, 4404, 4410]);
  const RESYNC_CLOSE_CODE = 4000;

  const numbers = new Intl.NumberFormat("en-US");
  const reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)");

  function grouped(value) {
    return value === null || value === undefined ? "–" : numbers.format(value);
  }

  function percentile(value) {
    return value === null || value === undefined ? "–" : value.toFixed(2).replace(/\.?0+$/, "");
  }

  /* The badge's colour class, as pages/templatetags/pages.py's `hue` (one hue every 15 degrees). */
  function hue(playerId) {
    let value = 0;
    for (let i = 0; i < playerId.length; i += 1) {
      value = (value * 31 + playerId.charCodeAt(i)) % 360;
    }
    return `hue-${Math.floor(((value * 137) % 360) / 15)}`;
  }

  function initial(name) {
    const match = /[\p{L}\p{N}]/u.exec(name);
    return match ? match[0].toUpperCase() : "?";
  }

  function duration(seconds) {
    if (seconds < 60) {
      return "less than a minute";
    }
    const parts = [];
    for (const [name, size] of [["day", 86400], ["hour", 3600], ["minute", 60]]) {
      const count = Math.floor(seconds / size);
      seconds -= count * size;
      if (count || parts.length) {
        parts.push(count ? `${count} ${name}${count === 1 ? "" : "s"}` : "");
      }
      if (parts.length === 2) {
        break;
      }
    }
    return parts.filter(Boolean).join(" ");
  }

  function fromTemplate(template, value) {
    return template.replace(/__VALUE__/, encodeURIComponent(value));
  }

  /* A standings table whose rows follow a list of entries in the REST API's shape. */
  class StandingsTable {
    constructor(root, { highlight = null } = {}) {
      this.body = root.querySelector("[data-rows]");
      this.template = root.querySelector("template[data-row-template]");
      this.playerUrl = root.dataset.playerUrl;
      this.empty = root.parentElement.querySelector("[data-empty]");
      this.highlight = highlight;
    }

    rows() {
      const rows = new Map();
      for (const row of this.body.querySelectorAll("tr[data-player-id]")) {
        rows.set(row.dataset.playerId, row);
      }
      return rows;
    }

    render(entries) {
      const rows = this.rows();
      const animate = !reducedMotion.matches && !document.hidden;
      const before = new Map();
      if (animate) {
        for (const [id, row] of rows) {
          before.set(id, row.getBoundingClientRect().top);
        }
      }
      const wanted = new Set(entries.map((entry) => entry.player_id));
      for (const [id, row] of rows) {
        if (!wanted.has(id)) {
          row.remove();
        }
      }
      entries.forEach((entry, index) => {
        let row = rows.get(entry.player_id);
        const created = !row;
        if (created) {
          row = this.build(entry);
        }
        const scored = this.fill(row, entry);
        const current = this.body.children[index];
        if (current !== row) {
          this.body.insertBefore(row, current || null);
        }
        if (scored || (created && rows.size)) {
          this.flash(row);
        }
      });
      if (this.empty) {
        this.empty.hidden = entries.length > 0;
      }
      if (animate) {
        this.slide(before, rows);
      }
    }

    /* FLIP: each row that moved starts where it was and slides to its new place. */
    slide(before, rows) {
      for (const [id, top] of before) {
        const row = rows.get(id);
        if (!row.isConnected) {
          continue;
        }
        const delta = top - row.getBoundingClientRect().top;
        if (Math.abs(delta) > 1 && row.animate) {
          row.animate([{ transform: `translateY(${delta}px)` }, { transform: "none" }], {
            duration: 450,
            easing: "ease-out",
          });
        }
      }
    }

    flash(row) {
      row.classList.remove("changed");
      // Restart the highlight animation: reading offsetWidth applies the removal first.
      void row.offsetWidth;
      row.classList.add("changed");
    }

    build(entry) {
      const row = this.template.content.firstElementChild.cloneNode(true);
      row.dataset.playerId = entry.player_id;
      row.querySelector("a").href = fromTemplate(this.playerUrl, entry.player_id);
      row.querySelector(".avatar").classList.add(hue(entry.player_id));
      if (entry.player_id === this.highlight) {
        row.classList.add("me");
        row.setAttribute("aria-current", "true");
      }
      return row;
    }

    /* Write only what differs; returns whether the points changed (a row that only moved
       slides instead of lighting up). */
    fill(row, entry) {
      let scored = false;
      const cells = [["td.rank", entry.rank, ""], ["td.points", entry.points, ""],
        ["td.global-rank", entry.global_rank, "#"]];
      for (const [selector, value, prefix] of cells) {
        const cell = row.querySelector(selector);
        if (cell && value !== undefined && cell.dataset.value !== String(value)) {
          scored = scored || (selector === "td.points" && cell.dataset.value !== "");
          cell.dataset.value = String(value);
          cell.textContent = prefix + grouped(value);
        }
      }
      const name = row.querySelector(".name");
      if (name.textContent !== entry.display_name) {
        name.textContent = entry.display_name;
      }
      const avatar = row.querySelector(".avatar");
      const image = avatar.querySelector("img");
      const letter = initial(entry.display_name);
      if ((image ? image.getAttribute("src") : "") !== (entry.avatar_url || "") ||
          (avatar.firstChild ? avatar.firstChild.nodeValue : "") !== letter) {
        avatar.textContent = letter;
        if (entry.avatar_url) {
          const img = document.createElement("img");
          Object.assign(img, { src: entry.avatar_url, alt: "", width: 32, height: 32 });
          img.loading = "lazy";
          img.referrerPolicy = "no-referrer";
          avatar.append(img);
        }
      }
      return scored;
    }
  }

  /* The status line next to a live table: "Live", "Reconnecting…", "Offline". */
  function setStatus(element, state, text) {
    if (!element) {
      return;
    }
    if (element.dataset.state !== state || element.textContent !== text) {
      element.dataset.state = state;
      element.textContent = text;
    }
  }

  /*
   * One WebSocket subscription that survives drops: reconnects with jittered exponential
   * backoff, and treats every (re)connection's snapshot as the new truth.
   */
  class LiveStream {
    constructor({ board, query, status, onMessage, onSeasonClosed }) {
      const scheme = window.location.protocol === "https:" ? "wss:" : "ws:";
      this.url = `${scheme}//${window.location.host}/ws/v1/leaderboard/` +
        `${encodeURIComponent(board)}/?${new URLSearchParams(query)}`;
      this.status = status;
      this.onMessage = onMessage;
      this.onSeasonClosed = onSeasonClosed;
      this.failures = 0;
      this.timer = null;
      this.socket = null;
      this.seq = 0;
      this.stopped = false;
      window.addEventListener("online", () => this.reconnectSoon(0));
      window.addEventListener("pagehide", () => this.stop());
      window.addEventListener("pageshow", (event) => {
        if (event.persisted) {
          // Back from the back-forward cache: follow the stream again from a snapshot.
          this.stopped = false;
          this.connect();
        }
      });
    }

    connect() {
      this.timer = null;
      if (this.stopped) {
        return;
      }
      this.seq = 0;
      let socket;
      try {
        socket = new WebSocket(this.url);
      } catch (error) {
        this.reconnectSoon();
        return;
      }
      this.socket = socket;
      socket.addEventListener("message", (event) => this.receive(socket, event));
      socket.addEventListener("close", (event) => this.closed(socket, event));
    }

    send(message) {
      if (this.socket && this.socket.readyState === WebSocket.OPEN) {
        this.socket.send(JSON.stringify(message));
      }
    }

    receive(socket, event) {
      if (socket !== this.socket) {
        return;
      }
      let message;
      try {
        message = JSON.parse(event.data);
      } catch (error) {
        return;
      }
      if (message.seq !== this.seq + 1) {
        // A message went missing: start over from a fresh snapshot.
        socket.close(RESYNC_CLOSE_CODE, "resync");
        return;
      }
      this.seq = message.seq;
      if (message.type === "snapshot") {
        this.failures = 0;
        setStatus(this.status, "live", "Live");
      }
      if (message.type === "season_closed") {
        this.stopped = true;
        setStatus(this.status, "offline", "Season closed");
        if (this.onSeasonClosed) {
          this.onSeasonClosed(message);
        }
        return;
      }
      if (message.type !== "error") {
        this.onMessage(message, this);
      }
    }

    closed(socket, event) {
      if (socket !== this.socket) {
        return;
      }
      this.socket = null;
      if (this.stopped) {
        return;
      }
      if (FINAL_CLOSE_CODES.has(event.code)) {
        this.stopped = true;
        setStatus(this.status, "offline", "Live updates unavailable");
        return;
      }
      this.reconnectSoon(event.code === RESYNC_CLOSE_CODE ? 0 : undefined);
    }

    reconnectSoon(delay) {
      if (this.stopped || this.timer !== null || this.socket) {
        return;
      }
      if (delay === undefined) {
        const ceiling = Math.min(MAX_BACKOFF_MS, 1000 * 2 ** this.failures);
        delay = ceiling / 2 + Math.random() * (ceiling / 2);
        this.failures += 1;
      }
      setStatus(this.status, "reconnecting", "Reconnecting…");
      this.timer = window.setTimeout(() => this.connect(), delay);
    }

    stop() {
      this.stopped = true;
      if (this.timer !== null) {
        window.clearTimeout(this.timer);
      }
      if (this.socket) {
        this.socket.close(1000);
      }
    }
  }

  function seasonClosedNotice(section, status, message) {
    if (!message.next_season || !status) {
      return;
    }
    const link = document.createElement("a");
    link.href = fromTemplate(section.dataset.seasonUrl, message.next_season);
    link.textContent = "Next season →";
    status.after(" ", link);
  }

  function setTotal(section, total) {
    const element = section.querySelector("[data-total-players]");
    if (element && element.textContent !== grouped(total)) {
      element.textContent = grouped(total);
    }
  }

  /* A query with the section's segment (`segment=country:DE`), when it shows one. */
  function withSegment(section, query) {
    return section.dataset.segment ? { ...query, segment: section.dataset.segment } : query;
  }

  /* A board's first page (of the whole board or of one segment): the stream's top 100. */
  function followBoard(section) {
    const table = new StandingsTable(section.querySelector(".table-wrap"));
    const status = section.querySelector("[data-live-status]");
    const stream = new LiveStream({
      board: section.dataset.liveBoard,
      query: withSegment(section, { season: section.dataset.season, top: section.dataset.liveTop }),
      status,
      onMessage(message) {
        if (message.type === "snapshot" || message.type === "top") {
          table.render(message.entries);
          setTotal(section, message.total_players);
        }
      },
      onSeasonClosed: (message) => seasonClosedNotice(section, status, message),
    });
    stream.connect();
  }

  /* A player and their friends: the stream's friends view, and a short notice when a friend
     comes past the player. */
  function followFriends(section) {
    const playerId = section.dataset.liveFriends;
    const table = new StandingsTable(section.querySelector(".table-wrap"), { highlight: playerId });
    const status = section.querySelector("[data-live-status]");
    const notice = section.querySelector("[data-friends-notice]");
    const stream = new LiveStream({
      board: section.dataset.liveBoard,
      query: { season: section.dataset.season, top: 0, friends_of: playerId },
      status,
      onMessage(message) {
        if (message.type === "friends") {
          table.render(message.entries);
          setTotal(section, message.total_players);
        } else if (message.type === "friend_passed" && notice) {
          const friend = message.friend;
          notice.textContent = `${friend.display_name} passed ${playerId}: now #${grouped(
            friend.rank)} among friends, #${grouped(friend.global_rank)} overall.`;
          notice.hidden = false;
        }
      },
      onSeasonClosed: (message) => seasonClosedNotice(section, status, message),
    });
    stream.connect();
  }

  /* A board's deeper pages: the REST API's page, read again every few seconds while visible. */
  function pollBoard(section) {
    const table = new StandingsTable(section.querySelector(".table-wrap"));
    const status = section.querySelector("[data-live-status]");
    const query = new URLSearchParams(withSegment(section, {
      board: section.dataset.liveBoard,
      season: section.dataset.season,
      offset: section.dataset.pollOffset,
      limit: section.dataset.pollLimit,
    }));
    let failures = 0;
    async function poll() {
      if (!document.hidden) {
        try {
          const response = await fetch(`/api/v1/leaderboard/top?${query}`, {
            headers: { Accept: "application/json" },
          });
          if (!response.ok) {
            throw new Error(`HTTP ${response.status}`);
          }
          const page = await response.json();
          table.render(page.entries);
          setTotal(section, page.total_players);
          failures = 0;
          setStatus(status, "live", "Live");
        } catch (error) {
          failures += 1;
          setStatus(status, "reconnecting", "Reconnecting…");
        }
      }
      const delay = Math.min(MAX_BACKOFF_MS, POLL_SECONDS * 1000 * 2 ** failures);
      window.setTimeout(poll, delay);
    }
    window.setTimeout(poll, POLL_SECONDS * 1000);
  }

  /*
   * A player's running season: their numbers from `player` messages, and the players around
   * them. The stream sends the around-me rows only in its snapshot, so the section also follows
   * those neighbours: when any of them (or the player) moves, it reads the window again from
   * the REST API.
   */
  function followPlayer(section) {
    const playerId = section.dataset.livePlayer;
    const board = section.dataset.liveBoard;
    const season = section.dataset.season;
    const around = section.dataset.around;
    const table = new StandingsTable(section.querySelector(".table-wrap"), { highlight: playerId });
    const status = section.querySelector("[data-live-status]");
    let following = new Set();
    let refreshTimer = null;
    let refreshing = false;
    let refreshAgain = false;

    function setStat(name, text) {
      const element = section.querySelector(`[data-stat="${name}"]`);
      if (element && element.textContent !== text) {
        element.textContent = text;
      }
    }

    /* The page's player was overtaken, crossed a top-N threshold or changed reward tier: one
       short line that the next event replaces (neighbours' events are not shown). */
    const notice = section.querySelector("[data-rank-notice]");
    const name = section.dataset.playerName || playerId;
    function showRankEvent(message) {
      let text = null;
      if (message.type === "overtaken" && message.by.length) {
        const others = message.by.length - 1;
        text = `${message.by[0].display_name}${others ? ` and ${others} more` : ""} passed ${name
          }: now #${grouped(message.rank)}.`;
      } else if (message.type === "threshold") {
        text = message.entered ? `${name} entered the top ${grouped(message.top)}.`
          : `${name} dropped out of the top ${grouped(message.top)}.`;
      } else if (message.type === "tier") {
        text = message.tier ? `If the season ended now: ${message.tier.reward_code}.`
          : "If the season ended now: no reward.";
      }
      if (notice && text) {
        notice.textContent = text;
        notice.hidden = false;
      }
    }

    function showStanding(standing) {
      setStat("rank", standing.rank === null ? "Not ranked" : `#${grouped(standing.rank)}`);
      // The chart's caption says where the line ends "now": the live rank, not the last sample.
      setStat("rank-now", standing.rank === null ? "not ranked" : `#${grouped(standing.rank)}`);
      setStat("points", grouped(standing.points));
      setStat("percentile", percentile(standing.percentile));
      setStat("total_players", grouped(standing.total_players));
    }

    function showAround(entries, stream) {
      table.render(entries);
      // Neighbours to follow: at most 19, the stream's limit of 20 players per connection.
      const wanted = new Set(
        entries.map((entry) => entry.player_id).filter((id) => id !== playerId).slice(0, 19),
      );
      for (const id of following) {
        if (!wanted.has(id)) {
          stream.send({ action: "unfollow", player_id: id });
        }
      }
      for (const id of wanted) {
        if (!following.has(id)) {
          stream.send({ action: "follow", player_id: id });
        }
      }
      following = wanted;
    }

    async function refreshAround(stream) {
      refreshTimer = null;
      if (refreshing) {
        refreshAgain = true;
        return;
      }
      refreshing = true;
      try {
        const query = new URLSearchParams({ board, season, n: around });
        const response = await fetch(
          `/api/v1/leaderboard/players/${encodeURIComponent(playerId)}/around?${query}`,
          { headers: { Accept: "application/json" } },
        );
        if (response.ok) {
          showAround((await response.json()).entries, stream);
        } else if (response.status === 404) {
          showAround([], stream);
        }
      } catch (error) {
        // The next change, or the next snapshot after a reconnect, reads it again.
      } finally {
        refreshing = false;
        if (refreshAgain) {
          refreshAgain = false;
          scheduleRefresh(stream);
        }
      }
    }

    function scheduleRefresh(stream) {
      if (refreshTimer === null) {
        refreshTimer = window.setTimeout(() => refreshAround(stream), 150);
      }
    }

    const stream = new LiveStream({
      board,
      query: { season, top: 0, player_id: playerId, n: around },
      status,
      onMessage(message, source) {
        if (message.type === "snapshot") {
          // A new connection follows nobody yet.
          following = new Set();
          if (message.player) {
            showStanding(message.player);
            showAround(message.player.entries, source);
          }
        } else if (message.type === "player") {
          if (message.player_id === playerId) {
            showStanding(message);
          }
          scheduleRefresh(source);
        } else if (message.player_id === playerId) {
          showRankEvent(message);
        }
      },
      onSeasonClosed: (message) => seasonClosedNotice(section, status, message),
    });
    stream.connect();
  }

  /* "12 days 3 hours left", kept current without a reload. */
  function tickTimeLeft() {
    for (const element of document.querySelectorAll("time[data-ends-at]")) {
      const seconds = Math.floor((Date.parse(element.dataset.endsAt) - Date.now()) / 1000);
      if (seconds <= 0) {
        element.parentElement.textContent = "Season ended";
      } else if (element.textContent !== duration(seconds)) {
        element.textContent = duration(seconds);
      }
    }
  }

  /* An avatar that cannot load (gone, refused by its host) leaves its letter badge instead of
     a broken image: images that failed before this script ran, and any that fail later (error
     events do not bubble, so the document listens in the capture phase). */
  function avatarsFallBack() {
    const drop = (image) => {
      if (image instanceof HTMLImageElement && image.closest(".avatar")) {
        image.remove();
      }
    };
    document.addEventListener("error", (event) => drop(event.target), true);
    for (const image of document.querySelectorAll(".avatar img")) {
      if (image.complete && image.naturalWidth === 0) {
        drop(image);
      }
    }
  }

  /* Suggestions as you type in the lookup box: players whose name starts with the text (any
     case), best matches first, from the public search (GET /api/v1/players?search=). Choosing
     one puts its player id in the box, which then goes straight to their page. */
  function suggestPlayers() {
    const input = document.getElementById("lookup-player-id");
    const list = document.getElementById("player-suggestions");
    if (!input || !list || !("fetch" in window)) {
      return;
    }
    let timer = null;
    let asked = "";
    input.addEventListener("input", () => {
      window.clearTimeout(timer);
      const text = input.value.trim();
      if (text.length < 2 || text === asked) {
        return;
      }
      timer = window.setTimeout(async () => {
        asked = text;
        try {
          const query = new URLSearchParams({ search: text, limit: "8" });
          const response = await fetch(`/api/v1/players?${query}`);
          if (!response.ok || input.value.trim() !== text) {
            return;
          }
          const found = await response.json();
          list.replaceChildren(
            ...found.players.map((player) => {
              const option = document.createElement("option");
              option.value = player.player_id;
              const rank = player.rank === null ? "" : ` · #${grouped(player.rank)}`;
              option.label = `${player.display_name}${rank}`;
              return option;
            }),
          );
        } catch (error) {
          // No suggestions this time; the box still takes a name or an id.
        }
      }, 200);
    });
  }

  function start() {
    avatarsFallBack();
    suggestPlayers();
    if (!("WebSocket" in window)) {
      return;
    }
    for (const section of document.querySelectorAll("[data-live-top]")) {
      followBoard(section);
    }
    for (const section of document.querySelectorAll("[data-poll-offset]")) {
      pollBoard(section);
    }
    for (const section of document.querySelectorAll("[data-live-player]")) {
      followPlayer(section);
    }
    for (const section of document.querySelectorAll("[data-live-friends]")) {
      followFriends(section);
    }
    window.setInterval(tickTimeLeft, 30000);
  }

  start();
})();
