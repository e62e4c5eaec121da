//! Topologies as plain data ([`GraphKind`], the boundary to configs and the command line) and
//! built graphs ([`Topology`]: the enum at the edge, matched once per run before the generic
//! hot loop).
//!
//! Every family is declared once in [`TOPOLOGIES`] with typed parameters (the core
//! registry's [`ParamDef`]s, checked by [`ParamList`]), which configs, `--graph` and
//! `ballast list` read. A topology is written as a shorthand, its parameter values
//! positional in declaration order (`torus:3`, `gnp:0.1:connected`) or named
//! (`torus:dim=3`, `gnp:p=0.1,connectivity=connected`), or as a config table
//! (`graph = { kind = "torus", dim = 3 }`).

use std::f64::consts::PI;
use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use ballast_core::engine::Observer;
use ballast_core::registry::{
    did_you_mean, Args, ParamDef, ParamDefault, ParamError, ParamList, ParamType, ParamValue,
};
use ballast_core::{RunOutcome, RunSpec};
use rand::RngCore;

use crate::analysis::{
    components, degree_stats, is_bipartite, spectral_gap, DegreeStats, PowerIteration,
    SpectralEstimate,
};
use crate::generate::{
    erdos_renyi, hypercube_dim, random_regular, star, torus_side, Connectivity, RegularParams,
};
use crate::graph::{Complete, Csr, Graph};
use crate::io::{read_edge_list, EdgeListOptions};
use crate::lattice::{Hypercube, Torus};
use crate::process::{simulate_graph_observed, GraphOptions};
use crate::Error;

