//! KakaoPay's window, where the customer's browser goes after ready:
//! `GET /kakaopay/window/{tid}?mode=pc|mobile|app` shows it (on a PC, KakaoPay's
//! QR page, whose buttons stand for what the phone that scans it does), and
//! `POST` takes the customer's choice: authenticate (back to `approval_url`
//! with a `pg_token`), fail the password (`fail_url`), or quit (`cancel_url`).
//! Fifteen minutes after ready (× `time_scale`) it only says it expired and
//! sends the customer to `fail_url`.

use std::fmt::Write as _;
use std::sync::Arc;
use std::time::Duration;

use axum::body::Bytes;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::{Extension, Router};
use serde::Deserialize;

use super::readies::{Readies, SESSION_DEADLINE};
use super::wire::Ready;
use crate::html::{self, escape, format_won};
use crate::payment::PaymentStatus;
use crate::scenario::Scenario;
use crate::state::AppState;
use crate::store::{SessionChoice, SessionView, WindowEnd};
use crate::window_text::Lang;

pub(super) fn router() -> Router<AppState> {
    Router::new().route("/kakaopay/window/{tid}", get(show).post(choose))
}

/// One choice of the window: its id (the button's `value`), what it does, and
/// its words in English and Korean.
struct Choice {
    id: &'static str,
    choice: SessionChoice,
    charges: bool,
    en: (&'static str, &'static str),
    ko: (&'static str, &'static str),
}

const CHOICES: [Choice; 9] = [
    Choice {
        id: "approve",
        choice: SessionChoice::Authenticate(None),
        charges: true,
        en: ("Approve", "Password correct: back to the shop with a pg_token; the approve charges."),
        ko: ("승인", "비밀번호 인증 완료: pg_token과 함께 상점으로 돌아갑니다. 승인 요청이 결제합니다."),
    },
    Choice {
        id: "approve_40s",
        choice: SessionChoice::Authenticate(Some(Scenario::Approve40s)),
        charges: true,
        en: ("Approve slowly (40\u{a0}s)", "Charged; the approve takes 40 seconds to answer."),
        ko: ("느린 승인 (40\u{a0}초)", "결제됩니다. 승인 응답에 40초가 걸립니다."),
    },
    Choice {
        id: "approve_70s",
        choice: SessionChoice::Authenticate(Some(Scenario::Approve70s)),
        charges: true,
        en: (
            "Approve very slowly (70\u{a0}s)",
            "Charged; the approve takes 70 seconds, longer than a 60-second read timeout.",
        ),
        ko: ("아주 느린 승인 (70\u{a0}초)", "결제됩니다. 승인 응답에 70초가 걸려 60초 읽기 제한 시간보다 깁니다."),
    },
    Choice {
        id: "decline_reject_card",
        choice: SessionChoice::Authenticate(Some(Scenario::DeclineRejectCard)),
        charges: false,
        en: ("Card declined at approve", "Not charged: the approve answers -780 (FAIL_PAYMENT)."),
        ko: ("승인 시 카드 거절", "결제 안 됨: 승인 요청이 -780으로 응답합니다 (FAIL_PAYMENT)."),
    },
    Choice {
        id: "error_500_then_charge",
        choice: SessionChoice::Authenticate(Some(Scenario::Error500ThenCharge)),
        charges: true,
        en: ("Error 500, but charged", "Charged, but the approve answers 500 (-500); the order shows SUCCESS_PAYMENT."),
        ko: (
            "500 오류, 하지만 결제됨",
            "결제되지만 승인 요청은 500(-500)으로 응답합니다. 주문 조회는 SUCCESS_PAYMENT.",
        ),
    },
    Choice {
        id: "reset_after_charge",
        choice: SessionChoice::Authenticate(Some(Scenario::ResetAfterCharge)),
        charges: true,
        en: (
            "Connection reset after charging",
            "Charged, then the approve's connection is reset; the order shows SUCCESS_PAYMENT.",
        ),
        ko: ("결제 뒤 연결 끊김", "결제된 뒤 승인 요청의 연결이 끊깁니다. 주문 조회는 SUCCESS_PAYMENT."),
    },
    Choice {
        id: "approve_no_partial_refund",
        choice: SessionChoice::Authenticate(Some(Scenario::ApproveNoPartialRefund)),
        charges: true,
        en: ("Approve, refundable only in full", "Charged; a partial cancel of it is refused (-784)."),
        ko: ("승인, 전액 취소만 가능", "결제됩니다. 부분 취소는 거절됩니다 (-784)."),
    },
    Choice {
        id: "wrong_password",
        choice: SessionChoice::End(WindowEnd::WrongPassword),
        charges: false,
        en: ("Wrong password", "FAIL_AUTH_PASSWORD: back to the shop's fail_url."),
        ko: ("비밀번호 오류", "FAIL_AUTH_PASSWORD: 상점의 fail_url로 돌아갑니다."),
    },
    Choice {
        id: "quit",
        choice: SessionChoice::End(WindowEnd::Quit),
        charges: false,
        en: ("Quit payment", "QUIT_PAYMENT: back to the shop's cancel_url."),
        ko: ("결제 중단", "QUIT_PAYMENT: 상점의 cancel_url로 돌아갑니다."),
    },
];

