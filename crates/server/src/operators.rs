//! Who may use the operators' API: each operator by name, with a role and the
//! SHA-256 digest of their own bearer token, read from `--operators-file` at
//! start-up (and the old single `--admin-token`, as the operator `operator`).
//! The audit log names the operator whose token a request carried, so nobody
//! can act under another's name.
//!
//! The file has one operator a line, `NAME ROLE SHA256-HEX-OF-TOKEN`, fields
//! separated by spaces; `#` starts a comment, blank lines are skipped:
//!
//! ```text
//! # name   role       sha256 of the token (printf %s "$token" | sha256sum)
//! jiwoo    refund     9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08
//! minseo   read-only  60303ae22b998861bce3b28f33eec1be758a213c86c93c076dbe9f558c11c752
//! ```

use std::collections::HashMap;
use std::fmt;

use sha2::{Digest, Sha256};

/// What an operator may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Reads: orders, an order's story, reconciliation reports, metrics, the API's description.
    ReadOnly,
    /// Everything: also refunds, "ask the PG now" and reconciliation passes (every POST).
    Refund,
}

impl Role {
    pub fn parse(text: &str) -> Option<Role> {
        match text {
            "read-only" => Some(Role::ReadOnly),
            "refund" => Some(Role::Refund),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Role::ReadOnly => "read-only",
            Role::Refund => "refund",
        }
    }

    /// Whether this role may change something (send a POST).
    pub fn may_act(self) -> bool {
        self == Role::Refund
    }
}

/// The name the single `--admin-token` signs in as.
pub const ADMIN_TOKEN_OPERATOR: &str = "operator";
/// The longest operator name: it goes into every audit line.
pub const NAME_MAX: usize = 64;
/// The shortest token the server accepts where it can see one.
pub const TOKEN_MIN_CHARS: usize = 32;
/// The fewest different characters in a token: `aaaa…` or `abab…` is long but guessable.
pub const TOKEN_MIN_DISTINCT: usize = 8;

/// One operator: a name for the audit log, a role, and their token's digest.
#[derive(Clone, PartialEq, Eq)]
pub struct Operator {
    pub name: String,
    pub role: Role,
    digest: [u8; 32],
}

impl fmt::Debug for Operator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Operator").field("name", &self.name).field("role", &self.role).finish_non_exhaustive()
    }
}

/// Every operator the server knows; none means the operators' API is off.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Operators {
    operators: Vec<Operator>,
}

/// Why an operators file is refused; lines are counted from 1.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum OperatorsFileError {
    #[error("line {line}: expected `NAME ROLE SHA256-HEX-OF-TOKEN`, found {fields} field(s)")]
    FieldCount { line: usize, fields: usize },
    #[error("line {line}: the name {name:?} must be 1 to {NAME_MAX} of A-Z, a-z, 0-9, `.`, `_`, `-` and `@`")]
    InvalidName { line: usize, name: String },
    #[error("line {line}: unknown role {role:?}: use `read-only` or `refund`")]
    UnknownRole { line: usize, role: String },
    #[error("line {line}: the token's digest must be 64 hex digits (printf %s \"$token\" | sha256sum)")]
    InvalidDigest { line: usize },
    #[error("line {line}: the name {name:?} is already on line {first}")]
    DuplicateName { line: usize, name: String, first: usize },
    #[error("line {line}: the same token as line {first}: each operator needs a token of their own")]
    DuplicateToken { line: usize, first: usize },
    #[error("it names no operator")]
    NoOperators,
}

/// Why the single admin token cannot join the file's operators.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum AdminTokenClash {
    #[error("the operators file already names an operator {ADMIN_TOKEN_OPERATOR:?}, the admin token's name")]
    Name,
    #[error("the admin token is also {0:?}'s token in the operators file")]
    Token(String),
}

