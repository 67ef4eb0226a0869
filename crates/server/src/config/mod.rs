//! Server settings: command-line flags with `PAYONCE_*` environment
//! equivalents (`flags`), their checks (`checks`), the secrets given as files
//! (`secrets`), and the settings derived from them (`derived`).

mod checks;
mod derived;
mod flags;
mod secrets;
#[cfg(test)]
mod tests;

pub use checks::{ConfigError, ORDER_ID_PREFIX_MAX};
pub use derived::SdkOrigins;
pub use flags::{
    Concurrency, CustomerKeyFiles, FAKE_PG_SECRET_KEY, MAX_FIXED_CONCURRENCY, ServerConfig, parse_duration,
};
pub use secrets::CUSTOMER_KEY_MIN;
