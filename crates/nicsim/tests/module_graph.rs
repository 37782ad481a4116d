//! No import circle between the modules of `crates/nicsim/src`.
//!
//! The test reads every source file of the crate with `syn` and builds the
//! graph "file A names an item that file B defines" (an inline `mod x { .. }`
//! belongs to its file). Then, at every level of the module tree, it looks
//! at the children of one module, each standing for itself and everything
//! under it (`config`, `nic`, `sim`, ... under the crate; `scenario`,
//! `platform`, ... under `config`), and fails on every circle among them,
//! naming the children and, for each edge, a path that makes it.
//!
//! What makes an edge between two files:
//!
//! * a `use` of an item, and a path in code (types, expressions, patterns,
//!   macro arguments) that reaches an item, whether it starts with
//!   `crate::`, `super::`, `self::`, the name of a child module or of a
//!   module that a `use` brought into scope;
//! * a path is followed through re-exports (`pub use x::Y`, `pub use x::*`)
//!   to the file that defines the item: `crate::config::Scenario` is an edge
//!   to `config/scenario.rs`, not to the facade `config/mod.rs`. A `use` of a
//!   module itself (`use crate::nic;`) is no edge: its items are, where they
//!   are named.
//!
//! What makes no circle:
//!
//! * a parent's `mod child;` declaration: it places the child in the tree,
//!   it does not use it;
//! * a child's use of its parent's items (`super::Thing` that the parent
//!   defines), and a parent's use of its child's. A module and the modules
//!   under it are one component seen from outside; its own file is where
//!   the component keeps the vocabulary its parts share (`nic::coalesce`'s
//!   `Coalescer` trait, `config`'s `ConfigError`) and the dispatch over
//!   them. Counting those edges would make every such component a circle.
//!   What a circle is, is two parts that each need the other: siblings (or
//!   whole subtrees) that name each other's items, at any level. The two
//!   circles this test was written for were of that kind:
//!   `config::nic_features` and `config::scenario` under `config`, and
//!   `config` and `nic` under the crate (`nic::multicast::Tree`, now
//!   `crate::tree`).
//! * code under `#[cfg(test)]` (inline test modules, `mod tests;` files):
//!   tests use the modules they test and are used by none; their imports
//!   are not part of the library's structure.
//!
//! [`ALLOWED`] lists the circles the test tolerates, each with its parent,
//! its members and why it is there; it is empty, and an entry that matches
//! no circle fails the test, so a tolerated circle is one that is being
//! taken apart.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// Circles the test tolerates: the parent module, the names of its
/// children in the circle, and why it is there.
const ALLOWED: &[(&str, &[&str], &str)] = &[];

/// A module's absolute path, `["crate", "config", "scenario"]`.
type ModPath = Vec<String>;

/// What a module declares, read before any path is resolved.
#[derive(Default)]
struct Module {
    /// The file that holds it (the module itself, or the file of an inline module).
    file: String,
    /// Items it defines (types, functions, constants, traits, macros).
    defs: BTreeSet<String>,
    /// Those of them that are `pub` (in any scope): what a glob re-exports.
    pub_defs: BTreeSet<String>,
    /// Child modules.
    children: BTreeSet<String>,
    /// Names its module-level `use`s bring in: name → (path as written, `pub`).
    uses: BTreeMap<String, (Vec<String>, bool)>,
    /// Paths of its glob `use`s (`pub use scenario::*`), as written, and
    /// whether they are `pub`.
    globs: Vec<(Vec<String>, bool)>,
}

/// The crate's modules, keyed by absolute path joined with `::`.
#[derive(Default)]
struct Crate {
    modules: BTreeMap<String, Module>,
    /// Parsed files and the module path each holds.
    files: Vec<(ModPath, syn::File)>,
}

fn key(path: &[String]) -> String {
    path.join("::")
}

/// Whether an item carries `#[cfg(test)]`.
fn is_test(attrs: &[syn::Attribute]) -> bool {
    attrs.iter().any(|attr| {
        attr.path().is_ident("cfg") && attr.meta.require_list().is_ok_and(|list| list.tokens.to_string() == "test")
    })
}

fn item_attrs(item: &syn::Item) -> &[syn::Attribute] {
    use syn::Item::*;
    match item {
        Const(i) => &i.attrs,
        Enum(i) => &i.attrs,
        ExternCrate(i) => &i.attrs,
        Fn(i) => &i.attrs,
        ForeignMod(i) => &i.attrs,
        Impl(i) => &i.attrs,
        Macro(i) => &i.attrs,
        Mod(i) => &i.attrs,
        Static(i) => &i.attrs,
        Struct(i) => &i.attrs,
        Trait(i) => &i.attrs,
        TraitAlias(i) => &i.attrs,
        Type(i) => &i.attrs,
        Union(i) => &i.attrs,
        Use(i) => &i.attrs,
        _ => &[],
    }
}