impl Operators {
    /// Reads an operators file's text; any bad line refuses all of it.
    pub fn parse(text: &str) -> Result<Self, OperatorsFileError> {
        let mut operators = Vec::new();
        let mut names: HashMap<String, usize> = HashMap::new();
        let mut digests: HashMap<[u8; 32], usize> = HashMap::new();
        for (index, line) in text.lines().enumerate() {
            let line_number = index + 1;
            let content = line.split('#').next().unwrap_or_default();
            let fields: Vec<&str> = content.split_whitespace().collect();
            if fields.is_empty() {
                continue;
            }
            let [name, role, digest] = fields[..] else {
                return Err(OperatorsFileError::FieldCount { line: line_number, fields: fields.len() });
            };
            if !is_name(name) {
                return Err(OperatorsFileError::InvalidName { line: line_number, name: name.to_owned() });
            }
            let role = Role::parse(role)
                .ok_or_else(|| OperatorsFileError::UnknownRole { line: line_number, role: role.to_owned() })?;
            let digest = parse_digest(digest).ok_or(OperatorsFileError::InvalidDigest { line: line_number })?;
            if let Some(&first) = names.get(name) {
                return Err(OperatorsFileError::DuplicateName { line: line_number, name: name.to_owned(), first });
            }
            if let Some(&first) = digests.get(&digest) {
                return Err(OperatorsFileError::DuplicateToken { line: line_number, first });
            }
            names.insert(name.to_owned(), line_number);
            digests.insert(digest, line_number);
            operators.push(Operator { name: name.to_owned(), role, digest });
        }
        if operators.is_empty() {
            return Err(OperatorsFileError::NoOperators);
        }
        Ok(Self { operators })
    }

    /// Adds the single `--admin-token` as the operator `operator`, who may refund.
    pub fn with_admin_token(mut self, token: &str) -> Result<Self, AdminTokenClash> {
        let digest = digest_of(token);
        if let Some(same) = self.operators.iter().find(|operator| operator.digest == digest) {
            return Err(AdminTokenClash::Token(same.name.clone()));
        }
        if self.operators.iter().any(|operator| operator.name == ADMIN_TOKEN_OPERATOR) {
            return Err(AdminTokenClash::Name);
        }
        self.operators.push(Operator { name: ADMIN_TOKEN_OPERATOR.to_owned(), role: Role::Refund, digest });
        Ok(self)
    }

    pub fn is_empty(&self) -> bool {
        self.operators.is_empty()
    }

    /// The operator whose token this is. Tokens are compared as digests, every
    /// operator's each time: how long it takes says nothing about a token, nor
    /// about which operator came close.
    pub fn signed_in(&self, token: &str) -> Option<&Operator> {
        let given = digest_of(token);
        self.operators.iter().fold(None, |found, operator| match found {
            None if operator.digest == given => Some(operator),
            found => found,
        })
    }
}

/// A line of an operators file for `name`, `role` and `token`, once the token
/// is strong enough (`payonce-server operator-line NAME ROLE`).
pub fn file_line(name: &str, role: &str, token: &str) -> Result<String, String> {
    if !is_name(name) {
        return Err(format!("the name {name:?} must be 1 to {NAME_MAX} of A-Z, a-z, 0-9, `.`, `_`, `-` and `@`"));
    }
    let role = Role::parse(role).ok_or_else(|| format!("unknown role {role:?}: use `read-only` or `refund`"))?;
    check_strength(token)?;
    Ok(format!("{name} {} {}", role.as_str(), hex(&digest_of(token))))
}

/// Refuses a token an attacker could guess: shorter than `TOKEN_MIN_CHARS`, or
/// of fewer than `TOKEN_MIN_DISTINCT` different characters.
pub fn check_strength(token: &str) -> Result<(), String> {
    let chars = token.chars().count();
    if chars < TOKEN_MIN_CHARS {
        return Err(format!("it is {chars} characters, shorter than {TOKEN_MIN_CHARS} (try `openssl rand -hex 32`)"));
    }
    let mut distinct: Vec<char> = token.chars().collect();
    distinct.sort_unstable();
    distinct.dedup();
    if distinct.len() < TOKEN_MIN_DISTINCT {
        return Err(format!(
            "it has only {} different characters, fewer than {TOKEN_MIN_DISTINCT} (try `openssl rand -hex 32`)",
            distinct.len()
        ));
    }
    Ok(())
}

/// A name the audit log can show as it is, and a shell or a log line cannot misread.
fn is_name(name: &str) -> bool {
    (1..=NAME_MAX).contains(&name.len())
        && name.bytes().all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'_' | b'-' | b'@'))
}

pub(crate) fn digest_of(token: &str) -> [u8; 32] {
    Sha256::digest(token.as_bytes()).into()
}

