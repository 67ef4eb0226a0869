use std::ffi::OsString;
use std::time::Duration;

use clap::{CommandFactory, Parser};
use payonce_api::PageConfig;
use payonce_rules::settlement::OrphanPolicy;
use secrecy::ExposeSecret;

use super::*;

#[test]
fn the_defaults_match_the_design_and_pass() {
    let config = ServerConfig::defaults();
    assert_eq!(config.pg_connect_timeout, Duration::from_secs(3));
    assert_eq!(config.pg_read_timeout, Duration::from_secs(60));
    assert_eq!(config.pg_limit, Concurrency::Auto);
    assert_eq!(config.page_config(), PageConfig::DEFAULT);
    assert_eq!(config.validate(), Ok(()));
}

/// An environment of its own for `with_renamed_env`, so no test sets the process's.
fn environment(vars: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<OsString> {
    move |name| vars.iter().find(|(var, _)| *var == name).map(|(_, value)| OsString::from(value))
}

fn command_line(args: &[&str]) -> Vec<OsString> {
    ["payonce-server"].iter().chain(args).map(OsString::from).collect()
}

#[test]
fn a_renamed_flag_is_still_read_under_its_old_name_with_a_warning() {
    let old_flags = ServerConfig::parse_from(command_line(&["--poll-attempts", "40", "--reconcile-strays", "report"]));
    assert_eq!((old_flags.max_checks, old_flags.reconcile_orphans), (40, OrphanPolicy::Report));
    let (_, warnings) = with_renamed_env(command_line(&["--poll-interval=1s"]), environment(&[]));
    assert_eq!(warnings, ["--poll-interval is the old name of --check-interval: it goes in a later release"]);

    let (args, warnings) = with_renamed_env(command_line(&[]), environment(&[("PAYONCE_POLL_INTERVAL", "500ms")]));
    assert_eq!(ServerConfig::parse_from(args).check_interval, Duration::from_millis(500));
    assert_eq!(
        warnings,
        ["PAYONCE_POLL_INTERVAL is the old name of PAYONCE_CHECK_INTERVAL: it goes in a later release"]
    );
}

#[test]
fn an_old_environment_name_gives_way_to_the_new_one_and_to_the_command_line() {
    let both = environment(&[("PAYONCE_POLL_ATTEMPTS", "40"), ("PAYONCE_MAX_CHECKS", "30")]);
    assert_eq!(with_renamed_env(command_line(&[]), both).0, command_line(&[]), "the new variable is clap's to read");
    for given in [["--max-checks", "30"], ["--poll-attempts", "30"]] {
        let (args, _) = with_renamed_env(command_line(&given), environment(&[("PAYONCE_POLL_ATTEMPTS", "40")]));
        assert_eq!(ServerConfig::parse_from(args).max_checks, 30, "{given:?} wins over the environment");
    }
    for renamed in RENAMED {
        let flag = renamed.flag.trim_start_matches("--");
        let arg = ServerConfig::command().get_arguments().find(|arg| arg.get_long() == Some(flag)).cloned();
        let arg = arg.unwrap_or_else(|| panic!("{} is a flag", renamed.flag));
        assert_eq!(arg.get_env().and_then(|env| env.to_str()), Some(renamed.env), "{renamed:?}");
        let aliases = arg.get_all_aliases().unwrap_or_default();
        assert!(
            aliases.contains(&renamed.old_flag.trim_start_matches("--")),
            "{renamed:?} has its old flag as an alias"
        );
    }
}

#[test]
fn an_order_id_prefix_fits_the_pgs_order_id_and_orphan_charges_are_refunded_or_reported() {
    let with = |prefix: &str| ServerConfig::parse_from(["payonce-server", "--order-id-prefix", prefix]).validate();
    assert_eq!(with("shop-2_"), Ok(()));
    assert_eq!(with(&"p".repeat(32)), Ok(()));
    for bad in ["", "shop 2", "ord/", "가게_", &"p".repeat(33)] {
        assert_eq!(with(bad), Err(ConfigError::InvalidOrderIdPrefix(bad.to_owned())), "{bad:?}");
    }
    assert_eq!(ServerConfig::defaults().order_id_prefix, "ord_");
    assert_eq!(ServerConfig::defaults().reconcile_orphans, OrphanPolicy::Refund);
    let report = ServerConfig::parse_from(["payonce-server", "--reconcile-orphans", "report"]);
    assert_eq!(report.reconcile_orphans, OrphanPolicy::Report);
    assert!(ServerConfig::try_parse_from(["payonce-server", "--reconcile-orphans", "ignore"]).is_err());
}

#[test]
fn the_sdks_origins_are_origins() {
    for flag in ["pg-window-origins", "pg-connect-origins", "pg-img-origins", "pg-style-origins"] {
        let with = |origins: &str| ServerConfig::parse_from(["payonce-server", &format!("--{flag}"), origins]);
        assert_eq!(with("https://pay.toss.im,http://127.0.0.1:9090").validate(), Ok(()), "{flag}");
        for bad in ["https://pay.toss.im/", "https://pay.toss.im/window", "pay.toss.im", "ftp://pay.toss.im"] {
            let error = ConfigError::InvalidOrigin { flag, value: bad.to_owned() };
            assert_eq!(with(bad).validate(), Err(error), "{flag} {bad}");
        }
    }
}

#[test]
fn the_sdk_frames_from_its_own_origin_and_the_window_origins_and_nothing_more_unless_told() {
    let config = ServerConfig::parse_from([
        "payonce-server",
        "--pg-sdk-url",
        "https://js.tosspayments.com/v2/standard",
        "--pg-window-origins",
        "https://pay.toss.im,https://js.tosspayments.com",
        "--pg-connect-origins",
        "https://log.tosspayments.com",
    ]);
    let origins = config.payment_sdk_origins();
    assert_eq!(origins.script.as_deref(), Some("https://js.tosspayments.com"));
    assert_eq!(origins.frames, ["https://js.tosspayments.com", "https://pay.toss.im"], "each once");
    assert_eq!(origins.connections, ["https://log.tosspayments.com"]);
    assert!(origins.images.is_empty() && origins.styles.is_empty());
}

#[test]
fn durations_read_the_way_people_write_them() {
    assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
    assert_eq!(parse_duration("15s"), Ok(Duration::from_secs(15)));
    assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
    assert!(parse_duration("15").is_err());
    assert!(parse_duration("soon").is_err());
}

#[test]
fn a_checking_window_shorter_than_the_pg_timeout_is_refused_with_the_numbers() {
    let config = ServerConfig::parse_from(["payonce-server", "--max-checks", "10", "--pg-read-timeout", "60s"]);
    let error = config.validate().unwrap_err();
    let message = error.to_string();
    assert!(matches!(error, ConfigError::CheckingWindowTooShort { .. }));
    assert!(message.contains("= 35s"), "{message}");
    assert!(message.contains("= 1m 3s"), "{message}");
}

#[test]
fn a_longer_read_timeout_needs_a_longer_window() {
    let config = ServerConfig::parse_from(["payonce-server", "--pg-read-timeout", "90s"]);
    assert!(config.validate().is_err());
    let config = ServerConfig::parse_from(["payonce-server", "--pg-read-timeout", "90s", "--max-checks", "40"]);
    assert_eq!(config.validate(), Ok(()));
}

#[test]
fn the_concurrency_is_a_number_or_auto() {
    let auto = ServerConfig::parse_from(["payonce-server", "--pg-limit", "auto"]);
    assert_eq!(auto.pg_limit, Concurrency::Auto);
    assert!(ServerConfig::try_parse_from(["payonce-server", "--pg-limit", "0"]).is_err());
    assert!(ServerConfig::try_parse_from(["payonce-server", "--pg-limit", "lots"]).is_err());
}

#[test]
fn zero_durations_and_bad_urls_are_refused() {
    let config = ServerConfig::parse_from(["payonce-server", "--check-interval", "0s"]);
    assert_eq!(config.validate(), Err(ConfigError::ZeroDuration { flag: "check-interval" }));
    let config = ServerConfig::parse_from(["payonce-server", "--pg-url", "localhost:9090"]);
    assert!(matches!(config.validate(), Err(ConfigError::InvalidUrl { flag: "pg-url", .. })));
    let config = ServerConfig::parse_from(["payonce-server", "--pg-sdk-url", "/v2/standard"]);
    assert!(matches!(config.validate(), Err(ConfigError::InvalidUrl { flag: "pg-sdk-url", .. })));
}

#[test]
fn the_sdk_comes_from_the_pg_unless_told_otherwise_and_its_origin_is_what_the_csp_allows() {
    let config = ServerConfig::parse_from(["payonce-server", "--pg-url", "http://127.0.0.1:9090/"]);
    assert_eq!(config.payment_sdk().url, "http://127.0.0.1:9090/v2/standard");
    assert_eq!(config.payment_sdk_origin().as_deref(), Some("http://127.0.0.1:9090"));
    let live = ServerConfig::parse_from([
        "payonce-server",
        "--pg-url",
        "https://api.tosspayments.com",
        "--pg-sdk-url",
        "https://js.tosspayments.com/v2/standard",
        "--pg-client-key",
        "live_ck_abc",
    ]);
    assert_eq!(live.payment_sdk().client_key, "live_ck_abc");
    assert_eq!(live.payment_sdk_origin().as_deref(), Some("https://js.tosspayments.com"));
}

fn credentials(args: &[&str]) -> Result<(), ConfigError> {
    ServerConfig::parse_from(std::iter::once("payonce-server").chain(args.iter().copied())).validate()
}

#[test]
fn the_secret_key_goes_in_the_clear_only_to_a_pg_on_this_machine() {
    assert_eq!(credentials(&["--pg-url", "http://127.0.0.1:9090"]), Ok(()));
    assert_eq!(credentials(&["--pg-url", "http://localhost:9090"]), Ok(()));
    assert_eq!(credentials(&["--pg-url", "http://[::1]:9090"]), Ok(()));
    let plain = ["--pg-url", "http://pg.example.invalid", "--pg-secret-key", "test_sk_shop"];
    assert_eq!(
        credentials(&plain),
        Err(ConfigError::PlainHttpPg { flag: "pg-url", url: "http://pg.example.invalid".into() })
    );
    assert_eq!(credentials(&["--pg-url", "https://pg.example.invalid", "--pg-secret-key", "test_sk_shop"]), Ok(()));
}

#[test]
fn a_forgotten_key_is_refused_instead_of_becoming_the_fake_pgs() {
    let error = credentials(&["--pg-url", "https://api.tosspayments.com"]).unwrap_err();
    assert_eq!(
        error,
        ConfigError::NoSecretKey { key_flag: "pg-secret-key", url: "https://api.tosspayments.com".into() }
    );
    assert!(error.to_string().contains("--pg-secret-key-file"), "{error}");
}

#[test]
fn the_kakaopay_key_goes_where_tosss_does_and_its_cid_is_checked() {
    assert_eq!(credentials(&["--kakaopay-url", "http://127.0.0.1:9091"]), Ok(()));
    assert_eq!(
        credentials(&["--kakaopay-url", "https://open-api.kakaopay.com"]),
        Err(ConfigError::NoSecretKey { key_flag: "kakaopay-secret-key", url: "https://open-api.kakaopay.com".into() })
    );
    let live = ["--kakaopay-url", "https://open-api.kakaopay.com", "--kakaopay-secret-key", "DEVKEY0123"];
    assert_eq!(credentials(&live), Ok(()));
    assert_eq!(
        credentials(&["--kakaopay-url", "http://kakaopay.example.invalid", "--kakaopay-secret-key", "DEVKEY0123"]),
        Err(ConfigError::PlainHttpPg { flag: "kakaopay-url", url: "http://kakaopay.example.invalid".into() })
    );
    for cid in ["", "TC0ONETIME1", "TC0 ONETIM"] {
        let args = ["--kakaopay-url", "http://127.0.0.1:9091", "--kakaopay-cid", cid];
        assert_eq!(credentials(&args), Err(ConfigError::InvalidKakaoPayCid(cid.into())), "{cid:?}");
    }
    assert!(matches!(
        credentials(&["--kakaopay-url", "ftp://x"]),
        Err(ConfigError::InvalidUrl { flag: "kakaopay-url", .. })
    ));
}

#[test]
fn a_live_key_goes_only_to_toss_over_https() {
    let live =
        |url| credentials(&["--pg-url", url, "--pg-secret-key", "live_sk_shop", "--pg-client-key", "live_ck_shop"]);
    assert_eq!(live("https://api.tosspayments.com"), Ok(()));
    assert_eq!(
        live("https://api.tosspayments.com.example"),
        Err(ConfigError::LiveKeyOffToss("https://api.tosspayments.com.example".into()))
    );
    assert_eq!(live("http://127.0.0.1:9090"), Err(ConfigError::LiveKeyOffToss("http://127.0.0.1:9090".into())));
    assert_eq!(
        live("http://api.tosspayments.com"),
        Err(ConfigError::PlainHttpPg { flag: "pg-url", url: "http://api.tosspayments.com".into() })
    );
}

#[test]
fn a_client_key_and_a_secret_key_of_different_kinds_are_refused() {
    let pair = |client, secret| {
        credentials(&[
            "--pg-url",
            "https://api.tosspayments.com",
            "--pg-client-key",
            client,
            "--pg-secret-key",
            secret,
            "--public-url",
            "https://shop.example",
        ])
    };
    assert_eq!(pair("live_ck_shop", "live_sk_shop"), Ok(()));
    assert_eq!(
        pair("test_ck_shop", "live_sk_shop"),
        Err(ConfigError::KeyPairMismatch { client: KeyKind::Test, secret: KeyKind::Live })
    );
    assert_eq!(
        pair("live_gck_shop", "test_gsk_shop"),
        Err(ConfigError::KeyPairMismatch { client: KeyKind::Live, secret: KeyKind::Test })
    );
    // The client key's default is the fake PG's test key: a live secret key alone is a mixed pair.
    let error =
        credentials(&["--pg-url", "https://api.tosspayments.com", "--pg-secret-key", "live_sk_shop"]).unwrap_err();
    assert_eq!(error, ConfigError::KeyPairMismatch { client: KeyKind::Test, secret: KeyKind::Live });
    assert!(error.to_string().contains("--pg-client-key"), "{error}");
}

#[test]
fn test_keys_at_an_https_address_are_refused_unless_allowed_and_then_said() {
    let toss_test = ["--pg-url", "https://api.tosspayments.com", "--pg-client-key", "test_ck_shop"];
    let secret = ["--pg-secret-key", "test_sk_shop"];
    let https = ["--public-url", "https://shop.example"];
    let config = |extra: &[&str]| {
        ServerConfig::parse_from(
            ["payonce-server"].iter().chain(&toss_test).chain(&secret).chain(extra.iter()).copied().collect::<Vec<_>>(),
        )
    };
    let refused = config(&https).validate().unwrap_err();
    assert!(matches!(refused, ConfigError::TestKeysInPublic { which: "a Toss test key (test_...)", .. }), "{refused}");
    assert!(refused.to_string().contains("--allow-test-keys"), "{refused}");
    let allowed = config(&[&https[..], &["--allow-test-keys"]].concat());
    assert_eq!(allowed.validate(), Ok(()));
    assert!(allowed.test_payments_in_public());
    // At home (plain http on this machine), test keys are the developer's: nothing to allow, nothing to say.
    let at_home = config(&["--public-url", "http://127.0.0.1:8080"]);
    assert_eq!(at_home.validate(), Ok(()));
    assert!(!at_home.test_payments_in_public());
    assert!(!config(&["--public-url", "http://127.0.0.1:8080", "--allow-test-keys"]).test_payments_in_public());
    // The fake PG's own keys are test keys too.
    let fake = ServerConfig::parse_from(["payonce-server", "--public-url", "https://shop.example"]);
    assert!(matches!(fake.validate(), Err(ConfigError::TestKeysInPublic { .. })));
}

#[test]
fn kakaopays_test_cid_at_an_https_address_is_refused_unless_allowed() {
    let live_toss = [
        "--pg-url",
        "https://api.tosspayments.com",
        "--pg-client-key",
        "live_ck_shop",
        "--pg-secret-key",
        "live_sk_shop",
        "--kakaopay-url",
        "https://open-api.kakaopay.com",
        "--kakaopay-secret-key",
        "DEVKEY0123",
        "--public-url",
        "https://shop.example",
    ];
    let with = |extra: &[&str]| credentials(&[&live_toss[..], extra].concat());
    assert_eq!(
        with(&[]),
        Err(ConfigError::TestKeysInPublic {
            which: "KakaoPay's test cid TC0ONETIME",
            public_url: "https://shop.example".into()
        })
    );
    assert_eq!(with(&["--allow-test-keys"]), Ok(()));
    assert_eq!(with(&["--kakaopay-cid", "CSHOP00001"]), Ok(()), "a merchant's own cid takes money");
}

#[test]
fn webhooks_at_an_https_address_need_a_strong_secret_path() {
    let https = ["payonce-server", "--public-url", "https://shop.example", "--allow-test-keys", "--pg-webhooks"];
    assert_eq!(ServerConfig::parse_from(https).validate(), Err(ConfigError::WebhooksWithoutSecret));
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("webhook-secret");
    let with_file = |secret: &str| {
        std::fs::write(&file, secret).unwrap();
        let mut config =
            ServerConfig::parse_from(https.iter().copied().chain(["--pg-webhook-secret-file", file.to_str().unwrap()]));
        config.read_secret_files().and_then(|()| config.validate())
    };
    assert_eq!(with_file("0123456789abcdef0123456789abcdef\n"), Ok(()));
    let weak = with_file("short").unwrap_err();
    assert!(matches!(&weak, ConfigError::SecretFile { flag: "pg-webhook-secret-file", .. }), "{weak}");
    // At home, the fake PG sends to the bare path.
    assert_eq!(ServerConfig::parse_from(["payonce-server", "--pg-webhooks"]).validate(), Ok(()));
}

#[test]
fn secrets_never_show_in_debug_output() {
    let config = ServerConfig::parse_from([
        "payonce-server",
        "--pg-url",
        "https://api.tosspayments.com",
        "--pg-secret-key",
        "live_sk_never_printed",
        "--admin-token",
        "token-never-printed",
        "--db",
        "postgres://shop:password-never-printed@db.internal/shop",
    ]);
    let printed = format!("{config:?}");
    for secret in ["live_sk_never_printed", "token-never-printed", "password-never-printed"] {
        assert!(!printed.contains(secret), "{secret} in {printed}");
    }
    let client = crate::pg::TossClient::new(&config.pg_url, &config.pg_secret_key, config.pg_transport());
    let printed = format!("{client:?}");
    assert!(!printed.contains("Basic"), "the Basic header in {printed}");
}

#[test]
fn secrets_are_read_from_their_files_first_line() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("pg-secret-key");
    let token = dir.path().join("admin-token");
    std::fs::write(&key, "live_sk_from_file\n").unwrap();
    std::fs::write(&token, "token-from-file-of-32-characters-or-more\r\n").unwrap();
    let mut config = ServerConfig::parse_from([
        "payonce-server",
        "--pg-url",
        "https://api.tosspayments.com",
        "--pg-secret-key-file",
        key.to_str().unwrap(),
        "--pg-client-key",
        "live_ck_shop",
        "--admin-token-file",
        token.to_str().unwrap(),
    ]);
    config.read_secret_files().unwrap();
    assert_eq!(config.pg_secret_key.expose_secret(), "live_sk_from_file");
    assert_eq!(
        config.admin_token.as_ref().map(ExposeSecret::expose_secret),
        Some("token-from-file-of-32-characters-or-more")
    );
    assert_eq!(config.validate(), Ok(()));
}

