//! What a PG's answer showed on the wire, kept with what the PG's tables read
//! it to mean.

use payonce_rules::pg_reply::PgReply;

/// What a PG's answer showed on the wire, once its meaning was read: the
/// limit, the breaker and the operators' records need no more of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplyFacts {
    unanswered: bool,
    shows_overload: bool,
    shows_pg_unavailable: bool,
    described: String,
}

impl ReplyFacts {
    /// The facts of `reply`, described as `described`.
    pub fn of(reply: &impl PgReply, described: String) -> Self {
        Self {
            unanswered: reply.unanswered(),
            shows_overload: reply.shows_overload(),
            shows_pg_unavailable: reply.shows_pg_unavailable(),
            described,
        }
    }
}

impl PgReply for ReplyFacts {
    fn unanswered(&self) -> bool {
        self.unanswered
    }

    fn shows_overload(&self) -> bool {
        self.shows_overload
    }

    fn shows_pg_unavailable(&self) -> bool {
        self.shows_pg_unavailable
    }

    fn describe(&self) -> String {
        self.described.clone()
    }
}
