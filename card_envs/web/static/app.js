// card-envs in the browser: play, watch and replay games served by `card-envs serve`.
// Plain JavaScript, no build step. Everything shown comes from the server; text is always set
// with textContent (a records file may hold any text).
"use strict";

const SUITS = ["\u2660", "\u2665", "\u2666", "\u2663"];
const SPEEDS = [3000, 2000, 1000, 500, 200, 50]; // ms between moves when watching
const $ = (id) => document.getElementById(id);

const ui = {
  mode: "play",
  catalog: [],
  table: null,       // {id, data}
  replay: null,      // {id, games, game, step, steps, view}
  picked: null,      // a card picked for a two-click move (98 Cards: a card, then a pile)
  typed: "",         // digits typed for a move number
  timer: null,       // the watch timer
  paused: false,
  busy: false,
  view: "",          // watching: "" (every hand) or a seat
};

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}

function say(text) {
  const box = $("message");
  box.textContent = text || "";
  box.hidden = !text;
}

async function api(method, path, body, contentType) {
  const options = { method, headers: {} };
  if (body !== undefined) {
    options.headers["Content-Type"] = contentType || "application/json";
    options.body = contentType ? body : JSON.stringify(body);
  }
  const response = await fetch(path, options);
  const data = await response.json().catch(() => ({ error: `HTTP ${response.status}` }));
  if (!response.ok) throw new Error(data.error || `HTTP ${response.status}`);
  return data;
}

// --- setting up a game ----------------------------------------------------------------------
function currentGame() {
  return ui.catalog.find((g) => g.env === $("game").value) || ui.catalog[0];
}

function variantLabel(v) {
  const keys = Object.keys(v.rules);
  return keys.length ? keys.map((k) => `${k}=${v.rules[k]}`).join(", ") : "standard";
}

function currentVariant() {
  return currentGame().variants[Number($("variant").value) || 0];
}

function chosenRules() {
  const variant = currentVariant();
  const rules = { ...variant.rules };
  if (variant.players.length > 1) rules.num_players = Number($("players").value);
  return rules;
}

function fillSelect(select, items, value) {
  select.replaceChildren(...items.map(([v, label]) => {
    const option = el("option", null, label);
    option.value = v;
    return option;
  }));
  if (value !== undefined && items.some(([v]) => String(v) === String(value))) {
    select.value = String(value);
  }
}

function onGameChange() {
  const game = currentGame();
  $("rules-text").textContent = game.how_to_play;
  fillSelect($("variant"), game.variants.map((v, k) => [k, variantLabel(v)]), 0);
  onVariantChange();
}

function onVariantChange() {
  const variant = currentVariant();
  fillSelect($("players"), variant.players.map((n) => [n, String(n)]), variant.default_players);
  $("players").disabled = variant.players.length < 2;
  onPlayersChange();
}

function onPlayersChange() {
  const n = Number($("players").value);
  const seats = [...Array(n).keys()];
  fillSelect($("seat"), seats.map((p) => [p, `player_${p}`]), $("seat").value || 0);
  drawAgentChoices();
}

function drawAgentChoices() {
  const game = currentGame();
  const n = Number($("players").value);
  const seat = ui.mode === "play" ? Number($("seat").value) : -1;
  const box = $("agents");
  const old = [...box.querySelectorAll("select")].map((s) => s.value);
  box.replaceChildren();
  for (let p = 0; p < n; p++) {
    if (p === seat) continue;
    const label = el("label", null, `player_${p} `);
    const select = el("select", "agent-select");
    select.dataset.seat = p;
    fillSelect(select, game.agents.map((a) => [a, a]), old[p] || game.default_agent);
    label.append(select);
    box.append(label);
  }
}

function chosenAgents() {
  const n = Number($("players").value);
  const agents = Array(n).fill(null);
  for (const select of $("agents").querySelectorAll("select")) {
    agents[Number(select.dataset.seat)] = select.value;
  }
  return agents;
}

