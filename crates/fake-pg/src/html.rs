//! The few HTML pages: the payment window, its error page and the receipt.
//! Self-contained (inline CSS, no script), readable on a 375px-wide phone,
//! usable with the keyboard alone, in Korean or English (`window_text`). All
//! text from requests is escaped.

use std::fmt::Write as _;
use std::time::Duration;

use crate::payment::Payment;
use crate::scenario::Scenario;
use crate::window_text::Lang;

/// What the window shows.
pub(crate) struct WindowView<'a> {
    pub(crate) payment_key: &'a str,
    pub(crate) order_id: &'a str,
    pub(crate) order_name: &'a str,
    pub(crate) amount: u64,
    pub(crate) time_scale: f64,
    /// The usual processing time, already scaled.
    pub(crate) latency: Duration,
    pub(crate) lang: Lang,
    /// Shown in an iframe over the shop's page (`embedded=1`): the cards
    /// navigate the whole page, and ✕ tells the SDK the customer closed it.
    pub(crate) embedded: bool,
}

/// The one script of the embedded window: ✕ tells the SDK in the page around it.
const CLOSE_SCRIPT: &str = r#"<script>document.querySelector('[data-action="close"]').addEventListener("click",function(){parent.postMessage({source:"fake-pg",type:"window-closed"},"*")});</script>"#;

