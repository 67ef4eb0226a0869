//! The shops one payonce serves through the shop API, read from
//! `--shops-file` at start-up (TOML, `[[shop]]` tables; see docs/shops.md):
//! each shop's names, the digests of its API keys (several at once, for
//! rotation), the origins its `return_url` may point at, its order-id prefix
//! and the PGs it takes. A key is found by its SHA-256 digest, compared with
//! every shop's digests without stopping at the first match, so how long a
//! wrong key takes says nothing about the right ones.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use payonce_api::{Names, Pg};
use serde::Deserialize;
use url::Url;

use crate::operators::{digest_of, parse_digest};

/// The longest shop id: it goes into metrics labels and logs.
const ID_MAX: usize = 32;
/// The longest shop name, in either language.
const NAME_MAX: usize = 60;

/// One shop.
#[derive(Clone, PartialEq, Eq)]
pub struct Shop {
    pub id: String,
    pub name: Names,
    /// Every one of its checkouts' order ids starts with it (and with the
    /// server's own `--order-id-prefix`, so reconciliation knows them).
    pub order_id_prefix: String,
    /// Where `return_url` may point: scheme, host and port.
    pub return_origins: Vec<url::Origin>,
    pub pay_with: Vec<Pg>,
    /// Its own requests a minute through the shop API.
    pub requests_per_minute: u32,
    /// Where its events are sent, if anywhere (else it reads the feed).
    pub events: Option<EventEndpoint>,
    key_digests: Vec<[u8; 32]>,
}

/// A shop's endpoint for events, and the secrets they are signed with.
#[derive(Clone, PartialEq, Eq)]
pub struct EventEndpoint {
    pub url: Url,
    /// `whsec_…`: the current secret first, then the previous one during a
    /// rotation (each event carries a signature by each).
    pub secrets: Vec<String>,
}

impl std::fmt::Debug for EventEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventEndpoint").field("url", &self.url.as_str()).field("secrets", &self.secrets.len()).finish()
    }
}

impl std::fmt::Debug for Shop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shop").field("id", &self.id).field("keys", &self.key_digests.len()).finish_non_exhaustive()
    }
}

/// Every shop; none means the shop API is off.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Shops {
    shops: Vec<Shop>,
}

/// The file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ShopsFile {
    #[serde(default)]
    shop: Vec<ShopEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ShopEntry {
    id: String,
    name: String,
    #[serde(default)]
    name_ko: Option<String>,
    order_id_prefix: String,
    return_origins: Vec<String>,
    pay_with: Vec<Pg>,
    key_digests: Vec<String>,
    #[serde(default = "default_requests_per_minute")]
    requests_per_minute: u32,
    #[serde(default)]
    events_url: Option<String>,
    #[serde(default)]
    events_secret_file: Option<PathBuf>,
    #[serde(default)]
    events_previous_secret_file: Option<PathBuf>,
}

fn default_requests_per_minute() -> u32 {
    600
}

/// Why a shops file is refused: the shop (by its place in the file and its
/// id) and what is wrong.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum ShopsFileError {
    #[error("{0}")]
    Syntax(String),
    #[error("it lists no shop (add a [[shop]] table)")]
    NoShops,
    #[error("shop {number} ({id:?}): {problem}")]
    Shop { number: usize, id: String, problem: String },
}

impl Shops {
    /// Reads a shops file's text; `server_prefix` is the server's
    /// `--order-id-prefix`, which every shop's prefix must start with. Its
    /// secret files are read from the working directory when relative.
    pub fn parse(text: &str, server_prefix: &str) -> Result<Self, ShopsFileError> {
        Self::parse_in(text, server_prefix, Path::new("."))
    }

    /// Reads the shops file at `path`; relative secret files are read from its directory.
    pub fn read(path: &Path, server_prefix: &str) -> Result<Self, ShopsFileError> {
        let text = std::fs::read_to_string(path).map_err(|error| ShopsFileError::Syntax(error.to_string()))?;
        Self::parse_in(&text, server_prefix, path.parent().unwrap_or(Path::new(".")))
    }