#[test]
fn customer_cookie_keys_come_from_files_of_at_least_32_characters_an_attacker_cannot_guess() {
    let dir = tempfile::tempdir().unwrap();
    let file = |name: &str, key: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, format!("{key}\n")).unwrap();
        path.display().to_string()
    };
    let current = file("current", &"3f9a1c7e5b2d8046".repeat(4));
    let previous = file("previous", &"c4e8a2f6b0d9175e".repeat(2));
    let short = file("short", &"c4e8a2f6b0d9175e".repeat(2)[1..]);
    let guessable = file("guessable", &"ab".repeat(32));
    let until = ["--customer-key-previous-until", "2027-01-31T00:00:00Z"];
    let with = |current: &str, previous: Option<&str>| {
        let mut args = vec!["payonce-server", "--customer-key-file", current];
        if let Some(previous) = previous {
            args.extend(["--customer-key-previous-file", previous]);
            args.extend(until);
        }
        let mut config = ServerConfig::try_parse_from(args)?;
        Ok::<_, clap::Error>(config.read_secret_files().map(|()| config.customer_keys))
    };

    let keys = with(&current, Some(&previous)).unwrap().unwrap().expect("keys from files");
    assert_eq!(keys.current.expose_secret(), "3f9a1c7e5b2d8046".repeat(4));
    let (previous_key, previous_until) = keys.previous.expect("the previous key, with its end");
    assert_eq!(previous_key.expose_secret(), "c4e8a2f6b0d9175e".repeat(2));
    assert_eq!(previous_until, humantime::parse_rfc3339("2027-01-31T00:00:00Z").unwrap());
    let none = ServerConfig::try_parse_from(["payonce-server"]).unwrap();
    assert!(none.customer_keys.is_none(), "no file: the database's key");
    let Err(ConfigError::SecretFile { flag, reason, .. }) = with(&current, Some(&short)).unwrap() else {
        panic!("a short previous key is refused")
    };
    assert_eq!(flag, "customer-key-previous-file");
    assert!(reason.contains("shorter than 32"), "{reason}");
    let Err(ConfigError::SecretFile { flag, reason, .. }) = with(&guessable, None).unwrap() else {
        panic!("a key of two characters is refused")
    };
    assert_eq!(flag, "customer-key-file");
    assert!(reason.contains("different characters"), "{reason}");

    let parse = |args: &[&str]| ServerConfig::try_parse_from([&["payonce-server"][..], args].concat());
    assert!(parse(&["--customer-key-previous-file", &previous]).is_err(), "a previous key without a current one");
    let no_end = parse(&["--customer-key-file", &current, "--customer-key-previous-file", &previous]);
    assert!(no_end.is_err(), "a previous key without the rotation's end");
    assert!(parse(&["--customer-key-file", &current, "--customer-key-previous-until", until[1]]).is_err());
    let bad_time = ["--customer-key-previous-file", &previous, "--customer-key-previous-until", "next month"];
    assert!(parse(&[&["--customer-key-file", &current][..], &bad_time[..]].concat()).is_err());
}

