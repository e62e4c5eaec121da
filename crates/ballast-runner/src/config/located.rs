//! [`Located`]: a config value with the byte range it came from, when it came from text.
//!
//! A config read from a file keeps, for every value the checks may complain about, its place
//! in the file, so a problem is reported at `file:line:column`. A config built in memory
//! (`ballast simulate` builds the one-point config of its arguments as a [`toml::Table`]) has
//! no text and no places; its values deserialize all the same, with no range.
//!
//! From text, the `toml` deserializer hands a located value over as a map of three entries
//! (start, end, value) when asked for a struct under serde_spanned's reserved name, which is
//! how `toml::Spanned` works; any other deserializer (a `toml::Value`, serde's buffered
//! content inside untagged enums) hands over the plain value, which is kept with no range.
//! The test `located_values_keep_their_place_from_text` fails if a `toml` upgrade changes the
//! reserved names (every value would then come without its place).

use std::fmt;
use std::marker::PhantomData;
use std::ops::Range;

use serde::de::{self, Deserialize, DeserializeOwned, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_spanned::__unstable as reserved;

/// A config value and its byte range in the config's text (none for a config built in memory).
#[derive(Clone, Debug)]
pub(crate) struct Located<T> {
    value: T,
    span: Option<Range<usize>>,
}

impl<T> Located<T> {
    /// A value with no place (a default the checks fill in, or a config built in memory).
    pub fn unplaced(value: T) -> Self {
        Self { value, span: None }
    }

    /// Its byte range in the config's text, if it came from text.
    pub fn span(&self) -> Option<Range<usize>> {
        self.span.clone()
    }

    /// The value.
    pub fn get_ref(&self) -> &T {
        &self.value
    }

    /// The value, mutably.
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.value
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Located<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let fields = &[reserved::START_FIELD, reserved::END_FIELD, reserved::VALUE_FIELD];
        d.deserialize_struct(reserved::NAME, fields, LocatedVisitor(PhantomData))
    }
}

/// Reads either the text deserializer's (start, end, value) map or a plain value.
struct LocatedVisitor<T>(PhantomData<T>);

/// `T` from a plain value, with no place.
fn plain<T: DeserializeOwned, E: de::Error>(v: toml::Value) -> Result<Located<T>, E> {
    T::deserialize(v).map(Located::unplaced).map_err(E::custom)
}

impl<'de, T: DeserializeOwned> Visitor<'de> for LocatedVisitor<T> {
    type Value = Located<T>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a value")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let Some(first) = map.next_key::<String>()? else {
            return plain(toml::Value::Table(toml::Table::new()));
        };
        if first != reserved::START_FIELD {
            // A plain table: collect it, then read `T` from it.
            let mut table = toml::Table::new();
            table.insert(first, map.next_value()?);
            while let Some((k, v)) = map.next_entry::<String, toml::Value>()? {
                table.insert(k, v);
            }
            return plain(toml::Value::Table(table));
        }
        let start: usize = map.next_value()?;
        let end = match map.next_key::<String>()? {
            Some(k) if k == reserved::END_FIELD => map.next_value::<usize>()?,
            _ => return Err(de::Error::custom("a located value without its end")),
        };
        let value = match map.next_key::<String>()? {
            Some(k) if k == reserved::VALUE_FIELD => map.next_value::<T>()?,
            _ => return Err(de::Error::custom("a located value without its value")),
        };
        Ok(Located { value, span: Some(start..end) })
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
        let mut items = Vec::new();
        while let Some(v) = seq.next_element::<toml::Value>()? {
            items.push(v);
        }
        plain(toml::Value::Array(items))
    }

    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Self::Value, E> {
        plain(toml::Value::Boolean(v))
    }

    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Self::Value, E> {
        plain(toml::Value::Integer(v))
    }

    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Self::Value, E> {
        let v = i64::try_from(v).map_err(|_| E::custom(format!("{v} is too large")))?;
        plain(toml::Value::Integer(v))
    }

    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Self::Value, E> {
        plain(toml::Value::Float(v))
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
        plain(toml::Value::String(v.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::Located;

    #[derive(serde::Deserialize)]
    struct Doc {
        n: Located<u64>,
        name: Located<String>,
        point: Located<toml::Table>,
        list: Located<Vec<f64>>,
    }

    const TEXT: &str = "n = 7\nname = \"a\"\npoint = { b = 2 }\nlist = [1.5, 2]\n";

    #[test]
    fn located_values_keep_their_place_from_text() {
        let doc: Doc = toml::from_str(TEXT).unwrap();
        assert_eq!((*doc.n.get_ref(), doc.n.span()), (7, Some(4..5)));
        assert_eq!(&TEXT[doc.name.span().unwrap()], "\"a\"");
        assert_eq!(&TEXT[doc.point.span().unwrap()], "{ b = 2 }");
        assert_eq!(doc.list.get_ref(), &[1.5, 2.0]);
    }

    #[test]
    fn located_values_from_memory_have_no_place() {
        let table: toml::Table = toml::from_str(TEXT).unwrap();
        let doc: Doc = toml::Value::Table(table).try_into().unwrap();
        assert_eq!((*doc.n.get_ref(), doc.n.span()), (7, None));
        assert_eq!(doc.name.get_ref(), "a");
        assert_eq!(doc.point.get_ref().get("b"), Some(&toml::Value::Integer(2)));
        assert_eq!((doc.list.get_ref().as_slice(), doc.list.span()), (&[1.5, 2.0][..], None));
    }

    #[test]
    fn a_wrong_type_in_memory_is_an_error() {
        let table: toml::Table =
            toml::from_str("n = \"seven\"\nname = \"a\"\npoint = {}\nlist = []").unwrap();
        let doc: Result<Doc, _> = toml::Value::Table(table).try_into();
        assert!(doc.is_err());
    }
}
