//! Opens KakaoPay's window as KakaoPay's online payment asks a merchant's web
//! page to: the order server prepares the payment (KakaoPay's ready, which
//! needs the secret key), and the browser goes to the page KakaoPay named for
//! its kind of device: a QR code to scan on a PC, KakaoPay itself on a phone.
//! KakaoPay sends the customer back to `/pay/success` with a `pg_token`, or
//! to `/pay/fail`, as Toss's window does.

use payonce_api::PgWindow;

/// Which of the window's addresses this device opens: the mobile one where the
/// main pointer is a finger (a phone or a tablet), the PC's QR page elsewhere.
pub fn address_for_this_device(window: &PgWindow) -> &str {
    if on_a_touch_screen() { &window.mobile_url } else { &window.pc_url }
}

fn on_a_touch_screen() -> bool {
    web_sys::window()
        .and_then(|window| window.match_media("(hover: none) and (pointer: coarse)").ok().flatten())
        .is_some_and(|query| query.matches())
}
