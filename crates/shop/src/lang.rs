//! Which language a page speaks: English or Korean.

/// The two languages the shop's pages are written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    En,
    Ko,
}

impl Lang {
    /// The page's language: `?lang=ko|en` when the customer chose one (the
    /// switch link on every page sets it), else Korean when the browser's
    /// `Accept-Language` starts with `ko`, else English. Only the first
    /// language of the header counts: it is the one the customer put first.
    pub fn choose(query: Option<&str>, accept_language: Option<&str>) -> Lang {
        match query.map(str::trim) {
            Some(choice) if choice.eq_ignore_ascii_case("ko") => Lang::Ko,
            Some(choice) if choice.eq_ignore_ascii_case("en") => Lang::En,
            // No choice, or one the shop does not speak: the browser decides.
            _ => {
                let first = accept_language.unwrap_or_default().trim_start();
                if first.get(..2).is_some_and(|prefix| prefix.eq_ignore_ascii_case("ko")) { Lang::Ko } else { Lang::En }
            }
        }
    }

    /// The code for `<html lang>` and `?lang=`.
    pub fn code(self) -> &'static str {
        match self {
            Lang::En => "en",
            Lang::Ko => "ko",
        }
    }

    /// The language the switch link offers.
    pub fn other(self) -> Lang {
        match self {
            Lang::En => Lang::Ko,
            Lang::Ko => Lang::En,
        }
    }

    /// `en` or `ko`, whichever this language is.
    pub fn pick<'a>(self, en: &'a str, ko: &'a str) -> &'a str {
        match self {
            Lang::En => en,
            Lang::Ko => ko,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Lang;

    #[test]
    fn the_customers_choice_comes_before_the_browsers() {
        assert_eq!(Lang::choose(Some("ko"), Some("en-US,en;q=0.9")), Lang::Ko);
        assert_eq!(Lang::choose(Some("en"), Some("ko-KR,ko;q=0.9")), Lang::En);
        assert_eq!(Lang::choose(Some("KO"), None), Lang::Ko);
    }

    #[test]
    fn without_a_choice_the_browsers_first_language_decides() {
        assert_eq!(Lang::choose(None, Some("ko-KR,ko;q=0.9,en;q=0.8")), Lang::Ko);
        assert_eq!(Lang::choose(None, Some("ko")), Lang::Ko);
        assert_eq!(Lang::choose(None, Some(" KO-kr")), Lang::Ko);
        assert_eq!(Lang::choose(None, Some("en-US,ko;q=0.9")), Lang::En);
        assert_eq!(Lang::choose(None, Some("k")), Lang::En);
        assert_eq!(Lang::choose(None, Some("")), Lang::En);
        assert_eq!(Lang::choose(None, None), Lang::En);
    }

    #[test]
    fn a_language_the_shop_does_not_speak_is_no_choice() {
        assert_eq!(Lang::choose(Some("fr"), Some("ko-KR")), Lang::Ko);
        assert_eq!(Lang::choose(Some(""), None), Lang::En);
    }

    #[test]
    fn the_switch_offers_the_other_language() {
        assert_eq!(Lang::En.other(), Lang::Ko);
        assert_eq!(Lang::Ko.other().code(), "en");
        assert_eq!(Lang::Ko.pick("Paid", "결제 완료"), "결제 완료");
    }
}
