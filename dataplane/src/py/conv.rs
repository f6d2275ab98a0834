//! Conversions between Python objects and the engine's values.

use super::EngineError;
use crate::program::MatchValue;
use crate::value::Val;
use num_bigint::{BigInt, Sign};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyDict, PyFloat, PyList, PyString, PyTuple};
use serde_json::Value;

/// A Python int or bytes (big-endian) as an unbounded value.
pub fn to_val(o: &Bound<'_, PyAny>) -> PyResult<Val> {
    if let Ok(b) = o.downcast::<PyBytes>() {
        return Ok(Val::from_be_bytes(b.as_bytes()));
    }
    // (most action arguments fit 64 bits: PyLong_AsLongLong, cheaper than i128's way)
    if let Ok(v) = o.extract::<i64>() {
        return Ok(Val::S(v as i128));
    }
    if let Ok(v) = o.extract::<i128>() {
        return Ok(Val::S(v));
    }
    let b: BigInt = o.extract()?;
    Ok(Val::from_big(b))
}

pub fn to_bytes(o: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
    if let Ok(b) = o.downcast::<PyBytes>() {
        return Ok(b.as_bytes().to_vec());
    }
    let v: BigInt = o.extract()?;
    if v.sign() == Sign::Minus {
        return Err(EngineError::new_err("match values must not be negative"));
    }
    let (_, bytes) = v.to_bytes_be();
    Ok(bytes)
}

pub fn val_to_py(py: Python<'_>, v: &Val) -> PyObject {
    match v {
        Val::S(s) => s.into_py(py),
        Val::B(b) => b.clone().into_py(py),
    }
}

/// Key items: int/bytes (exact), or tuples ("exact", v), ("lpm", v, len),
/// ("ternary", v, mask), ("optional", v, mask), ("range", lo, hi).
pub fn to_match(o: &Bound<'_, PyAny>) -> PyResult<MatchValue> {
    if let Ok(t) = o.downcast::<PyTuple>() {
        let kind = t.get_item(0)?;
        let kind: &str = kind.extract()?;
        let item = |i: usize| -> PyResult<Vec<u8>> { to_bytes(&t.get_item(i)?) };
        return Ok(match kind {
            "exact" => MatchValue::Exact(item(1)?),
            "lpm" => MatchValue::Lpm(item(1)?, t.get_item(2)?.extract()?),
            "ternary" | "optional" => MatchValue::Ternary(item(1)?, item(2)?),
            "range" => MatchValue::Range(item(1)?, item(2)?),
            other => return Err(EngineError::new_err(format!("unknown match kind '{other}'"))),
        });
    }
    Ok(MatchValue::Exact(to_bytes(o)?))
}

/// `f` of each item of a sequence (a tuple or a list read directly, any
/// other iterable through the iterator protocol).
fn each<T>(seq: &Bound<'_, PyAny>, f: impl Fn(&Bound<'_, PyAny>) -> PyResult<T>) -> PyResult<Vec<T>> {
    if let Ok(t) = seq.downcast::<PyTuple>() {
        return t.iter().map(|x| f(&x)).collect();
    }
    if let Ok(l) = seq.downcast::<PyList>() {
        return l.iter().map(|x| f(&x)).collect();
    }
    seq.iter()?.map(|x| f(&x?)).collect()
}

pub fn to_key(key: &Bound<'_, PyAny>) -> PyResult<Vec<MatchValue>> {
    each(key, to_match)
}

pub fn vals(args: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<Val>> {
    match args {
        Some(args) => each(args, to_val),
        None => Ok(vec![]),
    }
}

/// A Python object made of dicts, lists, strings, numbers, booleans and
/// None as a JSON value (keys of dicts become strings).
pub fn to_json(o: &Bound<'_, PyAny>) -> PyResult<Value> {
    if o.is_none() {
        return Ok(Value::Null);
    }
    if let Ok(b) = o.downcast::<PyBool>() {
        return Ok(Value::Bool(b.is_true()));
    }
    if let Ok(s) = o.downcast::<PyString>() {
        return Ok(Value::String(s.to_str()?.to_string()));
    }
    if let Ok(f) = o.downcast::<PyFloat>() {
        return Ok(serde_json::Number::from_f64(f.value()).map(Value::Number).unwrap_or(Value::Null));
    }
    if let Ok(i) = o.extract::<i64>() {
        return Ok(Value::from(i));
    }
    if let Ok(i) = o.extract::<u64>() {
        return Ok(Value::from(i));
    }
    if let Ok(d) = o.downcast::<PyDict>() {
        let mut m = serde_json::Map::new();
        for (k, v) in d.iter() {
            let key = match k.downcast::<PyString>() {
                Ok(s) => s.to_str()?.to_string(),
                Err(_) => k.str()?.to_str()?.to_string(),
            };
            m.insert(key, to_json(&v)?);
        }
        return Ok(Value::Object(m));
    }
    if let Ok(l) = o.downcast::<PyList>() {
        return l.iter().map(|x| to_json(&x)).collect::<PyResult<Vec<_>>>().map(Value::Array);
    }
    if let Ok(t) = o.downcast::<PyTuple>() {
        return t.iter().map(|x| to_json(&x)).collect::<PyResult<Vec<_>>>().map(Value::Array);
    }
    Err(EngineError::new_err(format!("cannot use a {} in a configuration", o.get_type().name()?)))
}

/// Text that is JSON, or else YAML, as a JSON value.
pub fn parse_text(text: &str) -> Result<Value, String> {
    match serde_json::from_str::<Value>(text) {
        Ok(v) => Ok(v),
        Err(je) => {
            let t = text.trim_start();
            if t.starts_with('{') || t.starts_with('[') {
                return Err(format!("not valid JSON: {je}"));
            }
            serde_yaml::from_str::<Value>(text).map_err(|ye| format!("neither JSON nor YAML: {ye}"))
        }
    }
}

/// Plain numbers that go into array columns.
pub trait Column: Copy {
    const TYPECODE: &'static str;
    fn put(self, out: &mut Vec<u8>);
}

macro_rules! column {
    ($t:ty, $code:expr) => {
        impl Column for $t {
            const TYPECODE: &'static str = $code;
            fn put(self, out: &mut Vec<u8>) {
                out.extend_from_slice(&self.to_ne_bytes());
            }
        }
    };
}

column!(u8, "B");
column!(u16, "H");
column!(u32, "I");
column!(u64, "Q");
column!(i64, "q");
column!(f64, "d");

/// `array.array` of the values: a column Python, numpy (`frombuffer`) and
/// Arrow read without converting element by element.
pub fn array<'py, T: Column>(py: Python<'py>, data: &[T]) -> PyResult<Bound<'py, PyAny>> {
    let mut raw = Vec::with_capacity(std::mem::size_of_val(data));
    for x in data {
        x.put(&mut raw);
    }
    let arr = py.import_bound("array")?.getattr("array")?;
    arr.call1((T::TYPECODE, PyBytes::new_bound(py, &raw)))
}
