//! The "Buy" form: one quantity field per book (`qty-<sku>`), read into the
//! lines of a shop order. Checked here, before anything is stored or sent.

use std::collections::BTreeMap;

use crate::catalog::{self, BOOKS};
use crate::lang::Lang;
use crate::store::OrderLine;

/// The most of one book in one order: the field's `max`.
pub const MAX_QUANTITY: u32 = 9;

/// The prefix of a quantity field's name; the rest is the book's sku.
pub const QUANTITY_FIELD: &str = "qty-";

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FormError {
    /// Every quantity is empty or 0.
    NothingChosen,
    /// A quantity is not a whole number from 0 to 9.
    BadQuantity { sku: String },
    /// A field names a book the shop does not sell (an old page, or a hand-made form).
    UnknownBook { sku: String },
}

impl FormError {
    pub fn message(&self, lang: Lang) -> String {
        let name = |sku: &str| {
            catalog::book(sku).map_or(sku.to_owned(), |book| lang.pick(book.name_en, book.name_ko).to_owned())
        };
        match (self, lang) {
            (FormError::NothingChosen, Lang::En) => "Choose at least one book.".into(),
            (FormError::NothingChosen, Lang::Ko) => "책을 한 권 이상 골라 주세요.".into(),
            (FormError::BadQuantity { sku }, Lang::En) => {
                format!("The quantity of {} must be a whole number from 1 to {MAX_QUANTITY}.", name(sku))
            }
            (FormError::BadQuantity { sku }, Lang::Ko) => {
                format!("{}의 수량은 1에서 {MAX_QUANTITY} 사이의 정수여야 합니다.", name(sku))
            }
            (FormError::UnknownBook { .. }, Lang::En) => {
                "This page is out of date: a book is no longer sold. Please choose again.".into()
            }
            (FormError::UnknownBook { .. }, Lang::Ko) => "판매하지 않는 책이 있습니다. 다시 골라 주세요.".into(),
        }
    }
}

/// The form's quantity fields as typed, by sku, to show them again beside an error.
pub fn entered(fields: &[(String, String)]) -> BTreeMap<String, String> {
    fields
        .iter()
        .filter_map(|(name, value)| Some((name.strip_prefix(QUANTITY_FIELD)?.to_owned(), value.clone())))
        .collect()
}

/// The order's lines, in the catalog's order, with the catalog's names and
/// prices (never a price from the form). Fields other than quantities are
/// ignored; an empty quantity is 0, and 0 is "not this book".
pub fn order_lines(fields: &[(String, String)]) -> Result<Vec<OrderLine>, FormError> {
    let mut quantities: BTreeMap<&str, u32> = BTreeMap::new();
    for (name, value) in fields {
        let Some(sku) = name.strip_prefix(QUANTITY_FIELD) else { continue };
        if catalog::book(sku).is_none() {
            return Err(FormError::UnknownBook { sku: sku.to_owned() });
        }
        let value = value.trim();
        let quantity = if value.is_empty() { 0 } else { value.parse::<u32>().unwrap_or(u32::MAX) };
        // A field sent twice is a hand-made form: refuse it rather than guess which one was meant.
        if quantity > MAX_QUANTITY || quantities.insert(sku, quantity).is_some() {
            return Err(FormError::BadQuantity { sku: sku.to_owned() });
        }
    }
    let lines: Vec<OrderLine> = BOOKS
        .iter()
        .filter_map(|book| {
            let quantity = *quantities.get(book.sku).filter(|quantity| **quantity > 0)?;
            Some(OrderLine {
                sku: book.sku.to_owned(),
                name_en: book.name_en.to_owned(),
                name_ko: book.name_ko.to_owned(),
                quantity,
                unit_amount: book.price,
            })
        })
        .collect();
    if lines.is_empty() { Err(FormError::NothingChosen) } else { Ok(lines) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn form(fields: &[(&str, &str)]) -> Vec<(String, String)> {
        fields.iter().map(|(name, value)| ((*name).to_owned(), (*value).to_owned())).collect()
    }

    #[test]
    fn the_chosen_books_become_lines_in_the_catalogs_order_at_the_catalogs_price() {
        let lines = order_lines(&form(&[
            ("qty-human-acts", "2"),
            ("qty-the-vegetarian", " 1 "),
            ("qty-please-look-after-mom", "0"),
            ("qty-kim-jiyoung-born-1982", ""),
            ("lang", "ko"),
        ]))
        .unwrap();
        let summary: Vec<_> = lines.iter().map(|line| (line.sku.as_str(), line.quantity, line.unit_amount)).collect();
        assert_eq!(summary, [("the-vegetarian", 1, 13_500), ("human-acts", 2, 14_000)]);
        assert_eq!(lines[1].name_ko, "소년이 온다");
    }

    #[test]
    fn nothing_chosen_is_refused() {
        assert_eq!(order_lines(&[]), Err(FormError::NothingChosen));
        assert_eq!(
            order_lines(&form(&[("qty-human-acts", "0"), ("qty-the-vegetarian", "")])),
            Err(FormError::NothingChosen)
        );
    }

    #[test]
    fn a_quantity_is_a_whole_number_up_to_nine() {
        assert_eq!(order_lines(&form(&[("qty-human-acts", "9")])).unwrap()[0].quantity, 9);
        for bad in ["10", "-1", "1.5", "two", "99999999999999999999", "+"] {
            assert_eq!(
                order_lines(&form(&[("qty-human-acts", bad)])),
                Err(FormError::BadQuantity { sku: "human-acts".into() }),
                "{bad:?}"
            );
        }
        assert_eq!(
            order_lines(&form(&[("qty-human-acts", "1"), ("qty-human-acts", "2")])),
            Err(FormError::BadQuantity { sku: "human-acts".into() })
        );
    }

    #[test]
    fn a_book_the_shop_does_not_sell_is_refused() {
        assert_eq!(
            order_lines(&form(&[("qty-human-acts", "1"), ("qty-free-book", "1")])),
            Err(FormError::UnknownBook { sku: "free-book".into() })
        );
    }

    #[test]
    fn errors_name_the_book_in_the_pages_language() {
        let error = FormError::BadQuantity { sku: "human-acts".into() };
        assert!(error.message(Lang::En).contains("Human Acts"));
        assert!(error.message(Lang::Ko).contains("소년이 온다"));
        assert_eq!(
            entered(&form(&[("qty-human-acts", "12"), ("lang", "ko")])).get("human-acts").map(String::as_str),
            Some("12")
        );
    }
}
