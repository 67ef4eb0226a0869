//! The page in Korean and English: one catalog per language (`en.rs`, `ko.rs`),
//! and amounts and names as each language writes them. The page keeps the
//! language in use (`src/i18n`).
//!
//! The catalogs are plain `&'static str` with numbered holes (`{0}`), filled by
//! [`fill`]: a few kilobytes of text and one small function, where an i18n
//! crate would have cost far more of the first load (see ARCHITECTURE.md).
//! [`tr!`] names one text: a bundle then carries only the texts it names (the
//! cart, on the first load, none of the other pages' sentences), where going
//! through a `&Texts` brings the whole catalog along.

mod en;
mod ko;

pub use en::EN;
pub use ko::KO;

/// One text of `lang`'s catalog, by its field: `tr!(lang, cart_title)`.
#[macro_export]
macro_rules! tr {
    ($lang:expr, $($field:ident).+) => {
        match $lang {
            $crate::words::Lang::En => $crate::words::EN.$($field).+,
            $crate::words::Lang::Ko => $crate::words::KO.$($field).+,
        }
    };
}

/// A language of the page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    En,
    Ko,
}

impl Lang {
    pub fn texts(self) -> &'static Texts {
        match self {
            Lang::En => &EN,
            Lang::Ko => &KO,
        }
    }

    /// The BCP 47 tag, for `<html lang>` and for dates.
    pub fn tag(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Ko => "ko",
        }
    }

    pub fn other(self) -> Lang {
        match self {
            Lang::En => Lang::Ko,
            Lang::Ko => Lang::En,
        }
    }

    /// Korean for a browser whose first preference between the two is Korean.
    pub fn from_preferences<'a>(preferred: impl IntoIterator<Item = &'a str>) -> Lang {
        for tag in preferred {
            let tag = tag.trim().to_ascii_lowercase();
            if tag.starts_with("ko") {
                return Lang::Ko;
            }
            if tag.starts_with("en") {
                return Lang::En;
            }
        }
        Lang::En
    }

    /// The language of a tag [`Lang::tag`] wrote.
    pub fn from_tag(tag: &str) -> Option<Lang> {
        match tag {
            "en" => Some(Lang::En),
            "ko" => Some(Lang::Ko),
            _ => None,
        }
    }
}

/// Won as each language writes it: `12,900원`, `₩12,900`.
pub fn won(amount: u64, lang: Lang) -> String {
    let digits = amount.to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3 + 3);
    if lang == Lang::En {
        grouped.push('₩');
    }
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    if lang == Lang::Ko {
        grouped.push('원');
    }
    grouped
}

/// `template` with `{0}`, `{1}`, … replaced by `values`.
pub fn fill(template: &str, values: &[&str]) -> String {
    let mut filled = template.to_owned();
    for (index, value) in values.iter().enumerate() {
        filled = filled.replace(&format!("{{{index}}}"), value);
    }
    filled
}

/// `template`'s text before and after its hole `{0}`, for a value shown in an
/// element of its own (marked with its language); all of it before when it has none.
pub fn around_hole(template: &str) -> (&str, &str) {
    template.split_once("{0}").unwrap_or((template, ""))
}

/// A name given in English, in Korean or both (a shop's, a checkout's), in
/// `lang` when there is one, else in the other language; with the language it is in.
pub fn name_in(names: &payonce_api::Names, lang: Lang) -> (&str, Lang) {
    let given = |lang: Lang| {
        match lang {
            Lang::En => names.en.as_deref(),
            Lang::Ko => names.ko.as_deref(),
        }
        .filter(|name| !name.trim().is_empty())
        .map(|name| (name, lang))
    };
    given(lang).or_else(|| given(lang.other())).unwrap_or(("", lang))
}

/// The Korean particle "to" that follows `word`: 로 after a vowel or ㄹ, 으로 after
/// any other final consonant, read from the last syllable (or digit); "(으)로"
/// when the word ends in something else (a Latin name: its reading decides).
pub fn ro_particle(word: &str) -> &'static str {
    match word.trim_end().chars().last() {
        Some(syllable @ '가'..='힣') => {
            // A precomposed Hangul syllable: 28 possible finals, 0 none, 8 ㄹ.
            let final_consonant = (u32::from(syllable) - 0xAC00) % 28;
            if final_consonant == 0 || final_consonant == 8 { "로" } else { "으로" }
        }
        // 영, 삼, 육 end in a consonant other than ㄹ; 일, 이, 사, 오, 칠, 팔, 구 do not.
        Some('0' | '3' | '6') => "으로",
        Some('1' | '2' | '4' | '5' | '7' | '8' | '9') => "로",
        _ => "(으)로",
    }
}