    /// Reads a shops file's text, its relative secret files from `dir`.
    pub fn parse_in(text: &str, server_prefix: &str, dir: &Path) -> Result<Self, ShopsFileError> {
        let file: ShopsFile = toml::from_str(text).map_err(|error| ShopsFileError::Syntax(error.to_string()))?;
        if file.shop.is_empty() {
            return Err(ShopsFileError::NoShops);
        }
        let mut shops: Vec<Shop> = Vec::with_capacity(file.shop.len());
        for (index, entry) in file.shop.into_iter().enumerate() {
            let refuse = |problem: String| ShopsFileError::Shop { number: index + 1, id: entry.id.clone(), problem };
            let shop = shop_of(&entry, server_prefix, dir).map_err(refuse)?;
            if let Some(other) = shops.iter().find(|other| other.id == shop.id) {
                return Err(refuse(format!("the id is also shop {:?}'s", other.id)));
            }
            if let Some(other) = shops.iter().find(|other| {
                other.order_id_prefix.starts_with(&shop.order_id_prefix)
                    || shop.order_id_prefix.starts_with(&other.order_id_prefix)
            }) {
                return Err(refuse(format!(
                    "order_id_prefix {:?} overlaps shop {:?}'s {:?}: each shop's orders must be told apart by it",
                    shop.order_id_prefix, other.id, other.order_id_prefix
                )));
            }
            if let Some(other) =
                shops.iter().find(|other| other.key_digests.iter().any(|d| shop.key_digests.contains(d)))
            {
                return Err(refuse(format!(
                    "a key digest is also shop {:?}'s: each shop needs keys of its own",
                    other.id
                )));
            }
            shops.push(shop);
        }
        Ok(Self { shops })
    }

    pub fn is_empty(&self) -> bool {
        self.shops.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Shop> {
        self.shops.iter()
    }

    /// The shop whose key `key` is, if any: every digest is compared, whichever matches.
    pub fn signed_in(&self, key: &str) -> Option<&Shop> {
        let given = digest_of(key);
        self.shops.iter().fold(None, |found, shop| {
            let matches = shop.key_digests.iter().fold(false, |any, digest| any | (*digest == given));
            match found {
                None if matches => Some(shop),
                found => found,
            }
        })
    }

    /// The shop of this id.
    pub fn by_id(&self, id: &str) -> Option<&Shop> {
        self.shops.iter().find(|shop| shop.id == id)
    }

    /// The shop whose order ids start with its prefix: the shop of an order.
    pub fn of_order(&self, order_id: &str) -> Option<&Shop> {
        self.shops.iter().find(|shop| order_id.starts_with(&shop.order_id_prefix))
    }
}

fn shop_of(entry: &ShopEntry, server_prefix: &str, dir: &Path) -> Result<Shop, String> {
    let id = &entry.id;
    if id.is_empty()
        || id.len() > ID_MAX
        || !id.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        return Err(format!("id must be 1 to {ID_MAX} of a-z, 0-9 and -"));
    }
    for (field, name) in [("name", Some(&entry.name)), ("name_ko", entry.name_ko.as_ref())] {
        if let Some(name) = name
            && (name.trim().is_empty() || name.chars().count() > NAME_MAX || name.chars().any(char::is_control))
        {
            return Err(format!("{field} must be 1 to {NAME_MAX} characters, none of them a control character"));
        }
    }
    let prefix = &entry.order_id_prefix;
    // Toss takes order ids of 6 to 64 of [A-Za-z0-9_-]; 32 of them are the order's own.
    if !prefix.starts_with(server_prefix) || prefix.len() > 32 || !payonce_api::is_order_id_text(prefix) {
        return Err(format!(
            "order_id_prefix {prefix:?} must start with the server's --order-id-prefix {server_prefix:?} \
             and be at most 32 of A-Z, a-z, 0-9, _ and -"
        ));
    }
    if prefix == server_prefix {
        return Err(format!(
            "order_id_prefix {prefix:?} is the server's own, which the built-in cart's orders use: add to it"
        ));
    }
    let return_origins = entry.return_origins.iter().map(|text| origin_of(text)).collect::<Result<Vec<_>, _>>()?;
    if return_origins.is_empty() {
        return Err("return_origins must list at least one origin, such as \"https://shop.example\"".to_owned());
    }
    let pay_with: Vec<Pg> = entry.pay_with.iter().copied().collect::<HashSet<_>>().into_iter().collect();
    if pay_with.is_empty() {
        return Err("pay_with must list at least one of \"toss\" and \"kakaopay\"".to_owned());
    }
    let pay_with = Pg::ALL.into_iter().filter(|pg| pay_with.contains(pg)).collect();
    let key_digests = entry
        .key_digests
        .iter()
        .map(|text| parse_digest(text))
        .collect::<Option<Vec<_>>>()
        .ok_or("each of key_digests must be 64 hex digits (printf %s \"$key\" | sha256sum)")?;
    if key_digests.is_empty() {
        return Err("key_digests must list at least one key's digest".to_owned());
    }
    if entry.requests_per_minute == 0 {
        return Err("requests_per_minute must be at least 1".to_owned());
    }
    let events = endpoint_of(entry, dir)?;
    Ok(Shop {
        id: id.clone(),
        name: Names { en: Some(entry.name.clone()), ko: entry.name_ko.clone() },
        order_id_prefix: prefix.clone(),
        return_origins,
        pay_with,
        requests_per_minute: entry.requests_per_minute,
        events,
        key_digests,
    })
}