#[test]
fn a_public_cluster_refuses_to_keep_the_cookie_key_in_its_database() {
    let cluster =
        ["--db", "postgres://shop@db.internal/shop", "--public-url", "https://shop.example", "--allow-test-keys"];
    let config = |extra: &[&str]| ServerConfig::parse_from([&["payonce-server"][..], &cluster[..], extra].concat());
    let refused = config(&[]).validate().unwrap_err();
    assert_eq!(refused, ConfigError::ClusterWithoutCustomerKey);
    assert!(refused.to_string().contains("--customer-key-file"), "{refused}");
    assert_eq!(config(&["--customer-key-file", "/run/secrets/cookie-key"]).validate(), Ok(()));
    // One server on its own file, or a cluster on this machine over plain http, keeps it in the database.
    let single = ["payonce-server", "--public-url", "https://shop.example", "--allow-test-keys"];
    assert_eq!(ServerConfig::parse_from(single).validate(), Ok(()));
    let at_home = ["payonce-server", "--db", "postgres://shop@127.0.0.1/shop", "--public-url", "http://127.0.0.1:8080"];
    assert_eq!(ServerConfig::parse_from(at_home).validate(), Ok(()));
}

#[test]
fn the_database_url_is_read_from_its_file_and_never_shown_with_its_password() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("db-url");
    std::fs::write(&file, "postgres://payonce:s3cret@db.internal:5432/shop\n").unwrap();
    let mut config = ServerConfig::parse_from(["payonce-server", "--db-url-file", file.to_str().unwrap()]);
    config.read_secret_files().unwrap();
    assert_eq!(config.db.engine(), crate::db::Engine::Postgres);
    assert_eq!(config.db.url(), "postgres://payonce:s3cret@db.internal:5432/shop");
    assert_eq!(config.db.to_string(), "postgres://payonce:***@db.internal:5432/shop");

    let both = ["payonce-server", "--db", "other.db", "--db-url-file", file.to_str().unwrap()];
    assert!(ServerConfig::try_parse_from(both).is_err(), "--db and --db-url-file together");
    std::fs::write(&file, "mysql://payonce:s3cret@db.internal/shop\n").unwrap();
    let mut config = ServerConfig::parse_from(["payonce-server", "--db-url-file", file.to_str().unwrap()]);
    let error = config.read_secret_files().unwrap_err();
    assert!(matches!(&error, ConfigError::SecretFile { flag: "db-url-file", .. }), "{error}");
    assert!(!error.to_string().contains("s3cret"), "the password is never shown: {error}");
}

