//! The landing page's own bundle: the cart without the router (see `CartApp`).
fn main() {
    #[cfg(debug_assertions)]
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(payonce_page::CartApp);
}
