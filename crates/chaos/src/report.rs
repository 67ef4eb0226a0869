//! What a campaign found: a table for people, JSON for tools.

use std::fmt;

use serde::Serialize;

use crate::check::Verdicts;
use crate::customer::Visit;
use crate::shop_check::CheckoutSeen;

/// Everything a campaign measured.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub settings: Settings,
    pub customers: usize,
    pub orders: usize,
    /// What customers' screens said last: paid, failed, refunded, unresolved, no order.
    pub told: Told,
    /// Orders by final status.
    pub final_statuses: std::collections::BTreeMap<String, usize>,
    /// Failed orders by failure code.
    pub failures_by_code: std::collections::BTreeMap<String, usize>,
    pub verdicts: Verdicts,
    /// Time from a payment's attempt to its final status, in ms.
    pub settle_ms: Quantiles,
    /// The same, for payments that went through UNKNOWN.
    pub settle_unknown_ms: Quantiles,
    /// From the end of the PG outage to the settlement of each payment still
    /// unsettled then, in ms (empty without an outage).
    pub settle_after_outage_ms: Quantiles,
    /// Customers by the PG they paid with.
    pub customers_by_pg: std::collections::BTreeMap<String, usize>,
    /// Customers by how they came: `cart` (payonce's own) or `shop` (sent by
    /// the scripted shop, whose backend created their checkout).
    pub customers_by_via: std::collections::BTreeMap<String, usize>,
    /// Orders (customers who had one to pay), by how their customer came.
    pub orders_by_via: std::collections::BTreeMap<String, usize>,
    /// The scripted shop's creates, and its customers' links.
    pub shop: ShopFigures,
    /// Customers turned away at the shop's limit (`PG_BUSY`), by PG: a confirm
    /// refused before it was sent (a FAILED order), or KakaoPay's window not
    /// prepared. Expected whenever the load is over the limit.
    pub turned_away_by_pg: std::collections::BTreeMap<String, usize>,
    /// The shop's events: sent, received, duplicated, the endpoint's faults.
    pub events: EventFigures,
    /// Toss's figures, and KakaoPay's (a fake PG each).
    pub pg: PgFigures,
    pub kakaopay: PgFigures,
    pub chaos: ChaosApplied,
    pub elapsed_s: f64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Settings {
    pub customers: u32,
    pub servers: u32,
    pub kills: u32,
    pub freezes: u32,
    pub pg_outage_s: f64,
    pub time_scale: f64,
    pub seed: u64,
    pub contract_limit: u32,
    /// The shop's PG concurrency limit (every server's `--pg-limit`).
    pub pg_limit: u32,
    /// The share of customers paying with KakaoPay.
    pub kakaopay_share: f64,
    /// The share of customers the scripted shop sends.
    pub shop_share: f64,
    /// The shop's endpoint's outage, and each other fault's windows and
    /// their length (scaled).
    pub endpoint_down_s: f64,
    pub endpoint_fault_windows: u32,
    pub endpoint_fault_s: f64,
    /// The servers' `--event-timeout` and `--event-first-retry`.
    pub event_timeout_ms: u64,
    pub event_first_retry_ms: u64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Told {
    pub paid: usize,
    pub failed: usize,
    pub refunded: usize,
    pub unresolved: usize,
    pub turned_away: usize,
    pub no_order: usize,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct Quantiles {
    pub count: usize,
    pub p50: Option<i64>,
    pub p99: Option<i64>,
    pub max: Option<i64>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct PgFigures {
    pub confirm_requests: u64,
    pub processings: u64,
    pub lookups: u64,
    pub faults_injected: u64,
    pub contract_limit_rejections: u64,
    pub charges: u64,
    /// Orders the PG itself reports charged more than once.
    pub double_charges: usize,
    /// The most confirms the PG had in processing at once (abandoned ones included).
    pub peak_in_flight: u64,
    /// Calls about one payment made while another about it was open: two
    /// workers asking at once. Leases prevent them; a frozen server can cause them.
    pub overlapping_calls: u64,
}

impl PgFigures {
    /// A fake PG's figures, from its counters and ledger.
    pub fn of(stats: &fake_pg::Stats) -> Self {
        Self {
            confirm_requests: stats.confirm_requests,
            processings: stats.processings,
            lookups: stats.lookups,
            faults_injected: stats.faults_injected.total,
            contract_limit_rejections: stats.contract_limit_rejections,
            charges: stats.charges_by_order.values().sum(),
            double_charges: stats.double_charges.len(),
            peak_in_flight: stats.peak_in_flight,
            overlapping_calls: stats.overlapping_calls,
        }
    }
}

/// The scripted shop's side of the campaign.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ShopFigures {
    /// `POST /v1/checkouts` sent, retries included.
    pub create_requests: u64,
    /// Customers whose create was sent more than once (an error or a timeout first).
    pub creates_retried: usize,
    /// Of those, creates surely answered with the checkout an earlier send had
    /// made, its answer lost: the key, not luck, kept them to one checkout. A
    /// lower bound (see `scripted_shop::made_before`).
    pub creates_replayed: usize,
    /// Customers whose create was never answered, however often it was sent.
    pub creates_unanswered: usize,
    /// Checkouts the shop API lists for its customers' references at the end.
    pub checkouts: usize,
    /// Customers whose browser was refused the checkout's link (its code, such
    /// as `CHECKOUT_LINK_USED`): they had nothing to pay.
    pub claims_refused: usize,
}

impl ShopFigures {
    /// From the shop customers' visits and what the shop lists at the end.
    pub fn of(visits: &[Visit], seen: &[CheckoutSeen]) -> Self {
        let journeys: Vec<_> = visits.iter().filter_map(|visit| visit.shop.as_ref()).collect();
        Self {
            create_requests: journeys.iter().map(|journey| u64::from(journey.create_requests)).sum(),
            creates_retried: journeys.iter().filter(|journey| journey.create_requests > 1).count(),
            creates_replayed: journeys.iter().filter(|journey| journey.create_replayed).count(),
            creates_unanswered: journeys.iter().filter(|journey| journey.checkout_id.is_none()).count(),
            checkouts: seen.iter().map(|checkout| checkout.listed.len()).sum(),
            claims_refused: journeys.iter().filter(|journey| journey.claim_refused.is_some()).count(),
        }
    }
}

/// The shop's events, as payonce sent them and its endpoint read them.
#[derive(Debug, Clone, Default, Serialize)]
pub struct EventFigures {
    /// Events payonce wrote for the shop (its feed, from the start).
    pub events: usize,
    /// Sends payonce recorded, by what came of each (`HTTP 200`, `could not
    /// connect`, ...). A send whose server was killed before it recorded it is
    /// not among them.
    pub sends: std::collections::BTreeMap<String, u64>,
    /// Deliveries the endpoint read whole.
    pub deliveries: usize,
    /// Those by how the endpoint answered them.
    pub deliveries_by_answer: std::collections::BTreeMap<String, usize>,
    /// Deliveries of an event the shop had already taken: its deduplication
    /// by id dropped them.
    pub duplicates: usize,
    /// Windows of each endpoint fault applied.
    pub fault_windows: std::collections::BTreeMap<String, u32>,
    /// Each window, in order, and its backlog.
    pub windows: Vec<WindowFigures>,
    /// From an event's commit to the shop's first taking it, in ms.
    pub lag_ms: Quantiles,
    /// From the moment payments were settled and the endpoint healthy to
    /// payonce having nothing left to send the shop, in ms; `None` if it
    /// still had at the deadline.
    pub drained_ms: Option<i64>,
}

/// One window of an endpoint fault, and what it left for after it.
#[derive(Debug, Clone, Serialize)]
pub struct WindowFigures {
    pub fault: crate::schedule::EndpointFault,
    /// When it began, from the campaign's start, and how long it lasted, in
    /// s (longer than scheduled if it waited for its deliveries).
    pub at_s: f64,
    pub lasts_s: f64,
    /// Deliveries it answered its way (none are read while the endpoint is down).
    pub answered: Option<usize>,
    /// When it ended (ms since the epoch).
    pub ended_at_ms: i64,
    /// Events written before it ended that the shop first took after: its backlog.
    pub backlog: usize,
    /// From its end until the shop had taken all of them, in ms.
    pub backlog_taken_ms: Option<i64>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ChaosApplied {
    pub kills: u32,
    pub freezes: u32,
    pub outages: u32,
    /// Times the database was taken away (and brought back), and for how long in all.
    pub database_away: u32,
    pub database_away_s: f64,
}

impl Report {
    /// Whether the campaign found anything wrong.
    pub fn failed(&self) -> bool {
        self.verdicts.failed() || self.pg.double_charges > 0 || self.kakaopay.double_charges > 0
    }

    /// The PGs that had more in processing at once than the shop's limit for
    /// each (`--pg-limit`): each PG's contract is its own, and so is its limit.
    pub fn over_limit(&self) -> Vec<&'static str> {
        [("toss", &self.pg), ("kakaopay", &self.kakaopay)]
            .into_iter()
            .filter(|(_, figures)| self.went_over_limit(figures))
            .map(|(pg, _)| pg)
            .collect()
    }

    /// Every anomaly list that is not empty, with its name.
    pub fn found(&self) -> Vec<(&'static str, &Vec<String>)> {
        let v = &self.verdicts;
        let mut lists = vec![
            ("lost", &v.lost),
            ("unexpected", &v.unexpected),
            ("duplicated", &v.duplicated),
            ("stuck", &v.stuck),
            ("contradicted", &v.contradicted),
            ("checkouts duplicated", &v.checkouts_duplicated),
            ("checkouts disagreeing", &v.checkouts_disagreeing),
        ];
        lists.extend(v.events.named());
        lists.retain(|(_, found)| !found.is_empty());
        lists
    }

    /// Whether a PG had more in processing at once than the shop's limit.
    fn went_over_limit(&self, figures: &PgFigures) -> bool {
        figures.peak_in_flight > u64::from(self.settings.pg_limit)
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = &self.settings;
        writeln!(
            f,
            "payonce-chaos: {} customers, {} server(s), {} kills, {} freezes, PG outage {:.0} s, \
             database away: {}, for {:.1} s, time scale {}, seed {}",
            s.customers,
            s.servers,
            self.chaos.kills,
            self.chaos.freezes,
            s.pg_outage_s,
            self.chaos.database_away,
            self.chaos.database_away_s,
            s.time_scale,
            s.seed
        )?;
        let v = &self.verdicts;
        let by_pg = |pg: &str| self.customers_by_pg.get(pg).copied().unwrap_or(0);
        let by_via = |counts: &std::collections::BTreeMap<String, usize>| {
            let count = |via: &str| counts.get(via).copied().unwrap_or(0);
            format!("{} / {}", count("cart"), count("shop"))
        };
        let turned_away = |pg: &str| self.turned_away_by_pg.get(pg).copied().unwrap_or(0);
        let against_limit = |figures: &PgFigures| {
            let over = if self.went_over_limit(figures) { " OVER THE LIMIT" } else { "" };
            format!("{}{over}", figures.peak_in_flight)
        };
        let calls = |pg: &PgFigures| {
            format!("{} / {} / {} / {}", pg.confirm_requests, pg.processings, pg.lookups, pg.faults_injected)
        };
        let shop = &self.shop;
        let events = &self.events;
        let answered = |kind: &str| events.deliveries_by_answer.get(kind).copied().unwrap_or(0);
        let windows = |kind: &str| events.fault_windows.get(kind).copied().unwrap_or(0);
        let sent: u64 = events.sends.values().sum();
        let rows: [(&str, String); 32] = [
            ("customers by card (Toss) / KakaoPay", format!("{} / {}", by_pg("toss"), by_pg("kakaopay"))),
            ("customers through the cart / sent by the shop", by_via(&self.customers_by_via)),
            ("orders", self.orders.to_string()),
            ("  through the cart / the shop's checkouts", by_via(&self.orders_by_via)),
            ("lost (charged, not paid)", v.lost.len().to_string()),
            ("unexpected (paid, no charge)", v.unexpected.len().to_string()),
            ("duplicated (charged twice)", v.duplicated.len().to_string()),
            ("stuck (still unsettled)", v.stuck.len().to_string()),
            ("contradicted (told otherwise)", v.contradicted.len().to_string()),
            ("recovered (through UNKNOWN, right)", v.recovered.to_string()),
            ("checkouts duplicated (one key, two)", v.checkouts_duplicated.len().to_string()),
            ("checkouts disagreeing (shop API vs order, ledger)", v.checkouts_disagreeing.len().to_string()),
            (
                "shop creates sent / retried / replayed (at least) / unanswered",
                format!(
                    "{} / {} / {} / {}",
                    shop.create_requests, shop.creates_retried, shop.creates_replayed, shop.creates_unanswered
                ),
            ),
            ("shop checkouts listed / links refused", format!("{} / {}", shop.checkouts, shop.claims_refused)),
            (
                "events unverified / altered / out of order / unfounded",
                format!(
                    "{} / {} / {} / {}",
                    v.events.unverified.len(),
                    v.events.altered.len(),
                    v.events.out_of_order.len(),
                    v.events.unfounded.len()
                ),
            ),
            (
                "events disagreeing / undelivered / unlike the feed",
                format!("{} / {} / {}", v.events.disagreeing.len(), v.events.undelivered.len(), v.events.feed.len()),
            ),
            (
                "events / sends recorded / deliveries read / duplicates",
                format!("{} / {sent} / {} / {}", events.events, events.deliveries, events.duplicates),
            ),
            ("  sends recorded by outcome", format!("{:?}", events.sends)),
            (
                "endpoint windows: down / 500 / hang / reset / slow",
                format!(
                    "{} / {} / {} / {} / {}",
                    windows("down"),
                    windows("error_500"),
                    windows("hang"),
                    windows("reset_after_reading"),
                    windows("slow")
                ),
            ),
            (
                "  deliveries answered ok / 500 / hung / reset / slow",
                format!(
                    "{} / {} / {} / {} / {}",
                    answered("ok"),
                    answered("error_500"),
                    answered("hang"),
                    answered("reset_after_reading") + answered("cut_by_outage"),
                    answered("slow")
                ),
            ),
            (
                "event lag p50 / p99 / max; drained after",
                format!(
                    "{}; {}",
                    quantiles(&events.lag_ms).replace("payments", "events"),
                    events
                        .drained_ms
                        .map_or_else(|| "NOT DRAINED".to_owned(), |ms| format!("{:.2} s", ms as f64 / 1000.0))
                ),
            ),
            (
                "double charges at Toss / KakaoPay",
                format!("{} / {}", self.pg.double_charges, self.kakaopay.double_charges),
            ),
            (
                "told paid / failed / refunded / unresolved / turned away / no order",
                format!(
                    "{} / {} / {} / {} / {} / {}",
                    self.told.paid,
                    self.told.failed,
                    self.told.refunded,
                    self.told.unresolved,
                    self.told.turned_away,
                    self.told.no_order
                ),
            ),
            (
                "turned away at the limit (PG_BUSY): Toss / KakaoPay",
                format!("{} / {}", turned_away("toss"), turned_away("kakaopay")),
            ),
            ("final statuses", format!("{:?}", self.final_statuses)),
            ("failed by code", format!("{:?}", self.failures_by_code)),
            ("time to settle p50 / p99 / max", quantiles(&self.settle_ms)),
            ("  through UNKNOWN p50 / p99 / max", quantiles(&self.settle_unknown_ms)),
            (
                "peak in processing: Toss / KakaoPay / the shop's limit for each",
                format!("{} / {} / {}", against_limit(&self.pg), against_limit(&self.kakaopay), s.pg_limit),
            ),
            (
                "calls about one payment at once: Toss / KakaoPay",
                format!("{} / {}", self.pg.overlapping_calls, self.kakaopay.overlapping_calls),
            ),
            ("Toss confirms / processings / lookups / faults", calls(&self.pg)),
            ("KakaoPay approves / processings / lookups / faults", calls(&self.kakaopay)),
        ];
        let width = rows.iter().map(|(name, _)| name.len()).max().unwrap_or(0);
        for (name, value) in rows {
            writeln!(f, "  {name:<width$}  {value}")?;
        }
        if self.settle_after_outage_ms.count > 0 {
            writeln!(
                f,
                "  {:<width$}  {}",
                "settled after the outage p50 / p99 / max",
                quantiles(&self.settle_after_outage_ms)
            )?;
        }
        for window in &events.windows {
            let backlog = match window.backlog_taken_ms {
                Some(ms) => format!("a backlog of {} taken {:.1} s after it", window.backlog, ms as f64 / 1000.0),
                None => "no backlog".to_owned(),
            };
            let name =
                format!("  endpoint {} at {:.1} s for {:.1} s", window.fault.as_str(), window.at_s, window.lasts_s);
            let answered = window.answered.map_or_else(String::new, |answered| format!("{answered} answered so; "));
            writeln!(f, "  {name:<width$}  {answered}{backlog}")?;
        }
        writeln!(f, "  {:<width$}  {:.1} s", "elapsed", self.elapsed_s)?;
        if self.failed() {
            for (name, found) in self.found() {
                writeln!(f, "{name} ({}):", found.len())?;
                for line in found.iter().take(SHOWN) {
                    writeln!(f, "  {line}")?;
                }
                if found.len() > SHOWN {
                    writeln!(f, "  and {} more", found.len() - SHOWN)?;
                }
            }
        }
        let verdict = if self.failed() {
            "FAILED"
        } else {
            "ok: every order agrees with the PG's ledger, every checkout with its order, \
             and the shop's events with both"
        };
        write!(f, "{verdict}")
    }
}

/// The anomalies of each kind a failed campaign's table shows.
const SHOWN: usize = 10;

fn quantiles(q: &Quantiles) -> String {
    let seconds = |ms: Option<i64>| ms.map_or_else(|| "-".to_owned(), |ms| format!("{:.2} s", ms as f64 / 1000.0));
    format!("{} / {} / {}  ({} payments)", seconds(q.p50), seconds(q.p99), seconds(q.max), q.count)
}