fn item_visibility(item: &syn::Item) -> Option<&syn::Visibility> {
    use syn::Item::*;
    match item {
        Const(i) => Some(&i.vis),
        Enum(i) => Some(&i.vis),
        Fn(i) => Some(&i.vis),
        Static(i) => Some(&i.vis),
        Struct(i) => Some(&i.vis),
        Trait(i) => Some(&i.vis),
        Type(i) => Some(&i.vis),
        Union(i) => Some(&i.vis),
        // A `macro_rules!` is not glob-exported by `pub use`; it has no `pub`.
        _ => None,
    }
}

/// The leaves of a `use` tree: `(name it binds, path)`; a glob binds `*`.
fn use_leaves(tree: &syn::UseTree, prefix: &mut Vec<String>, out: &mut Vec<(String, Vec<String>)>) {
    match tree {
        syn::UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            use_leaves(&p.tree, prefix, out);
            prefix.pop();
        }
        syn::UseTree::Name(n) => {
            let name = n.ident.to_string();
            if name == "self" {
                let bound = prefix.last().cloned().unwrap_or_default();
                out.push((bound, prefix.clone()));
            } else {
                let mut path = prefix.clone();
                path.push(name.clone());
                out.push((name, path));
            }
        }
        syn::UseTree::Rename(r) => {
            let mut path = prefix.clone();
            let name = r.ident.to_string();
            if name != "self" {
                path.push(name);
            }
            out.push((r.rename.to_string(), path));
        }
        syn::UseTree::Glob(_) => out.push(("*".to_string(), prefix.clone())),
        syn::UseTree::Group(g) => {
            for tree in &g.items {
                use_leaves(tree, prefix, out);
            }
        }
    }
}

impl Crate {
    /// Reads the module rooted at `file` (path `module`) and every module it declares.
    fn read(&mut self, file: &Path, module: ModPath) {
        let text = std::fs::read_to_string(file).unwrap_or_else(|err| panic!("{}: {err}", file.display()));
        let parsed = syn::parse_file(&text).unwrap_or_else(|err| panic!("{}: {err}", file.display()));
        // Children of `lib.rs` and `mod.rs` live beside it; those of `x.rs` in `x/`.
        let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        let dir =
            if matches!(stem, "lib" | "mod") { file.parent().unwrap().to_path_buf() } else { file.with_extension("") };
        let file_key = key(&module);
        self.declare(&parsed.items, &module, &file_key, &dir);
        self.files.push((module, parsed));
    }

    fn declare(&mut self, items: &[syn::Item], module: &ModPath, file: &str, dir: &Path) {
        let mut this = Module { file: file.to_string(), ..Module::default() };
        let mut to_read: Vec<(PathBuf, ModPath)> = Vec::new();
        let mut inline: Vec<(&[syn::Item], ModPath, PathBuf)> = Vec::new();
        for item in items {
            if is_test(item_attrs(item)) {
                continue;
            }
            let ident = match item {
                syn::Item::Mod(m) => {
                    let name = m.ident.to_string();
                    this.children.insert(name.clone());
                    let mut child = module.clone();
                    child.push(name.clone());
                    match &m.content {
                        Some((_, items)) => inline.push((items, child, dir.join(&name))),
                        None => {
                            let flat = dir.join(format!("{name}.rs"));
                            let nested = dir.join(&name).join("mod.rs");
                            let path = if flat.exists() { flat } else { nested };
                            to_read.push((path, child));
                        }
                    }
                    continue;
                }
                syn::Item::Use(u) => {
                    let public = !matches!(u.vis, syn::Visibility::Inherited);
                    let mut leaves = Vec::new();
                    use_leaves(&u.tree, &mut Vec::new(), &mut leaves);
                    for (name, path) in leaves {
                        if name == "*" {
                            this.globs.push((path, public));
                        } else {
                            this.uses.insert(name, (path, public));
                        }
                    }
                    continue;
                }
                syn::Item::Const(i) => Some(&i.ident),
                syn::Item::Enum(i) => Some(&i.ident),
                syn::Item::Fn(i) => Some(&i.sig.ident),
                syn::Item::Macro(i) => i.ident.as_ref(),
                syn::Item::Static(i) => Some(&i.ident),
                syn::Item::Struct(i) => Some(&i.ident),
                syn::Item::Trait(i) => Some(&i.ident),
                syn::Item::Type(i) => Some(&i.ident),
                syn::Item::Union(i) => Some(&i.ident),
                _ => None,
            };
            if let Some(ident) = ident {
                this.defs.insert(ident.to_string());
                if !matches!(item_visibility(item), Some(syn::Visibility::Inherited)) {
                    this.pub_defs.insert(ident.to_string());
                }
            }
        }
        self.modules.insert(key(module), this);
        for (items, child, child_dir) in inline {
            self.declare(items, &child, file, &child_dir);
        }
        for (path, child) in to_read {
            self.read(&path, child);
        }
    }

