//! The built-in cart's products, and pricing a cart. Prices are decided here,
//! never taken from the browser. The products come from a catalog file
//! (`--catalog`, TOML or JSON), or from `catalog.toml` at the repository's
//! root, compiled in as the default; a shop with no backend of its own sells
//! its own products by writing one, and changes no code.

use std::path::Path;

use payonce_api::{LineItem, Product, RequestedItem};
use serde::Deserialize;

use crate::db::StockLine;
use crate::error::AppError;

/// Most units of one product in an order.
pub const MAX_QUANTITY: u32 = 99;
/// Most lines in an order.
pub const MAX_LINES: usize = 20;
/// The most products a catalog may list: the cart shows them all on one page.
const MAX_PRODUCTS: usize = 200;
/// The demo shop's catalog, the default.
const DEFAULT_CATALOG: &str = include_str!("../../../catalog.toml");

/// The products on sale, and how many of each may be sold where the file says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Catalog {
    products: Vec<Product>,
    stock: std::collections::HashMap<String, u32>,
}

/// A catalog file as written: `[[product]]` tables, or `{"product": [...]}`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct CatalogFile {
    product: Vec<ProductEntry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProductEntry {
    sku: String,
    name: String,
    name_ko: String,
    description: String,
    description_ko: String,
    price: u64,
    /// At most this many sold (see `StockLine`); no limit without it.
    #[serde(default)]
    stock: Option<u32>,
}

/// Why a catalog is refused, naming the line (TOML) or the product.
#[derive(Debug, Clone, thiserror::Error, PartialEq, Eq)]
pub enum CatalogError {
    #[error("{0}")]
    Unreadable(String),
    #[error("{place}: {problem}")]
    Product { place: String, problem: String },
    #[error("it lists no product (add a [[product]] table)")]
    Empty,
    #[error("it lists {0} products; the cart shows at most {MAX_PRODUCTS}")]
    TooMany(usize),
}

impl Default for Catalog {
    fn default() -> Self {
        Self::parse(DEFAULT_CATALOG, Format::Toml)
            .unwrap_or_else(|error| panic!("catalog.toml, compiled in as the default catalog, is refused: {error}"))
    }
}

/// How a catalog file is written, by its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Toml,
    Json,
}

impl Catalog {
    /// Reads a catalog file: JSON when its name ends in `.json`, else TOML.
    pub fn load(path: &Path) -> Result<Self, CatalogError> {
        let text = std::fs::read_to_string(path).map_err(|error| CatalogError::Unreadable(error.to_string()))?;
        let format = if path.extension().is_some_and(|extension| extension.eq_ignore_ascii_case("json")) {
            Format::Json
        } else {
            Format::Toml
        };
        Self::parse(&text, format)
    }

    pub fn parse(text: &str, format: Format) -> Result<Self, CatalogError> {
        let file: CatalogFile = match format {
            Format::Toml => toml::from_str(text).map_err(|error| CatalogError::Unreadable(error.to_string()))?,
            Format::Json => serde_json::from_str(text).map_err(|error| CatalogError::Unreadable(error.to_string()))?,
        };
        if file.product.is_empty() {
            return Err(CatalogError::Empty);
        }
        if file.product.len() > MAX_PRODUCTS {
            return Err(CatalogError::TooMany(file.product.len()));
        }
        let mut products: Vec<Product> = Vec::with_capacity(file.product.len());
        let mut stock = std::collections::HashMap::new();
        for (index, entry) in file.product.into_iter().enumerate() {
            let place = place_of(text, format, index, &entry.sku);
            let refuse = |problem: String| CatalogError::Product { place: place.clone(), problem };
            check_product(&entry).map_err(refuse)?;
            if products.iter().any(|product| product.sku == entry.sku) {
                return Err(refuse(format!("the SKU {:?} is listed twice", entry.sku)));
            }
            if let Some(units) = entry.stock {
                stock.insert(entry.sku.clone(), units);
            }
            products.push(Product {
                sku: entry.sku,
                name: entry.name,
                description: entry.description,
                name_ko: entry.name_ko,
                description_ko: entry.description_ko,
                price: entry.price,
            });
        }
        Ok(Self { products, stock })
    }

