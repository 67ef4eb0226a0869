//! What a shop may ask for in a checkout: each field within its bounds, the
//! total the sum of the lines, the return URL on the shop's own origins, the
//! PGs among the shop's. A refusal names the field, and nothing is stored.

use std::time::Duration;

use payonce_api::checkout::{
    DEFAULT_EXPIRES_IN_SECS, EXPIRES_IN_SECS, MAX_AMOUNT, MAX_LINES, MAX_METADATA, MAX_QUANTITY, MIN_AMOUNT,
};
use payonce_api::{CreateCheckoutRequest, Names, Pg};
use url::Url;

use crate::error::AppError;
use crate::shops::{Shop, is_allowed_scheme};

const REFERENCE_MAX: usize = 64;
const NAME_MAX: usize = 100;
const METADATA_KEY_MAX: usize = 40;
const METADATA_VALUE_MAX: usize = 500;
const RETURN_URL_MAX: usize = 2_000;

/// A request that passed: the PGs it allows and how long it stays open.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checked {
    pub pay_with: Vec<Pg>,
    pub open_for: Duration,
}

fn refuse(message: impl Into<String>) -> AppError {
    AppError::InvalidCheckout(message.into())
}

/// 1 to `most` characters, none of them a control character.
fn is_text(text: &str, most: usize) -> bool {
    !text.trim().is_empty() && text.chars().count() <= most && !text.chars().any(char::is_control)
}

/// `shortest` is the least time a checkout may stay open (`--checkout-shortest-open`).
pub fn check(shop: &Shop, request: &CreateCheckoutRequest, shortest: Duration) -> Result<Checked, AppError> {
    if !is_text(&request.reference, REFERENCE_MAX) {
        return Err(refuse(format!(
            "reference must be 1 to {REFERENCE_MAX} characters, none of them a control character"
        )));
    }
    check_names(&request.name)?;
    if request.lines.is_empty() || request.lines.len() > MAX_LINES {
        return Err(refuse(format!("lines must list 1 to {MAX_LINES} lines")));
    }
    let mut total: u64 = 0;
    for (index, line) in request.lines.iter().enumerate() {
        let number = index + 1;
        if !is_text(&line.name, NAME_MAX) {
            return Err(refuse(format!("lines[{number}].name must be 1 to {NAME_MAX} characters")));
        }
        if line.quantity == 0 || line.quantity > MAX_QUANTITY {
            return Err(refuse(format!("lines[{number}].quantity must be 1 to {MAX_QUANTITY}")));
        }
        // Checked, so that no sum of lines can wrap around to a small amount.
        let line_total = line.unit_amount.checked_mul(u64::from(line.quantity));
        total = match line_total.and_then(|line_total| total.checked_add(line_total)) {
            Some(total) if total <= MAX_AMOUNT => total,
            _ => return Err(refuse(format!("the lines add up to more than {MAX_AMOUNT} won"))),
        };
    }
    if request.amount != total {
        return Err(refuse(format!("amount {} is not the sum of the lines, {total}", request.amount)));
    }
    if !(MIN_AMOUNT..=MAX_AMOUNT).contains(&request.amount) {
        return Err(refuse(format!("amount must be {MIN_AMOUNT} to {MAX_AMOUNT} won")));
    }
    check_return_url(shop, &request.return_url)?;
    if request.metadata.len() > MAX_METADATA {
        return Err(refuse(format!("metadata may have at most {MAX_METADATA} pairs")));
    }
    for (key, value) in &request.metadata {
        if !is_text(key, METADATA_KEY_MAX) || value.chars().count() > METADATA_VALUE_MAX {
            return Err(refuse(format!(
                "metadata keys must be 1 to {METADATA_KEY_MAX} characters and values at most {METADATA_VALUE_MAX}"
            )));
        }
    }
    let pay_with = match &request.pay_with {
        None => shop.pay_with.clone(),
        Some(asked) if asked.is_empty() => return Err(refuse("pay_with must name at least one PG")),
        Some(asked) => {
            if let Some(pg) = asked.iter().find(|pg| !shop.pay_with.contains(pg)) {
                return Err(refuse(format!("pay_with names {}, which this shop does not take", pg.as_str())));
            }
            Pg::ALL.into_iter().filter(|pg| asked.contains(pg)).collect()
        }
    };
    let seconds = request.expires_in.unwrap_or(DEFAULT_EXPIRES_IN_SECS);
    let least = shortest.as_secs().clamp(1, *EXPIRES_IN_SECS.start());
    if !(least..=*EXPIRES_IN_SECS.end()).contains(&seconds) {
        return Err(refuse(format!("expires_in must be {least} to {} seconds", EXPIRES_IN_SECS.end())));
    }
    Ok(Checked { pay_with, open_for: Duration::from_secs(seconds) })
}

