//! The settlement rules as they were before the model checker's review: each
//! can be switched back on in the model, and the checker's own tests assert
//! that it then finds a counterexample. A checker that never fails proves
//! nothing. None of these exists in the server any more; the model puts each
//! back by doing what the old code did, around the same core.

/// One rule as it used to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum OldRule {
    /// The customer's confirm task stored its outcome from PENDING or UNKNOWN
    /// without holding the attempt's lease: a 429 it got (not stored against
    /// the key) became FAILED after another server's resend was charged.
    ConfirmSettlesWithoutLease,
    /// A half-open breaker waited for its probe forever: a probe granted and
    /// never sent held every recovery call back until a restart.
    HalfOpenForever,
    /// No rule on an attempt's age: one whose first confirm got a stored 5xx,
    /// looked up after the session ended (404), was resent forever.
    NoAgeRule,
    /// UNKNOWN to PARTIALLY_REFUNDED from a lookup left the refunded amount at 0.
    PartialRefundWithoutAmount,
    /// Every task of one server held leases under one name: a task whose lease
    /// lapsed still passed the holder's checks after another task of the same
    /// server took the attempt over.
    OneLeaseNamePerServer,
    /// Lookups went by paymentKey only: a confirm that named another order's
    /// payment left the order UNKNOWN for good.
    LookupByKeyOnly,
    /// At a PG without keys (KakaoPay), a refusal of a cancel sent after the
    /// first was read as "not known yet": the lookup showed the balance
    /// unchanged, the cancel went out again, was refused again, and the
    /// refund never ended.
    RefusalOfAResendRetried,
    /// A cancel's refusal settled the refund refused whoever read it: at a PG
    /// without keys, a first cancel held up (its server frozen past the
    /// refund's lease) was refused once recovery's cancel had gone through,
    /// and the refund was stored refused while the PG had refunded it.
    RefusalSettledWithoutLease,
}

impl OldRule {
    pub const ALL: [OldRule; 8] = [
        OldRule::ConfirmSettlesWithoutLease,
        OldRule::HalfOpenForever,
        OldRule::NoAgeRule,
        OldRule::PartialRefundWithoutAmount,
        OldRule::OneLeaseNamePerServer,
        OldRule::LookupByKeyOnly,
        OldRule::RefusalOfAResendRetried,
        OldRule::RefusalSettledWithoutLease,
    ];

    /// Its name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            OldRule::ConfirmSettlesWithoutLease => "confirm-settles-without-lease",
            OldRule::HalfOpenForever => "half-open-forever",
            OldRule::NoAgeRule => "no-age-rule",
            OldRule::PartialRefundWithoutAmount => "partial-refund-without-amount",
            OldRule::OneLeaseNamePerServer => "one-lease-name-per-server",
            OldRule::LookupByKeyOnly => "lookup-by-key-only",
            OldRule::RefusalOfAResendRetried => "refusal-of-a-resend-retried",
            OldRule::RefusalSettledWithoutLease => "refusal-settled-without-lease",
        }
    }

    pub fn from_name(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|rule| rule.name() == name)
    }
}