/// Parameter values by name, as a front end read them (unchecked against each other).
pub type TopologyParams = Vec<(&'static str, ParamValue)>;

/// One topology family as written in a config (`graph = "…"` or `graph = { kind = "…", … }`)
/// or after `--graph`: the declaration that the parsers, their messages, `ballast list` and
/// the docs read.
#[derive(Debug)]
pub struct TopologyDef {
    /// The family's name, the part before the first `:` (the `kind` of a config table).
    pub name: &'static str,
    /// One-line meaning, with the vertex counts it accepts.
    pub doc: &'static str,
    /// Its parameters, in the order of the shorthand's positional values.
    pub params: &'static [ParamDef],
    /// A shorthand of a typical instance (tests parse every one).
    pub example: &'static str,
    /// Builds the family from checked parameters.
    pub make: fn(&Args) -> GraphKind,
}

impl TopologyDef {
    /// Its parameters with the shared checks and messages (`unknown parameter `x` for
    /// topology `torus``, …).
    pub fn list(&self) -> ParamList {
        ParamList { what: "topology", name: self.name, params: self.params }
    }

    /// The positional shorthand with placeholders, optional values in brackets
    /// (`torus[:DIM]`, `gnp:P[:CONNECTIVITY]`).
    pub fn form(&self) -> String {
        let mut s = self.name.to_owned();
        for p in self.params {
            let slot = format!(":{}", p.name.to_uppercase());
            if p.default == ParamDefault::Required {
                s.push_str(&slot);
            } else {
                s.push_str(&format!("[{slot}]"));
            }
        }
        s
    }

    /// Checks `given` (names, types, ranges; defaults for the rest) and builds the family.
    pub fn build(&self, given: &[(&str, ParamValue)]) -> Result<GraphKind, ParamError> {
        Ok((self.make)(&self.list().args(given)?))
    }

    /// Reads the values after `name:` in a shorthand: positional (`3`, `0.1:connected`, in
    /// the order of [`TopologyDef::params`]; a text parameter that comes last takes the rest,
    /// colons included) or named (`dim=3`, `p=0.1,connectivity=connected`).
    pub fn parse_values(&self, rest: &str) -> Result<TopologyParams, ParamError> {
        let list = self.list();
        let mut given = Vec::new();
        if rest.is_empty() {
            return Ok(given);
        }
        // Named when the text before the first `=` is a name (a path such as `a/b=c` is a
        // positional value).
        let named = rest.split_once('=').is_some_and(|(k, _)| {
            !k.is_empty() && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        });
        if named {
            for pair in rest.split(',') {
                let (k, v) = pair.split_once('=').ok_or_else(|| {
                    ParamError::at(
                        self.name,
                        format!(
                            "topology `{}`: `{pair}` is not `name=value` (write every value \
                             named, or every value positional: {}); allowed parameters: {}",
                            self.name,
                            self.form(),
                            list.allowed_params()
                        ),
                    )
                })?;
                let def = list.param(k.trim())?;
                given.push((def.name, list.parse_value(def, v)?));
            }
            return Ok(given);
        }
        let mut values: Vec<String> = rest.split(':').map(str::to_owned).collect();
        let last_is_text = self.params.last().is_some_and(|p| p.ty == ParamType::Text);
        if last_is_text && values.len() > self.params.len() {
            // A trailing text (a path) keeps its colons.
            let tail = values.split_off(self.params.len() - 1).join(":");
            values.push(tail);
        }
        if values.len() > self.params.len() {
            let most = match self.params.len() {
                0 => "no values".to_owned(),
                1 => "at most 1 value".to_owned(),
                k => format!("at most {k} values"),
            };
            return Err(ParamError::at(
                self.name,
                format!(
                    "topology `{}` takes {most} ({}), got {} in `{}:{rest}`; allowed \
                     parameters: {}",
                    self.name,
                    self.form(),
                    values.len(),
                    self.name,
                    list.allowed_params()
                ),
            ));
        }
        for (def, v) in self.params.iter().zip(&values) {
            given.push((def.name, list.parse_value(def, v)?));
        }
        Ok(given)
    }
}

fn make_complete(_: &Args) -> GraphKind {
    GraphKind::Complete
}

fn make_cycle(_: &Args) -> GraphKind {
    GraphKind::Cycle
}

fn make_torus(a: &Args) -> GraphKind {
    GraphKind::Torus { dim: a.int("dim") as usize }
}

fn make_hypercube(_: &Args) -> GraphKind {
    GraphKind::Hypercube
}

fn make_star(_: &Args) -> GraphKind {
    GraphKind::Star
}

fn make_regular(a: &Args) -> GraphKind {
    GraphKind::RandomRegular { d: a.int("d") as usize, max_attempts: REGULAR_ATTEMPTS }
}

fn make_gnp(a: &Args) -> GraphKind {
    let connectivity = match a.text("connectivity") {
        Some("connected") => Connectivity::Resample { max_attempts: CONNECTED_ATTEMPTS },
        _ => Connectivity::GiantComponent,
    };
    GraphKind::ErdosRenyi { p: a.num("p"), connectivity }
}

fn make_file(a: &Args) -> GraphKind {
    GraphKind::File {
        path: PathBuf::from(a.text("path").unwrap_or_default()),
        options: EdgeListOptions::default(),
    }
}

/// Every topology family, in display order.
pub static TOPOLOGIES: &[TopologyDef] = &[
    TopologyDef {
        name: "complete",
        doc: "the complete graph K_n (implicit; the graphical process is the classical one)",
        params: &[],
        example: "complete",
        make: make_complete,
    },
    TopologyDef {
        name: "cycle",
        doc: "the cycle C_n, n >= 3",
        params: &[],
        example: "cycle",
        make: make_cycle,
    },
    TopologyDef {
        name: "torus",
        doc: "the DIM-dimensional torus: n a perfect DIM-th power, side >= 3",
        params: &[ParamDef::new(
            "dim",
            ParamType::Int { lo: 1, hi: 32 },
            ParamDefault::Num(2.0),
            "number of dimensions",
        )],
        example: "torus:3",
        make: make_torus,
    },
    TopologyDef {
        name: "hypercube",
        doc: "the hypercube: n a power of two",
        params: &[],
        example: "hypercube",
        make: make_hypercube,
    },
    TopologyDef {
        name: "star",
        doc: "the star K_{1,n-1}, centre 0",
        params: &[],
        example: "star",
        make: make_star,
    },
    TopologyDef {
        name: "regular",
        doc: "a uniform random simple D-regular graph (configuration model with rejection)",
        params: &[ParamDef::new(
            "d",
            ParamType::Int { lo: 1, hi: u32::MAX },
            ParamDefault::Required,
            "degree: 1 <= d < n, n·d even",
        )],
        example: "regular:4",
        make: make_regular,
    },
    TopologyDef {
        name: "gnp",
        doc: "Erdős–Rényi G(n, P): its giant component, or resampled until connected",
        params: &[
            ParamDef::new("p", ParamType::Unit, ParamDefault::Required, "edge probability"),
            ParamDef::new(
                "connectivity",
                ParamType::Choice(&["giant", "connected"]),
                ParamDefault::Text("giant"),
                "giant: the giant component (fewer than n vertices); connected: resampled until \
                 connected (at most 100 attempts)",
            ),
        ],
        example: "gnp:0.1:connected",
        make: make_gnp,
    },
    TopologyDef {
        name: "file",
        doc: "an edge list (`u v` per line, `#` comments); n comes from the file",
        params: &[ParamDef::new(
            "path",
            ParamType::Text,
            ParamDefault::Required,
            "the edge-list file (in configs relative to the working directory)",
        )],
        example: "file:edges.txt",
        make: make_file,
    },
];

/// The family `name`, or the registry's message with the nearest name and every form.
pub fn find_topology(name: &str) -> Result<&'static TopologyDef, ParamError> {
    TOPOLOGIES.iter().find(|t| t.name == name).ok_or_else(|| {
        let forms: Vec<String> = TOPOLOGIES.iter().map(TopologyDef::form).collect();
        ParamError::at(
            "kind",
            format!(
                "unknown topology `{name}`{}; expected one of {}",
                did_you_mean(name, TOPOLOGIES.iter().map(|t| t.name)),
                forms.join(", ")
            ),
        )
    })
}

