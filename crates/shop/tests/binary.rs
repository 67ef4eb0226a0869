//! The sample shop as its operator starts it: the binary, its flags and files.
//! (Its journeys with payonce are the browser journeys' `33-sample-shop`.)

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Output, Stdio};

const SHOP: &str = env!("CARGO_BIN_EXE_payonce-shop");
/// A secret of the Standard Webhooks form (`whsec_` and base64 of 24 bytes).
const SECRET: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

struct Files {
    dir: tempfile::TempDir,
}

impl Files {
    fn new(api_key: &str, secret: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("key"), api_key).unwrap();
        std::fs::write(dir.path().join("secret"), secret).unwrap();
        Files { dir }
    }

    fn command(&self) -> Command {
        let mut command = Command::new(SHOP);
        let path = |name: &str| self.dir.path().join(name);
        command
            .arg("--listen")
            .arg("127.0.0.1:0")
            .arg("--api-key-file")
            .arg(path("key"))
            .arg("--events-secret-file")
            .arg(path("secret"))
            .arg("--database")
            .arg(path("shop.sqlite3"))
            .env_remove("RUST_LOG")
            .stdin(Stdio::null());
        command
    }

    fn refused(&self, extra: &[&str]) -> String {
        let Output { status, stderr, .. } = self.command().args(extra).output().unwrap();
        assert!(!status.success(), "the shop started with {extra:?}");
        String::from_utf8(stderr).unwrap()
    }
}

struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
fn bad_files_and_urls_stop_the_shop_with_the_flag_named() {
    let empty_key = Files::new("\n", SECRET);
    assert!(empty_key.refused(&[]).contains("(--api-key-file) has no key on its first line"));
    let bad_secret = Files::new("sk_books", "not-a-secret");
    assert!(bad_secret.refused(&[]).contains("(--events-secret-file) must have on its first line"));

    let files = Files::new("sk_books", SECRET);
    assert!(files.refused(&["--payonce-url", "ftp://payonce.example"]).contains("--payonce-url"));
    assert!(files.refused(&["--public-url", "https://books.example/?a=1"]).contains("must have no query nor fragment"));
    std::fs::remove_file(files.dir.path().join("key")).unwrap();
    assert!(files.refused(&[]).contains("cannot read the API key file"));
    assert!(!files.dir.path().join("shop.sqlite3").exists(), "nothing was created by a shop that did not start");
}

#[tokio::test]
async fn the_shop_starts_and_sells_while_payonce_is_away() {
    let files = Files::new("sk_books\n", &format!("{SECRET}\n"));
    // Nothing listens on port 9 of this machine: payonce is away.
    let mut child =
        files.command().args(["--payonce-url", "http://127.0.0.1:9"]).stdout(Stdio::piped()).spawn().unwrap();
    let stdout = child.stdout.take().unwrap();
    let _running = Running(child);
    let mut line = String::new();
    BufReader::new(stdout).read_line(&mut line).unwrap();
    let url = line.split_whitespace().find(|word| word.starts_with("http://")).expect("the shop prints its address");

    let home = reqwest::get(url).await.unwrap();
    assert_eq!(home.status(), reqwest::StatusCode::OK);
    assert!(home.text().await.unwrap().contains("/orders"), "the catalog offers its books");
    assert!(files.dir.path().join("shop.sqlite3").exists(), "the shop's own database was created");
}
