// The operators' console: the admin API, with the operator's own token typed
// in once and kept in sessionStorage (gone when the tab closes). The server
// knows who the token belongs to: the console shows it, and the audit log
// records it. Everything shown is set as text, never as HTML.
"use strict";

const TOKEN_KEY = "payonce-admin-token";
const $ = (id) => document.getElementById(id);
let current = null;

function say(text, isError) {
  $("message").textContent = text;
  $("message").className = isError ? "error" : "";
}

async function call(method, path, body, extraHeaders) {
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (!token) throw new Error("Type your operator's token first.");
  const headers = { Authorization: "Bearer " + token, ...extraHeaders };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const data = await response.json().catch(() => null);
  if (!response.ok) {
    const code = data && data.code ? data.code : response.status;
    const message = data && data.message ? data.message : response.statusText;
    throw new Error(code + ": " + message);
  }
  return { status: response.status, data };
}

// A row; with `onClick`, its first cell is a button (a keyboard reaches it,
// a screen reader names it), and a click anywhere on the row does the same.
function row(tbody, cells, onClick) {
  const tr = document.createElement("tr");
  if (onClick) {
    tr.className = "pick";
    tr.opens = onClick;
    tr.addEventListener("click", onClick);
    const opens = document.createElement("button");
    opens.type = "button";
    opens.className = "open";
    opens.addEventListener("click", (event) => {
      event.stopPropagation();
      onClick();
    });
    tr.appendChild(document.createElement("td")).appendChild(opens);
  }
  fill(tr, cells);
  tbody.appendChild(tr);
  return tr;
}

// A row pressed just before a refresh of its list moves it (an order above it
// changed) is released over another row, and the browser then clicks neither:
// the row that was pressed is the one the operator meant, so it opens. A press
// dragged off a row that did not move opens nothing, as a click would not.
let pressed = null;
document.addEventListener("pointerdown", (event) => {
  const tr = event.target.closest("tr.pick");
  pressed = tr && { tr, top: tr.getBoundingClientRect().top };
});
document.addEventListener("pointerup", (event) => {
  const was = pressed;
  pressed = null;
  if (!was || !was.tr.isConnected || event.target.closest("tr.pick") === was.tr) return;
  if (was.tr.getBoundingClientRect().top !== was.top) was.tr.opens();
});

// Sets a row's cells to `cells`: a plain value, or `{ text, className }`.
function fill(tr, cells) {
  while (tr.children.length < cells.length) tr.appendChild(document.createElement("td"));
  cells.forEach((cell, index) => {
    const td = tr.children[index];
    // The text of a row's opening button, or of the cell itself.
    const shows = td.querySelector("button.open") || td;
    if (cell && typeof cell === "object") {
      shows.textContent = cell.text;
      td.className = cell.className || "";
    } else {
      shows.textContent = cell === null || cell === undefined ? "" : String(cell);
      td.className = "";
    }
  });
}

function clear(table) {
  const tbody = table.querySelector("tbody");
  tbody.replaceChildren();
  return tbody;
}

function waited(seconds) {
  if (seconds < 120) return seconds + " s";
  if (seconds < 7200) return Math.round(seconds / 60) + " min";
  return Math.round(seconds / 3600) + " h";
}

// Each order keeps its row across refreshes (only its cells change), so a click
// that lands while a refresh is answered still reaches the order it was aimed at:
// a replaced row would take the press and leave the release to its successor,
// and the browser would count no click at all.
// The PG an order's payment went to, by name; none before a confirm is stored.
function pgName(pg) {
  return { toss: "Toss", kakaopay: "KakaoPay" }[pg] || "-";
}

