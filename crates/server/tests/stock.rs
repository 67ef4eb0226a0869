//! A product's stock from the catalog file: units are held from the moment a
//! payment is stored until it fails, so the last unit is sold once, a payment
//! that would pass the stock is refused before it reaches the PG, and a
//! failed payment gives its units back.

use crate::support;

use payonce_api::CreatedOrder;
use payonce_server::catalog::{Catalog, Format};
use reqwest::StatusCode;
use serde_json::{Value, json};
use support::{FakePg, Server};

/// A catalog of one mug, `stock` of them.
fn catalog(stock: u32) -> Catalog {
    let text = format!(
        "[[product]]\nsku = \"MUG\"\nname = \"Mug\"\nname_ko = \"머그\"\ndescription = \"A mug.\"\n\
         description_ko = \"머그.\"\nprice = 8500\nstock = {stock}\n"
    );
    Catalog::parse(&text, Format::Toml).unwrap()
}

async fn start(stock: u32) -> (FakePg, Server) {
    let pg = FakePg::start().await;
    let server = Server::start_with(&pg.url, |config| config.catalog = catalog(stock)).await;
    (pg, server)
}

/// A new customer's order of `quantity` mugs: the order, or the refusal's status and body.
async fn order(server: &Server, quantity: u32) -> Result<(reqwest::Client, CreatedOrder), (StatusCode, Value)> {
    let customer = server.other_customer();
    let response = customer
        .post(format!("{}/api/orders", server.url))
        .json(&json!({"items": [{"sku": "MUG", "quantity": quantity}]}))
        .send()
        .await
        .unwrap();
    match response.status() {
        StatusCode::CREATED => Ok((customer, response.json().await.unwrap())),
        status => Err((status, response.json().await.unwrap())),
    }
}

/// The customer's confirm of their order; the answer's status and body.
async fn pay(server: &Server, customer: &reqwest::Client, created: &CreatedOrder) -> (StatusCode, Value) {
    let response = customer
        .post(format!("{}/api/orders/{}/confirm", server.url, created.order.order_id))
        .header("Idempotency-Key", uuid::Uuid::new_v4().to_string())
        .json(&json!({"payment_key": support::payment_key_for(&created.order), "amount": created.order.amount}))
        .send()
        .await
        .unwrap();
    (response.status(), response.json().await.unwrap())
}

#[tokio::test]
async fn what_is_paid_for_is_gone_and_a_cart_over_what_is_left_is_refused() {
    let (_pg, server) = start(3).await;
    let (customer, created) = order(&server, 2).await.unwrap();
    assert_eq!(pay(&server, &customer, &created).await.1["status"], "PAID");
    let (status, refused) = order(&server, 2).await.expect_err("only one mug is left");
    assert_eq!((status, refused["code"].as_str()), (StatusCode::CONFLICT, Some("OUT_OF_STOCK")), "{refused}");
    assert!(order(&server, 1).await.is_ok(), "the last one can still be ordered");
}

#[tokio::test]
async fn the_last_unit_is_sold_once_and_the_second_payment_never_reaches_the_pg() {
    let (pg, server) = start(1).await;
    // Both ordered while nothing was held: the payments decide.
    let (first, first_order) = order(&server, 1).await.unwrap();
    let (second, second_order) = order(&server, 1).await.unwrap();
    assert_eq!(pay(&server, &first, &first_order).await.1["status"], "PAID");
    let (status, failed) = pay(&server, &second, &second_order).await;
    assert_eq!((status, failed["status"].as_str()), (StatusCode::OK, Some("FAILED")), "{failed}");
    assert_eq!(failed["failure"]["code"], "OUT_OF_STOCK");
    assert_eq!(pg.charges(&second_order.order.order_id).await, 0);
    assert_eq!(pg.stats().await.confirm_requests, 1, "the refused payment was never sent");
}

#[tokio::test]
async fn a_failed_payment_gives_its_units_back() {
    let (pg, server) = start(1).await;
    let (declined_customer, declined) = order(&server, 1).await.unwrap();
    pg.configure(json!({"faults": {"decline": 1.0}})).await;
    let (_, failed) = pay(&server, &declined_customer, &declined).await;
    assert_eq!(
        (failed["status"].as_str(), failed["failure"]["code"].as_str()),
        (Some("FAILED"), Some("REJECT_CARD_PAYMENT")),
        "{failed}"
    );
    pg.configure(json!({"faults": {"decline": 0.0}})).await;
    let (customer, created) = order(&server, 1).await.expect("the declined payment held nothing");
    let (_, paid) = pay(&server, &customer, &created).await;
    assert_eq!(paid["status"], "PAID", "{paid}");
}

#[tokio::test]
async fn customers_paying_for_the_last_unit_at_once_are_charged_once_in_all() {
    let (pg, server) = start(1).await;
    let mut orders = Vec::new();
    for _ in 0..6 {
        orders.push(order(&server, 1).await.unwrap());
    }
    let answers =
        futures::future::join_all(orders.iter().map(|(customer, created)| pay(&server, customer, created))).await;
    let statuses: Vec<&str> = answers.iter().map(|(_, body)| body["status"].as_str().unwrap_or("?")).collect();
    assert_eq!(statuses.iter().filter(|status| **status == "PAID").count(), 1, "{statuses:?}");
    assert_eq!(statuses.iter().filter(|status| **status == "FAILED").count(), 5, "{statuses:?}");
    let charged: u64 = futures::future::join_all(orders.iter().map(|(_, created)| pg.charges(&created.order.order_id)))
        .await
        .into_iter()
        .sum();
    assert_eq!(charged, 1);
}