/// A shorthand (`torus`, `torus:3`, `torus:dim=3`, `gnp:0.1:connected`) as its family and
/// checked parameter values (positional values mapped to the declared parameters in order).
pub fn parse_topology(text: &str) -> Result<(&'static TopologyDef, TopologyParams), ParamError> {
    let text = text.trim();
    let (name, rest) = text.split_once(':').unwrap_or((text, ""));
    let def = find_topology(name.trim())?;
    let given = def.parse_values(rest)?;
    def.list().args(&given)?;
    Ok((def, given))
}

/// A topology family; with a vertex count (and, for random families, randomness) it builds
/// a [`Topology`] ([`GraphKind::build`]).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub enum GraphKind {
    /// The complete graph `K_n` (implicit, no loops).
    Complete,
    /// The cycle `C_n`, `n >= 3`.
    Cycle,
    /// The `dim`-dimensional torus; `n` must be a perfect `dim`-th power with side `>= 3`.
    Torus {
        /// Number of dimensions, at least 1.
        dim: usize,
    },
    /// The hypercube; `n` must be a power of two.
    Hypercube,
    /// A uniform random simple `d`-regular graph (configuration model with rejection).
    RandomRegular {
        /// Degree.
        d: usize,
        /// Pairings to try before giving up.
        max_attempts: u32,
    },
    /// Erdős–Rényi G(n, p), made connected as `connectivity` says (the giant component has
    /// fewer than `n` vertices: the built graph's vertex count is authoritative).
    ErdosRenyi {
        /// Edge probability.
        p: f64,
        /// Giant component or resampling.
        connectivity: Connectivity,
    },
    /// The star `K_{1, n−1}` (centre 0).
    Star,
    /// An edge-list file (see [`crate::io`]); `n` comes from the file.
    File {
        /// The file.
        path: PathBuf,
        /// Loop and duplicate policies.
        options: EdgeListOptions,
    },
}