    /// Turns a path written in module `ctx` into an absolute one, or `None`
    /// when it names something outside the crate or local to `ctx`.
    fn absolute(&self, ctx: &[String], path: &[String], depth: usize) -> Option<ModPath> {
        let first = path.first()?;
        if depth > 16 {
            return None;
        }
        let here = self.modules.get(&key(ctx))?;
        let mut out: ModPath = match first.as_str() {
            "crate" => vec!["crate".to_string()],
            "self" => ctx.to_vec(),
            "super" => {
                let mut out = ctx.to_vec();
                let mut rest = path;
                while rest.first().is_some_and(|s| s == "super") {
                    out.pop();
                    rest = &rest[1..];
                }
                out.extend(rest.iter().cloned());
                return Some(out);
            }
            name if here.children.contains(name) => ctx.to_vec(),
            name if here.defs.contains(name) => return None,
            name => {
                if let Some((target, _)) = here.uses.get(name) {
                    let mut out = self.absolute(ctx, target, depth + 1)?;
                    out.extend(path[1..].iter().cloned());
                    return Some(out);
                }
                for (glob, _) in &here.globs {
                    let Some(mut out) = self.absolute(ctx, glob, depth + 1) else {
                        continue;
                    };
                    if self.offers(&out, name, depth + 1) {
                        out.extend(path.iter().cloned());
                        return Some(out);
                    }
                }
                return None;
            }
        };
        let skip = usize::from(matches!(first.as_str(), "crate" | "self"));
        out.extend(path[skip..].iter().cloned());
        Some(out)
    }

    /// Whether a glob import of module `module` brings in `name`: one of its
    /// `pub` items or `pub use`s, or of the modules it glob-re-exports.
    fn offers(&self, module: &[String], name: &str, depth: usize) -> bool {
        let Some(m) = self.modules.get(&key(module)) else {
            return false;
        };
        if depth > 16 {
            return false;
        }
        m.pub_defs.contains(name)
            || m.uses.get(name).is_some_and(|(_, public)| *public)
            || m.globs.iter().any(|(glob, public)| {
                *public && self.absolute(module, glob, depth + 1).is_some_and(|g| self.offers(&g, name, depth + 1))
            })
    }

    /// The file that defines what an absolute path names, following
    /// re-exports; `None` for a path that names a module itself.
    fn defining_file(&self, path: &[String], depth: usize) -> Option<String> {
        if depth > 16 {
            return None;
        }
        let mut module: ModPath = vec!["crate".to_string()];
        let mut i = 1;
        while i < path.len() {
            let mut next = module.clone();
            next.push(path[i].clone());
            if !self.modules.contains_key(&key(&next)) {
                break;
            }
            module = next;
            i += 1;
        }
        let m = self.modules.get(&key(&module))?;
        let name = path.get(i)?;
        if m.defs.contains(name) {
            return Some(m.file.clone());
        }
        if let Some((target, _)) = m.uses.get(name) {
            if let Some(mut out) = self.absolute(&module, target, depth + 1) {
                out.extend(path[i + 1..].iter().cloned());
                return self.defining_file(&out, depth + 1);
            }
        }
        for (glob, _) in &m.globs {
            if let Some(mut out) = self.absolute(&module, glob, depth + 1) {
                if self.offers(&out, name, depth + 1) {
                    out.extend(path[i..].iter().cloned());
                    return self.defining_file(&out, depth + 1);
                }
            }
        }
        // Made by a macro, or an item the reading above does not know: the module's file.
        Some(m.file.clone())
    }
}

/// Edges between files, each with one path that makes it.
type Edges = BTreeMap<String, BTreeMap<String, String>>;

/// Collects the paths of one file and turns them into edges.
struct Paths<'a> {
    krate: &'a Crate,
    ctx: ModPath,
    file: String,
    edges: &'a mut Edges,
}