/// Where the customer's device is: KakaoPay shows a QR code on a PC.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Pc,
    Mobile,
    App,
}

impl Mode {
    fn parse(mode: Option<&str>) -> Self {
        match mode {
            Some("pc") => Mode::Pc,
            Some("app") => Mode::App,
            _ => Mode::Mobile,
        }
    }

    fn id(self) -> &'static str {
        match self {
            Mode::Pc => "pc",
            Mode::Mobile => "mobile",
            Mode::App => "app",
        }
    }
}

#[derive(Deserialize)]
struct WindowQuery {
    mode: Option<String>,
    lang: Option<String>,
}

async fn show(
    State(state): State<AppState>,
    Extension(readies): Extension<Arc<Readies>>,
    Path(tid): Path<String>,
    Query(query): Query<WindowQuery>,
    headers: HeaderMap,
) -> Response {
    let lang = Lang::choose(query.lang.as_deref(), accept_language(&headers));
    let (Some(ready), Some(view)) = (readies.get(&tid), state.store.show_session(&tid)) else {
        return not_found(lang);
    };
    if view.payment.status == PaymentStatus::Expired && view.session.ended.is_none() {
        return (no_store(), Html(expired_page(&ready, lang))).into_response();
    }
    if !view.choosable() {
        // A reload after the choice: back where the choice sent the customer.
        return see_other(&destination(&ready, &view));
    }
    let mode = Mode::parse(query.mode.as_deref());
    let deadline = SESSION_DEADLINE.mul_f64(state.settings.clock.time_scale());
    (no_store(), Html(window_page(&tid, &ready, mode, lang, deadline))).into_response()
}

async fn choose(
    State(state): State<AppState>,
    Extension(readies): Extension<Arc<Readies>>,
    Path(tid): Path<String>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let fields: Vec<(String, String)> = serde_urlencoded::from_bytes(&body).unwrap_or_default();
    let field = |name: &str| fields.iter().find(|(key, _)| key == name).map(|(_, value)| value.as_str());
    let lang = Lang::choose(field("lang"), accept_language(&headers));
    let Some(choice) = field("choice").and_then(|id| CHOICES.iter().find(|choice| choice.id == id)) else {
        let ids: Vec<&str> = CHOICES.iter().map(|choice| choice.id).collect();
        let problem = format!("choice must be one of {}.", ids.join(", "));
        return (StatusCode::BAD_REQUEST, Html(html::error_page(cannot_go_on(lang), &[problem], lang))).into_response();
    };
    let (Some(ready), Some(view)) = (readies.get(&tid), state.store.leave_session(&tid, choice.choice)) else {
        return not_found(lang);
    };
    tracing::info!(tid, choice = choice.id, status = super::wire::status(&view), "kakaopay window");
    see_other(&destination(&ready, &view))
}

/// Where the session sends the customer back to, as it stands.
fn destination(ready: &Ready, view: &SessionView) -> String {
    let urls = &ready.request;
    match (&view.session.pg_token, view.session.ended) {
        (Some(token), _) => with_query(&urls.approval_url, "pg_token", token),
        (None, Some(WindowEnd::Quit)) => urls.cancel_url.clone(),
        // A wrong password, an expired session: KakaoPay's fail_url.
        (None, _) => urls.fail_url.clone(),
    }
}