/// The shop's endpoint for events: a URL off this machine only by https,
/// and a secret (and, during a rotation, the previous one) from files.
fn endpoint_of(entry: &ShopEntry, dir: &Path) -> Result<Option<EventEndpoint>, String> {
    let (url, file) = match (&entry.events_url, &entry.events_secret_file) {
        (None, None) if entry.events_previous_secret_file.is_none() => return Ok(None),
        (Some(url), Some(file)) => (url, file),
        _ => {
            return Err("events_url and events_secret_file go together: the one is no use without the other".to_owned());
        }
    };
    let refuse = || format!("events_url {url:?} must be an https:// URL (http:// only for localhost)");
    let url = Url::parse(url).map_err(|_| refuse())?;
    if !is_allowed_scheme(&url) || !url.username().is_empty() || url.password().is_some() || url.fragment().is_some() {
        return Err(refuse());
    }
    let mut secrets = vec![read_secret("events_secret_file", &dir.join(file))?];
    if let Some(previous) = &entry.events_previous_secret_file {
        secrets.push(read_secret("events_previous_secret_file", &dir.join(previous))?);
    }
    Ok(Some(EventEndpoint { url, secrets }))
}

/// Standard Webhooks' secrets are 24 to 64 random bytes.
const SECRET_BYTES: std::ops::RangeInclusive<usize> = 24..=64;

/// A secret from its file's first line: `whsec_` and base64.
fn read_secret(field: &str, path: &Path) -> Result<String, String> {
    use base64::Engine;
    let text = std::fs::read_to_string(path).map_err(|error| format!("{field} {}: {error}", path.display()))?;
    let secret = text.lines().next().unwrap_or_default().trim().to_owned();
    let bytes = secret
        .strip_prefix("whsec_")
        .and_then(|encoded| base64::engine::general_purpose::STANDARD.decode(encoded).ok());
    match bytes {
        Some(bytes) if SECRET_BYTES.contains(&bytes.len()) => Ok(secret),
        _ => Err(format!(
            "{field} {}: its first line must be whsec_ and base64 of {} to {} random bytes              (payonce-server events-secret makes one)",
            path.display(),
            SECRET_BYTES.start(),
            SECRET_BYTES.end()
        )),
    }
}