impl Paths<'_> {
    fn reference(&mut self, path: &[String]) {
        let Some(abs) = self.krate.absolute(&self.ctx, path, 0) else {
            return;
        };
        let Some(target) = self.krate.defining_file(&abs, 0) else {
            return;
        };
        if target != self.file {
            self.edges.entry(self.file.clone()).or_default().entry(target).or_insert_with(|| path.join("::"));
        }
    }

    /// Paths written inside a macro's arguments: `a::b::c` sequences of tokens.
    fn scan(&mut self, tokens: TokenStream) {
        let mut chain: Vec<String> = Vec::new();
        let mut colons = 0;
        for token in tokens {
            match token {
                TokenTree::Ident(ident) => {
                    if colons != 2 && chain.len() > 1 {
                        let done = std::mem::take(&mut chain);
                        self.reference(&done);
                    }
                    if colons != 2 {
                        chain.clear();
                    }
                    chain.push(ident.to_string());
                    colons = 0;
                }
                TokenTree::Punct(p) if p.as_char() == ':' && !chain.is_empty() => colons += 1,
                other => {
                    if chain.len() > 1 {
                        let done = std::mem::take(&mut chain);
                        self.reference(&done);
                    }
                    chain.clear();
                    colons = 0;
                    if let TokenTree::Group(group) = other {
                        self.scan(group.stream());
                    }
                }
            }
        }
        if chain.len() > 1 {
            self.reference(&chain);
        }
    }
}

impl<'ast> Visit<'ast> for Paths<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        if !is_test(item_attrs(item)) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_impl_item_fn(&mut self, item: &'ast syn::ImplItemFn) {
        if !is_test(&item.attrs) {
            syn::visit::visit_impl_item_fn(self, item);
        }
    }

    fn visit_item_mod(&mut self, item: &'ast syn::ItemMod) {
        // A `mod x;` file is read as its own file; a declaration is no edge.
        if let Some((_, items)) = &item.content {
            self.ctx.push(item.ident.to_string());
            for item in items {
                self.visit_item(item);
            }
            self.ctx.pop();
        }
    }

    fn visit_item_use(&mut self, item: &'ast syn::ItemUse) {
        let mut leaves = Vec::new();
        use_leaves(&item.tree, &mut Vec::new(), &mut leaves);
        for (name, path) in leaves {
            if name != "*" {
                self.reference(&path);
            }
        }
    }

    fn visit_path(&mut self, path: &'ast syn::Path) {
        let segments: Vec<String> = path.segments.iter().map(|s| s.ident.to_string()).collect();
        self.reference(&segments);
        syn::visit::visit_path(self, path);
    }

    fn visit_macro(&mut self, mac: &'ast syn::Macro) {
        self.visit_path(&mac.path);
        self.scan(mac.tokens.clone());
    }
}

/// The crate's file graph, read from `src_dir`.
fn graph(src_dir: &Path) -> Edges {
    let mut krate = Crate::default();
    krate.read(&src_dir.join("lib.rs"), vec!["crate".to_string()]);
    let mut edges = Edges::new();
    let files = std::mem::take(&mut krate.files);
    for (module, file) in &files {
        let mut paths = Paths { krate: &krate, ctx: module.clone(), file: key(module), edges: &mut edges };
        for item in &file.items {
            paths.visit_item(item);
        }
    }
    edges
}

/// Strongly connected components of more than one node (Tarjan).
fn circles(edges: &Edges) -> Vec<BTreeSet<String>> {
    struct State<'a> {
        edges: &'a Edges,
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        stack: Vec<&'a str>,
        on_stack: BTreeSet<&'a str>,
        found: Vec<BTreeSet<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a str) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on_stack.insert(v);
        if let Some(next) = s.edges.get(v) {
            for w in next.keys() {
                let w = w.as_str();
                if !s.index.contains_key(w) {
                    visit(s, w);
                    let low = s.low[v].min(s.low[w]);
                    s.low.insert(v, low);
                } else if s.on_stack.contains(w) {
                    let low = s.low[v].min(s.index[w]);
                    s.low.insert(v, low);
                }
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = BTreeSet::new();
            loop {
                let w = s.stack.pop().unwrap();
                s.on_stack.remove(w);
                component.insert(w.to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                s.found.push(component);
            }
        }
    }
    let mut s = State {
        edges,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on_stack: BTreeSet::new(),
        found: Vec::new(),
    };
    for v in edges.keys() {
        if !s.index.contains_key(v.as_str()) {
            visit(&mut s, v);
        }
    }
    s.found
}