/// `url` with `name=value` appended: `?` or `&` as its query needs.
fn with_query(url: &str, name: &str, value: &str) -> String {
    let encoded = serde_urlencoded::to_string([(name, value)]).unwrap_or_default();
    let (base, fragment) = url.split_once('#').map_or((url, None), |(base, fragment)| (base, Some(fragment)));
    let separator = match base.find('?') {
        None => "?",
        Some(_) if base.ends_with('?') || base.ends_with('&') => "",
        Some(_) => "&",
    };
    match fragment {
        Some(fragment) => format!("{base}{separator}{encoded}#{fragment}"),
        None => format!("{base}{separator}{encoded}"),
    }
}

fn window_page(tid: &str, ready: &Ready, mode: Mode, lang: Lang, deadline: Duration) -> String {
    let korean = lang == Lang::Ko;
    let request = &ready.request;
    let (title, note) = match (mode, korean) {
        (Mode::Pc, false) => (
            "KakaoPay QR payment (PC)",
            "On a PC, KakaoPay shows a QR code here for the customer to scan with the KakaoTalk app. \
             This test page draws none: choose what the phone that scanned it does.",
        ),
        (Mode::Pc, true) => (
            "카카오페이 QR 결제 (PC)",
            "PC에서는 여기에 고객이 카카오톡으로 스캔할 QR 코드가 나옵니다. \
             이 테스트 페이지는 QR 코드를 그리지 않습니다: 스캔한 휴대폰에서 할 일을 고르세요.",
        ),
        (_, false) => ("KakaoPay payment", "Choose what the customer does in KakaoPay."),
        (_, true) => ("카카오페이 결제", "카카오페이에서 고객이 할 일을 고르세요."),
    };
    let expires = if korean {
        format!("이 결제는 {} 안에 마치지 않으면 만료됩니다.", korean_duration(deadline))
    } else {
        let within = humantime::format_duration(Duration::from_secs(deadline.as_secs().max(1)));
        format!("This payment expires unless finished within {within}.")
    };
    let labels = if korean {
        (
            "상품",
            "주문번호",
            "결제 ID (tid)",
            "결제됨",
            "결제 안 됨",
            "테스트 결제창입니다. 실제 카드는 결제되지 않습니다.",
        )
    } else {
        (
            "Item",
            "Order ID",
            "Payment ID (tid)",
            "charged",
            "not charged",
            "A test payment window. No real card is charged.",
        )
    };
    let mut body = String::new();
    let _ = write!(
        body,
        r#"<form class="card" method="post" action="/kakaopay/window/{tid}" data-mode="{mode}">
<p class="brand"><span>{title}</span><span class="badge">{test}</span></p>
<h1>{item}</h1>
<p class="amount">{amount}</p>
<dl>
<dt>{item_label}</dt><dd>{item} × {quantity}</dd>
<dt>{order_label}</dt><dd><code>{order_id}</code></dd>
<dt>{tid_label}</dt><dd><code>{tid}</code></dd>
</dl>
<p class="note">{note}</p>
<p class="note">{expires}</p>
<input type="hidden" name="mode" value="{mode}">
<input type="hidden" name="lang" value="{lang_code}">
<ul>
"#,
        tid = escape(tid),
        mode = mode.id(),
        title = escape(title),
        test = if korean { "테스트 모드" } else { "TEST MODE" },
        item = escape(&request.item_name),
        amount = format_won(request.total_amount, lang),
        item_label = labels.0,
        quantity = request.quantity,
        order_label = labels.1,
        order_id = escape(&request.partner_order_id),
        tid_label = labels.2,
        note = escape(note),
        expires = escape(&expires),
        lang_code = lang.code(),
    );
    for choice in &CHOICES {
        let (name, description) = if korean { choice.ko } else { choice.en };
        let (class, tag) = if choice.charges { ("charged", labels.3) } else { ("not-charged", labels.4) };
        let _ = writeln!(
            body,
            r#"<li><button type="submit" name="choice" value="{id}" data-choice="{id}"><span class="title">{name}<span class="tag {class}">{tag}</span></span><span class="desc">{description}</span></button></li>"#,
            id = choice.id,
            name = escape(name),
            description = escape(description),
        );
    }
    let _ = write!(body, "</ul>\n</form>\n<footer>{}</footer>", labels.5);
    html::page(title, &body, lang)
}