impl GraphKind {
    /// The snake_case kind name used in configs.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Complete => "complete",
            Self::Cycle => "cycle",
            Self::Torus { .. } => "torus",
            Self::Hypercube => "hypercube",
            Self::RandomRegular { .. } => "random_regular",
            Self::ErdosRenyi { .. } => "erdos_renyi",
            Self::Star => "star",
            Self::File { .. } => "file",
        }
    }

    /// Whether building consumes randomness.
    pub fn is_random(&self) -> bool {
        matches!(self, Self::RandomRegular { .. } | Self::ErdosRenyi { .. })
    }

    /// Checks that [`GraphKind::build`] can build this family on `n` vertices, without
    /// building it (cheap, for validation): the size fits the family (cycle, torus side,
    /// power of two, star), the degree of a random regular graph, the probability of G(n, p).
    /// Files are read at build time only.
    pub fn check(&self, n: Option<usize>) -> Result<(), Error> {
        let need_n = || n.ok_or_else(|| Error::invalid("n", "none", "a vertex count"));
        match self {
            Self::Complete => drop(Complete::new(need_n()?)?),
            Self::Cycle => drop(Torus::cycle(need_n()?)?),
            Self::Torus { dim } => drop(Torus::new(*dim, torus_side(need_n()?, *dim)?)?),
            Self::Hypercube => drop(Hypercube::new(hypercube_dim(need_n()?)?)?),
            Self::Star => {
                let n = need_n()?;
                if n < 2 || n > u32::MAX as usize {
                    return Err(Error::invalid("n", n, format!("an integer in 2..={}", u32::MAX)));
                }
            }
            Self::RandomRegular { d, .. } => {
                let (n, d) = (need_n()?, *d);
                if d == 0 || d >= n {
                    return Err(Error::invalid("d", d, format!("an integer in 1..{n} (n = {n})")));
                }
                if (n * d) % 2 == 1 {
                    return Err(Error::invalid(
                        "d",
                        d,
                        format!("a degree with n·d even (n = {n})"),
                    ));
                }
            }
            Self::ErdosRenyi { p, .. } => {
                if !(0.0..=1.0).contains(p) {
                    return Err(Error::invalid("p", p, "a probability in [0, 1]"));
                }
            }
            Self::File { .. } => {}
        }
        Ok(())
    }

    /// Builds the graph on `n` vertices (`None` only for files, whose size is their own; a
    /// given `n` must then match the file).
    pub fn build<R: RngCore + ?Sized>(
        &self,
        n: Option<usize>,
        rng: &mut R,
    ) -> Result<Topology, Error> {
        let need_n = || n.ok_or_else(|| Error::invalid("n", "none", "a vertex count"));
        let store = match self {
            Self::Complete => Store::Complete(Complete::new(need_n()?)?),
            Self::Cycle => Store::Torus(Torus::cycle(need_n()?)?),
            Self::Torus { dim } => {
                let n = need_n()?;
                Store::Torus(Torus::new(*dim, torus_side(n, *dim)?)?)
            }
            Self::Hypercube => Store::Hypercube(Hypercube::new(hypercube_dim(need_n()?)?)?),
            Self::RandomRegular { d, max_attempts } => {
                let p = RegularParams { n: need_n()?, d: *d, max_attempts: *max_attempts };
                Store::Csr(random_regular(&p, rng)?)
            }
            Self::ErdosRenyi { p, connectivity } => {
                Store::Csr(erdos_renyi(need_n()?, *p, *connectivity, rng)?)
            }
            Self::Star => Store::Csr(star(need_n()?)?),
            Self::File { path, options } => {
                let g = read_edge_list(path, options)?;
                if let Some(n) = n {
                    if n != g.n_vertices() {
                        return Err(Error::Mismatch(format!(
                            "n = {n} but {} has {} vertices",
                            path.display(),
                            g.n_vertices()
                        )));
                    }
                }
                Store::Csr(g)
            }
        };
        Ok(Topology { kind: self.clone(), store })
    }
}

