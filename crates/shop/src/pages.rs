//! The shop's pages, as HTML built with `format!`. Every value that is not
//! the page's own text goes through [`escape`]: names, ids, amounts, and
//! above all what payonce or the customer's form said.

use std::collections::BTreeMap;

use payonce_api::money::format_krw;

use crate::catalog::BOOKS;
use crate::lang::Lang;
use crate::order_form::{MAX_QUANTITY, QUANTITY_FIELD};
use crate::payonce::PayonceError;
use crate::status::PaymentState;
use crate::store::ShopOrder;

/// Text made safe to put in HTML, between tags or in a quoted attribute.
pub fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for character in text.chars() {
        match character {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            other => escaped.push(other),
        }
    }
    escaped
}

/// A message shown at the top of a page: what went wrong and what to do.
pub struct Notice(pub String);

/// `path` in `lang`: every link keeps the language the customer chose.
fn href(path: &str, lang: Lang) -> String {
    escape(&format!("{path}?lang={}", lang.code()))
}

/// Everything around a page's body: the language, the switch to the other
/// one, the shop's name and its links. `switch_path` is the page's own path.
fn layout(lang: Lang, title: &str, switch_path: &str, refreshes: bool, body: &str) -> String {
    // Reloads the page (a GET of its own URL) while payonce settles the payment.
    let refresh = if refreshes { "\n<meta http-equiv=\"refresh\" content=\"3\">" } else { "" };
    let other = lang.other();
    let switch_label = other.pick("English", "한국어");
    format!(
        r#"<!doctype html>
<html lang="{lang_code}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">{refresh}
<title>{title} · {shop}</title>
<style>{STYLE}</style>
</head>
<body>
<header>
<a class="shop" href="{home}">{shop}</a>
<nav><a href="{orders}">{orders_label}</a> <a data-testid="lang-switch" href="{switch}" hreflang="{other_code}" lang="{other_code}">{switch_label}</a></nav>
</header>
<main>
{body}
</main>
<footer>{footer}</footer>
</body>
</html>
"#,
        lang_code = lang.code(),
        title = escape(title),
        shop = lang.pick("Seoul Books", "서울 책방"),
        home = href("/", lang),
        orders = href("/orders", lang),
        orders_label = lang.pick("Orders", "주문 목록"),
        switch = href(switch_path, other),
        other_code = other.code(),
        footer = lang.pick(
            "A sample shop: it keeps its own orders and takes payment through payonce.",
            "예제 쇼핑몰입니다. 주문은 직접 관리하고, 결제는 payonce로 받습니다.",
        ),
    )
}

const STYLE: &str = "body{font:16px/1.5 system-ui,sans-serif;max-width:46rem;margin:0 auto;padding:1rem;color:#222}\
header{display:flex;justify-content:space-between;align-items:baseline;border-bottom:1px solid #ddd;margin-bottom:1rem}\
header nav a{margin-left:1rem}.shop{font-weight:600;font-size:1.2rem;text-decoration:none;color:inherit}\
table{border-collapse:collapse;width:100%;margin:1rem 0}th,td{text-align:left;padding:.4rem;border-bottom:1px solid #eee}\
td.amount,th.amount{text-align:right}input[type=number]{width:4rem}\
button{font:inherit;padding:.5rem 1.2rem;cursor:pointer}.notice{background:#fff4e5;border:1px solid #f0b35a;padding:.6rem}\
.status{font-size:1.1rem;padding:.6rem;border-left:4px solid #888}.muted,footer{color:#666;font-size:.9rem}\
.back-office{margin-top:2rem;padding:.6rem;border:1px dashed #aaa}";

fn notice_html(notice: Option<&Notice>) -> String {
    notice.map_or_else(String::new, |Notice(text)| {
        format!("<p class=\"notice\" role=\"alert\" data-testid=\"notice\">{}</p>\n", escape(text))
    })
}

/// `2026-12-05T08:00:12.345Z` as `2026-12-05 08:00 UTC`.
fn when(rfc3339: &str) -> String {
    match (rfc3339.get(..10), rfc3339.get(11..16)) {
        (Some(day), Some(time)) => format!("{day} {time} UTC"),
        _ => rfc3339.to_owned(),
    }
}