const STYLE: &str = r#"
*{box-sizing:border-box}
html{-webkit-text-size-adjust:100%}
body{margin:0;background:#f2f4f6;color:#191f28;font:16px/1.5 system-ui,-apple-system,"Segoe UI","Apple SD Gothic Neo","Malgun Gothic","Noto Sans KR","Noto Sans CJK KR",sans-serif}
main{max-width:30rem;margin:0 auto;padding:1rem}
.card{background:#fff;border-radius:16px;padding:1.25rem;box-shadow:0 1px 3px rgba(0,0,0,.08)}
.brand{display:flex;align-items:center;justify-content:space-between;gap:.5rem;margin:0 0 1rem;font-size:.95rem;font-weight:700;color:#1b64da}
.brand span:first-child{flex:1}
button.close{display:inline-flex;align-items:center;justify-content:center;width:44px;min-height:44px;padding:0;font-size:1.25rem;text-align:center;border-radius:999px;background:#f2f4f6}
.badge{font-size:.75rem;font-weight:700;color:#8a4b00;background:#fff3d6;border-radius:999px;padding:.15rem .6rem}
h1{font-size:1.25rem;margin:0 0 .25rem}
.amount{font-size:2rem;font-weight:800;margin:.25rem 0 1rem;font-variant-numeric:tabular-nums}
dl{display:grid;grid-template-columns:auto 1fr;gap:.35rem 1rem;margin:0;font-size:.95rem}
dt{color:#4e5968}
dd{margin:0;overflow-wrap:anywhere}
h2{font-size:1rem;margin:1.5rem 0 .5rem}
.note{font-size:.875rem;color:#4e5968;margin:.25rem 0 .75rem}
ul{list-style:none;margin:0;padding:0;display:grid;grid-template-columns:minmax(0,1fr);gap:.5rem}
button{display:block;width:100%;min-height:44px;text-align:left;font:inherit;color:#191f28;background:#fff;border:1px solid #d1d6db;border-radius:12px;padding:.7rem .9rem;cursor:pointer}
button:hover{background:#e8f3ff;border-color:#1b64da}
button:focus-visible{outline:3px solid #1b64da;outline-offset:2px}
button .title{display:flex;flex-wrap:wrap;justify-content:space-between;gap:.5rem;font-weight:700}
button .desc{display:block;font-size:.875rem;color:#4e5968;margin-top:.15rem}
.tag{flex:none;font-size:.75rem;font-weight:700;border-radius:999px;padding:.1rem .5rem;align-self:center}
.charged{color:#0b5d2a;background:#e3f5e9}
.not-charged{color:#9b1c1c;background:#fdecec}
button.cancel{text-align:center;font-weight:700;background:#f2f4f6;margin-top:.75rem}
footer{font-size:.8rem;color:#4e5968;text-align:center;margin:1rem 0}
code{font-family:ui-monospace,SFMono-Regular,Menlo,monospace;font-size:.85em;overflow-wrap:anywhere}
.error h1{color:#9b1c1c}
"#;

/// The payment window with one submit button per scenario, and a close button
/// that leaves it as the customer closing it would (`PAY_PROCESS_CANCELED`).
pub(crate) fn window_page(view: &WindowView<'_>) -> String {
    let text = view.lang.text();
    let cancel = Scenario::Cancel.id();
    let mut body = String::new();
    let _ = write!(
        body,
        r#"<form class="card" method="post" action="/v1/window"{target}>
<p class="brand"><span>{brand}</span><span class="badge">{test_mode}</span><button type="{close_type}" class="close" name="scenario" value="{cancel}" data-action="close" aria-label="{close}" title="{close}">✕</button></p>
<h1>{order_name}</h1>
<p class="amount">{amount}</p>
<dl>
<dt>{merchant_label}</dt><dd>{merchant}</dd>
<dt>{order_id_label}</dt><dd><code>{order_id}</code></dd>
<dt>{payment_key_label}</dt><dd><code>{payment_key}</code></dd>
</dl>
<input type="hidden" name="paymentKey" value="{payment_key}">
<input type="hidden" name="lang" value="{lang}">
<h2 id="cards">{choose_card}</h2>
<p class="note">{timing}</p>
<ul aria-labelledby="cards">
"#,
        target = if view.embedded { r#" target="_top""# } else { "" },
        close_type = if view.embedded { "button" } else { "submit" },
        brand = escape(text.brand),
        test_mode = escape(text.test_mode),
        close = escape(text.close),
        order_name = escape(view.order_name),
        amount = format_won(view.amount, view.lang),
        merchant_label = escape(text.merchant_label),
        merchant = escape(text.merchant),
        order_id_label = escape(text.order_id),
        order_id = escape(view.order_id),
        payment_key_label = escape(text.payment_key),
        payment_key = escape(view.payment_key),
        lang = view.lang.code(),
        choose_card = escape(text.choose_card),
        timing = escape(&timing_note(view)),
    );
    for scenario in Scenario::ALL.into_iter().filter(|scenario| *scenario != Scenario::Cancel) {
        let (tag_class, tag) =
            if charges(scenario) { ("charged", text.charged) } else { ("not-charged", text.not_charged) };
        let (title, description) = text.scenario(scenario);
        let _ = write!(
            body,
            r#"<li><button type="submit" name="scenario" value="{id}" data-scenario="{id}"><span class="title"><span>{title}</span><span class="tag {tag_class}">{tag}</span></span><span class="desc">{desc}</span></button></li>"#,
            id = scenario.id(),
            title = escape(title),
            desc = escape(description),
        );
        body.push('\n');
    }
    let _ = write!(
        body,
        r#"</ul>
<button type="submit" class="cancel" name="scenario" value="{cancel}" data-scenario="{cancel}">{title}</button>
</form>
<footer>{footer}</footer>"#,
        title = escape(text.scenario(Scenario::Cancel).0),
        footer = escape(text.footer),
    );
    if view.embedded {
        body.push_str(CLOSE_SCRIPT);
    }
    page(text.page_title, &body, view.lang)
}

/// A window request that cannot be shown, or a submit that cannot be honoured.
/// The problems are the request's, for the shop's developers, and stay in English.
pub(crate) fn error_page(title: &str, problems: &[String], lang: Lang) -> String {
    let text = lang.text();
    let mut body = format!(
        r#"<div class="card error" role="alert"><p class="brand"><span>{}</span><span class="badge">{}</span></p><h1>{}</h1><ul>"#,
        escape(text.brand),
        escape(text.test_mode),
        escape(title)
    );
    for problem in problems {
        let _ = write!(body, "<li>{}</li>", escape(problem));
    }
    let _ = write!(body, r#"</ul><p class="note">{}</p></div>"#, escape(text.invalid_request_note));
    page(&format!("{title} · fake-pg"), &body, lang)
}

/// The receipt a Payment's `receipt.url` points to.
pub(crate) fn receipt_page(payment: &Payment, lang: Lang) -> String {
    let text = lang.text();
    let body = format!(
        r#"<div class="card"><p class="brand"><span>{brand}</span><span class="badge">{test_mode}</span></p>
<h1>{order_name}</h1>
<p class="amount">{amount}</p>
<dl>
<dt>{status_label}</dt><dd>{status}</dd>
<dt>{approved_at_label}</dt><dd>{approved_at}</dd>
<dt>{order_id_label}</dt><dd><code>{order_id}</code></dd>
<dt>{payment_key_label}</dt><dd><code>{payment_key}</code></dd>
<dt>{card_label}</dt><dd>{card}</dd>
</dl></div>"#,
        brand = escape(text.receipt_brand),
        test_mode = escape(text.test_mode),
        status_label = escape(text.status),
        approved_at_label = escape(text.approved_at),
        order_id_label = escape(text.order_id),
        payment_key_label = escape(text.payment_key),
        card_label = escape(text.card),
        order_name = escape(&payment.order_name),
        amount = format_won(payment.total_amount, lang),
        status = payment.status.as_str(),
        approved_at = escape(payment.approved_at.as_deref().unwrap_or("—")),
        order_id = escape(&payment.order_id),
        payment_key = escape(&payment.payment_key),
        card = escape(payment.card.as_ref().map_or("—", |card| card.number.as_str())),
    );
    page(text.receipt_brand, &body, lang)
}

pub(crate) fn page(title: &str, body: &str, lang: Lang) -> String {
    format!(
        r#"<!doctype html>
<html lang="{lang}">
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
        lang = lang.code(),
    )
}

fn charges(scenario: Scenario) -> bool {
    match scenario {
        Scenario::Approve
        | Scenario::Approve40s
        | Scenario::Approve70s
        | Scenario::Error500ThenCharge
        | Scenario::ResetAfterCharge
        | Scenario::ApproveNoPartialRefund
        | Scenario::ApproveRefundPeriodOver => true,
        Scenario::DeclineRejectCard
        | Scenario::DeclineInvalidExpiration
        | Scenario::RateLimited429
        | Scenario::ForbiddenConsecutive403
        | Scenario::Cancel => false,
    }
}

fn timing_note(view: &WindowView<'_>) -> String {
    let text = view.lang.text();
    let usual = humantime::format_duration(round_ms(view.latency)).to_string();
    if (view.time_scale - 1.0).abs() < f64::EPSILON {
        text.timing.replace("{usual}", &usual)
    } else {
        let forty = humantime::format_duration(round_ms(Duration::from_secs(40).mul_f64(view.time_scale)));
        text.timing_scaled
            .replace("{scale}", &view.time_scale.to_string())
            .replace("{usual}", &usual)
            .replace("{forty}", &forty.to_string())
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

/// Won as people write it: `12,900원` in Korean, `₩12,900` in English.
pub(crate) fn format_won(amount: u64, lang: Lang) -> String {
    let digits = amount.to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    match lang {
        Lang::Ko => format!("{grouped}원"),
        Lang::En => format!("₩{grouped}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn won_amounts_group_thousands() {
        assert_eq!(format_won(0, Lang::En), "₩0");
        assert_eq!(format_won(900, Lang::En), "₩900");
        assert_eq!(format_won(12_900, Lang::En), "₩12,900");
        assert_eq!(format_won(1_234_567, Lang::En), "₩1,234,567");
        assert_eq!(format_won(12_900, Lang::Ko), "12,900원");
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
            lang: Lang::En,
            embedded: false,
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
            lang: Lang::En,
            embedded: false,
        });
        for scenario in Scenario::ALL {
            let id = scenario.id();
            assert!(html.contains(&format!(r#"value="{id}" data-scenario="{id}""#)), "{id}");
        }
        assert!(html.contains("₩12,900"));
        assert!(html.contains(r#"name="viewport""#));
        assert!(html.contains("takes 4s"));
        assert!(html.contains(r#"data-action="close""#), "the window can be closed");
        assert!(!html.contains("<script") && !html.contains("_top"), "a window of its own needs no script");
    }

    #[test]
    fn an_embedded_window_navigates_the_whole_page_and_tells_the_sdk_it_was_closed() {
        let html = window_page(&WindowView {
            payment_key: "pk",
            order_id: "o1",
            order_name: "Tee",
            amount: 12_900,
            time_scale: 1.0,
            latency: Duration::from_millis(300),
            lang: Lang::En,
            embedded: true,
        });
        assert!(html.contains(r#"action="/v1/window" target="_top""#));
        assert!(html.contains(r#"<button type="button" class="close""#), "✕ leaves the cards alone");
        assert!(html.contains("window-closed"));
    }

    #[test]
    fn the_window_speaks_korean_to_korean_customers() {
        let html = window_page(&WindowView {
            payment_key: "pk",
            order_id: "o1",
            order_name: "머그",
            amount: 12_900,
            time_scale: 1.0,
            latency: Duration::from_millis(300),
            lang: Lang::Ko,
            embedded: false,
        });
        assert!(html.contains(r#"<html lang="ko">"#));
        assert!(html.contains("12,900원"));
        assert!(html.contains("테스트 카드를 고르세요"));
        assert!(html.contains(r#"aria-label="결제창 닫기""#));
    }
}