impl fmt::Display for GraphKind {
    /// The command-line shorthand (parsed back by [`FromStr`]).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Torus { dim } => write!(f, "torus:{dim}"),
            Self::RandomRegular { d, .. } => write!(f, "regular:{d}"),
            Self::ErdosRenyi { p, connectivity: Connectivity::GiantComponent } => {
                write!(f, "gnp:{p}")
            }
            Self::ErdosRenyi { p, connectivity: Connectivity::Resample { .. } } => {
                write!(f, "gnp:{p}:connected")
            }
            Self::File { path, .. } => write!(f, "file:{}", path.display()),
            other => f.write_str(other.name()),
        }
    }
}

/// Attempts of `gnp` with `connectivity = connected`.
pub const CONNECTED_ATTEMPTS: u32 = 100;

/// Pairings `regular` tries before giving up.
pub const REGULAR_ATTEMPTS: u32 = 1000;

impl FromStr for GraphKind {
    type Err = Error;

    /// A shorthand: the family's name, then its parameters positional in declaration order
    /// or named ([`parse_topology`]; `complete`, `cycle`, `torus` (2-dimensional),
    /// `torus:3` or `torus:dim=3`, `hypercube`, `star`, `regular:4`, `gnp:0.1` (giant
    /// component), `gnp:0.1:connected` (resampled until connected, at most
    /// [`CONNECTED_ATTEMPTS`] times), `file:PATH` (default [`EdgeListOptions`])).
    fn from_str(s: &str) -> Result<Self, Error> {
        let (def, given) = parse_topology(s)?;
        Ok(def.build(&given)?)
    }
}

/// The storage behind a [`Topology`].
#[derive(Clone, Debug)]
pub enum Store {
    /// The implicit complete graph.
    Complete(Complete),
    /// An implicit torus or cycle.
    Torus(Torus),
    /// An implicit hypercube.
    Hypercube(Hypercube),
    /// A materialised graph.
    Csr(Csr),
}

/// Calls `$body` with `$g` bound to the concrete graph of a [`Store`]: one match, then
/// monomorphised code.
macro_rules! with_graph {
    ($store:expr, $g:ident => $body:expr) => {
        match $store {
            Store::Complete($g) => $body,
            Store::Torus($g) => $body,
            Store::Hypercube($g) => $body,
            Store::Csr($g) => $body,
        }
    };
}

/// How a spectral gap was obtained.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SpectralGap {
    /// A closed formula (complete graph, cycle, torus, hypercube, star).
    Exact(f64),
    /// Power iteration ([`crate::analysis::spectral_gap`]).
    Estimated(SpectralEstimate),
}

impl SpectralGap {
    /// The value of `λ₂`.
    pub fn value(&self) -> f64 {
        match self {
            Self::Exact(v) => *v,
            Self::Estimated(e) => e.gap,
        }
    }

    /// A short description for metadata.
    pub fn method(&self) -> String {
        match self {
            Self::Exact(_) => "exact formula".into(),
            Self::Estimated(e) => format!(
                "power iteration: {} iterations{}, residual {:.1e} (upper bound on λ₂)",
                e.iterations,
                if e.converged { "" } else { " (cap reached)" },
                e.residual
            ),
        }
    }
}

/// Metadata of a built topology.
#[derive(Clone, Debug, PartialEq)]
pub struct GraphInfo {
    /// The kind in command-line shorthand.
    pub kind: String,
    /// Number of vertices.
    pub n_vertices: usize,
    /// Number of edges.
    pub n_edges: u64,
    /// Degrees.
    pub degree: DegreeStats,
    /// Number of connected components.
    pub components: usize,
    /// Whether the graph is bipartite.
    pub bipartite: bool,
    /// Spectral gap `λ₂` of the normalised Laplacian.
    pub spectral_gap: f64,
    /// How it was obtained.
    pub spectral_method: String,
}

