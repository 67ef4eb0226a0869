//! The import graph of a crate's own modules, file by file, read from its
//! sources with `syn`: which file names an item of which other file, through
//! `use` or a path in code, following `pub use` re-exports to the file that
//! defines the item. Tests (`#[cfg(test)]`) are left out: they may reach
//! anywhere. From the graph: the import circles, and the imports that go from a
//! lower layer to a higher one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use petgraph::algo::tarjan_scc;
use petgraph::graphmap::DiGraphMap;
use syn::visit::Visit;

/// A module's path inside its crate: `[]` for the crate root, `["pg", "client"]` for `pg/client.rs`.
type ModulePath = Vec<String>;

/// The parsed sources, by module.
type Modules = BTreeMap<ModulePath, syn::File>;

/// The files of a crate and which of them each one imports.
#[derive(Debug, Default)]
pub struct ImportGraph {
    /// Module path (`pg::client`, `` for the root) -> the modules it imports.
    pub imports: BTreeMap<String, BTreeSet<String>>,
}

/// Why a crate's sources could not be read.
#[derive(Debug)]
pub struct ReadError(pub String);

impl ImportGraph {
    /// Reads every `.rs` file under `src` (a library's `src/`; `main.rs` and
    /// `bin/` are programs on top of it and are left out).
    pub fn of_crate(src: &Path) -> Result<Self, ReadError> {
        let modules = read_modules(src)?;
        let mut graph = ImportGraph::default();
        for (path, module) in &modules {
            let mut collector = Collector { here: path.clone(), modules: &modules, found: BTreeSet::new() };
            collector.visit_file(module);
            let name = path.join("::");
            let found = collector.found.into_iter().filter(|target| *target != name).collect();
            graph.imports.insert(name, found);
        }
        Ok(graph)
    }

    /// Every circle: each set of two or more modules that import one another, sorted.
    pub fn circles(&self) -> Vec<Vec<String>> {
        let mut graph = DiGraphMap::<&str, ()>::new();
        for (from, targets) in &self.imports {
            graph.add_node(from.as_str());
            for to in targets {
                graph.add_edge(from.as_str(), to.as_str(), ());
            }
        }
        let mut circles: Vec<Vec<String>> = tarjan_scc(&graph)
            .into_iter()
            .filter(|component| component.len() > 1)
            .map(|component| {
                let mut names: Vec<String> = component.into_iter().map(str::to_owned).collect();
                names.sort();
                names
            })
            .collect();
        circles.sort();
        circles
    }

    /// Every import from a module of a lower layer to one of a higher layer.
    /// `layers` lists each layer's top-level modules, lowest first; the crate
    /// root is above them all. A top-level module that no layer names is itself
    /// reported, so a new module must be placed.
    pub fn upward_imports(&self, layers: &[&[&str]]) -> Vec<String> {
        let layer_of = |module: &str| -> Option<usize> {
            if module.is_empty() {
                return Some(layers.len());
            }
            let top = module.split("::").next().unwrap_or(module);
            layers.iter().position(|layer| layer.contains(&top))
        };
        let mut found = Vec::new();
        for (from, targets) in &self.imports {
            let Some(from_layer) = layer_of(from) else {
                found.push(format!("{from} is in no layer"));
                continue;
            };
            for to in targets {
                match layer_of(to) {
                    Some(to_layer) if to_layer > from_layer => {
                        found.push(format!("{from} (layer {from_layer}) imports {to} (layer {to_layer})"));
                    }
                    _ => {}
                }
            }
        }
        found
    }
}

fn read_modules(src: &Path) -> Result<Modules, ReadError> {
    let mut modules = BTreeMap::new();
    for entry in walkdir::WalkDir::new(src).sort_by_file_name() {
        let entry = entry.map_err(|error| ReadError(format!("{}: {error}", src.display())))?;
        let file = entry.path();
        if file.extension().is_none_or(|extension| extension != "rs") {
            continue;
        }
        let relative = file.strip_prefix(src).expect("walkdir stays under its root");
        let Some(path) = module_path(relative) else { continue };
        let text = std::fs::read_to_string(file).map_err(|error| ReadError(format!("{}: {error}", file.display())))?;
        let syntax = syn::parse_file(&text).map_err(|error| ReadError(format!("{}: {error}", file.display())))?;
        modules.insert(path, syntax);
    }
    Ok(modules)
}

/// `lib.rs` -> the root, `a/mod.rs` and `a.rs` -> `a`, `a/b.rs` -> `a::b`; programs
/// (`main.rs`, `bin/`) -> none.
fn module_path(relative: &Path) -> Option<ModulePath> {
    let mut parts: Vec<String> =
        relative.iter().map(|part| part.to_string_lossy().trim_end_matches(".rs").to_owned()).collect();
    if let Some("main" | "bin") = parts.first().map(String::as_str) {
        return None;
    }
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    Some(parts)
}

/// Walks one file, recording the modules its paths name.
struct Collector<'a> {
    here: ModulePath,
    modules: &'a Modules,
    found: BTreeSet<String>,
}

impl Collector<'_> {
    /// Resolves a path as written in this file (`crate::a::B`, `super::b`, or a
    /// child module's name) to the module that defines what it names.
    fn record(&mut self, segments: &[String]) {
        let Some(absolute) = absolute(&self.here, segments, self.modules) else { return };
        if let Some(module) = defining_module(&absolute, self.modules, 0) {
            self.found.insert(module.join("::"));
        }
    }
}

