//! What the payment window says, one catalog per language. The window speaks
//! the shop page's language when the SDK passes it (`lang`), otherwise the
//! browser's first choice between Korean and English.

use crate::scenario::Scenario;

/// A language of the window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Lang {
    En,
    Ko,
}

impl Lang {
    /// `lang` as the SDK sends it (`ko`, `en`), or else the `Accept-Language` header.
    pub(crate) fn choose(lang: Option<&str>, accept_language: Option<&str>) -> Self {
        let korean = |tag: &str| tag.trim().to_ascii_lowercase().starts_with("ko");
        match lang.map(str::trim).filter(|lang| !lang.is_empty()) {
            Some(lang) => {
                if korean(lang) {
                    Lang::Ko
                } else {
                    Lang::En
                }
            }
            None => match accept_language.and_then(|header| header.split(',').next()) {
                Some(first) if korean(first.split(';').next().unwrap_or_default()) => Lang::Ko,
                _ => Lang::En,
            },
        }
    }

    /// The `lang` attribute and the value of the form's hidden field.
    pub(crate) fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Ko => "ko",
        }
    }

    pub(crate) fn text(self) -> &'static WindowText {
        match self {
            Lang::En => &EN,
            Lang::Ko => &KO,
        }
    }
}

/// Every sentence of the window, its error page and its receipt.
pub(crate) struct WindowText {
    pub(crate) brand: &'static str,
    pub(crate) receipt_brand: &'static str,
    pub(crate) test_mode: &'static str,
    pub(crate) page_title: &'static str,
    pub(crate) close: &'static str,
    pub(crate) merchant_label: &'static str,
    pub(crate) merchant: &'static str,
    pub(crate) order_id: &'static str,
    pub(crate) payment_key: &'static str,
    pub(crate) choose_card: &'static str,
    pub(crate) charged: &'static str,
    pub(crate) not_charged: &'static str,
    pub(crate) footer: &'static str,
    /// `{usual}`: the usual processing time.
    pub(crate) timing: &'static str,
    /// `{scale}`, `{usual}`, `{forty}`: a PG running on a time scale.
    pub(crate) timing_scaled: &'static str,
    pub(crate) cannot_start: &'static str,
    pub(crate) cannot_go_on: &'static str,
    pub(crate) invalid_request_note: &'static str,
    pub(crate) choose_a_card: &'static str,
    pub(crate) status: &'static str,
    pub(crate) approved_at: &'static str,
    pub(crate) card: &'static str,
    /// Title and one line for each test card, in the order of [`Scenario::ALL`].
    pub(crate) scenarios: [(&'static str, &'static str); 12],
}

impl WindowText {
    pub(crate) fn scenario(&self, scenario: Scenario) -> (&'static str, &'static str) {
        let index = Scenario::ALL.iter().position(|candidate| *candidate == scenario).unwrap_or_default();
        self.scenarios[index]
    }
}

const EN: WindowText = WindowText {
    brand: "fake-pg · Payment",
    receipt_brand: "fake-pg · Receipt",
    test_mode: "TEST MODE",
    page_title: "Payment · fake-pg",
    close: "Close the payment window",
    merchant_label: "Merchant",
    merchant: "Test merchant (tosspayments)",
    order_id: "Order ID",
    payment_key: "Payment key",
    choose_card: "Choose a test card",
    charged: "charged",
    not_charged: "not charged",
    footer: "A test payment window. No real card is charged.",
    timing: "Normal processing takes {usual}.",
    timing_scaled: "This PG runs at time scale {scale}: normal processing takes {usual}, and \"40 s\" takes {forty}.",
    cannot_start: "This payment cannot be started",
    cannot_go_on: "This payment cannot go on",
    invalid_request_note: "The shop sent an incomplete or invalid payment request. Go back to the shop and try again.",
    choose_a_card: "Choose one of the test cards.",
    status: "Status",
    approved_at: "Approved at",
    card: "Card",
    scenarios: [
        ("Approve", "Charged after the normal processing time."),
        ("Approve slowly (40\u{a0}s)", "Charged; the confirm takes 40 seconds to answer."),
        (
            "Approve very slowly (70\u{a0}s)",
            "Charged; the confirm takes 70 seconds, longer than a 60-second read timeout.",
        ),
        ("Decline: card rejected", "Not charged: 403 REJECT_CARD_PAYMENT."),
        ("Decline: invalid expiration date", "Not charged: 400 INVALID_CARD_EXPIRATION."),
        (
            "Error 500, but charged",
            "Charged, but the first confirm answers 500; a retry with the same Idempotency-Key gets the payment.",
        ),
        (
            "Connection reset after charging",
            "Charged, then the connection is reset with no answer; a retry with the same Idempotency-Key gets the payment.",
        ),
        ("Rate limited (429)", "Not charged: every confirm answers 429 TOO_MANY_REQUESTS."),
        ("Consecutive request blocked (403)", "Not charged: every confirm answers 403 FORBIDDEN_CONSECUTIVE_REQUEST."),
        ("Cancel payment", "Back to the shop with PAY_PROCESS_CANCELED."),
        ("Approve: no partial refund", "Charged; a partial refund answers 403 NOT_ALLOWED_PARTIAL_REFUND."),
        ("Approve: refund period over", "Charged; every refund answers 403 EXCEED_MAX_REFUND_DUE."),
    ],
};