#[test]
fn a_missing_or_empty_secret_file_is_refused_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::write(&empty, "\n").unwrap();
    let mut config = ServerConfig::parse_from(["payonce-server", "--admin-token-file", empty.to_str().unwrap()]);
    let error = config.read_secret_files().unwrap_err();
    assert!(
        matches!(&error, ConfigError::SecretFile { flag: "admin-token-file", reason, .. } if reason == "it is empty"),
        "{error}"
    );
    let missing = dir.path().join("missing");
    let mut config = ServerConfig::parse_from(["payonce-server", "--pg-secret-key-file", missing.to_str().unwrap()]);
    let error = config.read_secret_files().unwrap_err();
    assert!(error.to_string().starts_with("cannot read --pg-secret-key-file"), "{error}");
    assert!(ServerConfig::try_parse_from(["payonce-server", "--admin-token", "t", "--admin-token-file", "f"]).is_err());
}

#[test]
fn a_weak_admin_token_refuses_to_start() {
    assert_eq!(credentials(&["--admin-token", "0123456789abcdef0123456789abcdef"]), Ok(()));
    assert_eq!(credentials(&["--admin-token", ""]), Ok(()), "empty is none: the operators' API is off");
    let Err(ConfigError::WeakAdminToken { flag: "admin-token", reason }) =
        credentials(&["--admin-token", "test-admin-token"])
    else {
        panic!("a short token is refused")
    };
    assert!(reason.contains("shorter than 32"), "{reason}");
    let Err(ConfigError::WeakAdminToken { reason, .. }) = credentials(&["--admin-token", &"xy".repeat(20)]) else {
        panic!("a token of two characters is refused")
    };
    assert!(reason.contains("different characters"), "{reason}");
    let dir = tempfile::tempdir().unwrap();
    let token = dir.path().join("admin-token");
    std::fs::write(&token, "short\n").unwrap();
    let mut config = ServerConfig::parse_from(["payonce-server", "--admin-token-file", token.to_str().unwrap()]);
    config.read_secret_files().unwrap();
    let error = config.validate().unwrap_err();
    assert!(matches!(error, ConfigError::WeakAdminToken { flag: "admin-token-file", .. }), "{error}");
    assert!(error.to_string().contains("--admin-token-file"), "{error}");
}

