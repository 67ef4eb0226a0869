use serde::{Deserialize, Serialize};

/// A product the demo shop sells. Prices are KRW.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[cfg_attr(feature = "openapi", derive(utoipa::ToSchema))]
pub struct Product {
    pub sku: String,
    pub name: String,
    pub description: String,
    pub price: u64,
}