async function listOrders() {
  const query = new URLSearchParams();
  if ($("status").value) query.set("status", $("status").value);
  if ($("older").value.trim()) query.set("older_than", $("older").value.trim());
  const { data } = await call("GET", "/admin/orders?" + query);
  const tbody = $("orders").querySelector("tbody");
  const kept = new Map([...tbody.children].map((tr) => [tr.dataset.orderId, tr]));
  data.orders.forEach((order, index) => {
    const cells = [
      order.order_id,
      { text: order.status, className: order.status },
      pgName(order.pg),
      order.amount,
      order.refunded_amount,
      waited(order.waiting_s),
      order.recovery_passes,
      order.last_pg_answer || order.unknown_reason,
    ];
    let tr = kept.get(order.order_id);
    kept.delete(order.order_id);
    if (tr) {
      fill(tr, cells);
    } else {
      tr = row(tbody, cells, () => openOrder(order.order_id));
      tr.dataset.orderId = order.order_id;
    }
    if (tbody.children[index] !== tr) tbody.insertBefore(tr, tbody.children[index] || null);
  });
  for (const gone of kept.values()) gone.remove();
  $("orders").hidden = false;
  say(data.orders.length + " orders.");
}

// Shows an order picked from a list and takes the focus to it, so a keyboard
// or screen-reader user lands on what they opened.
function openOrder(orderId) {
  showOrder(orderId)
    .then(() => $("detail-title").focus())
    .catch((error) => say(error.message, true));
}

async function showOrder(orderId) {
  const { data } = await call("GET", "/admin/orders/" + encodeURIComponent(orderId));
  current = orderId;
  $("detail-id").textContent = orderId;
  $("detail-status").textContent = data.order.status;
  $("detail-status").className = data.order.status;
  $("detail-pg").textContent = pgName(data.attempt && data.attempt.pg);
  $("detail-amount").textContent = data.order.amount;
  $("detail-refunded").textContent = data.order.refunded_amount;
  $("recover").disabled = !["PENDING", "UNKNOWN"].includes(data.order.status);
  let tbody = clear($("history"));
  for (const event of data.history) row(tbody, [event.at, event.actor, event.from, event.to, event.code, event.detail]);
  tbody = clear($("pg-calls"));
  for (const call of data.pg_calls) {
    row(tbody, [call.at, call.kind, call.caller, call.idempotency_key || "-", call.server, `${call.took_ms} ms`, call.answer]);
  }
  $("attempt").textContent = data.attempt ? JSON.stringify(data.attempt, null, 2) : "no attempt: never sent to the PG";
  tbody = clear($("refunds"));
  for (const refund of data.refunds) {
    row(tbody, [
      refund.refund_id, refund.amount, refund.status, refund.failure_code, refund.calls, refund.last_pg_answer, refund.reason,
    ]);
  }
  tbody = clear($("events"));
  const sends = clear($("event-sends"));
  for (const told of data.events) {
    row(tbody, [told.id, told.type, told.sequence, { text: told.delivery, className: told.delivery },
      told.failed_sends, told.last_answer, told.next_send_at], () => resendEvent(told.id));
    for (const send of told.sends) row(sends, [told.id, send.at, `${send.took_ms} ms`, send.outcome]);
  }
  tbody = clear($("audit"));
  for (const line of data.audit) row(tbody, [line.at, line.operator, line.action, line.detail]);
  $("detail").hidden = false;
}

function resendEvent(eventId) {
  if (!confirm("Send event " + eventId + " to its shop again?")) return;
  guard(async () => {
    await call("POST", "/admin/events/" + encodeURIComponent(eventId) + "/resend");
    say("Event " + eventId + " goes to its shop again.");
    if (current) await showOrder(current);
  })();
}

async function listFailedEvents() {
  const shop = $("failed-shop").value.trim();
  const { data } = await call("GET", "/admin/events" + (shop ? "?shop=" + encodeURIComponent(shop) : ""));
  const tbody = clear($("failed"));
  for (const told of data.events) {
    row(tbody, [told.order_id, told.shop, told.id, told.type, told.failed_sends, told.last_answer],
      () => openOrder(told.order_id));
  }
  $("failed").hidden = data.events.length === 0;
  say(data.events.length + " events not delivered.");
}

async function resendFailed() {
  const shop = $("failed-shop").value.trim();
  if (!shop) throw new Error("Name the shop whose events to send again.");
  if (!confirm("Send every failed event of " + shop + " again?")) return;
  const { data } = await call("POST", "/admin/shops/" + encodeURIComponent(shop) + "/events/resend");
  say(data.resent + " events of " + shop + " go again.");
  await listFailedEvents();
}