/// The start of an order's id, enough for a person to tell orders apart.
fn short_id(id: &str) -> &str {
    id.get(..8).unwrap_or(id)
}

/// `GET /`: the books, a quantity for each and "Buy". After a refused form,
/// `entered` holds what was typed and `error` says what to change.
pub fn catalog_page(lang: Lang, entered: &BTreeMap<String, String>, error: Option<&Notice>) -> String {
    let rows: String = BOOKS
        .iter()
        .map(|book| {
            let name = lang.pick(book.name_en, book.name_ko);
            let value = entered.get(book.sku).map_or("0", String::as_str);
            format!(
                r#"<tr data-testid="product" data-sku="{sku}"><td><strong>{name}</strong><br><span class="muted">{other_name} · {author}</span></td><td class="amount">{price}</td><td><input type="number" name="{QUANTITY_FIELD}{sku}" data-testid="{QUANTITY_FIELD}{sku}" min="0" max="{MAX_QUANTITY}" step="1" inputmode="numeric" value="{value}" aria-label="{quantity_of} {name}"></td></tr>
"#,
                sku = escape(book.sku),
                name = escape(name),
                other_name = escape(lang.pick(book.name_ko, book.name_en)),
                author = escape(lang.pick(book.author_en, book.author_ko)),
                price = escape(&format_krw(book.price)),
                value = escape(value),
                quantity_of = lang.pick("Quantity of", "수량:"),
            )
        })
        .collect();
    let body = format!(
        r#"<h1>{heading}</h1>
{notice}<form method="post" action="{action}">
<table>
<thead><tr><th>{book}</th><th class="amount">{price}</th><th>{quantity}</th></tr></thead>
<tbody>
{rows}</tbody>
</table>
<button type="submit" data-testid="buy">{buy}</button>
</form>
<p class="muted">{how}</p>"#,
        heading = lang.pick("Books", "책"),
        notice = notice_html(error),
        action = href("/orders", lang),
        book = lang.pick("Book", "책"),
        price = lang.pick("Price", "가격"),
        quantity = lang.pick("Quantity", "수량"),
        buy = lang.pick("Buy", "구매하기"),
        how = lang.pick(
            "You pay on payonce's page, then come back here. You are charged once, whatever happens.",
            "결제는 payonce 페이지에서 하고, 끝나면 이곳으로 돌아옵니다. 어떤 경우에도 한 번만 청구됩니다.",
        ),
    );
    layout(lang, lang.pick("Books", "책"), "/", false, &body)
}

