//! What a PG's window sends back to `/pay/success`, in the flow's terms. The
//! flow knows one credential per payment and calls it the payment key: Toss's
//! `paymentKey`, or the `pg_token` KakaoPay's window returns together with the
//! `ready` its return names (the payment the server prepared for that window:
//! the token approves only its tid). The confirm POST names each part as its
//! PG does.

use payonce_api::{ConfirmRequest, Pg};

use crate::{InvalidLink, SuccessParams};

/// The PG whose window sent the customer back: KakaoPay's return URL says
/// `pg=kakaopay` (the server wrote it); Toss's names none.
pub fn pg_of(get: impl Fn(&str) -> Option<String>) -> Pg {
    get("pg").and_then(|pg| Pg::parse(pg.trim())).unwrap_or(Pg::Toss)
}

/// Between KakaoPay's `pg_token` and its `ready` in the flow's credential:
/// neither holds a space (the server takes printable ASCII without one).
const READY_AFTER: char = ' ';

/// The payment's credential, order and amount, as `pg`'s return carries them.
pub fn success_params(pg: Pg, get: impl Fn(&str) -> Option<String>) -> Result<SuccessParams, InvalidLink> {
    SuccessParams::from_query(|name| match (pg, name) {
        (Pg::KakaoPay, "paymentKey") => {
            let ready = get("ready").map(|ready| ready.trim().to_owned()).filter(|ready| !ready.is_empty());
            get("pg_token").map(|token| match ready {
                Some(ready) => format!("{}{READY_AFTER}{ready}", token.trim()),
                None => token,
            })
        }
        _ => get(name),
    })
}

/// The confirm POST's body for `pg`, carrying the flow's credential.
pub fn confirm_request(pg: Pg, credential: String, amount: u64) -> ConfirmRequest {
    match pg {
        Pg::Toss => ConfirmRequest { payment_key: credential, pg_token: None, ready: None, amount },
        Pg::KakaoPay => {
            let (pg_token, ready) = match credential.split_once(READY_AFTER) {
                Some((token, ready)) => (token.to_owned(), Some(ready.to_owned())),
                None => (credential, None),
            };
            ConfirmRequest { payment_key: String::new(), pg_token: Some(pg_token), ready, amount }
        }
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
            ConfirmRequest { payment_key: String::new(), pg_token: Some("tok".into()), ready: None, amount: 12_900 }
        );
    }

    #[test]
    fn kakaopays_return_names_the_ready_its_token_was_issued_for_and_the_confirm_sends_both() {
        let back = query(&[
            ("pg", "kakaopay"),
            ("orderId", "ord_1"),
            ("amount", "12900"),
            ("ready", "3f0b1c9e6a0e4a8e"),
            ("pg_token", "tok"),
        ]);
        let params = success_params(pg_of(&back), &back).unwrap();
        assert_eq!(
            confirm_request(Pg::KakaoPay, params.payment_key, params.amount),
            ConfirmRequest {
                payment_key: String::new(),
                pg_token: Some("tok".into()),
                ready: Some("3f0b1c9e6a0e4a8e".into()),
                amount: 12_900
            }
        );
        let empty = query(&[("pg", "kakaopay"), ("orderId", "o"), ("amount", "1"), ("ready", ""), ("pg_token", "t")]);
        let params = success_params(Pg::KakaoPay, &empty).unwrap();
        assert_eq!(confirm_request(Pg::KakaoPay, params.payment_key, 1).ready, None, "an empty ready names none");
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
            ConfirmRequest { payment_key: "pk".into(), pg_token: None, ready: None, amount: 1 }
        );
        // A PG the page does not know is read as Toss's: its paymentKey is what the server checks.
        assert_eq!(pg_of(query(&[("pg", "paypal")])), Pg::Toss);
    }
}
