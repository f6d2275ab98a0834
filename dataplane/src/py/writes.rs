//! `WriteCodec` in Python: the common table-entry updates of a serialized
//! WriteRequest as the tuples switch/p4runtime/fast_writes.py applies
//! (see p4rt_wire.rs).

use crate::p4rt_wire::{self, ones, FastUpdate, FieldWire, KeyItem, TableWire, MAX_WIDTH};
use crate::program::MatchKind;
use pyo3::exceptions::PyValueError;
use pyo3::intern;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyList, PyTuple};
use std::collections::BTreeMap;

/// The common table-entry updates of a serialized P4Runtime WriteRequest,
/// checked as the switch's TableCodec checks them (p4rt_wire.rs).
#[pyclass(module = "p4scope_dataplane", frozen)]
pub struct WriteCodec {
    codec: p4rt_wire::WriteCodec,
}

/// A table's (match fields [(id, kind, width)], entry actions [(id, [(param id, width)])]).
type TableSpec = (Vec<(u32, String, u32)>, Vec<(u32, Vec<(u32, u32)>)>);

fn width(w: u32, what: &str) -> PyResult<u32> {
    if (1..=MAX_WIDTH).contains(&w) {
        Ok(w)
    } else {
        Err(PyValueError::new_err(format!("{what}: {w} bits (1..={MAX_WIDTH})")))
    }
}

/// `v` as the engine's bytes: ceil(width/8) big-endian.
fn fixed<'py>(py: Python<'py>, v: u128, width: u32) -> Bound<'py, PyBytes> {
    let n = width.div_ceil(8) as usize;
    PyBytes::new_bound(py, &v.to_be_bytes()[16 - n..])
}

/// (canonical key, engine key) of a checked key: TableCodec.key's.
fn keys<'py>(py: Python<'py>, key: &[KeyItem], fields: &[FieldWire]) -> (PyObject, PyObject) {
    let mut canonical = Vec::with_capacity(key.len());
    let mut engine = Vec::with_capacity(key.len());
    for (item, f) in key.iter().zip(fields) {
        let w = f.width;
        let (c, e): (PyObject, PyObject) = match *item {
            KeyItem::Exact(v) => {
                (v.into_py(py), (intern!(py, "exact"), fixed(py, v, w)).into_py(py))
            }
            KeyItem::Lpm(v, plen) => {
                ((v, plen).into_py(py), (intern!(py, "lpm"), fixed(py, v, w), plen).into_py(py))
            }
            KeyItem::Ternary(v, m) => (
                (v, m).into_py(py),
                (intern!(py, "ternary"), fixed(py, v, w), fixed(py, m, w)).into_py(py),
            ),
            KeyItem::Range(lo, hi) => (
                (lo, hi).into_py(py),
                (intern!(py, "range"), fixed(py, lo, w), fixed(py, hi, w)).into_py(py),
            ),
            KeyItem::Optional(v) => (
                (v, ones(w)).into_py(py),
                (intern!(py, "ternary"), fixed(py, v, w), fixed(py, ones(w), w)).into_py(py),
            ),
        };
        canonical.push(c);
        engine.push(e);
    }
    (PyTuple::new_bound(py, canonical).into_py(py), PyTuple::new_bound(py, engine).into_py(py))
}

fn to_py(py: Python<'_>, u: &FastUpdate, t: &TableWire) -> PyObject {
    let (key, engine_key) = keys(py, &u.key, &t.fields);
    let spec = match &u.action {
        Some((aid, args)) => (*aid, PyTuple::new_bound(py, args)).into_py(py),
        None => py.None(),
    };
    let metadata = PyBytes::new_bound(py, &u.metadata);
    (u.utype, u.table_id, key, engine_key, spec, u.priority, u.controller_metadata, metadata)
        .into_py(py)
}

#[pymethods]
impl WriteCodec {
    /// `tables`: table id -> (match fields [(id, match kind, bit width)] in
    /// P4Info order, entry actions [(action id, [(param id, bit width)] in
    /// P4Info order)]); widths 1..=128 (TableCodec.wire_spec).
    #[new]
    fn new(tables: BTreeMap<u32, TableSpec>) -> PyResult<Self> {
        let mut codec = p4rt_wire::WriteCodec::default();
        for (tid, (fields, actions)) in tables {
            let mut t = TableWire::default();
            for (id, kind, w) in fields {
                let kind = MatchKind::from_name(&kind)
                    .filter(|k| *k != MatchKind::Valid)
                    .ok_or_else(|| PyValueError::new_err(format!("table {tid}: match kind {kind:?}")))?;
                t.fields.push(FieldWire { id, kind, width: width(w, "a match field")? });
            }
            for (aid, params) in actions {
                for &(_, w) in &params {
                    width(w, "an action parameter")?;
                }
                t.actions.insert(aid, params);
            }
            codec.tables.insert(tid, t);
        }
        Ok(WriteCodec { codec })
    }

    /// Per update of the serialized WriteRequest `wire`, a tuple (type,
    /// table id, canonical key, engine key, (action id, args) or None,
    /// priority, controller_metadata, metadata) or None (not a common
    /// update); None for the request if it is not a message read here.
    fn decode(&self, py: Python<'_>, wire: &[u8]) -> PyResult<Option<Py<PyList>>> {
        let Some(updates) = self.codec.decode(wire) else {
            return Ok(None);
        };
        let out = PyList::empty_bound(py);
        for u in &updates {
            match u {
                Some(u) => out.append(to_py(py, u, &self.codec.tables[&u.table_id]))?,
                None => out.append(py.None())?,
            }
        }
        Ok(Some(out.unbind()))
    }
}