/// `GET /orders/{id}`: the order, its total and its payment in words, and
/// what the customer (or the back office) can do next. The payment is shown
/// as payonce answered just now (`now`) when it did, since its event may be
/// a moment behind; else as recorded from payonce's events; the recorded
/// status is always shown beside it. `may_reload` is false for a page that
/// answers a POST, which must not reload itself (a reload of a POST's
/// answer would ask to send the form again).
pub fn order_page(
    lang: Lang,
    order: &ShopOrder,
    now: Option<PaymentState>,
    notice: Option<&Notice>,
    may_reload: bool,
) -> String {
    let recorded = order.recorded();
    let shown = now.unwrap_or(recorded);
    let words = shown.status.words(lang, shown.amount_refunded);
    let id = escape(&order.id);
    let path = format!("/orders/{}", order.id);
    let lines: String = order
        .lines
        .iter()
        .map(|line| {
            format!(
                "<tr><td>{name}</td><td class=\"amount\">{unit}</td><td class=\"amount\">{quantity}</td><td class=\"amount\">{total}</td></tr>\n",
                name = escape(lang.pick(&line.name_en, &line.name_ko)),
                unit = escape(&format_krw(line.unit_amount)),
                quantity = line.quantity,
                total = escape(&format_krw(line.total())),
            )
        })
        .collect();

    let mut actions = String::new();
    if shown.status.can_pay() {
        let label =
            if notice.is_some() { lang.pick("Try again", "다시 시도") } else { lang.pick("Pay", "결제하기") };
        actions += &format!(
            r#"<form method="post" action="{action}"><button type="submit" data-testid="pay">{label}</button></form>
<p class="muted">{safe}</p>
"#,
            action = href(&format!("{path}/checkout"), lang),
            safe = lang.pick(
                "Pressing it again is safe: this order can never be charged twice.",
                "여러 번 눌러도 안전합니다. 이 주문은 두 번 청구되지 않습니다.",
            ),
        );
    }
    if shown.status.can_order_again() {
        // A new shop order (a new id, so a new checkout) with the same books:
        // this order's checkout is closed, and its key would only answer it again.
        let fields: String = order
            .lines
            .iter()
            .map(|line| {
                format!(
                    "<input type=\"hidden\" name=\"{QUANTITY_FIELD}{}\" value=\"{}\">",
                    escape(&line.sku),
                    line.quantity
                )
            })
            .collect();
        actions += &format!(
            r#"<form method="post" action="{action}">{fields}<button type="submit" data-testid="order-again">{label}</button></form>
"#,
            action = href("/orders", lang),
            label = lang.pick("Order the same books again", "같은 책 다시 주문하기"),
        );
    }
    if shown.status.can_refund() {
        actions += &format!(
            r#"<section class="back-office">
<h2>{heading}</h2>
<p class="muted">{warning}</p>
<form method="post" action="{action}"><button type="submit" data-testid="refund">{label} ({left})</button></form>
</section>
"#,
            heading = lang.pick("Back office", "관리자"),
            warning = lang.pick(
                "This sample has no sign-in: anyone who can open this page can refund the order. A real shop keeps this for its staff.",
                "이 예제에는 로그인이 없어서 이 페이지를 여는 누구나 환불할 수 있습니다. 실제 쇼핑몰에서는 직원만 쓸 수 있게 해야 합니다.",
            ),
            action = href(&format!("{path}/refund"), lang),
            label = lang.pick("Refund the whole order", "주문 전체 환불"),
            left = escape(&format_krw(order.amount.saturating_sub(shown.amount_refunded))),
        );
    }

    let body = format!(
        r#"<h1>{heading} {short}</h1>
<p class="muted">{placed} {created} · <code>{id}</code></p>
{notice}<p class="status" data-testid="order-status" data-status="{status}"><strong>{headline}</strong><br>{detail}</p>
<p class="muted" data-testid="recorded-status" data-status="{recorded_status}">{recorded_label} {recorded_headline}{recorded_lag}</p>
<table>
<thead><tr><th>{book}</th><th class="amount">{price}</th><th class="amount">{quantity}</th><th class="amount">{subtotal}</th></tr></thead>
<tbody>
{lines}</tbody>
<tfoot><tr><th colspan="3">{total_label}</th><td class="amount" data-testid="order-total">{total}</td></tr></tfoot>
</table>
{actions}<p><a href="{home}">{more}</a></p>"#,
        heading = lang.pick("Order", "주문"),
        short = escape(short_id(&order.id)),
        placed = lang.pick("Placed", "주문 시각"),
        created = escape(&when(&order.created_at)),
        notice = notice_html(notice),
        status = shown.status.as_str(),
        headline = escape(words.headline),
        detail = escape(&words.detail),
        recorded_status = recorded.status.as_str(),
        recorded_label =
            lang.pick("In the shop's records, from payonce's events:", "payonce 이벤트로 기록된 쇼핑몰의 상태:"),
        recorded_headline = escape(recorded.status.words(lang, recorded.amount_refunded).headline),
        recorded_lag = if recorded == shown {
            ""
        } else {
            lang.pick(" (updated when payonce's event arrives)", " (payonce의 이벤트가 도착하면 갱신됩니다)")
        },
        book = lang.pick("Book", "책"),
        price = lang.pick("Price", "가격"),
        quantity = lang.pick("Quantity", "수량"),
        subtotal = lang.pick("Subtotal", "소계"),
        total_label = lang.pick("Total", "합계"),
        total = escape(&format_krw(order.amount)),
        home = href("/", lang),
        more = lang.pick("Back to the books", "책 목록으로"),
    );
    let title = format!("{} {}", lang.pick("Order", "주문"), short_id(&order.id));
    layout(lang, &title, &path, may_reload && shown.status.updates_itself(), &body)
}

