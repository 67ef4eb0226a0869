//! KRW has no minor unit; people read amounts as `₩12,900`.

/// Formats a KRW amount with a won sign and thousands separators.
pub fn format_krw(amount: u64) -> String {
    let digits = amount.to_string();
    let mut grouped = String::with_capacity(digits.len() + digits.len() / 3 + 3);
    grouped.push('₩');
    for (index, digit) in digits.chars().enumerate() {
        if index > 0 && (digits.len() - index).is_multiple_of(3) {
            grouped.push(',');
        }
        grouped.push(digit);
    }
    grouped
}

#[cfg(test)]
mod tests {
    use super::format_krw;

    #[test]
    fn groups_thousands() {
        assert_eq!(format_krw(0), "₩0");
        assert_eq!(format_krw(900), "₩900");
        assert_eq!(format_krw(1_000), "₩1,000");
        assert_eq!(format_krw(12_900), "₩12,900");
        assert_eq!(format_krw(123_456), "₩123,456");
        assert_eq!(format_krw(1_234_567), "₩1,234,567");
    }
}
