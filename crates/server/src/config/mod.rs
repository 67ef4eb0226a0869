//! Server settings: command-line flags with `PAYONCE_*` environment
//! equivalents (`flags`), their checks (`checks`), the secrets given as files
//! (`secrets`), the settings derived from them (`derived`), and the old
//! names of renamed flags (`renamed`).

mod checks;
mod derived;
mod flags;
mod renamed;
mod secrets;
#[cfg(test)]
mod tests;

pub use checks::{ConfigError, KeyKind, ORDER_ID_PREFIX_MAX};
pub use derived::{SdkOrigins, WebhookDoor};
pub use flags::{
    Concurrency, CustomerKeyFiles, FAKE_PG_SECRET_KEY, MAX_FIXED_CONCURRENCY, ServerConfig, parse_duration,
};
pub use renamed::{RENAMED, Renamed, with_renamed_env};
pub use secrets::CUSTOMER_KEY_MIN;