/// 64 hex digits (either case) as 32 bytes.
pub(crate) fn parse_digest(text: &str) -> Option<[u8; 32]> {
    // `from_str_radix` alone would take a sign: "+f" is 15.
    if text.len() != 64 || !text.bytes().all(|byte| byte.is_ascii_hexdigit()) {
        return None;
    }
    let mut digest = [0; 32];
    for (byte, pair) in digest.iter_mut().zip(text.as_bytes().chunks(2)) {
        *byte = u8::from_str_radix(std::str::from_utf8(pair).ok()?, 16).ok()?;
    }
    Some(digest)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|byte| format!("{byte:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const JIWOO: &str = "jiwoo-token-0123456789abcdefghijklmnop";
    const MINSEO: &str = "minseo-token-0123456789abcdefghijklmnop";

    fn line(name: &str, role: &str, token: &str) -> String {
        file_line(name, role, token).unwrap()
    }

    #[test]
    fn a_file_names_each_operator_with_a_role_and_finds_them_by_their_token() {
        let text = format!(
            "# the shop's operators\n\n{}\n   {}   # on call\n",
            line("jiwoo", "refund", JIWOO),
            line("minseo", "read-only", MINSEO)
        );
        let operators = Operators::parse(&text).unwrap();
        let jiwoo = operators.signed_in(JIWOO).unwrap();
        assert_eq!((jiwoo.name.as_str(), jiwoo.role), ("jiwoo", Role::Refund));
        let minseo = operators.signed_in(MINSEO).unwrap();
        assert_eq!((minseo.name.as_str(), minseo.role), ("minseo", Role::ReadOnly));
        assert_eq!(operators.signed_in("jiwoo"), None);
        assert_eq!(operators.signed_in(""), None);
        assert!(!format!("{operators:?}").contains(&hex(&digest_of(JIWOO))), "no digest in debug output");
    }

    #[test]
    fn the_line_is_what_sha256sum_prints_for_the_token() {
        // printf %s test | sha256sum
        let digest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
        let operators = Operators::parse(&format!("tester refund {}", digest.to_uppercase())).unwrap();
        assert_eq!(operators.signed_in("test").map(|operator| operator.name.as_str()), Some("tester"));
        assert_eq!(line("jiwoo", "refund", JIWOO), format!("jiwoo refund {}", hex(&digest_of(JIWOO))));
    }

    #[test]
    fn a_bad_line_is_refused_by_its_number() {
        let good = line("jiwoo", "refund", JIWOO);
        let digest = good.split(' ').nth(2).unwrap().to_owned();
        let other = line("minseo", "refund", MINSEO).split(' ').nth(2).unwrap().to_owned();
        let cases = [
            (format!("# header\n{good}\njiwoo refund"), OperatorsFileError::FieldCount { line: 3, fields: 2 }),
            (format!("{good} extra"), OperatorsFileError::FieldCount { line: 1, fields: 4 }),
            (format!("\n지우 refund {other}"), OperatorsFileError::InvalidName { line: 2, name: "지우".to_owned() }),
            (format!("ji/woo refund {other}"), OperatorsFileError::InvalidName { line: 1, name: "ji/woo".to_owned() }),
            (
                format!("{} refund {other}", "n".repeat(NAME_MAX + 1)),
                OperatorsFileError::InvalidName { line: 1, name: "n".repeat(NAME_MAX + 1) },
            ),
            (format!("jiwoo admin {digest}"), OperatorsFileError::UnknownRole { line: 1, role: "admin".to_owned() }),
            (format!("jiwoo refund {}", &digest[..63]), OperatorsFileError::InvalidDigest { line: 1 }),
            (format!("jiwoo refund {}zz", &digest[..62]), OperatorsFileError::InvalidDigest { line: 1 }),
            (
                format!("{good}\n\njiwoo read-only {other}"),
                OperatorsFileError::DuplicateName { line: 3, name: "jiwoo".to_owned(), first: 1 },
            ),
            (format!("{good}\nminseo read-only {digest}"), OperatorsFileError::DuplicateToken { line: 2, first: 1 }),
            ("# nobody yet\n\n".to_owned(), OperatorsFileError::NoOperators),
        ];
        for (text, expected) in cases {
            assert_eq!(Operators::parse(&text), Err(expected.clone()), "{text}");
            assert!(expected.to_string().starts_with("line ") || expected == OperatorsFileError::NoOperators);
        }
    }

    #[test]
    fn the_admin_token_joins_as_operator_who_may_refund_unless_it_clashes() {
        let operators = Operators::parse(&line("minseo", "read-only", MINSEO)).unwrap();
        let both = operators.clone().with_admin_token(JIWOO).unwrap();
        let admin = both.signed_in(JIWOO).unwrap();
        assert_eq!((admin.name.as_str(), admin.role), (ADMIN_TOKEN_OPERATOR, Role::Refund));
        assert_eq!(operators.clone().with_admin_token(MINSEO), Err(AdminTokenClash::Token("minseo".to_owned())));
        let named = Operators::parse(&line(ADMIN_TOKEN_OPERATOR, "read-only", MINSEO)).unwrap();
        assert_eq!(named.with_admin_token(JIWOO), Err(AdminTokenClash::Name));
    }

    fn line_number(error: &OperatorsFileError) -> Option<usize> {
        match error {
            OperatorsFileError::FieldCount { line, .. }
            | OperatorsFileError::InvalidName { line, .. }
            | OperatorsFileError::UnknownRole { line, .. }
            | OperatorsFileError::InvalidDigest { line }
            | OperatorsFileError::DuplicateName { line, .. }
            | OperatorsFileError::DuplicateToken { line, .. } => Some(*line),
            OperatorsFileError::NoOperators => None,
        }
    }

    proptest::proptest! {
        #[test]
        fn any_file_is_read_or_refused_at_a_line_it_has(lines in proptest::collection::vec(
            proptest::prop_oneof![
                "[ -~\t]{0,120}",
                "[a-z]{1,8} (refund|read-only|admin) [0-9a-fA-F+ -]{60,68}",
                "\\PC{0,40}",
            ],
            0..12,
        )) {
            let text = lines.join("\n");
            match Operators::parse(&text) {
                Ok(operators) => proptest::prop_assert!(!operators.is_empty()),
                Err(error) => {
                    if let Some(line) = line_number(&error) {
                        proptest::prop_assert!((1..=text.lines().count()).contains(&line), "{error} in {text:?}");
                    }
                }
            }
        }

        #[test]
        fn a_digest_is_64_hex_digits_and_nothing_else(pairs in proptest::collection::vec(
            proptest::prop_oneof![30 => "[0-9a-fA-F]{2}", 1 => "[+][0-9a-f]"],
            32,
        )) {
            // Signs where a pair of digits would be: what `from_str_radix` alone takes.
            let digest: String = pairs.concat();
            let accepted = Operators::parse(&format!("jiwoo refund {digest}")).is_ok();
            let hex = digest.len() == 64 && digest.bytes().all(|byte| byte.is_ascii_hexdigit());
            proptest::prop_assert_eq!(accepted, hex, "{}", digest);
        }

        #[test]
        fn every_operator_made_by_file_line_signs_in_with_their_own_token_only(
            names in proptest::collection::btree_set("[a-z][a-z0-9._@-]{0,20}", 1..6),
            read_only in proptest::collection::vec(proptest::bool::ANY, 6),
        ) {
            let operators: Vec<(String, String, Role)> = names
                .iter()
                .zip(&read_only)
                .map(|(name, read_only)| {
                    let role = if *read_only { Role::ReadOnly } else { Role::Refund };
                    (name.clone(), format!("{name}-token-0123456789abcdefghijklmnopq"), role)
                })
                .collect();
            let text: Vec<String> =
                operators.iter().map(|(name, token, role)| line(name, role.as_str(), token)).collect();
            let parsed = Operators::parse(&text.join("\n")).unwrap();
            for (name, token, role) in &operators {
                let signed_in = parsed.signed_in(token).unwrap();
                proptest::prop_assert_eq!((&signed_in.name, signed_in.role), (name, *role));
            }
            proptest::prop_assert!(parsed.signed_in("not-anyones-token-0123456789abcdefgh").is_none());
        }
    }

    #[test]
    fn a_token_is_long_and_varied_enough_or_refused() {
        assert_eq!(check_strength(&"0123456789abcdef".repeat(2)), Ok(()));
        assert!(check_strength(&"0123456789abcdef".repeat(2)[..31]).unwrap_err().contains("shorter than 32"));
        assert!(check_strength(&"ab".repeat(40)).unwrap_err().contains("only 2 different characters"));
        assert!(file_line("jiwoo", "refund", "short").is_err());
        assert!(file_line("jiwoo", "admin", JIWOO).unwrap_err().contains("unknown role"));
        assert!(file_line("ji woo", "refund", JIWOO).unwrap_err().contains("name"));
    }
}
