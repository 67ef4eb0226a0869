use serde::{Deserialize, Serialize};

/// A product the demo shop sells, named in English and Korean. Prices are KRW.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Product {
    pub sku: String,
    pub name: String,
    pub description: String,
    pub name_ko: String,
    pub description_ko: String,
    pub price: u64,
}