async function start() {
  stopWatching();
  say("");
  const watch = ui.mode === "watch";
  const body = {
    env: currentGame().env,
    rules: chosenRules(),
    seat: watch ? null : Number($("seat").value),
    agents: chosenAgents(),
  };
  $("start").disabled = true;
  $("setup-note").textContent = "dealing...";
  try {
    const data = await api("POST", "/api/tables", body);
    ui.table = { id: data.id, data };
    ui.view = "";
    location.hash = `table=${data.id}`;
    showTable(data);
    if (watch) { ui.paused = false; watchNext(); }
  } catch (err) {
    say(err.message);
  } finally {
    $("start").disabled = false;
    $("setup-note").textContent = "";
  }
}

// --- drawing the table ----------------------------------------------------------------------
function drawCard(c, onPick) {
  const node = el("span", "card");
  if (c.back) {
    node.classList.add("back");
    node.setAttribute("aria-label", "face-down card");
  } else {
    const suit = c.suit === null || c.suit === undefined ? "" : SUITS[c.suit];
    if (c.suit === 1 || c.suit === 2) node.classList.add("red");
    if (!suit) node.classList.add("plain");
    node.append(el("span", "rank", c.rank));
    if (suit) node.append(el("span", "suit", suit));
    node.setAttribute("aria-label", `${c.rank}${suit}`);
    node.title = `${c.rank}${suit}`;
  }
  if (c.mark) node.classList.add(`mark-${c.mark}`);
  if (c.act !== undefined) {
    node.classList.add("clickable");
    node.tabIndex = 0;
    node.dataset.act = c.act;
    node.addEventListener("click", () => playMove(c.act));
  } else if (c.pick !== undefined && onPick) {
    node.classList.add("pickable");
    if (ui.picked === c.pick) node.classList.add("picked");
    node.tabIndex = 0;
    node.addEventListener("click", () => onPick(c.pick));
  }
  return node;
}

function drawRow(r, onPick) {
  const node = el("div", `row row-${r.kind}`);
  node.append(el("div", "row-label", r.label));
  if (r.chips) {
    const chips = el("div", "chips");
    for (const chip of r.chips) chips.append(el("span", `chip chip-${chip.mark}`, chip.text));
    node.append(chips);
    return node;
  }
  const cards = el("div", "cards");
  for (const c of r.cards) cards.append(drawCard(c, onPick));
  if (!r.cards.length) cards.append(el("span", "empty", "\u2014"));
  node.append(cards);
  const bits = [];
  if (r.count !== undefined) bits.push(`${r.count} card${r.count === 1 ? "" : "s"}`);
  if (r.note) bits.push(r.note);
  if (bits.length) node.append(el("div", "row-note", bits.join(", ")));
  if (r.act !== undefined) {
    node.classList.add("clickable");
    node.tabIndex = 0;
    node.dataset.act = r.act;
    node.addEventListener("click", () => playMove(r.act));
  }
  const target = ui.picked !== null && r.targets ? r.targets[ui.picked] : undefined;
  if (target !== undefined) {
    node.classList.add("clickable", "target");
    node.dataset.act = target;
    node.addEventListener("click", () => playMove(target));
  }
  return node;
}

function drawSeat(s, names, me, onPick) {
  const node = el("div", "seat");
  if (s.acting) node.classList.add("acting");
  if (s.out) node.classList.add("out");
  if (s.team !== null && s.team !== undefined) node.classList.add(`team${s.team}`);
  if (me) node.classList.add("me");
  const head = el("div", "seat-head");
  head.append(el("span", "seat-name", `player_${s.seat} \u00b7 ${names[s.seat]}`));
  for (const tag of s.tags) head.append(el("span", "tag", tag));
  node.append(head);
  for (const r of s.rows) node.append(drawRow(r, onPick));
  return node;
}

function drawBoard(board, names, seat, text) {
  const box = $("board");
  box.replaceChildren();
  $("text").hidden = !!board;
  $("text").textContent = board ? "" : text;
  if (!board) return;
  box.className = `board layout-${board.layout} players-${board.seats.length}`;
  const onPick = (key) => { ui.picked = ui.picked === key ? null : key; redraw(); };
  const me = board.seats.find((s) => s.seat === seat);
  // the others clockwise from the seat after the viewer's, across the top
  const others = el("div", "others");
  const n = board.seats.length;
  const from = seat === null || seat === undefined ? 0 : seat + 1;
  for (let k = 0; k < n; k++) {
    const s = board.seats[(from + k) % n];
    if (s !== me) others.append(drawSeat(s, names, false, onPick));
  }
  const center = el("div", "center");
  for (const r of board.center) center.append(drawRow(r, onPick));
  box.append(others, center);
  if (me) box.append(drawSeat(me, names, true, onPick));
  $("status").textContent = board.status;
  $("info").replaceChildren(...board.info.map((line) => el("div", null, line)));
}

