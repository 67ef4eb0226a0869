fn main() {
    // Panic messages in the console are worth their size only while developing.
    #[cfg(debug_assertions)]
    console_error_panic_hook::set_once();
    leptos::mount::mount_to_body(payonce_page::App);
}
