//! What a PG's window sends back to `/pay/success`, in the flow's terms. The
//! flow knows one credential per payment and calls it the payment key: Toss's
//! `paymentKey`, or the `pg_token` KakaoPay's window returns (the payment it
//! approves is the one the server prepared for the order). The confirm POST
//! names it as its PG does.

use payonce_api::{ConfirmRequest, Pg};

use crate::{InvalidLink, SuccessParams};

/// The PG whose window sent the customer back: KakaoPay's return URL says
/// `pg=kakaopay` (the server wrote it); Toss's names none.
pub fn pg_of(get: impl Fn(&str) -> Option<String>) -> Pg {
    get("pg").and_then(|pg| Pg::parse(pg.trim())).unwrap_or(Pg::Toss)
}

/// The payment's credential, order and amount, as `pg`'s return carries them.
pub fn success_params(pg: Pg, get: impl Fn(&str) -> Option<String>) -> Result<SuccessParams, InvalidLink> {
    SuccessParams::from_query(|name| match (pg, name) {
        (Pg::KakaoPay, "paymentKey") => get("pg_token"),
        _ => get(name),
    })
}

/// The confirm POST's body for `pg`, carrying the flow's credential.
pub fn confirm_request(pg: Pg, credential: String, amount: u64) -> ConfirmRequest {
    match pg {
        Pg::Toss => ConfirmRequest { payment_key: credential, pg_token: None, amount },
        Pg::KakaoPay => ConfirmRequest { payment_key: String::new(), pg_token: Some(credential), amount },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn query(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |name| pairs.iter().find(|(key, _)| *key == name).map(|(_, value)| (*value).to_owned())
    }

    #[test]
    fn kakaopays_return_is_read_by_its_pg_token() {
        let back = query(&[("pg", "kakaopay"), ("orderId", "ord_1"), ("amount", "12900"), ("pg_token", "tok")]);
        let pg = pg_of(&back);
        assert_eq!(pg, Pg::KakaoPay);
        let params = success_params(pg, &back).unwrap();
        assert_eq!((params.payment_key.as_str(), params.order_id.as_str(), params.amount), ("tok", "ord_1", 12_900));
        assert_eq!(
            confirm_request(pg, params.payment_key, params.amount),
            ConfirmRequest { payment_key: String::new(), pg_token: Some("tok".into()), amount: 12_900 }
        );
    }

    #[test]
    fn a_kakaopay_return_without_its_token_is_missing_one_even_with_a_payment_key() {
        let back = query(&[("pg", "kakaopay"), ("orderId", "ord_1"), ("amount", "1"), ("paymentKey", "pk")]);
        assert_eq!(success_params(pg_of(&back), &back), Err(InvalidLink::Missing));
    }

    #[test]
    fn tosss_return_names_no_pg_and_is_read_by_its_payment_key() {
        let back = query(&[("paymentKey", "pk"), ("orderId", "ord_1"), ("amount", "1"), ("pg_token", "tok")]);
        let pg = pg_of(&back);
        assert_eq!(pg, Pg::Toss);
        assert_eq!(success_params(pg, &back).unwrap().payment_key, "pk");
        assert_eq!(
            confirm_request(pg, "pk".into(), 1),
            ConfirmRequest { payment_key: "pk".into(), pg_token: None, amount: 1 }
        );
        // A PG the page does not know is read as Toss's: its paymentKey is what the server checks.
        assert_eq!(pg_of(query(&[("pg", "paypal")])), Pg::Toss);
    }
}
