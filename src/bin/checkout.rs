//! A shop's checkout page's own bundle: the checkout without the router (see `CheckoutApp`).
fn main() {
    #[cfg(debug_assertions)]
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(payonce_page::CheckoutApp);
}
