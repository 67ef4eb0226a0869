//! The checker finds what it is for: a circle through a re-export and a path
//! in a macro's arguments, an import up a layer, and a module placed in no layer.

use std::path::Path;

use payonce_layers::ImportGraph;

fn fixture(name: &str) -> ImportGraph {
    ImportGraph::of_crate(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)).unwrap()
}

#[test]
fn a_circle_through_a_re_export_is_found() {
    let graph = fixture("circle");
    assert_eq!(graph.circles(), vec![vec!["a".to_owned(), "b::deep".to_owned()]]);
    assert!(graph.imports["c"].contains("a"), "{graph:?}");
    assert!(!graph.imports["c"].contains("b::deep"), "a test's import counts: {graph:?}");
}

#[test]
fn an_import_up_a_layer_and_a_module_in_no_layer_are_found() {
    let graph = fixture("upward");
    assert_eq!(
        graph.upward_imports(&[&["low"], &["high"]]),
        vec!["low (layer 0) imports high (layer 1)".to_owned(), "stray is in no layer".to_owned()]
    );
    assert!(graph.upward_imports(&[&["high"], &["low", "stray"]]).is_empty());
}