const KO: WindowText = WindowText {
    brand: "fake-pg · 결제",
    receipt_brand: "fake-pg · 영수증",
    test_mode: "테스트 모드",
    page_title: "결제 · fake-pg",
    close: "결제창 닫기",
    merchant_label: "상점",
    merchant: "테스트 상점 (tosspayments)",
    order_id: "주문번호",
    payment_key: "결제 키",
    choose_card: "테스트 카드를 고르세요",
    charged: "결제됨",
    not_charged: "결제 안 됨",
    footer: "테스트 결제창입니다. 실제 카드는 결제되지 않습니다.",
    timing: "보통 {usual} 걸립니다.",
    timing_scaled: "이 PG는 시간 배율 {scale}로 동작합니다: 보통 {usual}, \"40초\"는 {forty} 걸립니다.",
    cannot_start: "결제를 시작할 수 없습니다",
    cannot_go_on: "결제를 진행할 수 없습니다",
    invalid_request_note: "상점이 보낸 결제 요청이 빠졌거나 올바르지 않습니다. 상점으로 돌아가 다시 시도하세요.",
    choose_a_card: "테스트 카드 중 하나를 고르세요.",
    status: "상태",
    approved_at: "승인 시각",
    card: "카드",
    scenarios: [
        ("승인", "보통 처리 시간 뒤에 결제됩니다."),
        ("느린 승인 (40\u{a0}초)", "결제됩니다. 결제 승인 응답에 40초가 걸립니다."),
        ("아주 느린 승인 (70\u{a0}초)", "결제됩니다. 결제 승인 응답에 70초가 걸려 60초 읽기 제한 시간보다 깁니다."),
        ("거절: 카드 거절", "결제 안 됨: 403 REJECT_CARD_PAYMENT."),
        ("거절: 유효기간 오류", "결제 안 됨: 400 INVALID_CARD_EXPIRATION."),
        (
            "500 오류, 하지만 결제됨",
            "결제되지만 첫 승인 요청은 500으로 응답합니다. 같은 멱등키로 다시 요청하면 결제를 받습니다.",
        ),
        ("결제 뒤 연결 끊김", "결제된 뒤 응답 없이 연결이 끊깁니다. 같은 멱등키로 다시 요청하면 결제를 받습니다."),
        ("요청 한도 초과 (429)", "결제 안 됨: 모든 승인 요청이 429 TOO_MANY_REQUESTS로 응답합니다."),
        ("연속 요청 차단 (403)", "결제 안 됨: 모든 승인 요청이 403 FORBIDDEN_CONSECUTIVE_REQUEST로 응답합니다."),
        ("결제 취소", "PAY_PROCESS_CANCELED와 함께 상점으로 돌아갑니다."),
        ("승인: 부분 환불 불가", "결제됩니다. 부분 환불은 403 NOT_ALLOWED_PARTIAL_REFUND로 거절됩니다."),
        ("승인: 환불 기간 지남", "결제됩니다. 모든 환불이 403 EXCEED_MAX_REFUND_DUE로 거절됩니다."),
    ],
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shops_language_wins_then_the_browsers_first_choice() {
        assert_eq!(Lang::choose(Some("ko"), Some("en-US")), Lang::Ko);
        assert_eq!(Lang::choose(Some("en"), Some("ko-KR")), Lang::En);
        assert_eq!(Lang::choose(None, Some("ko-KR,ko;q=0.9,en;q=0.8")), Lang::Ko);
        assert_eq!(Lang::choose(Some(""), Some("en-GB,ko;q=0.5")), Lang::En);
        assert_eq!(Lang::choose(None, None), Lang::En);
    }

    #[test]
    fn every_card_has_words_in_both_languages() {
        for lang in [Lang::En, Lang::Ko] {
            for scenario in Scenario::ALL {
                let (title, description) = lang.text().scenario(scenario);
                assert!(!title.is_empty() && !description.is_empty(), "{lang:?} {scenario:?}");
            }
        }
    }
}