#[test]
fn operators_come_from_their_file_with_the_admin_token_as_one_more() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("operators");
    let minseo = "minseo-token-0123456789abcdefghijklmnop";
    let line = crate::operators::file_line("minseo", "read-only", minseo).unwrap();
    std::fs::write(&file, format!("# operators\n{line}\n")).unwrap();
    let admin = "admin-token-0123456789abcdefghijklmnop";
    let mut config = ServerConfig::parse_from([
        "payonce-server",
        "--operators-file",
        file.to_str().unwrap(),
        "--admin-token",
        admin,
    ]);
    config.read_secret_files().unwrap();
    assert_eq!(config.validate(), Ok(()));
    let operators = config.operators().unwrap();
    assert_eq!(operators.signed_in(minseo).map(|operator| operator.name.as_str()), Some("minseo"));
    assert_eq!(operators.signed_in(admin).map(|operator| operator.name.as_str()), Some("operator"));
    config.admin_token = Some(minseo.into());
    let error = config.validate().unwrap_err();
    assert!(matches!(error, ConfigError::AdminTokenClash(_)), "{error}");
}

#[test]
fn a_bad_operators_file_refuses_to_start_naming_its_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("operators");
    let digest = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08";
    std::fs::write(&file, format!("# operators\njiwoo refund {digest}\nminseo admin {digest}\n")).unwrap();
    let mut config = ServerConfig::parse_from(["payonce-server", "--operators-file", file.to_str().unwrap()]);
    let error = config.read_secret_files().unwrap_err();
    assert_eq!(
        error,
        ConfigError::OperatorsFile {
            path: file.clone(),
            error: crate::operators::OperatorsFileError::UnknownRole { line: 3, role: "admin".to_owned() }
        }
    );
    assert!(error.to_string().contains("line 3: unknown role \"admin\""), "{error}");
    std::fs::write(&file, "\n# nobody\n").unwrap();
    let error = config.read_secret_files().unwrap_err();
    assert!(error.to_string().ends_with("it names no operator"), "{error}");
    let mut missing =
        ServerConfig::parse_from(["payonce-server", "--operators-file", dir.path().join("nope").to_str().unwrap()]);
    assert!(missing.read_secret_files().unwrap_err().to_string().starts_with("cannot read --operators-file"));
}