    pub fn products(&self) -> &[Product] {
        &self.products
    }

    /// The lines of `items` whose product has a stock.
    pub fn stock_lines(&self, items: &[LineItem]) -> Vec<StockLine> {
        items
            .iter()
            .filter_map(|item| {
                let stock = *self.stock.get(&item.sku)?;
                Some(StockLine { sku: item.sku.clone(), quantity: item.quantity, stock })
            })
            .collect()
    }
}

fn check_product(entry: &ProductEntry) -> Result<(), String> {
    if entry.sku.is_empty() || entry.sku.len() > 64 || !entry.sku.bytes().all(|byte| byte.is_ascii_graphic()) {
        return Err("sku must be 1 to 64 printable ASCII characters, without spaces".to_owned());
    }
    for (field, text, most) in [
        ("name", &entry.name, 100),
        ("name_ko", &entry.name_ko, 100),
        ("description", &entry.description, 500),
        ("description_ko", &entry.description_ko, 500),
    ] {
        if text.trim().is_empty() || text.chars().count() > most {
            return Err(format!("{field} must be 1 to {most} characters"));
        }
    }
    if !(payonce_api::checkout::MIN_AMOUNT..=payonce_api::checkout::MAX_AMOUNT).contains(&entry.price) {
        return Err(format!(
            "price must be {} to {} won",
            payonce_api::checkout::MIN_AMOUNT,
            payonce_api::checkout::MAX_AMOUNT
        ));
    }
    Ok(())
}

/// Where the `index`th product is: its `[[product]]` line in a TOML file, its
/// place in a JSON one; with its SKU either way.
fn place_of(text: &str, format: Format, index: usize, sku: &str) -> String {
    let line = match format {
        Format::Toml => text
            .lines()
            .enumerate()
            .filter(|(_, line)| line.trim_start().starts_with("[[product]]"))
            .nth(index)
            .map(|(number, _)| number + 1),
        Format::Json => None,
    };
    match line {
        Some(line) => format!("line {line}, product {} ({sku:?})", index + 1),
        None => format!("product {} ({sku:?})", index + 1),
    }
}

/// A cart priced by the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PricedCart {
    pub items: Vec<LineItem>,
    pub amount: u64,
    /// How the PG window and the order list name the order.
    pub order_name: String,
}

