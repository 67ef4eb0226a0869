//! The cart: quantities by SKU, and the total the customer sees before paying.
//! The server prices the order again; this total is only for display.

use payonce_api::{Product, RequestedItem};

/// Most units of one product, as the server allows.
pub const MAX_QUANTITY: u32 = 99;

/// Saved in `localStorage` through `js_fields` as `{"quantities": {"SKU": 2}}`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cart {
    /// By SKU, each once. A sorted list rather than a `BTreeMap`: a cart holds
    /// a few lines, and the map's code was about 1 KB (gzip) of the cart's first load.
    quantities: Vec<(String, u32)>,
}

impl Cart {
    /// What a first visit starts with, so Pay works at once in the demo.
    pub fn starter() -> Self {
        let mut cart = Self::default();
        cart.set("POUR-OVER-SET", 1);
        cart
    }

    fn find(&self, sku: &str) -> Result<usize, usize> {
        self.quantities.binary_search_by(|(line, _)| line.as_str().cmp(sku))
    }

    pub fn quantity(&self, sku: &str) -> u32 {
        self.find(sku).map_or(0, |at| self.quantities[at].1)
    }

    /// Sets a quantity, clamped to what the server accepts; zero removes the line.
    pub fn set(&mut self, sku: &str, quantity: u32) {
        let quantity = quantity.min(MAX_QUANTITY);
        match (self.find(sku), quantity) {
            (Ok(at), 0) => {
                self.quantities.remove(at);
            }
            (Ok(at), _) => self.quantities[at].1 = quantity,
            (Err(_), 0) => {}
            (Err(at), _) => self.quantities.insert(at, (sku.to_owned(), quantity)),
        }
    }

    /// Each SKU in the cart with its quantity, by SKU.
    pub fn lines(&self) -> impl Iterator<Item = (&str, u32)> {
        self.quantities.iter().map(|(sku, quantity)| (sku.as_str(), *quantity))
    }

    pub fn is_empty(&self) -> bool {
        self.quantities.is_empty()
    }

    /// Drops lines for products no longer sold.
    pub fn retain_known(&mut self, products: &[Product]) {
        self.quantities.retain(|(sku, _)| products.iter().any(|product| &product.sku == sku));
    }

    pub fn total(&self, products: &[Product]) -> u64 {
        products.iter().map(|product| product.price * u64::from(self.quantity(&product.sku))).sum()
    }

    pub fn to_request(&self) -> Vec<RequestedItem> {
        self.lines().map(|(sku, quantity)| RequestedItem { sku: sku.to_owned(), quantity }).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn products() -> Vec<Product> {
        [("A", 12_900), ("B", 8_500)]
            .into_iter()
            .map(|(sku, price)| Product {
                sku: sku.into(),
                name: sku.into(),
                description: String::new(),
                name_ko: sku.into(),
                description_ko: String::new(),
                price,
            })
            .collect()
    }

    #[test]
    fn the_total_follows_the_quantities() {
        let mut cart = Cart::default();
        cart.set("A", 1);
        cart.set("B", 2);
        assert_eq!(cart.total(&products()), 12_900 + 17_000);
        cart.set("B", 0);
        assert_eq!(cart.total(&products()), 12_900);
        assert_eq!(cart.to_request(), vec![RequestedItem { sku: "A".into(), quantity: 1 }]);
    }

    #[test]
    fn lines_are_by_sku_each_once() {
        let mut cart = Cart::default();
        for (sku, quantity) in [("C", 1), ("A", 2), ("B", 3), ("A", 4), ("C", 0), ("D", 0)] {
            cart.set(sku, quantity);
        }
        assert_eq!(cart.lines().collect::<Vec<_>>(), [("A", 4), ("B", 3)]);
    }

    #[test]
    fn quantities_stay_within_what_the_server_accepts() {
        let mut cart = Cart::default();
        cart.set("A", 500);
        assert_eq!(cart.quantity("A"), MAX_QUANTITY);
        cart.set("A", 0);
        assert!(cart.is_empty());
    }

    #[test]
    fn products_no_longer_sold_leave_the_cart() {
        let mut cart = Cart::default();
        cart.set("A", 1);
        cart.set("GONE", 3);
        cart.retain_known(&products());
        assert_eq!(cart.to_request().len(), 1);
    }
}