/// A new secret for a shop's events: `whsec_` and 256 random bits, base64.
pub fn new_events_secret() -> String {
    use base64::Engine;
    use rand::RngCore;
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("whsec_{}", base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// An origin as the file writes it: `https://host[:port]`, nothing after it
/// (`http://` only for this machine's own names).
fn origin_of(text: &str) -> Result<url::Origin, String> {
    let refuse = || format!("return origin {text:?} must be https://host[:port] (http:// only for localhost)");
    let url = Url::parse(text).map_err(|_| refuse())?;
    if url.path() != "/" || url.query().is_some() || url.fragment().is_some() || !url.username().is_empty() {
        return Err(refuse());
    }
    if !is_allowed_scheme(&url) {
        return Err(refuse());
    }
    Ok(url.origin())
}

/// https anywhere; http only to this machine (a shop being developed).
pub fn is_allowed_scheme(url: &Url) -> bool {
    match url.scheme() {
        "https" => true,
        "http" => match url.host() {
            Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
            Some(url::Host::Ipv4(address)) => address.is_loopback(),
            Some(url::Host::Ipv6(address)) => address.is_loopback(),
            None => false,
        },
        _ => false,
    }
}

/// A new shop key: `sk_` and 256 random bits, base64url.
pub fn new_key() -> String {
    use base64::Engine;
    use rand::RngCore;
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("sk_{}", base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// A key's digest, as the shops file lists it (`payonce-server shop-key`).
pub fn key_digest(key: &str) -> String {
    digest_of(key).iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "sk_shop_books_0123456789abcdefghijklmnopqrstuv";

    fn file(extra: &str) -> String {
        format!(
            "[[shop]]\nid = \"books\"\nname = \"Seoul Books\"\nname_ko = \"서울 책방\"\norder_id_prefix = \"ord_books_\"\n\
             return_origins = [\"https://books.example\", \"http://127.0.0.1:4000\"]\npay_with = [\"toss\"]\n\
             key_digests = [\"{}\"]\n{extra}",
            key_digest(KEY)
        )
    }

    #[test]
    fn a_key_finds_its_shop_and_nothing_else_does() {
        let shops = Shops::parse(&file(""), "ord_").unwrap();
        let shop = shops.signed_in(KEY).unwrap();
        assert_eq!((shop.id.as_str(), shop.name.korean_first()), ("books", "서울 책방"));
        assert!(shops.signed_in("sk_shop_books_0123456789abcdefghijklmnopqrstuw").is_none());
        assert!(shops.signed_in("").is_none());
        assert_eq!(shops.of_order("ord_books_0193").map(|shop| shop.id.as_str()), Some("books"));
        assert!(shops.of_order("ord_0193").is_none(), "the cart's orders are no shop's");
    }

    #[test]
    fn every_mistake_names_the_shop_and_the_field() {
        let refused = |text: String| Shops::parse(&text, "ord_").unwrap_err().to_string();
        assert!(refused(file("").replace("ord_books_", "books_")).contains("must start with"));
        assert!(refused(file("").replace("ord_books_", "ord_")).contains("the server's own"));
        assert!(refused(file("").replace("https://books.example", "https://books.example/back")).contains("origin"));
        assert!(refused(file("").replace("https://books.example", "http://books.example")).contains("origin"));
        assert!(refused(file("").replace("[\"toss\"]", "[]")).contains("pay_with"));
        assert!(refused(file("").replace("[\"toss\"]", "[\"paypal\"]")).contains("paypal"));
        assert!(refused(file("").replace(&key_digest(KEY), "abc")).contains("key_digests"));
        assert!(refused(file("colour = \"red\"\n")).contains("colour"));
        assert!(refused(format!("{}{}", file(""), file(""))).contains("shop 2 (\"books\")"));
        assert_eq!(Shops::parse("", "ord_").unwrap_err(), ShopsFileError::NoShops);
        let second = file("").replace("\"books\"", "\"tea\"").replace("ord_books_", "ord_books_tea_");
        assert!(refused(format!("{}{}", file(""), second)).contains("overlaps"));
    }
}
