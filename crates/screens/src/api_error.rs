//! Why a call of the page's to the server did not give what was asked for, and
//! what the customer reads about it.

use crate::tr;
use crate::words::{Lang, fill};

/// Why a call did not give what was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ApiError {
    /// No response: offline, server down, or aborted.
    Network(String),
    /// The server answered with an error, and its code if it gave one; with
    /// `Retry-After` (a 429), how long it asked the page to wait first.
    Server { status: u16, code: Option<String>, retry_after_ms: Option<u64> },
    /// The server answered something this page cannot read.
    Decode(String),
}

impl ApiError {
    /// A sentence for the customer, in the page's words: the server's own
    /// message is for developers, and in English only.
    pub fn message(&self, lang: Lang) -> String {
        match self {
            ApiError::Network(_) => tr!(lang, network_error).to_owned(),
            ApiError::Server { status: 429, .. } => tr!(lang, shop_busy).to_owned(),
            ApiError::Server { code: Some(code), .. } if code == "OUT_OF_STOCK" => tr!(lang, out_of_stock).to_owned(),
            ApiError::Server { status, .. } => fill(tr!(lang, server_error), &[&status.to_string()]),
            ApiError::Decode(_) => tr!(lang, unreadable_answer).to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::words::{EN, KO};

    #[test]
    fn the_customer_reads_the_pages_words_never_the_servers() {
        let server = |status: u16, code: Option<&str>| ApiError::Server {
            status,
            code: code.map(str::to_owned),
            retry_after_ms: Some(1_000),
        };
        assert_eq!(ApiError::Network("connection reset".into()).message(Lang::En), EN.network_error);
        assert_eq!(server(429, Some("TOO_MANY_REQUESTS")).message(Lang::Ko), KO.shop_busy);
        assert_eq!(server(409, Some("OUT_OF_STOCK")).message(Lang::En), EN.out_of_stock);
        assert_eq!(server(503, Some("PG_BUSY")).message(Lang::En), fill(EN.server_error, &["503"]));
        assert!(!server(500, Some("INTERNAL")).message(Lang::En).contains("INTERNAL"));
        assert_eq!(ApiError::Decode("expected a number".into()).message(Lang::Ko), KO.unreadable_answer);
    }
}