/// The levels of the module tree: for each module with children, the graph
/// between its children, each standing for itself and everything under it.
///
/// A file edge `a -> b` is an edge between the two children of their lowest
/// common ancestor that hold them; none when one of `a` and `b` is an
/// ancestor of the other (a parent and its own descendants).
fn levels(files: &Edges) -> BTreeMap<String, Edges> {
    let mut levels: BTreeMap<String, Edges> = BTreeMap::new();
    for (from, targets) in files {
        for (to, path) in targets {
            let a: Vec<&str> = from.split("::").collect();
            let b: Vec<&str> = to.split("::").collect();
            let common = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
            if common == a.len() || common == b.len() {
                continue;
            }
            let parent = a[..common].join("::");
            let (ca, cb) = (a[..=common].join("::"), b[..=common].join("::"));
            let witness =
                if (&ca, &cb) == (from, to) { format!("`{path}`") } else { format!("{from} -> {to}: `{path}`") };
            levels.entry(parent).or_default().entry(ca).or_default().entry(cb).or_insert(witness);
        }
    }
    levels
}

fn describe(parent: &str, edges: &Edges, component: &BTreeSet<String>) -> String {
    let names: Vec<&str> = component.iter().map(|c| c.rsplit("::").next().unwrap_or(c)).collect();
    let mut text = format!("circle in {parent}: {}", names.join(", "));
    for from in component {
        for (to, witness) in edges.get(from).into_iter().flatten() {
            if component.contains(to) {
                let _ = write!(text, "\n    {from} -> {to}: {witness}");
            }
        }
    }
    text
}

fn src_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every circle of the crate: (parent, its children in the circle).
fn all_circles(files: &Edges) -> Vec<(String, BTreeSet<String>, String)> {
    let mut found = Vec::new();
    for (parent, edges) in levels(files) {
        for component in circles(&edges) {
            let text = describe(&parent, &edges, &component);
            found.push((parent.clone(), component, text));
        }
    }
    found
}

#[test]
fn the_crate_has_no_import_circle() {
    let found = all_circles(&graph(&src_dir()));
    let mut problems = Vec::new();
    for (parent, component, text) in &found {
        let allowed = ALLOWED.iter().any(|(p, members, _)| {
            p == parent && members.iter().map(|m| format!("{parent}::{m}")).collect::<BTreeSet<_>>() == *component
        });
        if !allowed {
            problems.push(text.clone());
        }
    }
    for (parent, members, why) in ALLOWED {
        let set: BTreeSet<String> = members.iter().map(|m| format!("{parent}::{m}")).collect();
        if !found.iter().any(|(p, c, _)| p == parent && *c == set) {
            problems.push(format!(
                "ALLOWED lists a circle in {parent} of {members:?} that is not there (any more, or not \
                 as listed; {why}): update the entry or remove it"
            ));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_graph_sees_the_edges_it_should() {
    let files = graph(&src_dir());
    let has = |from: &str, to: &str| files.get(from).is_some_and(|e| e.contains_key(to));
    // Through the facade `config/mod.rs` to the file that defines `Scenario`.
    assert!(has("crate::sim::build", "crate::config::scenario"), "{files:#?}");
    // A path in code, not a `use`: `crate::workload::nas_is_work(..)`.
    assert!(has("crate::config::workload_check", "crate::workload::nas"));
    // A parent's `mod child;` declaration is no edge by itself.
    assert!(!has("crate", "crate::sim::build"));
    // A child's use of its parent's item is a file edge, but no edge of any level.
    assert!(has("crate::nic::coalesce::timeout", "crate::nic::coalesce"));
    let levels = levels(&files);
    assert!(!levels.get("crate::nic").is_some_and(|e| e.contains_key("crate::nic::coalesce::timeout")));
    // Files under a child count for the child: `config` names `time`.
    assert!(levels["crate"]["crate::config"].contains_key("crate::time"));
}

#[test]
fn a_circle_is_found_at_the_level_where_it_closes() {
    let mut files = Edges::new();
    for (from, to) in [
        ("crate::a::x", "crate::b::y"),
        ("crate::b::y", "crate::c"),
        ("crate::c", "crate::a"),
        ("crate::c", "crate::d"),
        ("crate::a::x", "crate::a"),
        ("crate::a", "crate::a::x"),
    ] {
        files.entry(from.to_string()).or_default().insert(to.to_string(), String::new());
    }
    let found: Vec<(String, BTreeSet<String>)> = all_circles(&files).into_iter().map(|(p, c, _)| (p, c)).collect();
    let members: BTreeSet<String> = ["crate::a", "crate::b", "crate::c"].iter().map(|s| s.to_string()).collect();
    assert_eq!(found, vec![("crate".to_string(), members)]);
}
