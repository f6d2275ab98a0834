//! The Python extension module `p4scope_dataplane` — the only code that
//! knows about PyO3. Engine errors become Python exceptions here; panics
//! are caught at this boundary and reported as `EngineError`, never
//! propagated into Python. Batch calls release the GIL.

use crate::engine::{EngineError as CoreError, Switch};
use crate::program::MatchValue;
use crate::value::Val;
use num_bigint::{BigInt, Sign};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList, PyTuple};
use std::panic::{catch_unwind, AssertUnwindSafe};

create_exception!(p4scope_dataplane, EngineError, PyException, "An engine operation failed.");
create_exception!(p4scope_dataplane, LoadError, EngineError, "The BMv2 JSON cannot be run (what and where).");
create_exception!(p4scope_dataplane, TableError, EngineError, "A table operation was refused.");

#[cold]
fn to_py(e: CoreError) -> PyErr {
    match e {
        CoreError::Load(l) => LoadError::new_err(l.to_string()),
        CoreError::Table { .. } => TableError::new_err(e.to_string()),
        other => EngineError::new_err(other.to_string()),
    }
}

/// Runs `f`, turning a panic into an EngineError.
fn guard<T>(f: impl FnOnce() -> PyResult<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(p) => {
            let msg = p
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_else(|| "unknown".into());
            Err(EngineError::new_err(format!("internal engine error: {msg}")))
        }
    }
}

/// A Python int or bytes (big-endian) as an unbounded value.
fn to_val(o: &Bound<'_, PyAny>) -> PyResult<Val> {
    if let Ok(b) = o.downcast::<PyBytes>() {
        return Ok(Val::from_be_bytes(b.as_bytes()));
    }
    if let Ok(v) = o.extract::<i128>() {
        return Ok(Val::S(v));
    }
    let b: BigInt = o.extract()?;
    Ok(Val::from_big(b))
}