/// `GET /orders`: every order, newest first, as recorded from payonce's events.
pub fn orders_page(lang: Lang, orders: &[ShopOrder]) -> String {
    let rows: String = orders
        .iter()
        .map(|order| {
            format!(
                r#"<tr data-testid="order-row" data-order-id="{id}"><td><a href="{link}"><code>{short}</code></a></td><td>{created}</td><td class="amount">{amount}</td><td data-status="{status}">{headline}</td></tr>
"#,
                id = escape(&order.id),
                link = href(&format!("/orders/{}", order.id), lang),
                short = escape(short_id(&order.id)),
                created = escape(&when(&order.created_at)),
                amount = escape(&format_krw(order.amount)),
                status = order.status.as_str(),
                headline = escape(order.status.words(lang, order.amount_refunded).headline),
            )
        })
        .collect();
    let table = if orders.is_empty() {
        format!("<p>{}</p>", lang.pick("No orders yet.", "아직 주문이 없습니다."))
    } else {
        format!(
            r#"<table data-testid="orders">
<thead><tr><th>{order}</th><th>{placed}</th><th class="amount">{total}</th><th>{payment}</th></tr></thead>
<tbody>
{rows}</tbody>
</table>"#,
            order = lang.pick("Order", "주문"),
            placed = lang.pick("Placed", "주문 시각"),
            total = lang.pick("Total", "합계"),
            payment = lang.pick("Payment", "결제"),
        )
    };
    let body = format!(
        "<h1>{heading}</h1>\n<p class=\"muted\">{note}</p>\n{table}",
        heading = lang.pick("Orders", "주문 목록"),
        note = lang.pick(
            "As the shop recorded payonce's events, newest first; an order's page also asks payonce now. No sign-in in this sample.",
            "payonce 이벤트로 쇼핑몰에 기록된 상태입니다 (최신순). 주문 페이지를 열면 payonce에 지금 상태도 확인합니다. 이 예제에는 로그인이 없습니다.",
        ),
    );
    layout(lang, lang.pick("Orders", "주문 목록"), "/orders", false, &body)
}

/// A page for a missing order, or a failure of the shop's own.
pub fn message_page(lang: Lang, title: &str, message: &str, switch_path: &str) -> String {
    let body = format!(
        "<h1>{}</h1>\n<p class=\"notice\" role=\"alert\" data-testid=\"notice\">{}</p>\n<p><a href=\"{}\">{}</a></p>",
        escape(title),
        escape(message),
        href("/", lang),
        lang.pick("Back to the books", "책 목록으로"),
    );
    layout(lang, title, switch_path, false, &body)
}

/// Why a checkout could not be created, and that nothing was charged: no
/// checkout, no payment.
pub fn create_failed(lang: Lang, error: &PayonceError) -> Notice {
    Notice(match (error, lang) {
        (PayonceError::Refused { code, message, .. }, Lang::En) => {
            format!("payonce could not start the payment ({code}: {message}); nothing was charged; try again.")
        }
        (PayonceError::Refused { code, message, .. }, Lang::Ko) => {
            format!(
                "payonce가 결제를 시작하지 못했습니다 ({code}: {message}). 청구된 금액은 없습니다. 다시 시도해 주세요."
            )
        }
        (_, Lang::En) => "payonce could not be reached; nothing was charged; try again.".to_owned(),
        (_, Lang::Ko) => "payonce에 연결할 수 없었습니다. 청구된 금액은 없습니다. 다시 시도해 주세요.".to_owned(),
    })
}