function redraw() {
  if (ui.mode === "replay" && ui.replay && ui.replay.frame) showFrame(ui.replay.frame);
  else if (ui.table) showTable(ui.table.data);
}

function showTable(data) {
  ui.table.data = data;
  $("table-area").hidden = false;
  $("replay-controls").hidden = true;
  const view = data.view;
  // the person's seat stays at the bottom with every hand open (a watcher sits at seat 0)
  const anchor = view ?? data.seat ?? 0;
  drawBoard(data.board, data.names, anchor, data.text);
  if (!data.board) $("status").textContent = "";
  $("notes").textContent = data.notes.join("; ");
  drawMoves(data.moves);
  drawNews(data.news, data.names, data.seat);
  const over = data.over;
  $("result").hidden = !over;
  if (over) {
    $("result-text").replaceChildren(...data.result.map((line) => el("div", null, line)));
    $("download").href = `/api/tables/${ui.table.id}/record`;
    $("open-hands").hidden = data.mode === "watch" || view === null;
  }
  $("watch-controls").hidden = data.mode !== "watch";
  if (data.mode === "watch") {
    const seats = [["", "every hand"], ...data.names.map((nm, p) => [String(p), `player_${p}`])];
    fillSelect($("watch-view"), seats, ui.view);
  }
}

function drawMoves(moves) {
  const area = $("moves-area");
  area.hidden = !moves.length;
  const box = $("moves");
  box.replaceChildren();
  ui.typed = "";
  $("typed").textContent = "";
  let group = null;
  let holder = box;
  moves.forEach((m, k) => {
    if (m.group !== group) {
      group = m.group;
      if (group) {
        const line = el("div", "move-group");
        line.append(el("span", "group-name", group));
        box.append(line);
        holder = line;
      } else {
        holder = box;
      }
    }
    const button = el("button", "move");
    button.type = "button";
    button.dataset.act = m.action;
    button.append(el("span", "num", `${k + 1}`), el("span", "label", m.group ? m.short : m.label));
    button.title = m.label;
    button.addEventListener("click", () => playMove(m.action));
    holder.append(button);
  });
}

function drawNews(news, names, seat) {
  const list = $("news");
  list.replaceChildren();
  $("news-title").textContent = seat === null ? "Last moves" : "Since your last move";
  for (const entry of news) {
    const who = entry.seat === seat ? "you" : `player_${entry.seat} (${names[entry.seat]})`;
    const item = el("li", entry.seat === seat ? "mine" : null, `${who}: ${entry.text}`);
    list.append(item);
  }
  $("news-area").hidden = !news.length;
}

// --- moving ---------------------------------------------------------------------------------
async function playMove(action) {
  if (!ui.table || ui.busy || ui.mode === "replay") return;
  const data = ui.table.data;
  if (data.mode !== "play" || data.to_act !== data.seat) return;
  ui.busy = true;
  ui.picked = null;
  document.body.classList.add("busy");
  try {
    const next = await api("POST", `/api/tables/${ui.table.id}/move`,
      { action: Number(action), step: data.step });
    say("");
    showTable(next);
  } catch (err) {
    say(err.message);
  } finally {
    ui.busy = false;
    document.body.classList.remove("busy");
  }
}

async function showAllHands() {
  if (!ui.table) return;
  try {
    const data = await api("GET", `/api/tables/${ui.table.id}?view=all`);
    showTable(data);
  } catch (err) {
    say(err.message);
  }
}

// --- watching -------------------------------------------------------------------------------
function stopWatching() {
  if (ui.timer) clearTimeout(ui.timer);
  ui.timer = null;
}

