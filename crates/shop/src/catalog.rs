//! The shop's own catalog: what it sells and at what price. payonce never
//! sees this list; each checkout carries the lines and prices the shop gives
//! it, as any shop with its own backend would.

/// One book the shop sells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Book {
    /// The shop's own product code; also the name of the book's quantity field in the form.
    pub sku: &'static str,
    pub name_en: &'static str,
    pub name_ko: &'static str,
    pub author_en: &'static str,
    pub author_ko: &'static str,
    /// KRW, whole won.
    pub price: u64,
}

/// Everything the shop sells, in the order the front page lists it.
pub const BOOKS: [Book; 4] = [
    Book {
        sku: "the-vegetarian",
        name_en: "The Vegetarian",
        name_ko: "채식주의자",
        author_en: "Han Kang",
        author_ko: "한강",
        price: 13_500,
    },
    Book {
        sku: "human-acts",
        name_en: "Human Acts",
        name_ko: "소년이 온다",
        author_en: "Han Kang",
        author_ko: "한강",
        price: 14_000,
    },
    Book {
        sku: "please-look-after-mom",
        name_en: "Please Look After Mom",
        name_ko: "엄마를 부탁해",
        author_en: "Shin Kyung-sook",
        author_ko: "신경숙",
        price: 12_600,
    },
    Book {
        sku: "kim-jiyoung-born-1982",
        name_en: "Kim Jiyoung, Born 1982",
        name_ko: "82년생 김지영",
        author_en: "Cho Nam-joo",
        author_ko: "조남주",
        price: 13_000,
    },
];

/// The book sold under `sku`, if the shop sells one.
pub fn book(sku: &str) -> Option<&'static Book> {
    BOOKS.iter().find(|book| book.sku == sku)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_book_has_its_own_sku_and_a_price_payonce_accepts() {
        for (index, book) in BOOKS.iter().enumerate() {
            assert_eq!(super::book(book.sku), Some(book), "{} is found by its sku", book.sku);
            assert!(BOOKS[..index].iter().all(|other| other.sku != book.sku), "{} is listed once", book.sku);
            // payonce refuses a checkout under ₩100; one book must be enough for one.
            assert!(book.price >= 100);
        }
        assert_eq!(super::book("no-such-book"), None);
    }
}