/// `15분`, `1분 48초`, `2초`: a deadline as Korean writes it, to the second.
fn korean_duration(duration: Duration) -> String {
    let seconds = duration.as_secs().max(1);
    match (seconds / 60, seconds % 60) {
        (0, seconds) => format!("{seconds}초"),
        (minutes, 0) => format!("{minutes}분"),
        (minutes, seconds) => format!("{minutes}분 {seconds}초"),
    }
}

/// The page of an expired session: it says so and sends the customer to `fail_url`.
fn expired_page(ready: &Ready, lang: Lang) -> String {
    let fail_url = escape(&ready.request.fail_url);
    let (title, sentence, back) = match lang {
        Lang::Ko => ("결제 시간이 지났습니다", "결제 요청 후 15분이 지나 결제가 만료되었습니다.", "상점으로 돌아가기"),
        Lang::En => {
            ("This payment expired", "More than 15 minutes passed since the payment was requested.", "Back to the shop")
        }
    };
    let body = format!(
        r#"<meta http-equiv="refresh" content="3;url={fail_url}">
<div class="card error" data-expired="true"><h1>{title}</h1><p>{sentence}</p><p><a href="{fail_url}" data-action="fail">{back}</a></p></div>"#
    );
    html::page(title, &body, lang)
}

fn cannot_go_on(lang: Lang) -> &'static str {
    lang.text().cannot_go_on
}

fn not_found(lang: Lang) -> Response {
    let problem = match lang {
        Lang::Ko => "이 결제(tid)는 여기서 준비된 적이 없거나, PG가 그 뒤에 초기화되었습니다.",
        Lang::En => "This payment (tid) was never readied here, or the PG was reset since.",
    };
    (StatusCode::NOT_FOUND, Html(html::error_page(cannot_go_on(lang), &[problem.to_owned()], lang))).into_response()
}

fn no_store() -> [(header::HeaderName, &'static str); 1] {
    [(header::CACHE_CONTROL, "no-store")]
}

fn see_other(location: &str) -> Response {
    (StatusCode::SEE_OTHER, [(header::LOCATION, location.to_owned())]).into_response()
}

fn accept_language(headers: &HeaderMap) -> Option<&str> {
    headers.get(header::ACCEPT_LANGUAGE).and_then(|value| value.to_str().ok())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kakaopay::wire;

    fn ready() -> Ready {
        let body = br#"{"cid":"TC0ONETIME","partner_order_id":"o1","partner_user_id":"u1","item_name":"<b>Mug</b>",
            "quantity":2,"total_amount":2200,"tax_free_amount":0,"approval_url":"http://shop/ok?x=1",
            "cancel_url":"http://shop/cancel","fail_url":"http://shop/fail"}"#;
        Ready { request: wire::ready(body).unwrap(), created_at: "now".into(), approve_payload: None }
    }

    #[test]
    fn the_token_joins_the_approval_urls_query() {
        assert_eq!(with_query("http://shop/ok", "pg_token", "abc"), "http://shop/ok?pg_token=abc");
        assert_eq!(with_query("http://shop/ok?x=1", "pg_token", "abc"), "http://shop/ok?x=1&pg_token=abc");
        assert_eq!(with_query("http://shop/ok#top", "pg_token", "abc"), "http://shop/ok?pg_token=abc#top");
    }

    #[test]
    fn the_pc_page_is_the_qr_page_with_every_choice_in_both_languages() {
        let minutes = Duration::from_secs(15 * 60);
        for lang in [Lang::En, Lang::Ko] {
            let html = window_page("T1", &ready(), Mode::Pc, lang, minutes);
            assert!(html.contains("QR"), "{lang:?}");
            assert!(html.contains("&lt;b&gt;Mug&lt;/b&gt;") && !html.contains("<b>Mug"));
            for choice in &CHOICES {
                assert!(html.contains(&format!(r#"value="{0}" data-choice="{0}""#, choice.id)), "{}", choice.id);
            }
        }
        assert!(window_page("T1", &ready(), Mode::Mobile, Lang::Ko, minutes).contains("15분 안에"));
        assert_eq!(korean_duration(Duration::from_millis(108_500)), "1분 48초");
        assert_eq!(korean_duration(Duration::from_millis(1_800)), "1초");
        let mobile = window_page("T1", &ready(), Mode::Mobile, Lang::En, minutes);
        assert!(!mobile.contains("QR") && mobile.contains("₩2,200") && mobile.contains("15m"));
    }
}
