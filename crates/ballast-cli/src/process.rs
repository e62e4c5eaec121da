//! `--process KIND --param key=value ...` → a [`ProcessSpec`], through the process registry
//! of `ballast-core` ([`ballast_core::registry`]): the kinds, their parameters, defaults,
//! ranges and every message come from there, so `ballast simulate`, `ballast list` and the
//! TOML configs cannot disagree.

use std::collections::BTreeMap;

use ballast_core::registry::{self, ParamValue, ProcessDef};
use ballast_core::ProcessSpec;
use serde_json::Value;

use crate::error::BadInput;

/// A process resolved from the command line.
#[derive(Clone, Debug)]
pub struct ResolvedProcess {
    /// The registry entry (its name is the kind as given: `two_choice`, not `d_choice`).
    pub def: &'static ProcessDef,
    /// The engine's description.
    pub spec: ProcessSpec,
    /// Every parameter the user gave, by name, for output.
    pub params: BTreeMap<String, Value>,
    /// The parameters as given, in the registry's types (for the one-point config).
    pub given: Vec<(&'static str, ParamValue)>,
}

impl ResolvedProcess {
    /// The kind name as given.
    pub fn name(&self) -> &'static str {
        self.def.name
    }
}

/// The JSON form of a parameter value.
fn to_json(v: &ParamValue) -> Value {
    match v {
        ParamValue::Num(x) if x.fract() == 0.0 && x.abs() < 2f64.powi(53) => Value::from(*x as i64),
        ParamValue::Num(x) => Value::from(*x),
        ParamValue::Bool(b) => Value::from(*b),
        ParamValue::Text(t) => Value::from(t.as_str()),
        ParamValue::List(v) => Value::from(v.clone()),
    }
}

/// Reads `key=value` pairs through a registry entry's parameter list (a process, a model, a
/// weight law): its names, types, ranges and messages. `flag` is what the pairs followed on
/// the command line (`--param `; empty when the caller names the flag itself), for the
/// message about a pair without `=`.
pub fn parse_pairs<'a>(
    list: &registry::ParamList,
    pairs: impl IntoIterator<Item = &'a str>,
    flag: &str,
) -> Result<Vec<(&'static str, ParamValue)>, BadInput> {
    let bad = |e: registry::ParamError| BadInput::new(e.message);
    let mut given = Vec::new();
    for raw in pairs {
        let (key, value) = raw.split_once('=').ok_or_else(|| {
            BadInput::new(format!(
                "malformed `{flag}{raw}`: expected key=value; allowed parameters of `{}`: {}",
                list.name,
                list.allowed_params()
            ))
        })?;
        let p = list.param(key.trim()).map_err(bad)?;
        given.push((p.name, list.parse_value(p, value).map_err(bad)?));
    }
    Ok(given)
}

/// Resolves `--process` and its `--param key=value` pairs (the registry's messages, exit
/// code 2).
pub fn resolve(kind_name: &str, raw_params: &[String]) -> Result<ResolvedProcess, BadInput> {
    let bad = |e: registry::ParamError| BadInput::new(e.message);
    let def = registry::find(kind_name)
        .map_err(|e| BadInput::new(format!("{} (set by --process)", e.message)))?;
    let given = parse_pairs(&def.list(), raw_params.iter().map(String::as_str), "--param ")?;
    let spec = def.build(&given).map_err(bad)?;
    let mut params: BTreeMap<String, Value> =
        given.iter().map(|(k, v)| ((*k).to_owned(), to_json(v))).collect();
    if let ProcessSpec::DChoice { d } = *spec.base() {
        // two_choice and three_choice imply d.
        params.insert("d".to_owned(), Value::from(d));
    }
    Ok(ResolvedProcess { def, spec, params, given })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(s: &[&str]) -> Vec<String> {
        s.iter().map(|x| (*x).to_owned()).collect()
    }

    #[test]
    fn aliases_map_to_d_choice() {
        let r = resolve("two_choice", &[]).unwrap();
        assert_eq!(r.spec, ProcessSpec::DChoice { d: 2 });
        let r = resolve("d_choice", &p(&["d=5"])).unwrap();
        assert_eq!(r.spec, ProcessSpec::DChoice { d: 5 });
        assert_eq!(r.params["d"], Value::from(5));
    }

    #[test]
    fn defaults_and_errors() {
        let r = resolve("mean_thinning", &[]).unwrap();
        assert_eq!(r.spec, ProcessSpec::MeanThinning { strict: true });
        let e = resolve("one_plus_beta", &[]).unwrap_err().to_string();
        assert!(e.contains("beta"), "{e}");
        let e = resolve("one_choice", &p(&["d=2"])).unwrap_err().to_string();
        assert!(e.contains("unknown parameter `d`") && e.contains("none"), "{e}");
        let e = resolve("nope", &[]).unwrap_err().to_string();
        assert!(e.contains("one_plus_beta"), "{e}");
        let e = resolve("d_choice", &p(&["d=0"])).unwrap_err().to_string();
        assert!(e.contains("1..=1024"), "{e}");
        let e = resolve("adaptive", &p(&["preset=greedy", "d=3", "tau.base=1"]));
        assert!(e.unwrap_err().to_string().contains("open form"));
    }

    #[test]
    fn every_kind_resolves_its_example() {
        for def in registry::PROCESSES {
            let mut params: Vec<String> =
                def.example.split_whitespace().map(str::to_owned).collect();
            for d in def.params {
                if d.default == registry::ParamDefault::Required {
                    let v = match d.ty {
                        registry::ParamType::Int { lo, .. } => lo.max(2).to_string(),
                        registry::ParamType::Bool => "false".to_owned(),
                        registry::ParamType::Decision(_) => "1".to_owned(),
                        _ => "0.5".to_owned(),
                    };
                    params.push(format!("{}={v}", d.name));
                }
            }
            let r = resolve(def.name, &params).unwrap();
            assert_eq!(r.spec, def.example(), "{}", def.name);
        }
    }
}