async function recover() {
  const { status, data } = await call("POST", "/admin/orders/" + encodeURIComponent(current) + "/recover");
  say(status === 200 ? "Settled: " + data.status + "." : "Asked; the PG has not settled it yet (" + data.status + ").");
  await showOrder(current);
}

async function refund(event) {
  event.preventDefault();
  const amount = $("refund-amount").value ? Number($("refund-amount").value) : undefined;
  const reason = $("refund-reason").value.trim();
  const what = amount === undefined ? "everything that is left" : amount + " KRW";
  if (!confirm("Refund " + what + " of " + current + "?")) return;
  const key = crypto.randomUUID();
  const { status, data } = await call("POST", "/admin/orders/" + encodeURIComponent(current) + "/cancel",
    { amount, reason }, { "Idempotency-Key": key });
  say(status === 200 ? "Refunded: " + data.status + "." : "Refund requested; the PG has not answered yet.");
  $("refund").reset();
  await showOrder(current);
}

function showReport(report) {
  const others = report.not_the_shops || [];
  const run = report.dry_run ? "Dry run, nothing changed" : "Run " + report.run_id;
  $("reconcile-summary").textContent = run + " (" + report.started_by + ", " + report.finished_at + "): " +
    report.approvals + " approvals, " + report.cancels + " cancels, " + report.matched + " matched, " +
    report.skipped_unsettled.length + " left to recovery, " + report.mismatches.length + " mismatches, " +
    others.length + " not the shop's.";
  const otherRows = clear($("not-the-shops"));
  for (const charge of others) {
    row(otherRows, [charge.order_id, charge.payment_key, charge.amount + " / " + charge.refunded]);
  }
  $("not-the-shops").hidden = others.length === 0;
  const tbody = clear($("mismatches"));
  for (const found of report.mismatches) {
    const pg = found.pg_amount === null ? "none" : found.pg_amount + " / " + found.pg_refunded;
    const shop = found.shop_status === null ? "no such order" :
      found.shop_status + ", " + found.shop_amount + " / " + found.shop_refunded;
    row(tbody, [found.kind, found.order_id, found.payment_key, pg, shop, found.action],
      () => openOrder(found.order_id));
  }
  $("mismatches").hidden = report.mismatches.length === 0;
}

function guard(action) {
  return (event) => {
    if (event && event.type === "submit") event.preventDefault();
    Promise.resolve(action(event)).catch((error) => say(error.message, true));
  };
}

// Who the token signs in as, from the server: the name the audit log will record.
async function showSignedIn() {
  $("signed-in").hidden = true;
  const { data } = await call("GET", "/admin/operator");
  $("signed-in").textContent = "Signed in as " + data.name + " (" + data.role + ")" +
    (data.role === "read-only" ? ": you can look, not refund." : ".");
  $("signed-in").hidden = false;
}

async function signIn() {
  await showSignedIn();
  await listOrders();
}

$("login").addEventListener("submit", guard(() => {
  sessionStorage.setItem(TOKEN_KEY, $("token").value);
  $("token").value = "";
  return signIn();
}));
$("forget").addEventListener("click", () => {
  sessionStorage.removeItem(TOKEN_KEY);
  $("signed-in").hidden = true;
  say("Token forgotten.");
});
$("filter").addEventListener("submit", guard(listOrders));
$("failed-events").addEventListener("submit", guard(listFailedEvents));
$("resend-failed").addEventListener("click", guard(resendFailed));
$("recover").addEventListener("click", guard(recover));
$("refund").addEventListener("submit", (event) => {
  refund(event).catch((error) => say(error.message, true));
});
$("reconcile-run").addEventListener("click", guard(async () => {
  say("Reconciling…");
  const { data } = await call("POST", "/admin/reconcile");
  showReport(data);
  say("Reconciled.");
}));
$("reconcile-dry-run").addEventListener("click", guard(async () => {
  say("Dry run…");
  const { data } = await call("POST", "/admin/reconcile?dry_run=true");
  showReport(data);
  say("Dry run: nothing was refunded or stored.");
}));
$("reconcile-last").addEventListener("click", guard(async () => showReport((await call("GET", "/admin/reconcile")).data)));
if (sessionStorage.getItem(TOKEN_KEY)) signIn().catch((error) => say(error.message, true));