/// What follows the shop's name in "Back to {shop}": its particle in Korean.
pub fn back_to_shop_particle(shop: &str, lang: Lang) -> &'static str {
    match lang {
        Lang::En => "",
        Lang::Ko => ro_particle(shop),
    }
}

/// Every sentence the customer reads, in one language.
#[derive(Debug)]
pub struct Texts {
    // The header.
    pub skip_to_content: &'static str,
    pub brand_tag: &'static str,
    pub nav_label: &'static str,
    pub nav_cart: &'static str,
    pub nav_orders: &'static str,
    /// The switch's label, in the language it switches to.
    pub switch_to_other: &'static str,
    pub switch_label: &'static str,

    // The cart.
    pub cart_title: &'static str,
    pub loading_products: &'static str,
    pub try_again: &'static str,
    /// `{0}`: the product.
    pub quantity_of: &'static str,
    pub one_fewer: &'static str,
    pub one_more: &'static str,
    pub total: &'static str,
    /// `{0}`: the amount.
    pub pay: &'static str,
    pub creating_order: &'static str,
    pub opening_window: &'static str,
    pub pay_note: &'static str,
    /// `{0}`: the SDK's error code.
    pub window_not_opened: &'static str,
    /// The cart's choice of PG, where the shop takes KakaoPay too.
    pub pay_with: &'static str,
    pub pay_by_card: &'static str,
    pub kakaopay: &'static str,
    /// `/pay/kakaopay`, on its way to KakaoPay's window, when the window cannot be had.
    pub kakaopay_not_opened: &'static str,
    pub choose_another_way: &'static str,

    // The recent-order dialog.
    pub recent_paid: &'static str,
    pub recent_in_progress: &'static str,
    /// `{0}` the order's name, `{1}` its amount, `{2}` when it was placed.
    pub recent_body: &'static str,
    pub see_that_order: &'static str,
    pub cancel: &'static str,
    pub pay_anyway: &'static str,

    // Statuses.
    pub status_created: &'static str,
    pub status_pending: &'static str,
    pub status_paid: &'static str,
    pub status_failed: &'static str,
    pub status_unknown: &'static str,
    pub status_canceled: &'static str,
    pub status_partially_refunded: &'static str,
    pub status_cancel_requested: &'static str,

    // The confirm page.
    pub stay_on_page: &'static str,
    pub preparing: &'static str,
    pub one_moment: &'static str,
    pub processing: &'static str,
    pub processing_text: &'static str,
    /// `{0}`: whole seconds.
    pub waiting_for: &'static str,
    pub checking: &'static str,
    pub checking_text: &'static str,
    /// `{0}` this check, `{1}` of how many.
    pub check_count: &'static str,
    pub checking_progress: &'static str,
    pub keep_open: &'static str,
    pub paid_title: &'static str,
    /// `{0}`: the amount.
    pub paid_text: &'static str,
    pub refunded_title: &'static str,
    pub refunded_partly_title: &'static str,
    /// `{0}`: the amount.
    pub refunded_text: &'static str,
    pub refunded_partly_text: &'static str,
    pub order_label: &'static str,
    pub view_your_order: &'static str,
    pub continue_shopping: &'static str,
    pub failed_title: &'static str,
    pub reason_code: &'static str,
    pub view_the_order: &'static str,
    pub elsewhere_title: &'static str,
    /// `{0}`: the order id.
    pub elsewhere_text: &'static str,
    pub orders_in_this_browser: &'static str,
    pub unresolved_title: &'static str,
    pub unresolved_text: &'static str,
    pub see_your_order: &'static str,
    pub invalid_title: &'static str,
    pub invalid_missing: &'static str,
    /// `{0}`: the amount as written in the link.
    pub invalid_amount: &'static str,
    pub invalid_nothing_sent: &'static str,
    pub see_your_orders: &'static str,

