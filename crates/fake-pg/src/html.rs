//! The few HTML pages: the payment window, its error page and the receipt.
//! Self-contained (inline CSS, no script), readable on a 375px-wide phone,
//! usable with the keyboard alone. All text from requests is escaped.

use std::fmt::Write as _;
use std::time::Duration;

use crate::payment::Payment;
use crate::scenario::Scenario;

/// What the window shows.
pub(crate) struct WindowView<'a> {
    pub(crate) payment_key: &'a str,
    pub(crate) order_id: &'a str,
    pub(crate) order_name: &'a str,
    pub(crate) amount: u64,
    pub(crate) time_scale: f64,
    /// The usual processing time, already scaled.
    pub(crate) latency: Duration,
}

const MERCHANT: &str = "Test merchant (tosspayments)";

const STYLE: &str = r#"
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:#f2f4f6;color:#191f28;font:16px/1.5 system-ui,-apple-system,"Segoe UI","Apple SD Gothic Neo","Malgun Gothic","Noto Sans KR","Noto Sans CJK KR",sans-serif}
main{max-width:30rem;margin:0 auto;padding:1rem}
.card{background:#fff;border-radius:16px;padding:1.25rem;box-shadow:0 1px 3px rgba(0,0,0,.08)}
.brand{display:flex;align-items:center;justify-content:space-between;margin:0 0 1rem;font-size:.95rem;font-weight:700;color:#1b64da}
.badge{font-size:.75rem;font-weight:700;color:#8a4b00;background:#fff3d6;border-radius:999px;padding:.15rem .6rem}
h1{font-size:1.25rem;margin:0 0 .25rem}
.amount{font-size:2rem;font-weight:800;margin:.25rem 0 1rem;font-variant-numeric:tabular-nums}
dl{display:grid;grid-template-columns:auto 1fr;gap:.35rem 1rem;margin:0;font-size:.95rem}
dt{color:#4e5968}
dd{margin:0;overflow-wrap:anywhere}
h2{font-size:1rem;margin:1.5rem 0 .5rem}
.note{font-size:.875rem;color:#4e5968;margin:.25rem 0 .75rem}
ul{list-style:none;margin:0;padding:0;display:grid;gap:.5rem}
button{display:block;width:100%;min-height:44px;text-align:left;font:inherit;color:#191f28;background:#fff;border:1px solid #d1d6db;border-radius:12px;padding:.7rem .9rem;cursor:pointer}
button:hover{background:#e8f3ff;border-color:#1b64da}
button:focus-visible{outline:3px solid #1b64da;outline-offset:2px}
button .title{display:flex;justify-content:space-between;gap:.5rem;font-weight:700}
button .desc{display:block;font-size:.875rem;color:#4e5968;margin-top:.15rem}
.tag{flex:none;font-size:.75rem;font-weight:700;border-radius:999px;padding:.1rem .5rem;align-self:center}
.charged{color:#0b5d2a;background:#e3f5e9}
.not-charged{color:#9b1c1c;background:#fdecec}
button.cancel{text-align:center;font-weight:700;background:#f2f4f6;margin-top:.75rem}
footer{font-size:.8rem;color:#4e5968;text-align:center;margin:1rem 0}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85em;overflow-wrap:anywhere}
.error h1{color:#9b1c1c}
"#;

/// The payment window with one submit button per scenario.
pub(crate) fn window_page(view: &WindowView<'_>) -> String {
    let mut body = String::new();
    let _ = write!(
        body,
        r#"<form class="card" method="post" action="/v1/window">
<p class="brand"><span>fake-pg · Payment</span><span class="badge">TEST MODE</span></p>
<h1>{order_name}</h1>
<p class="amount">{amount}</p>
<dl>
<dt>Merchant</dt><dd>{merchant}</dd>
<dt>Order ID</dt><dd><code>{order_id}</code></dd>
<dt>Payment key</dt><dd><code>{payment_key}</code></dd>
</dl>
<input type="hidden" name="paymentKey" value="{payment_key}">
<h2 id="cards">Choose a test card</h2>
<p class="note">{timing}</p>
<ul aria-labelledby="cards">
"#,
        order_name = escape(view.order_name),
        amount = format_won(view.amount),
        merchant = escape(MERCHANT),
        order_id = escape(view.order_id),
        payment_key = escape(view.payment_key),
        timing = escape(&timing_note(view)),
    );
    for scenario in Scenario::ALL.into_iter().filter(|scenario| *scenario != Scenario::Cancel) {
        let (tag_class, tag) = if charges(scenario) { ("charged", "charged") } else { ("not-charged", "not charged") };
        let _ = write!(
            body,
            r#"<li><button type="submit" name="scenario" value="{id}" data-scenario="{id}"><span class="title"><span>{title}</span><span class="tag {tag_class}">{tag}</span></span><span class="desc">{desc}</span></button></li>"#,
            id = scenario.id(),
            title = escape(scenario.title()),
            desc = escape(scenario.description()),
        );
        body.push('\n');
    }
    let cancel = Scenario::Cancel;
    let _ = write!(
        body,
        r#"</ul>
<button type="submit" class="cancel" name="scenario" value="{id}" data-scenario="{id}">{title}</button>
</form>
<footer>A test payment window. No real card is charged.</footer>"#,
        id = cancel.id(),
        title = escape(cancel.title()),
    );
    page("Payment · fake-pg", &body)
}

/// A window request that cannot be shown, or a submit that cannot be honoured.
pub(crate) fn error_page(title: &str, problems: &[String]) -> String {
    let mut body = format!(
        r#"<div class="card error" role="alert"><p class="brand"><span>fake-pg · Payment</span><span class="badge">TEST MODE</span></p><h1>{}</h1><ul>"#,
        escape(title)
    );
    for problem in problems {
        let _ = write!(body, "<li>{}</li>", escape(problem));
    }
    body.push_str(
        "</ul><p class=\"note\">The shop sent an incomplete or invalid payment request. \
         Go back to the shop and try again.</p></div>",
    );
    page(&format!("{title} · fake-pg"), &body)
}

/// The receipt a Payment's `receipt.url` points to.
pub(crate) fn receipt_page(payment: &Payment) -> String {
    let body = format!(
        r#"<div class="card"><p class="brand"><span>fake-pg · Receipt</span><span class="badge">TEST MODE</span></p>
<h1>{order_name}</h1>
<p class="amount">{amount}</p>
<dl>
<dt>Status</dt><dd>{status}</dd>
<dt>Approved at</dt><dd>{approved_at}</dd>
<dt>Order ID</dt><dd><code>{order_id}</code></dd>
<dt>Payment key</dt><dd><code>{payment_key}</code></dd>
<dt>Card</dt><dd>{card}</dd>
</dl></div>"#,
        order_name = escape(&payment.order_name),
        amount = format_won(payment.total_amount),
        status = payment.status.as_str(),
        approved_at = escape(payment.approved_at.as_deref().unwrap_or("—")),
        order_id = escape(&payment.order_id),
        payment_key = escape(&payment.payment_key),
        card = escape(payment.card.as_ref().map_or("—", |card| card.number.as_str())),
    );
    page("Receipt · fake-pg", &body)
}

fn page(title: &str, body: &str) -> String {
    format!(
        r#"<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<link rel="icon" href="data:,">
<title>{title}</title>
<style>{STYLE}</style>
</head>
<body>
<main>
{body}
</main>
</body>
</html>
"#,
        title = escape(title),
    )
}

fn charges(scenario: Scenario) -> bool {
    match scenario {
        Scenario::Approve
        | Scenario::Approve40s
        | Scenario::Approve70s
        | Scenario::Error500ThenCharge
        | Scenario::ResetAfterCharge => true,
        Scenario::DeclineRejectCard
        | Scenario::DeclineInvalidExpiration
        | Scenario::RateLimited429
        | Scenario::ForbiddenConsecutive403
        | Scenario::Cancel => false,
    }
}

fn timing_note(view: &WindowView<'_>) -> String {
    let usual = humantime::format_duration(round_ms(view.latency));
    if (view.time_scale - 1.0).abs() < f64::EPSILON {
        format!("Normal processing takes {usual}.")
    } else {
        let forty = humantime::format_duration(round_ms(Duration::from_secs(40).mul_f64(view.time_scale)));
        format!(
            "This PG runs at time scale {}: normal processing takes {usual}, and \"40 s\" takes {forty}.",
            view.time_scale
        )
    }
}

fn round_ms(duration: Duration) -> Duration {
    Duration::from_millis(duration.as_millis().try_into().unwrap_or(u64::MAX))
}

/// Escapes text for HTML element content and quoted attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            c => escaped.push(c),
        }
    }
    escaped
}

/// Won as Koreans write it: `₩12,900`.
pub(crate) fn format_won(amount: u64) -> String {
    let digits = amount.to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    format!("₩{grouped}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn won_amounts_group_thousands() {
        assert_eq!(format_won(0), "₩0");
        assert_eq!(format_won(900), "₩900");
        assert_eq!(format_won(12_900), "₩12,900");
        assert_eq!(format_won(1_234_567), "₩1,234,567");
    }

    #[test]
    fn user_text_is_escaped() {
        assert_eq!(
            escape(r#"<script>"x" & 'y'</script>"#),
            "&lt;script&gt;&quot;x&quot; &amp; &#39;y&#39;&lt;/script&gt;"
        );
        let html = window_page(&WindowView {
            payment_key: "pk",
            order_id: "o1",
            order_name: "<img src=x onerror=alert(1)>",
            amount: 1000,
            time_scale: 1.0,
            latency: Duration::from_millis(300),
        });
        assert!(!html.contains("<img"));
        assert!(html.contains("&lt;img src=x onerror=alert(1)&gt;"));
    }

    #[test]
    fn the_window_has_a_button_per_scenario() {
        let html = window_page(&WindowView {
            payment_key: "pk",
            order_id: "o1",
            order_name: "Tee",
            amount: 12_900,
            time_scale: 0.1,
            latency: Duration::from_millis(30),
        });
        for scenario in Scenario::ALL {
            let id = scenario.id();
            assert!(html.contains(&format!(r#"value="{id}" data-scenario="{id}""#)), "{id}");
        }
        assert!(html.contains("₩12,900"));
        assert!(html.contains(r#"name="viewport""#));
        assert!(html.contains("takes 4s"));
    }
}