#[test]
fn the_catalog_and_the_shops_come_from_their_files_and_a_mistake_names_its_place() {
    let dir = tempfile::tempdir().unwrap();
    let catalog = dir.path().join("catalog.toml");
    std::fs::write(
        &catalog,
        "[[product]]\nsku = \"MUG\"\nname = \"Mug\"\nname_ko = \"머그\"\ndescription = \"A mug.\"\n\
         description_ko = \"머그.\"\nprice = 8500\n",
    )
    .unwrap();
    let shops = dir.path().join("shops.toml");
    std::fs::write(
        &shops,
        format!(
            "[[shop]]\nid = \"books\"\nname = \"Books\"\norder_id_prefix = \"ord_books_\"\n\
             return_origins = [\"https://books.example\"]\npay_with = [\"toss\"]\nkey_digests = [\"{}\"]\n",
            crate::shops::key_digest("k")
        ),
    )
    .unwrap();
    let args = ["payonce-server", "--catalog", catalog.to_str().unwrap(), "--shops-file", shops.to_str().unwrap()];
    let mut config = ServerConfig::parse_from(args);
    config.read_secret_files().unwrap();
    assert_eq!(config.catalog.products().iter().map(|product| product.sku.as_str()).collect::<Vec<_>>(), ["MUG"]);
    assert_eq!(config.shops.signed_in("k").map(|shop| shop.id.as_str()), Some("books"));
    assert!(ServerConfig::defaults().shops.is_empty(), "without a file the shop API is off");
    assert_eq!(ServerConfig::defaults().catalog.products().len(), 4, "the demo shop's catalog.toml");

    std::fs::write(&catalog, std::fs::read_to_string(&catalog).unwrap().replace("8500", "0")).unwrap();
    let error = ServerConfig::parse_from(args).read_secret_files().unwrap_err().to_string();
    assert!(error.contains("--catalog") && error.contains("line 1, product 1 (\"MUG\"): price"), "{error}");
    std::fs::write(&shops, "[[shop]]\nid = \"Books!\"\n").unwrap();
    std::fs::write(&catalog, "").unwrap();
    let error = ServerConfig::parse_from(["payonce-server", "--shops-file", shops.to_str().unwrap()])
        .read_secret_files()
        .unwrap_err()
        .to_string();
    assert!(error.starts_with("--shops-file") && error.contains("missing field"), "{error}");
}

#[test]
fn admin_hosts_are_host_names() {
    assert_eq!(credentials(&["--admin-hosts", "ops.shop.internal,payonce-admin"]), Ok(()));
    for bad in ["ops.shop.internal:3001", "http://ops", "ops..internal", "*.shop"] {
        assert_eq!(credentials(&["--admin-hosts", bad]), Err(ConfigError::InvalidAdminHost(bad.to_owned())), "{bad}");
    }
}

#[test]
fn the_public_url_defaults_to_the_listen_address() {
    let config = ServerConfig::parse_from(["payonce-server", "--listen", "127.0.0.1:4000"]);
    assert_eq!(config.public_base_url(), "http://127.0.0.1:4000");
    let config = ServerConfig::parse_from(["payonce-server", "--public-url", "https://shop.example/"]);
    assert_eq!(config.public_base_url(), "https://shop.example");
}