/// Why a refund did not answer, and whether pressing again is the same refund.
pub fn refund_failed(lang: Lang, error: &PayonceError) -> Notice {
    Notice(match (error, lang) {
        (PayonceError::Refused { code, message, .. }, Lang::En) if error.ends_the_refund() => {
            format!("payonce refused the refund ({code}: {message}). Nothing was refunded.")
        }
        (PayonceError::Refused { code, message, .. }, Lang::Ko) if error.ends_the_refund() => {
            format!("payonce가 환불을 거절했습니다 ({code}: {message}). 환불된 금액은 없습니다.")
        }
        (_, Lang::En) => format!(
            "The refund's outcome is not known ({error}). Press Refund again: it is the same refund, and can never pay back twice."
        ),
        (_, Lang::Ko) => format!(
            "환불 결과를 아직 알 수 없습니다 ({error}). 환불을 다시 누르세요. 같은 환불이므로 두 번 환불되지 않습니다."
        ),
    })
}

/// A refund of an order that has no checkout: nothing was ever paid.
pub fn never_paid(lang: Lang) -> Notice {
    Notice(
        lang.pick(
            "This order was never paid: there is nothing to refund.",
            "결제된 적이 없는 주문이라 환불할 금액이 없습니다.",
        )
        .into(),
    )
}

/// payonce answered the refund, and the order is still paid: that refund is
/// over without paying back, and the next press is a new one.
pub fn refund_not_made(lang: Lang) -> Notice {
    Notice(
        lang.pick(
            "The refund was not made: the order is still paid. Press Refund to try a new refund.",
            "환불되지 않았습니다. 주문은 결제된 상태입니다. 새로 환불하려면 환불을 다시 누르세요.",
        )
        .into(),
    )
}

/// The page shows the last status the shop stored: payonce did not answer.
pub fn refresh_failed(lang: Lang, error: &PayonceError) -> Notice {
    Notice(match lang {
        Lang::En => format!(
            "The payment's status could not be checked with payonce just now ({error}); shown is the last one known."
        ),
        Lang::Ko => {
            format!("지금은 payonce에서 결제 상태를 확인할 수 없어 ({error}), 마지막으로 확인된 상태를 보여 드립니다.")
        }
    })
}

#[cfg(test)]
mod tests {
    use payonce_api::CheckoutStatus;

    use super::*;
    use crate::status::PaymentStatus;
    use crate::store::OrderLine;

    fn order(status: PaymentStatus) -> ShopOrder {
        ShopOrder {
            id: "4d7c8b8e-3c8a-4e0b-9a57-0f1f3d1c2b3a".into(),
            lines: vec![OrderLine {
                sku: "human-acts".into(),
                name_en: "Human <Acts>".into(),
                name_ko: "소년이 온다".into(),
                quantity: 2,
                unit_amount: 14_000,
            }],
            amount: 28_000,
            created_at: "2026-12-05T08:00:12.345Z".into(),
            checkout_id: Some("po_books_1".into()),
            status,
            amount_refunded: 0,
            refund_key: None,
            event_sequence: 0,
        }
    }