function speedLabel() {
  const ms = SPEEDS[Number($("speed").value)];
  $("speed-label").textContent = `${(1000 / ms).toFixed(ms > 1000 ? 2 : 1)} moves a second`;
}

function watchNext() {
  stopWatching();
  if (ui.paused || !ui.table || ui.table.data.mode !== "watch" || ui.table.data.over) return;
  ui.timer = setTimeout(watchStep, SPEEDS[Number($("speed").value)]);
}

async function watchStep() {
  if (!ui.table || ui.table.data.over || ui.busy) return;
  ui.busy = true;
  const view = ui.view === "" ? "all" : ui.view;
  try {
    const data = await api("POST", `/api/tables/${ui.table.id}/advance?view=${view}`,
      { step: ui.table.data.step });
    showTable(data);
  } catch (err) {
    say(err.message);
    ui.paused = true;
  } finally {
    ui.busy = false;
  }
  watchNext();
}

async function changeWatchView() {
  ui.view = $("watch-view").value;
  const view = ui.view === "" ? "all" : ui.view;
  try {
    showTable(await api("GET", `/api/tables/${ui.table.id}?view=${view}`));
  } catch (err) {
    say(err.message);
  }
}

function togglePause() {
  ui.paused = !ui.paused;
  $("watch-pause").textContent = ui.paused ? "Resume" : "Pause";
  if (!ui.paused) watchNext(); else stopWatching();
}

// --- replays --------------------------------------------------------------------------------
async function openReplayFile() {
  const file = $("replay-file").files[0];
  if (!file) return;
  say("");
  try {
    const text = await file.text();
    const data = await api("POST", "/api/replays", text, "application/x-ndjson");
    ui.replay = { id: data.id, games: data.games, game: 0, step: 0, view: "all" };
    fillSelect($("replay-game"), data.games.map((g) => [g.index, `${g.index + 1}. ${g.title}`]), 0);
    onReplayGame();
  } catch (err) {
    say(err.message);
  }
}

function onReplayGame() {
  const r = ui.replay;
  r.game = Number($("replay-game").value);
  const game = r.games[r.game];
  const views = game.agents.map((a, p) => [String(p), `player_${p} (${a})`]);
  if (game.finished) views.unshift(["all", "every hand open"]);
  fillSelect($("replay-view"), views, views[0][0]);
  r.view = views[0][0];
  replayGo(0);
}

async function replayGo(step) {
  const r = ui.replay;
  if (!r) return;
  const total = r.games[r.game].moves;
  // the step moves at once (keys pressed quickly add up); only the latest answer is shown
  r.step = Math.max(0, Math.min(total, step));
  const asked = (r.asked = (r.asked || 0) + 1);
  try {
    const frame = await api("GET", `/api/replays/${r.id}/${r.game}?step=${r.step}&view=${r.view}`);
    if (asked !== r.asked) return;
    r.frame = frame;
    say("");
    showFrame(frame);
  } catch (err) {
    if (asked === r.asked) say(err.message);
  }
}

function showFrame(f) {
  $("table-area").hidden = false;
  $("watch-controls").hidden = true;
  $("moves-area").hidden = true;
  $("replay-controls").hidden = false;
  drawBoard(f.board, f.names, f.view ?? 0, f.text);
  $("notes").textContent = "";
  $("replay-slider").max = f.steps;
  $("replay-slider").value = f.step;
  $("replay-step").textContent = `step ${f.step} of ${f.steps}`;
  drawNews(f.last ? [f.last] : [], f.names, f.view);
  $("news-title").textContent = "Last move";
  $("result").hidden = !f.result;
  if (f.result) {
    $("result-text").replaceChildren(...f.result.map((line) => el("div", null, line)));
    $("again").hidden = true;
    $("open-hands").hidden = true;
    $("download").hidden = true;
  }
}

// --- modes and keys -------------------------------------------------------------------------
function setMode(mode) {
  stopWatching();
  ui.mode = mode;
  for (const tab of document.querySelectorAll(".tab")) {
    tab.classList.toggle("active", tab.dataset.mode === mode);
    tab.setAttribute("aria-selected", String(tab.dataset.mode === mode));
  }
  $("setup").hidden = mode === "replay";
  $("replay-setup").hidden = mode !== "replay";
  $("seat-field").hidden = mode !== "play";
  $("start").textContent = mode === "watch" ? "Watch" : "Deal";
  $("again").hidden = false;
  $("download").hidden = false;
  $("table-area").hidden = true;
  say("");
  drawAgentChoices();
}