    // The fail page (`/pay/fail`).
    pub fail_cancelled_title: &'static str,
    pub fail_not_through_title: &'static str,
    pub fail_cancelled: &'static str,
    /// The same, for a shop's checkout: no cart is kept.
    pub fail_cancelled_checkout: &'static str,
    pub fail_aborted: &'static str,
    pub fail_rejected: &'static str,
    pub fail_expiration: &'static str,
    pub fail_session: &'static str,
    pub fail_unknown: &'static str,
    pub checking_order: &'static str,
    pub nothing_charged: &'static str,
    pub paid_meanwhile: &'static str,
    pub still_processing: &'static str,
    pub other_browser: &'static str,
    pub could_not_check: &'static str,
    /// A fail link for an order this browser did not send to a payment window:
    /// the page asks before closing it (a link alone closes nothing).
    pub close_order_prompt: &'static str,
    pub close_order: &'static str,

    // The orders pages.
    pub orders_title: &'static str,
    pub loading_orders: &'static str,
    pub no_orders: &'static str,
    pub go_to_cart: &'static str,
    pub loading_order: &'static str,
    pub order_not_found_title: &'static str,
    pub order_not_found: &'static str,
    pub order_title: &'static str,
    pub explain_created: &'static str,
    pub explain_in_progress: &'static str,
    pub explain_paid: &'static str,
    pub explain_failed: &'static str,
    pub explain_canceled: &'static str,
    pub explain_partially_refunded: &'static str,
    pub explain_cancel_requested: &'static str,
    pub items_caption: &'static str,
    pub item: &'static str,
    pub quantity: &'static str,
    pub price: &'static str,
    pub order_number: &'static str,
    pub placed: &'static str,
    pub last_update: &'static str,
    pub all_orders: &'static str,
    /// How much of the order was refunded.
    pub refunded: &'static str,
    pub cancel_order: &'static str,
    pub cancel_dialog_title: &'static str,
    /// `{0}`: the amount refunded.
    pub cancel_dialog_body: &'static str,
    pub keep_order: &'static str,
    pub cancel_and_refund: &'static str,
    pub cancel_window_passed: &'static str,
    pub page_not_found_title: &'static str,
    pub page_not_found: &'static str,

    // A shop's checkout (`/checkout/:id`), and the way back to the shop.
    pub checkout_title: &'static str,
    pub loading_checkout: &'static str,
    /// `{0}`: the shop's name.
    pub sold_by: &'static str,
    pub unit_price: &'static str,
    pub checkout_not_found_title: &'static str,
    pub checkout_not_found: &'static str,
    pub link_used_title: &'static str,
    pub link_used: &'static str,
    pub checkout_expired_title: &'static str,
    pub checkout_expired: &'static str,
    /// `{0}`: the shop's name; in Korean followed by its particle 로/으로 (see [`back_to_shop_particle`]).
    pub back_to_shop: &'static str,

    // What went wrong talking to the shop.
    pub network_error: &'static str,
    /// `{0}`: the HTTP status.
    pub server_error: &'static str,
    /// The cart asks for more of a product than is left (`OUT_OF_STOCK`).
    pub out_of_stock: &'static str,
    /// The shop asked the page to come back later (429); nothing was done.
    pub shop_busy: &'static str,
    pub unreadable_answer: &'static str,

    /// Why a payment failed, by code; every one says that nothing was charged.
    pub reasons: Reasons,
    /// Why the PG refused a refund, by code.
    pub refund_refusals: RefundRefusals,
}

/// A refund the PG refused: what happened, why (one per group of codes), and what now.
#[derive(Debug)]
pub struct RefundRefusals {
    pub title: &'static str,
    pub period_over: &'static str,
    pub in_full_only: &'static str,
    pub card_company: &'static str,
    pub too_much: &'static str,
    pub other: &'static str,
    /// Nothing was refunded, the payment stands, the shop knows.
    pub what_now: &'static str,
}

impl RefundRefusals {
    /// The words for a refusal code, grouped as the server's own message groups them.
    pub fn for_code(&self, code: &str) -> &'static str {
        match code {
            "EXCEED_MAX_REFUND_DUE" => self.period_over,
            "NOT_ALLOWED_PARTIAL_REFUND" | "NOT_ALLOWED_PARTIAL_REFUND_WAITING_DEPOSIT" => self.in_full_only,
            "REFUND_REJECTED" | "PROVIDER_ERROR" => self.card_company,
            "EXCEED_CANCEL_LIMIT" | "NOT_CANCELABLE_AMOUNT" | "NOT_MATCHES_REFUNDABLE_AMOUNT" => self.too_much,
            _ => self.other,
        }
    }
}