fn to_bytes(o: &Bound<'_, PyAny>) -> PyResult<Vec<u8>> {
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

fn val_to_py(py: Python<'_>, v: &Val) -> PyObject {
    match v {
        Val::S(s) => s.into_py(py),
        Val::B(b) => b.clone().into_py(py),
    }
}

/// Key items: int/bytes (exact), or tuples ("exact", v), ("lpm", v, len),
/// ("ternary", v, mask), ("optional", v, mask), ("range", lo, hi).
fn to_match(o: &Bound<'_, PyAny>) -> PyResult<MatchValue> {
    if let Ok(t) = o.downcast::<PyTuple>() {
        let kind: String = t.get_item(0)?.extract()?;
        let item = |i: usize| -> PyResult<Vec<u8>> { to_bytes(&t.get_item(i)?) };
        return Ok(match kind.as_str() {
            "exact" => MatchValue::Exact(item(1)?),
            "lpm" => MatchValue::Lpm(item(1)?, t.get_item(2)?.extract()?),
            "ternary" | "optional" => MatchValue::Ternary(item(1)?, item(2)?),
            "range" => MatchValue::Range(item(1)?, item(2)?),
            other => return Err(EngineError::new_err(format!("unknown match kind '{other}'"))),
        });
    }
    Ok(MatchValue::Exact(to_bytes(o)?))
}

fn vals(args: &Bound<'_, PyAny>) -> PyResult<Vec<Val>> {
    let mut out = vec![];
    for a in args.iter()? {
        out.push(to_val(&a?)?);
    }
    Ok(out)
}

/// A loaded P4 program on a simulated simple_switch.
#[pyclass(module = "p4scope_dataplane")]
pub struct Engine {
    sw: Switch,
}

#[pymethods]
impl Engine {
    /// Loads BMv2 JSON text. Raises LoadError naming what is wrong and where.
    #[new]
    #[pyo3(signature = (json, drop_port=511, priority_queues=1, seed=0))]
    fn new(json: &str, drop_port: u32, priority_queues: usize, seed: u64) -> PyResult<Engine> {
        guard(|| {
            let mut sw = Switch::from_json(json).map_err(to_py)?;
            sw.set_drop_port(drop_port);
            sw.tm = crate::tm::TrafficManager::new(priority_queues);
            sw.set_seed(seed);
            Ok(Engine { sw })
        })
    }

    /// Adds a table entry; returns its handle. `priority`: lower wins (BMv2).
    #[pyo3(signature = (table, action, key, args=None, priority=0))]
    fn table_add(
        &mut self,
        table: &str,
        action: &str,
        key: &Bound<'_, PyAny>,
        args: Option<&Bound<'_, PyAny>>,
        priority: i32,
    ) -> PyResult<u32> {
        let mut k = vec![];
        for item in key.iter()? {
            k.push(to_match(&item?)?);
        }
        let a = match args {
            Some(a) => vals(a)?,
            None => vec![],
        };
        guard(|| self.sw.table_add(table, &k, action, &a, priority).map_err(to_py))
    }

    #[pyo3(signature = (table, handle, action, args=None))]
    fn table_modify(&mut self, table: &str, handle: u32, action: &str, args: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let a = match args {
            Some(a) => vals(a)?,
            None => vec![],
        };
        guard(|| self.sw.table_modify(table, handle, action, &a).map_err(to_py))
    }

    fn table_delete(&mut self, table: &str, handle: u32) -> PyResult<()> {
        guard(|| self.sw.table_delete(table, handle).map_err(to_py))
    }

    fn table_clear(&mut self, table: &str) -> PyResult<()> {
        guard(|| self.sw.table_clear(table).map_err(to_py))
    }

    /// Removes every entry of every table.
    fn clear_all_tables(&mut self) {
        self.sw.clear_all_tables()
    }

    #[pyo3(signature = (table, action, args=None))]
    fn table_set_default(&mut self, table: &str, action: &str, args: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let a = match args {
            Some(a) => vals(a)?,
            None => vec![],
        };
        guard(|| self.sw.table_set_default(table, action, &a).map_err(to_py))
    }

    fn table_entry_count(&mut self, table: &str) -> PyResult<usize> {
        guard(|| self.sw.table_entry_count(table).map_err(to_py))
    }

    /// (bytes, packets) of an entry's direct counter.
    fn direct_counter_read(&self, table: &str, handle: u32) -> PyResult<(u64, u64)> {
        guard(|| self.sw.direct_counter(table, handle).map_err(to_py))
    }

    /// The full names of the program's tables.
    fn table_names(&self) -> Vec<String> {
        self.sw.prog.tables.iter().map(|t| t.name.clone()).collect()
    }

    /// For each table: (name, match_type, [(key name, match kind, width)], [action names]).
    fn table_info(&self, py: Python<'_>) -> PyObject {
        let list = PyList::empty_bound(py);
        for t in &self.sw.prog.tables {
            let keys: Vec<(String, String, u32)> =
                t.keys.iter().map(|k| (k.name.clone(), format!("{:?}", k.kind).to_lowercase(), k.width)).collect();
            let acts: Vec<String> = t.actions.iter().map(|a| self.sw.prog.actions[*a as usize].name.clone()).collect();
            let mt = format!("{:?}", t.match_type).to_lowercase();
            let _ = list.append((t.name.clone(), mt, keys, acts));
        }
        list.into()
    }

    /// For each action: (name, [(param name, width)]).
    fn action_info(&self) -> Vec<(String, Vec<(String, u32)>)> {
        self.sw
            .prog
            .actions
            .iter()
            .map(|a| (a.name.clone(), a.params.iter().map(|p| (p.name.clone(), p.width)).collect()))
            .collect()
    }

    fn counter_read(&self, name: &str, index: usize) -> PyResult<(u64, u64)> {
        guard(|| self.sw.counter_read(name, index).map_err(to_py))
    }

    fn counter_write(&mut self, name: &str, index: usize, bytes: u64, packets: u64) -> PyResult<()> {
        guard(|| self.sw.counter_write(name, index, bytes, packets).map_err(to_py))
    }

    fn register_read(&self, py: Python<'_>, name: &str, index: usize) -> PyResult<PyObject> {
        let v = guard(|| self.sw.register_read(name, index).map_err(to_py))?;
        Ok(val_to_py(py, &v))
    }

    fn register_write(&mut self, name: &str, index: usize, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = to_val(value)?;
        guard(|| self.sw.register_write(name, index, &v).map_err(to_py))
    }

    fn register_reset(&mut self, name: &str) -> PyResult<()> {
        guard(|| self.sw.register_reset(name).map_err(to_py))
    }

    /// rates: [(committed units per us, burst), (peak units per us, burst)].
    #[pyo3(signature = (name, index, rates))]
    fn meter_set_rates(&mut self, name: &str, index: Option<usize>, rates: Vec<(f64, u64)>) -> PyResult<()> {
        if rates.len() != 2 {
            return Err(EngineError::new_err("a meter takes two (rate, burst) pairs"));
        }
        guard(|| self.sw.meter_set_rates(name, index, [rates[0], rates[1]]).map_err(to_py))
    }

    fn vset_add(&mut self, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let b = to_bytes(value)?;
        guard(|| self.sw.vset_add(name, &b).map_err(to_py))
    }

    #[pyo3(signature = (session, port=None, mgid=None))]
    fn mirroring_add(&mut self, session: u32, port: Option<u32>, mgid: Option<u32>) -> PyResult<()> {
        guard(|| self.sw.mirroring_add(session, port, mgid).map_err(to_py))
    }

    fn mirroring_delete(&mut self, session: u32) {
        self.sw.mirroring_delete(session)
    }

    fn mc_group_create(&mut self, mgid: u32) -> u32 {
        self.sw.pre.group_create(mgid)
    }

    fn mc_group_destroy(&mut self, mgid: u32) {
        self.sw.pre.group_destroy(mgid)
    }

    /// Creates an L1 node (rid, ports); returns its handle.
    fn mc_node_create(&mut self, rid: u32, ports: Vec<u32>) -> u32 {
        self.sw.pre.node_create(rid, &ports)
    }

    fn mc_node_update(&mut self, node: u32, ports: Vec<u32>) -> PyResult<()> {
        if self.sw.pre.node_update(node, &ports) {
            Ok(())
        } else {
            Err(EngineError::new_err(format!("no multicast node {node}")))
        }
    }

    fn mc_node_associate(&mut self, mgid: u32, node: u32) -> PyResult<()> {
        if self.sw.pre.node_associate(mgid, node) {
            Ok(())
        } else {
            Err(EngineError::new_err(format!("no multicast group {mgid} or node {node}")))
        }
    }

    fn mc_node_dissociate(&mut self, mgid: u32, node: u32) -> PyResult<()> {
        if self.sw.pre.node_dissociate(mgid, node) {
            Ok(())
        } else {
            Err(EngineError::new_err(format!("no multicast group {mgid}")))
        }
    }

    /// Queue depth in packets (all ports when port is None).
    #[pyo3(signature = (depth, port=None, priority=None))]
    fn set_queue_depth(&mut self, depth: usize, port: Option<u32>, priority: Option<usize>) {
        self.sw.tm.set_queue_depth(port, priority, depth)
    }

    /// Queue rate in packets per second (0 or None: unlimited).
    #[pyo3(signature = (port, pps, priority=None))]
    fn set_queue_rate(&mut self, port: u32, pps: Option<u64>, priority: Option<usize>) {
        self.sw.tm.set_queue_rate(port, priority, pps)
    }

    /// Queues one packet arriving on `port` at `time_ns` (default: now).
    #[pyo3(signature = (port, data, time_ns=None))]
    fn inject(&mut self, port: u32, data: &[u8], time_ns: Option<u64>) {
        let t = time_ns.unwrap_or(self.sw.now_ns());
        self.sw.inject(port, data.to_vec(), t)
    }

    /// Processes every pending event (GIL released).
    fn run_until_idle(&mut self, py: Python<'_>) -> PyResult<()> {
        let sw = &mut self.sw;
        py.allow_threads(|| guard(|| {
            sw.run_until_idle();
            Ok(())
        }))
    }

    /// Processes events up to `time_ns` (GIL released).
    fn advance(&mut self, py: Python<'_>, time_ns: u64) -> PyResult<()> {
        let sw = &mut self.sw;
        py.allow_threads(|| guard(|| {
            sw.advance(time_ns);
            Ok(())
        }))
    }

    /// Injects a batch of (port, bytes, time_ns), runs until idle and
    /// returns the outputs as (port, bytes, time_ns). One GIL release for
    /// the whole batch.
    fn process(&mut self, py: Python<'_>, batch: Vec<(u32, Vec<u8>, u64)>) -> PyResult<PyObject> {
        let sw = &mut self.sw;
        let outs = py.allow_threads(|| {
            guard(|| {
                for (port, data, t) in batch {
                    sw.inject(port, data, t);
                }
                sw.run_until_idle();
                Ok(sw.take_outputs())
            })
        })?;
        let list = PyList::empty_bound(py);
        for o in outs {
            list.append((o.port, PyBytes::new_bound(py, &o.data), o.time_ns))?;
        }
        Ok(list.into())
    }

    /// Benchmark helper: sends `packets` [(port, bytes)] `repeat` times,
    /// 1 ns apart, in batches of 256, discarding the outputs; returns how
    /// many packets left the switch. The GIL is released throughout.
    fn process_repeat(&mut self, py: Python<'_>, packets: Vec<(u32, Vec<u8>)>, repeat: usize) -> PyResult<u64> {
        let sw = &mut self.sw;
        py.allow_threads(|| {
            guard(|| {
                let mut n = 0u64;
                let mut t = sw.now_ns();
                let mut pending = 0;
                for _ in 0..repeat {
                    for (port, data) in &packets {
                        t += 1;
                        sw.inject(*port, data.clone(), t);
                        pending += 1;
                        if pending == 256 {
                            sw.run_until_idle();
                            n += sw.take_outputs().len() as u64;
                            pending = 0;
                        }
                    }
                }
                sw.run_until_idle();
                n += sw.take_outputs().len() as u64;
                Ok(n)
            })
        })
    }

    /// Packets that left since the last call: [(port, bytes, time_ns)].
    fn take_outputs(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let list = PyList::empty_bound(py);
        for o in self.sw.take_outputs() {
            list.append((o.port, PyBytes::new_bound(py, &o.data), o.time_ns))?;
        }
        Ok(list.into())
    }

    /// Digests since the last call: [(learn list name, [field bytes], time_ns)].
    fn take_digests(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let list = PyList::empty_bound(py);
        for d in self.sw.take_digests() {
            let name = self
                .sw
                .prog
                .learn_lists
                .get(d.learn_id as usize)
                .and_then(|l| l.as_ref())
                .map(|l| l.name.clone())
                .unwrap_or_default();
            let vals: Vec<Bound<'_, PyBytes>> = d.values.iter().map(|v| PyBytes::new_bound(py, v)).collect();
            list.append((name, vals, d.time_ns))?;
        }
        Ok(list.into())
    }

    /// log_msg lines and run-time warnings since the last call.
    fn take_log(&mut self) -> Vec<String> {
        self.sw.take_log()
    }

    /// Packet counters of the switch.
    fn stats(&self, py: Python<'_>) -> PyResult<PyObject> {
        let s = self.sw.stats;
        let d = PyDict::new_bound(py);
        d.set_item("received", s.received)?;
        d.set_item("transmitted", s.transmitted)?;
        d.set_item("dropped_ingress", s.dropped_ingress)?;
        d.set_item("dropped_egress", s.dropped_egress)?;
        d.set_item("dropped_queue", s.dropped_queue)?;
        d.set_item("assert_failures", self.sw.rt.assert_failures)?;
        Ok(d.into())
    }

    #[getter]
    fn now_ns(&self) -> u64 {
        self.sw.now_ns()
    }
}

/// Checks a BMv2 JSON document; raises LoadError if the engine cannot run it.
#[pyfunction]
fn check_json(json: &str) -> PyResult<()> {
    guard(|| crate::json::load(json).map(|_| ()).map_err(|e| to_py(CoreError::Load(e))))
}

#[pymodule]
fn p4scope_dataplane(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Engine>()?;
    m.add_function(wrap_pyfunction!(check_json, m)?)?;
    m.add("EngineError", m.py().get_type_bound::<EngineError>())?;
    m.add("LoadError", m.py().get_type_bound::<LoadError>())?;
    m.add("TableError", m.py().get_type_bound::<TableError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
