//! What the job engine, the breaker and the PG limit need of any PG's raw
//! answer, in words of no PG: each adapter's answer type (`toss::TossReply`,
//! `kakaopay::KakaoPayReply`) says it, so the server's engine is written once for
//! every PG.

/// A PG's raw answer to one call, as the PG-neutral parts of the server see it.
pub trait PgReply {
    /// The request left and no answer came back: the PG may still be working on it.
    fn unanswered(&self) -> bool;
    /// The PG refused the call for load, or did not answer in time: the limit is too high.
    fn shows_overload(&self) -> bool;
    /// The PG could not serve the call at all: recovery's breaker counts only these.
    fn shows_pg_unavailable(&self) -> bool;
    /// One line for logs and operators: what the PG said.
    fn describe(&self) -> String;
}

impl PgReply for crate::toss::TossReply {
    fn unanswered(&self) -> bool {
        crate::toss::TossReply::unanswered(self)
    }

    fn shows_overload(&self) -> bool {
        crate::toss::TossReply::shows_overload(self)
    }

    fn shows_pg_unavailable(&self) -> bool {
        crate::toss::TossReply::shows_pg_unavailable(self)
    }

    fn describe(&self) -> String {
        crate::toss::classify::describe(self)
    }
}

impl<T> PgReply for crate::kakaopay::KakaoPayReply<T> {
    fn unanswered(&self) -> bool {
        crate::kakaopay::KakaoPayReply::unanswered(self)
    }

    fn shows_overload(&self) -> bool {
        crate::kakaopay::KakaoPayReply::shows_overload(self)
    }

    fn shows_pg_unavailable(&self) -> bool {
        crate::kakaopay::KakaoPayReply::shows_pg_unavailable(self)
    }

    fn describe(&self) -> String {
        crate::kakaopay::classify::describe(self)
    }
}