/// Why a payment failed, in the customer's words, one per group of codes.
#[derive(Debug)]
pub struct Reasons {
    pub declined: &'static str,
    pub expired_card: &'static str,
    pub unusable_card: &'static str,
    pub card_number: &'static str,
    pub below_minimum: &'static str,
    pub over_limit: &'static str,
    pub pg_busy: &'static str,
    pub shop_busy: &'static str,
    pub pg_unreachable: &'static str,
    pub cancelled_in_window: &'static str,
    pub session_expired: &'static str,
    pub shop_sign_in: &'static str,
    pub confirm_not_received: &'static str,
    pub kakaopay_password: &'static str,
    /// A shop's checkout whose time ran out before it was paid.
    pub checkout_expired: &'static str,
    /// A payment refused because not enough of a product was left.
    pub out_of_stock: &'static str,
    pub other: &'static str,
}

impl Reasons {
    /// The words for a failure code. Codes the page does not know get the
    /// general words, never the PG's or the server's own text.
    pub fn for_code(&self, code: &str) -> &'static str {
        match code {
            "REJECT_CARD_PAYMENT"
            | "REJECT_CARD_COMPANY"
            | "CARD_PROCESSING_ERROR"
            | "FDS_ERROR"
            | "INVALID_REJECT_CARD" => self.declined,
            "INVALID_CARD_EXPIRATION" => self.expired_card,
            "INVALID_STOPPED_CARD" | "INVALID_CARD_LOST_OR_STOLEN" => self.unusable_card,
            "INVALID_CARD_NUMBER" => self.card_number,
            "BELOW_MINIMUM_AMOUNT" => self.below_minimum,
            "TOO_MANY_REQUESTS" | "FORBIDDEN_CONSECUTIVE_REQUEST" => self.pg_busy,
            "PG_BUSY" => self.shop_busy,
            "PG_UNREACHABLE" => self.pg_unreachable,
            "PAY_PROCESS_CANCELED" | "KAKAOPAY_QUIT" => self.cancelled_in_window,
            // KakaoPay's payment outlived its 15 minutes, or was never prepared (the server's code).
            "NOT_FOUND_PAYMENT_SESSION" | "KAKAOPAY_EXPIRED" | "PAYMENT_NOT_PREPARED" => self.session_expired,
            "KAKAOPAY_AUTH_FAILED" => self.kakaopay_password,
            "KAKAOPAY_UNAVAILABLE" => self.pg_busy,
            "UNAUTHORIZED_KEY" | "INVALID_API_KEY" | "INCORRECT_BASIC_AUTH_FORMAT" => self.shop_sign_in,
            "CONFIRM_NOT_RECEIVED" => self.confirm_not_received,
            "CHECKOUT_EXPIRED" => self.checkout_expired,
            "OUT_OF_STOCK" => self.out_of_stock,
            _ if code.starts_with("EXCEED_") => self.over_limit,
            _ => self.other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn won_reads_as_each_language_writes_it() {
        assert_eq!(won(12_900, Lang::Ko), "12,900원");
        assert_eq!(won(12_900, Lang::En), "₩12,900");
        assert_eq!(won(0, Lang::Ko), "0원");
        assert_eq!(won(1_234_567, Lang::En), "₩1,234,567");
        assert_eq!(won(900, Lang::Ko), "900원");
    }

    #[test]
    fn korean_browsers_get_korean_and_everyone_else_english() {
        assert_eq!(Lang::from_preferences(["ko-KR", "en-US"]), Lang::Ko);
        assert_eq!(Lang::from_preferences(["ko"]), Lang::Ko);
        assert_eq!(Lang::from_preferences(["en-US", "ko-KR"]), Lang::En);
        assert_eq!(Lang::from_preferences(["ja-JP", "ko-KR"]), Lang::Ko);
        assert_eq!(Lang::from_preferences(["fr-FR", "de"]), Lang::En);
        assert_eq!(Lang::from_preferences([]), Lang::En);
    }

    #[test]
    fn holes_are_filled_in_order() {
        assert_eq!(fill("Check {0} of {1}", &["3", "25"]), "Check 3 of 25");
        assert_eq!(fill("{1}/{0}", &["a", "b"]), "b/a");
    }

    #[test]
    fn every_failure_reason_says_nothing_was_charged_in_both_languages() {
        for (texts, charged) in [(&EN, "You have not been charged"), (&KO, "결제되지 않았습니다")] {
            for code in [
                "REJECT_CARD_PAYMENT",
                "CONFIRM_NOT_RECEIVED",
                "EXCEED_MAX_AMOUNT",
                "KAKAOPAY_DECLINED",
                "KAKAOPAY_AUTH_FAILED",
                "KAKAOPAY_EXPIRED",
                "KAKAOPAY_NOT_APPROVED",
                "KAKAOPAY_QUIT",
                "CHECKOUT_EXPIRED",
                "OUT_OF_STOCK",
                "SOMETHING_NEW",
                "",
            ] {
                let reason = texts.reasons.for_code(code);
                assert!(reason.contains(charged), "{code}: {reason}");
            }
        }
    }

    #[test]
    fn an_expired_checkout_has_words_of_its_own() {
        assert!(EN.reasons.for_code("CHECKOUT_EXPIRED").contains("time ran out"));
        assert_ne!(KO.reasons.for_code("CHECKOUT_EXPIRED"), KO.reasons.other);
    }

    #[test]
    fn a_name_is_shown_in_the_customers_language_or_else_in_the_other() {
        let both = payonce_api::Names { en: Some("Seoul Books".into()), ko: Some("서울 책방".into()) };
        assert_eq!(name_in(&both, Lang::En), ("Seoul Books", Lang::En));
        assert_eq!(name_in(&both, Lang::Ko), ("서울 책방", Lang::Ko));
        let english = payonce_api::Names { en: Some("Seoul Books".into()), ko: None };
        assert_eq!(name_in(&english, Lang::Ko), ("Seoul Books", Lang::En));
        let korean = payonce_api::Names { en: Some("  ".into()), ko: Some("서울 책방".into()) };
        assert_eq!(name_in(&korean, Lang::En), ("서울 책방", Lang::Ko), "a blank name is no name");
        assert_eq!(name_in(&payonce_api::Names::default(), Lang::En), ("", Lang::En));
    }

    #[test]
    fn the_way_back_to_a_shop_takes_the_particle_its_name_ends_with() {
        assert_eq!(ro_particle("서울 책방"), "으로");
        assert_eq!(ro_particle("커피 가게"), "로");
        assert_eq!(ro_particle("책마을"), "로", "after ㄹ, 로");
        assert_eq!(ro_particle("가게 3 "), "으로");
        assert_eq!(ro_particle("마트24"), "로");
        assert_eq!(ro_particle("Seoul Books"), "(으)로");
        assert_eq!(ro_particle(""), "(으)로");
        assert_eq!(back_to_shop_particle("서울 책방", Lang::En), "");
        let (before, after) = around_hole(KO.back_to_shop);
        assert_eq!(
            format!("{before}서울 책방{}{after}", back_to_shop_particle("서울 책방", Lang::Ko)),
            "서울 책방으로 돌아가기"
        );
        assert_eq!(around_hole(EN.back_to_shop), ("Back to ", ""));
        assert_eq!(around_hole("no hole"), ("no hole", ""));
    }

    #[test]
    fn a_code_the_page_does_not_know_gets_the_general_words_not_the_code() {
        let reason = EN.reasons.for_code("PG_SAID_SOMETHING_ODD");
        assert_eq!(reason, EN.reasons.other);
        assert!(!reason.contains("PG_SAID_SOMETHING_ODD"));
    }

    #[test]
    fn every_text_with_holes_has_them_in_both_languages() {
        let holes = |texts: &Texts| {
            [
                texts.quantity_of,
                texts.one_fewer,
                texts.one_more,
                texts.pay,
                texts.window_not_opened,
                texts.recent_body,
                texts.waiting_for,
                texts.check_count,
                texts.paid_text,
                texts.refunded_text,
                texts.refunded_partly_text,
                texts.elsewhere_text,
                texts.invalid_amount,
                texts.server_error,
                texts.sold_by,
                texts.back_to_shop,
            ]
            .map(|text| (0..3).filter(|hole| text.contains(&format!("{{{hole}}}"))).count())
        };
        assert_eq!(holes(&EN), holes(&KO));
    }
}