/// Prices the requested items, refusing anything a real cart could not contain.
pub fn price(catalog: &Catalog, requested: &[RequestedItem]) -> Result<PricedCart, AppError> {
    if requested.is_empty() {
        return Err(AppError::InvalidCart("the cart is empty"));
    }
    if requested.len() > MAX_LINES {
        return Err(AppError::InvalidCart("the cart has too many lines"));
    }
    let mut items: Vec<LineItem> = Vec::with_capacity(requested.len());
    for line in requested {
        let product = catalog
            .products
            .iter()
            .find(|product| product.sku == line.sku)
            .ok_or_else(|| AppError::UnknownSku { sku: line.sku.clone() })?;
        if line.quantity == 0 || line.quantity > MAX_QUANTITY {
            return Err(AppError::InvalidQuantity(format!(
                "the quantity of {} must be between 1 and {MAX_QUANTITY}",
                line.sku
            )));
        }
        if items.iter().any(|item| item.sku == line.sku) {
            return Err(AppError::InvalidCart("a product appears twice in the cart"));
        }
        items.push(LineItem {
            sku: product.sku.clone(),
            name: product.name.clone(),
            unit_price: product.price,
            quantity: line.quantity,
        });
    }
    let amount = items.iter().map(|item| item.unit_price * u64::from(item.quantity)).sum();
    let order_name = match items.as_slice() {
        [only] => only.name.clone(),
        [first, rest @ ..] => format!("{} and {} more", first.name, rest.len()),
        [] => unreachable!("an empty cart was refused above"),
    };
    Ok(PricedCart { items, amount, order_name })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn price(requested: &[RequestedItem]) -> Result<PricedCart, AppError> {
        super::price(&Catalog::default(), requested)
    }

    fn line(sku: &str, quantity: u32) -> RequestedItem {
        RequestedItem { sku: sku.to_owned(), quantity }
    }

    #[test]
    fn prices_come_from_the_catalog() {
        let cart = price(&[line("POUR-OVER-SET", 1), line("CERAMIC-MUG", 2)]).unwrap();
        assert_eq!(cart.amount, 12_900 + 2 * 8_500);
        assert_eq!(cart.order_name, "Pour-over coffee set and 1 more");
        assert_eq!(price(&[line("TEA-TOWEL", 3)]).unwrap().order_name, "Linen tea towel");
    }

    #[test]
    fn bad_carts_are_refused_with_a_reason() {
        assert!(matches!(price(&[]), Err(AppError::InvalidCart(_))));
        assert!(matches!(price(&[line("NOPE", 1)]), Err(AppError::UnknownSku { sku }) if sku == "NOPE"));
        assert!(matches!(price(&[line("CERAMIC-MUG", 0)]), Err(AppError::InvalidQuantity(_))));
        assert!(matches!(price(&[line("CERAMIC-MUG", 100)]), Err(AppError::InvalidQuantity(_))));
        assert!(matches!(price(&[line("CERAMIC-MUG", 1), line("CERAMIC-MUG", 1)]), Err(AppError::InvalidCart(_))));
        let too_many: Vec<_> = (0..=MAX_LINES).map(|_| line("CERAMIC-MUG", 1)).collect();
        assert!(matches!(price(&too_many), Err(AppError::InvalidCart(_))));
    }

    #[test]
    fn the_shipped_catalog_is_the_demo_shops() {
        let catalog = Catalog::default();
        assert_eq!(catalog.products().len(), 4);
        assert_eq!(catalog.products()[1].name_ko, "도자기 머그");
    }

    #[test]
    fn a_catalog_mistake_names_its_line() {
        let product = |sku: &str, price: u64| {
            format!(
                "[[product]]\nsku = \"{sku}\"\nname = \"Mug\"\nname_ko = \"머그\"\n\
                 description = \"A mug.\"\ndescription_ko = \"머그.\"\nprice = {price}\n"
            )
        };
        let text = format!("# a comment\n{}\n{}", product("MUG", 8_500), product("CUP", 0));
        let error = Catalog::parse(&text, Format::Toml).unwrap_err().to_string();
        assert!(error.starts_with("line 10, product 2 (\"CUP\"): price must be"), "{error}");
        let twice = format!("{}{}", product("MUG", 8_500), product("MUG", 9_000));
        assert!(Catalog::parse(&twice, Format::Toml).unwrap_err().to_string().contains("listed twice"));
        let unknown = product("MUG", 8_500).replace("price", "colour = \"red\"\nprice");
        assert!(Catalog::parse(&unknown, Format::Toml).unwrap_err().to_string().contains("colour"));
        let limited =
            Catalog::parse(&product("MUG", 8_500).replace("price", "stock = 3\nprice"), Format::Toml).unwrap();
        let items = |sku: &str| vec![LineItem { sku: sku.into(), name: "x".into(), unit_price: 1, quantity: 2 }];
        assert_eq!(limited.stock_lines(&items("MUG")), [StockLine { sku: "MUG".into(), quantity: 2, stock: 3 }]);
        assert_eq!(Catalog::parse(&product("MUG", 8_500), Format::Toml).unwrap().stock_lines(&items("MUG")), []);
        assert_eq!(Catalog::parse("product = []", Format::Toml).unwrap_err(), CatalogError::Empty);
        let json = r#"{"product": [{"sku": "MUG", "name": "Mug", "name_ko": "머그", "description": "A mug.",
                       "description_ko": "머그.", "price": 8500}]}"#;
        assert_eq!(Catalog::parse(json, Format::Json).unwrap().products()[0].price, 8_500);
        assert!(Catalog::parse(&json.replace("8500", "-1"), Format::Json).is_err());
    }
}
