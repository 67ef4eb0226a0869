//! The demo shop's products, and pricing a cart. Prices are decided here, never
//! taken from the browser.

use payonce_api::{LineItem, Product, RequestedItem};

use crate::error::AppError;

/// Most units of one product in an order.
pub const MAX_QUANTITY: u32 = 99;
/// Most lines in an order.
pub const MAX_LINES: usize = 20;

/// The products on sale: SKU, name and description in English, then in Korean, price.
pub fn products() -> Vec<Product> {
    const PRODUCTS: [(&str, [&str; 4], u64); 4] = [
        (
            "POUR-OVER-SET",
            [
                "Pour-over coffee set",
                "Glass dripper, carafe and 40 paper filters.",
                "핸드드립 세트",
                "유리 드리퍼, 서버, 종이 필터 40장.",
            ],
            12_900,
        ),
        (
            "CERAMIC-MUG",
            ["Ceramic mug", "Hand-glazed stoneware, 350 ml.", "도자기 머그", "손으로 유약을 바른 석기, 350ml."],
            8_500,
        ),
        (
            "BEANS-200G",
            [
                "Single-origin beans",
                "Ethiopia Yirgacheffe, 200 g, roasted this week.",
                "싱글 오리진 원두",
                "에티오피아 예가체프 200g, 이번 주 로스팅.",
            ],
            15_000,
        ),
        (
            "TEA-TOWEL",
            ["Linen tea towel", "Stonewashed linen, 50 x 70 cm.", "리넨 행주", "스톤워시 리넨, 50 x 70cm."],
            6_900,
        ),
    ];
    PRODUCTS
        .into_iter()
        .map(|(sku, [name, description, name_ko, description_ko], price)| Product {
            sku: sku.to_owned(),
            name: name.to_owned(),
            description: description.to_owned(),
            name_ko: name_ko.to_owned(),
            description_ko: description_ko.to_owned(),
            price,
        })
        .collect()
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
pub fn price(requested: &[RequestedItem]) -> Result<PricedCart, AppError> {
    if requested.is_empty() {
        return Err(AppError::InvalidCart("the cart is empty"));
    }
    if requested.len() > MAX_LINES {
        return Err(AppError::InvalidCart("the cart has too many lines"));
    }
    let catalog = products();
    let mut items: Vec<LineItem> = Vec::with_capacity(requested.len());
    for line in requested {
        let product = catalog
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
}