/// A built graph with the family it came from.
#[derive(Clone, Debug)]
pub struct Topology {
    kind: GraphKind,
    store: Store,
}

impl Topology {
    /// Wraps a graph built elsewhere (e.g. by a generator) under a kind. The kind must
    /// describe the graph: for the structured kinds [`Topology::spectral_gap`] reports the
    /// closed form of that family without looking at the edges.
    pub fn from_csr(kind: GraphKind, csr: Csr) -> Self {
        Self { kind, store: Store::Csr(csr) }
    }

    /// The family.
    pub fn kind(&self) -> &GraphKind {
        &self.kind
    }

    /// The storage.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// Number of vertices (the `n` of runs on this graph).
    pub fn n_vertices(&self) -> usize {
        with_graph!(&self.store, g => g.n_vertices())
    }

    /// Number of edges.
    pub fn n_edges(&self) -> u64 {
        with_graph!(&self.store, g => g.n_edges())
    }

    /// The graph as a [`Csr`] (materialising implicit stores; the complete graph only for
    /// small `n`).
    pub fn to_csr(&self) -> Result<Csr, Error> {
        match &self.store {
            Store::Complete(g) => g.to_csr(),
            Store::Torus(g) => Csr::from_neighbors(g),
            Store::Hypercube(g) => Csr::from_neighbors(g),
            Store::Csr(g) => Ok(g.clone()),
        }
    }

    /// Runs `spec` on this graph ([`crate::simulate_graph`]); matches on the store once.
    pub fn simulate<R: RngCore + ?Sized>(
        &self,
        spec: &RunSpec,
        rng: &mut R,
    ) -> Result<RunOutcome, Error> {
        self.simulate_observed(spec, &GraphOptions::default(), rng, &mut ())
    }

    /// Runs `spec` on this graph with options and an observer.
    pub fn simulate_observed<R: RngCore + ?Sized, O: Observer>(
        &self,
        spec: &RunSpec,
        opts: &GraphOptions,
        rng: &mut R,
        observer: &mut O,
    ) -> Result<RunOutcome, Error> {
        with_graph!(&self.store, g => simulate_graph_observed(spec, g, opts, rng, observer))
    }

    /// `λ₂` of the normalised Laplacian: the closed formula for the structured families,
    /// power iteration otherwise.
    pub fn spectral_gap(&self, opts: &PowerIteration) -> Result<SpectralGap, Error> {
        let n = self.n_vertices() as f64;
        let exact = match (&self.kind, &self.store) {
            (GraphKind::Complete, _) => Some(n / (n - 1.0)),
            (GraphKind::Cycle, _) => Some(1.0 - (2.0 * PI / n).cos()),
            (GraphKind::Torus { dim }, _) => {
                let side = torus_side(self.n_vertices(), *dim)? as f64;
                Some((1.0 - (2.0 * PI / side).cos()) / *dim as f64)
            }
            (GraphKind::Hypercube, _) => Some(2.0 / n.log2()),
            (GraphKind::Star, _) => Some(if self.n_vertices() == 2 { 2.0 } else { 1.0 }),
            _ => None,
        };
        if let Some(v) = exact {
            return Ok(SpectralGap::Exact(v));
        }
        with_graph!(&self.store, g => Ok(SpectralGap::Estimated(spectral_gap(g, opts)?)))
    }