function onKey(event) {
  const tag = event.target.tagName;
  if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
  if (ui.mode === "replay" && ui.replay) {
    const moves = { ArrowRight: 1, ArrowLeft: -1, Home: -1e9, End: 1e9 };
    if (event.key in moves) {
      event.preventDefault();
      replayGo(ui.replay.step + moves[event.key]);
    }
    return;
  }
  if (!ui.table) return;
  const data = ui.table.data;
  if (data.mode === "watch" && event.key === " ") {
    event.preventDefault();
    togglePause();
    return;
  }
  if (!data.moves.length) return;
  if (/^[0-9]$/.test(event.key)) {
    ui.typed += event.key;
    const k = Number(ui.typed);
    if (data.moves.length <= 9 || k * 10 > data.moves.length) {
      ui.typed = "";
      if (k >= 1 && k <= data.moves.length) playMove(data.moves[k - 1].action);
      else say(`${k} is not on the list: choose 1..${data.moves.length}`);
    }
    $("typed").textContent = ui.typed ? `move ${ui.typed}\u2026 (Enter)` : "";
  } else if (event.key === "Enter" && ui.typed) {
    const k = Number(ui.typed);
    ui.typed = "";
    $("typed").textContent = "";
    if (k >= 1 && k <= data.moves.length) playMove(data.moves[k - 1].action);
    else say(`${k} is not on the list: choose 1..${data.moves.length}`);
  } else if (event.key === "Escape") {
    ui.typed = "";
    ui.picked = null;
    $("typed").textContent = "";
    redraw();
  }
}

async function resume() {
  const match = /table=([A-Za-z0-9_-]+)/.exec(location.hash);
  if (!match) return;
  try {
    const data = await api("GET", `/api/tables/${match[1]}`);
    setMode(data.mode);
    ui.table = { id: match[1], data };
    showTable(data);
    if (data.mode === "watch") watchNext();
  } catch (err) {
    location.hash = "";
  }
}

async function init() {
  for (const tab of document.querySelectorAll(".tab")) {
    tab.addEventListener("click", () => setMode(tab.dataset.mode));
  }
  $("game").addEventListener("change", onGameChange);
  $("variant").addEventListener("change", onVariantChange);
  $("players").addEventListener("change", onPlayersChange);
  $("seat").addEventListener("change", drawAgentChoices);
  $("start").addEventListener("click", start);
  $("again").addEventListener("click", start);
  $("open-hands").addEventListener("click", showAllHands);
  $("watch-pause").addEventListener("click", togglePause);
  $("watch-step").addEventListener("click", () => { ui.paused = true; $("watch-pause").textContent = "Resume"; stopWatching(); watchStep(); });
  $("speed").addEventListener("input", () => { speedLabel(); watchNext(); });
  $("watch-view").addEventListener("change", changeWatchView);
  $("replay-file").addEventListener("change", openReplayFile);
  $("replay-game").addEventListener("change", onReplayGame);
  $("replay-view").addEventListener("change", () => { ui.replay.view = $("replay-view").value; replayGo(ui.replay.step); });
  $("replay-first").addEventListener("click", () => replayGo(0));
  $("replay-prev").addEventListener("click", () => replayGo(ui.replay.step - 1));
  $("replay-next").addEventListener("click", () => replayGo(ui.replay.step + 1));
  $("replay-last").addEventListener("click", () => replayGo(1e9));
  $("replay-slider").addEventListener("input", () => replayGo(Number($("replay-slider").value)));
  document.addEventListener("keydown", onKey);
  speedLabel();
  try {
    ui.catalog = (await api("GET", "/api/catalog")).games;
  } catch (err) {
    say(`cannot reach the server: ${err.message}`);
    return;
  }
  fillSelect($("game"), ui.catalog.map((g) => [g.env, g.title]), ui.catalog[0].env);
  onGameChange();
  setMode("play");
  document.body.dataset.ready = "1";
  resume();
}

init();