fn check_names(names: &Names) -> Result<(), AppError> {
    if names.en.is_none() && names.ko.is_none() {
        return Err(refuse("name must have en, ko or both"));
    }
    for (field, name) in [("name.en", &names.en), ("name.ko", &names.ko)] {
        if let Some(name) = name
            && !is_text(name, NAME_MAX)
        {
            return Err(refuse(format!("{field} must be 1 to {NAME_MAX} characters")));
        }
    }
    Ok(())
}

/// https (http only to this machine), on one of the shop's origins, with no
/// user name or password in it.
fn check_return_url(shop: &Shop, text: &str) -> Result<(), AppError> {
    let url = match Url::parse(text) {
        Ok(url) if text.len() <= RETURN_URL_MAX => url,
        _ => return Err(refuse(format!("return_url must be an absolute URL of at most {RETURN_URL_MAX} characters"))),
    };
    if !is_allowed_scheme(&url) {
        return Err(refuse("return_url must be https (http only for localhost)"));
    }
    if !url.username().is_empty() || url.password().is_some() {
        return Err(refuse("return_url must not carry a user name or password"));
    }
    if !shop.return_origins.contains(&url.origin()) {
        return Err(refuse(format!(
            "return_url {:?} is not on one of this shop's return_origins",
            url.origin().ascii_serialization()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use payonce_api::CheckoutLine;

    use super::*;
    use crate::shops::{Shops, key_digest};

    fn shop() -> Shop {
        let text = format!(
            "[[shop]]\nid = \"books\"\nname = \"Seoul Books\"\norder_id_prefix = \"ord_books_\"\n\
             return_origins = [\"https://books.example\"]\npay_with = [\"toss\"]\nkey_digests = [\"{}\"]\n",
            key_digest("k")
        );
        Shops::parse(&text, "ord_").unwrap().iter().next().unwrap().clone()
    }

    fn request() -> CreateCheckoutRequest {
        CreateCheckoutRequest {
            reference: "ORDER-1".into(),
            name: Names { en: Some("Two books".into()), ko: None },
            lines: vec![
                CheckoutLine { name: "A".into(), quantity: 2, unit_amount: 10_000 },
                CheckoutLine { name: "B".into(), quantity: 1, unit_amount: 5_000 },
            ],
            amount: 25_000,
            return_url: "https://books.example/orders/1/back".into(),
            metadata: Default::default(),
            pay_with: None,
            expires_in: None,
        }
    }

    fn refused(change: impl FnOnce(&mut CreateCheckoutRequest)) -> String {
        let mut request = request();
        change(&mut request);
        match check(&shop(), &request, Duration::from_secs(60)) {
            Err(AppError::InvalidCheckout(message)) => message,
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn a_good_request_takes_the_shops_pgs_and_ninety_minutes() {
        let checked = check(&shop(), &request(), Duration::from_secs(60)).unwrap();
        assert_eq!(checked, Checked { pay_with: vec![Pg::Toss], open_for: Duration::from_secs(5_400) });
    }

    #[test]
    fn each_mistake_is_named() {
        assert!(refused(|r| r.amount = 25_001).contains("not the sum"));
        assert!(refused(|r| r.lines[0].unit_amount = u64::MAX).contains("add up to more"));
        assert!(refused(|r| r.lines[0].quantity = 0).contains("lines[1].quantity"));
        assert!(refused(|r| r.lines.clear()).contains("lines must"));
        assert!(refused(|r| r.return_url = "https://evil.example/back".into()).contains("return_origins"));
        assert!(refused(|r| r.return_url = "http://books.example/back".into()).contains("https"));
        assert!(refused(|r| r.return_url = "https://u:p@books.example/".into()).contains("user name"));
        assert!(refused(|r| r.name = Names::default()).contains("name"));
        assert!(refused(|r| r.reference = "a\u{0}b".into()).contains("reference"));
        assert!(refused(|r| r.pay_with = Some(vec![Pg::KakaoPay])).contains("kakaopay"));
        assert!(refused(|r| r.expires_in = Some(59)).contains("expires_in"));
        assert!(refused(|r| r.expires_in = Some(86_401)).contains("expires_in"));
        assert!(
            refused(|r| r.metadata = (0..21).map(|n| (n.to_string(), String::new())).collect()).contains("metadata")
        );
        let small = |r: &mut CreateCheckoutRequest| {
            r.lines = vec![CheckoutLine { name: "Pin".into(), quantity: 1, unit_amount: 99 }];
            r.amount = 99;
        };
        assert!(refused(small).contains("100"));
    }
}