    /// Metadata: sizes, degrees, components, bipartiteness and the spectral gap. O(edges)
    /// plus the power iteration where no formula is known.
    pub fn info(&self, opts: &PowerIteration) -> Result<GraphInfo, Error> {
        let (degree, comps, bipartite) = match &self.store {
            Store::Complete(g) => {
                let d = g.n_vertices() - 1;
                (DegreeStats { min: d, max: d, mean: d as f64 }, 1, g.n_vertices() == 2)
            }
            Store::Torus(g) => (degree_stats(g), components(g).count, is_bipartite(g)),
            Store::Hypercube(g) => (degree_stats(g), components(g).count, is_bipartite(g)),
            Store::Csr(g) => (degree_stats(g), components(g).count, is_bipartite(g)),
        };
        let gap = self.spectral_gap(opts)?;
        Ok(GraphInfo {
            kind: self.kind.to_string(),
            n_vertices: self.n_vertices(),
            n_edges: self.n_edges(),
            degree,
            components: comps,
            bipartite,
            spectral_gap: gap.value(),
            spectral_method: gap.method(),
        })
    }
}

#[cfg(test)]
mod registry_tests {
    use ballast_core::registry::{ParamDefault, ParamValue};

    use super::{parse_topology, GraphKind, TOPOLOGIES};

    #[test]
    fn every_declared_topology_parses_positional_and_named_and_names_its_family() {
        for t in TOPOLOGIES {
            let kind: GraphKind =
                t.example.parse().unwrap_or_else(|e| panic!("{}: {e}", t.example));
            assert!(t.example.starts_with(t.name) && t.form().starts_with(t.name), "{}", t.name);
            // The shorthand it prints parses back to the same family.
            assert_eq!(kind.to_string().parse::<GraphKind>().unwrap(), kind, "{}", t.name);
            // Named values give the same family as positional ones.
            let (_, given) = parse_topology(t.example).unwrap();
            let named: Vec<String> = given
                .iter()
                .map(|(k, v)| match v {
                    ParamValue::Text(x) => format!("{k}={x}"),
                    other => format!("{k}={other}"),
                })
                .collect();
            if !named.is_empty() {
                let text = format!("{}:{}", t.name, named.join(","));
                assert_eq!(text.parse::<GraphKind>().unwrap(), kind, "{text}");
            }
            // The parser's message lists every form.
            let e = "nope".parse::<GraphKind>().unwrap_err().to_string();
            assert!(e.contains(&t.form()), "{e}");
            // An unknown parameter: the registry's message with the allowed list.
            let e = format!("{}:zzz=1", t.name).parse::<GraphKind>().unwrap_err().to_string();
            assert!(e.contains(&format!("unknown parameter `zzz` for topology `{}`", t.name)));
            assert!(e.contains("allowed parameters:"), "{e}");
            // Required parameters are required.
            if t.params.iter().any(|p| p.default == ParamDefault::Required) {
                let e = t.name.parse::<GraphKind>().unwrap_err().to_string();
                assert!(e.contains(&format!("topology `{}` needs parameter", t.name)), "{e}");
            }
        }
        let e = "toruss:2".parse::<GraphKind>().unwrap_err().to_string();
        assert!(e.contains("did you mean `torus`"), "{e}");
        let e = "torus:dimm=3".parse::<GraphKind>().unwrap_err().to_string();
        assert!(e.contains("did you mean `dim`"), "{e}");
        let e = "torus:2:3".parse::<GraphKind>().unwrap_err().to_string();
        assert!(e.contains("at most 1 value"), "{e}");
        let e = "gnp:0.1:sometimes".parse::<GraphKind>().unwrap_err().to_string();
        assert!(e.contains("one of giant, connected"), "{e}");
        assert_eq!("torus".parse::<GraphKind>().unwrap(), GraphKind::Torus { dim: 2 });
        assert_eq!("torus:dim=3".parse::<GraphKind>().unwrap(), GraphKind::Torus { dim: 3 });
        let f: GraphKind = "file:C:/x:y.txt".parse().unwrap();
        assert_eq!(f.to_string(), "file:C:/x:y.txt");
    }
}