/// The path from the crate root, or `None` for a path outside the crate (`std`, another crate, a local name).
fn absolute(here: &[String], segments: &[String], modules: &Modules) -> Option<ModulePath> {
    let (first, rest) = segments.split_first()?;
    match first.as_str() {
        "crate" => Some(rest.to_vec()),
        "self" => Some(here.iter().chain(rest).cloned().collect()),
        "super" => {
            let mut base = here.to_vec();
            let mut rest = segments;
            while rest.first().is_some_and(|segment| segment == "super") {
                base.pop()?;
                rest = &rest[1..];
            }
            Some(base.into_iter().chain(rest.iter().cloned()).collect())
        }
        _ => {
            // A child module named directly (`mod a; use a::B;`, or `a::f()`).
            let child: ModulePath = here.iter().chain([first]).cloned().collect();
            modules.contains_key(&child).then(|| here.iter().chain(segments).cloned().collect())
        }
    }
}

/// The longest prefix of `path` that is a module; when what follows names an
/// item that module re-exports (`pub use b::Item`), the module it comes from.
fn defining_module(path: &[String], modules: &Modules, depth: usize) -> Option<ModulePath> {
    let length = (0..=path.len()).rev().find(|&length| modules.contains_key(&path[..length]))?;
    let module = path[..length].to_vec();
    let Some(item) = path.get(length) else { return Some(module) };
    if depth < 8
        && let Some(target) = re_export(&modules[&module], &module, item, modules)
    {
        return defining_module(&target, modules, depth + 1).or(Some(module));
    }
    Some(module)
}

/// Where `module` re-exports `item` from, as a path from the root, if it does.
fn re_export(syntax: &syn::File, module: &[String], item: &str, modules: &Modules) -> Option<ModulePath> {
    for declared in &syntax.items {
        let syn::Item::Use(use_item) = declared else { continue };
        if matches!(use_item.vis, syn::Visibility::Inherited) || is_test_only(&use_item.attrs) {
            continue;
        }
        for (segments, name) in use_paths(&use_item.tree) {
            if name == item {
                return absolute(module, &segments, modules);
            }
        }
    }
    None
}

/// Every path a `use` tree brings in, with the name it is known by here.
fn use_paths(tree: &syn::UseTree) -> Vec<(Vec<String>, String)> {
    fn walk(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
        match tree {
            syn::UseTree::Path(path) => {
                prefix.push(path.ident.to_string());
                walk(&path.tree, prefix, out);
                prefix.pop();
            }
            syn::UseTree::Name(name) => {
                let ident = name.ident.to_string();
                let mut full = prefix.clone();
                if ident != "self" {
                    full.push(ident.clone());
                }
                let known_as = if ident == "self" { prefix.last().cloned().unwrap_or_default() } else { ident };
                out.push((full, known_as));
            }
            syn::UseTree::Rename(rename) => {
                let mut full = prefix.clone();
                full.push(rename.ident.to_string());
                out.push((full, rename.rename.to_string()));
            }
            syn::UseTree::Glob(_) => out.push((prefix.clone(), "*".to_owned())),
            syn::UseTree::Group(group) => {
                for tree in &group.items {
                    walk(tree, prefix, out);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(tree, &mut Vec::new(), &mut out);
    out
}

fn is_test_only(attributes: &[syn::Attribute]) -> bool {
    attributes.iter().any(|attribute| {
        attribute.path().is_ident("cfg")
            && attribute.parse_args::<syn::Meta>().is_ok_and(|meta| meta.path().is_ident("test"))
    })
}

impl<'ast> Visit<'ast> for Collector<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attributes = match item {
            syn::Item::Mod(module) => &module.attrs,
            syn::Item::Fn(function) => &function.attrs,
            syn::Item::Impl(block) => &block.attrs,
            syn::Item::Use(use_item) => &use_item.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if !is_test_only(attributes) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_item_use(&mut self, use_item: &'ast syn::ItemUse) {
        // A module's `pub use` of its own submodules is its facade, not a
        // dependency: what reaches an item through it is led to the submodule.
        let facade = !matches!(use_item.vis, syn::Visibility::Inherited);
        for (segments, _) in use_paths(&use_item.tree) {
            let inward = absolute(&self.here, &segments, self.modules)
                .is_some_and(|path| path.len() > self.here.len() && path.starts_with(&self.here));
            if !(facade && inward) {
                self.record(&segments);
            }
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|segment| segment.ident.to_string()).collect();
        // One segment in code is a local name or an item of this module, never
        // another module (`info!(budget = ..)` names a field, not `mod budget`).
        if segments.len() > 1 {
            self.record(&segments);
        }
        syn::visit::visit_path(self, path);
    }

    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {
        // `pub(crate)` and `pub(in path)` name where an item is seen, not what it uses.
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        // A body of comma-separated expressions (`format!`, `info!`, `vec!`) is
        // read as code; other bodies (`select!`) are tokens, and their paths unseen.
        let parser = syn::punctuated::Punctuated::<syn::Expr, syn::Token![,]>::parse_terminated;
        if let Ok(expressions) = mac.parse_body_with(parser) {
            for expression in &expressions {
                self.visit_expr(expression);
            }
        }
    }
}