    #[test]
    fn escaping_leaves_no_markup_and_no_way_out_of_an_attribute() {
        assert_eq!(
            escape(r#"<script>alert("x") & 'y'</script>"#),
            "&lt;script&gt;alert(&quot;x&quot;) &amp; &#39;y&#39;&lt;/script&gt;"
        );
        assert_eq!(escape("채식주의자 ₩13,500"), "채식주의자 ₩13,500");
        assert_eq!(escape("&amp;"), "&amp;amp;");
    }

    #[test]
    fn what_payonce_says_is_escaped_on_the_page() {
        let error = PayonceError::Refused {
            status: reqwest::StatusCode::UNPROCESSABLE_ENTITY,
            code: "INVALID_CHECKOUT".into(),
            message: "<img src=x onerror=alert(1)>".into(),
        };
        let page =
            order_page(Lang::En, &order(PaymentStatus::New), None, Some(&create_failed(Lang::En, &error)), false);
        assert!(!page.contains("<img"), "{page}");
        assert!(page.contains("&lt;img src=x onerror=alert(1)&gt;"));
        assert!(page.contains("Human &lt;Acts&gt;"));
        assert!(page.contains("nothing was charged; try again"));
        assert!(page.contains(r#"data-testid="pay">Try again<"#));
    }

    #[test]
    fn the_order_page_shows_the_raw_status_the_total_and_a_language_switch() {
        let page = order_page(Lang::Ko, &order(PaymentStatus::Checkout(CheckoutStatus::Paid)), None, None, true);
        assert!(page.contains(r#"<html lang="ko">"#));
        assert!(page.contains(r#"data-testid="order-status" data-status="PAID""#));
        assert!(page.contains(r#"data-testid="order-total">₩28,000<"#));
        assert!(
            page.contains(r#"data-testid="lang-switch" href="/orders/4d7c8b8e-3c8a-4e0b-9a57-0f1f3d1c2b3a?lang=en""#)
        );
        assert!(page.contains("결제 완료") && page.contains("소년이 온다"));
        assert!(page.contains(r#"data-testid="refund""#) && !page.contains(r#"data-testid="pay""#));
        assert!(!page.contains("http-equiv"));
    }

    #[test]
    fn only_a_payment_being_settled_reloads_its_page() {
        for (status, reloads) in [
            (CheckoutStatus::Pending, true),
            (CheckoutStatus::Unknown, true),
            (CheckoutStatus::CancelRequested, true),
            (CheckoutStatus::Created, false),
            (CheckoutStatus::Paid, false),
            (CheckoutStatus::Expired, false),
        ] {
            let page = order_page(Lang::En, &order(PaymentStatus::Checkout(status)), None, None, true);
            assert_eq!(page.contains(r#"<meta http-equiv="refresh" content="3">"#), reloads, "{status:?}");
        }
        let answer_to_a_post =
            order_page(Lang::En, &order(PaymentStatus::Checkout(CheckoutStatus::Pending)), None, None, false);
        assert!(!answer_to_a_post.contains("http-equiv"));
    }

    #[test]
    fn payonces_answer_now_is_shown_beside_the_status_recorded_from_events() {
        let paid_now = PaymentState { status: PaymentStatus::Checkout(CheckoutStatus::Paid), amount_refunded: 0 };
        let page = order_page(Lang::En, &order(PaymentStatus::New), Some(paid_now), None, true);
        assert!(page.contains(r#"data-testid="order-status" data-status="PAID""#), "{page}");
        assert!(page.contains(r#"data-testid="recorded-status" data-status="NEW""#));
        assert!(page.contains("(updated when payonce's event arrives)"));
        assert!(page.contains(r#"data-testid="refund""#) && !page.contains(r#"data-testid="pay""#));

        let recorded = order(PaymentStatus::Checkout(CheckoutStatus::Paid));
        let page = order_page(Lang::En, &recorded, Some(paid_now), None, true);
        assert!(page.contains(r#"data-testid="recorded-status" data-status="PAID""#));
        assert!(!page.contains("updated when"));
    }

    #[test]
    fn a_closed_checkout_offers_a_new_order_of_the_same_books() {
        let page = order_page(Lang::En, &order(PaymentStatus::Checkout(CheckoutStatus::Expired)), None, None, true);
        assert!(page.contains(r#"<input type="hidden" name="qty-human-acts" value="2">"#));
        assert!(page.contains(r#"data-testid="order-again""#) && !page.contains(r#"data-testid="refund""#));
    }

    #[test]
    fn the_catalog_has_a_buy_button_and_keeps_what_was_typed() {
        let entered = BTreeMap::from([("human-acts".to_owned(), "\"12".to_owned())]);
        let page = catalog_page(Lang::En, &entered, Some(&Notice("Choose <again>".into())));
        assert!(page.contains(r#"<html lang="en">"#) && page.contains(r#"data-testid="buy""#));
        assert!(page.contains(r#"name="qty-human-acts" data-testid="qty-human-acts""#));
        assert!(page.contains(r#"value="&quot;12""#) && page.contains("Choose &lt;again&gt;"));
        assert!(page.contains(r#"action="/orders?lang=en""#) && page.contains(r#"href="/?lang=ko""#));
    }
}
