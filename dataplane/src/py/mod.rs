//! The Python extension module `p4scope_dataplane` — the only code that
//! knows about PyO3. Engine errors become Python exceptions here; panics
//! are caught at this boundary and reported as `EngineError`, never
//! propagated into Python. Batch calls release the GIL.

mod conv;
mod externs;
mod fabric;
mod links;
mod mac;
mod multicast;
mod packets;
mod pfc;
mod profiles;
mod rt;
mod sim;
mod tables;
mod tm;
mod writes;

use crate::engine::{EngineError as CoreError, Switch};
use conv::{to_bytes, to_key, to_val, val_to_py, vals};
use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::{Arc, Mutex, MutexGuard};

create_exception!(p4scope_dataplane, EngineError, PyException, "An engine operation failed.");
create_exception!(p4scope_dataplane, LoadError, EngineError, "The BMv2 JSON cannot be run (what and where).");
create_exception!(p4scope_dataplane, TableError, EngineError, "A table operation was refused.");
create_exception!(p4scope_dataplane, ConfigError, EngineError, "A configuration was refused (what and where).");

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

/// What one engine object owns; shared with the real-time thread.
pub struct Core {
    pub sw: Switch,
    pub tester: crate::sim::Tester,
}

fn lock(core: &Mutex<Core>) -> MutexGuard<'_, Core> {
    // a panic caught at the boundary leaves the switch usable
    core.lock().unwrap_or_else(|e| e.into_inner())
}

/// A loaded P4 program on a simulated simple_switch.
#[pyclass(module = "p4scope_dataplane")]
pub struct Engine {
    core: Arc<Mutex<Core>>,
    rt: Option<rt::Rt>,
}

impl Engine {
    fn lock(&self) -> MutexGuard<'_, Core> {
        lock(&self.core)
    }

    fn rt(&mut self) -> PyResult<&mut rt::Rt> {
        if self.rt.is_none() {
            self.rt = Some(rt::Rt::new().map_err(|e| EngineError::new_err(format!("real time: {e}")))?);
        }
        Ok(self.rt.as_mut().expect("created above"))
    }

    fn check_not_real_time(&self, what: &str) -> PyResult<()> {
        if self.rt.as_ref().map(|r| r.running()).unwrap_or(false) {
            return Err(EngineError::new_err(format!("{what}: the real-time loop is running (rt_stop first)")));
        }
        Ok(())
    }
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
            let tester = crate::sim::Tester::new(seed);
            Ok(Engine { core: Arc::new(Mutex::new(Core { sw, tester })), rt: None })
        })
    }
}

/// The packets of a pcap file (either byte order, us or ns timestamps):
/// [(time_ns, bytes)].
#[pyfunction]
fn pcap_read(py: Python<'_>, path: &str) -> PyResult<PyObject> {
    let pk = crate::io::pcap::read(path).map_err(|e| EngineError::new_err(e.to_string()))?;
    let list = PyList::empty_bound(py);
    for (t, d) in pk {
        list.append((t, PyBytes::new_bound(py, &d)))?;
    }
    Ok(list.into())
}

/// Writes [(time_ns, bytes)] as a pcap file (nanosecond timestamps).
#[pyfunction]
fn pcap_write(path: &str, packets: Vec<(u64, Vec<u8>)>) -> PyResult<()> {
    let mut w = crate::io::pcap::PcapWriter::create(path).map_err(|e| EngineError::new_err(format!("{path}: {e}")))?;
    for (t, d) in packets {
        w.write(t, &d).map_err(|e| EngineError::new_err(format!("{path}: {e}")))?;
    }
    w.flush().map_err(|e| EngineError::new_err(format!("{path}: {e}")))
}

/// Checks a traffic-manager configuration (dict, JSON or YAML text)
/// without an engine; raises ConfigError naming what is wrong and where.
/// The engine's queues are not known here: any of the 8 may be named.
#[pyfunction]
fn tm_config_check(config: &Bound<'_, PyAny>) -> PyResult<()> {
    let v = tm::config_value(config)?;
    let base = crate::tm::TmConfig { nb_queues: crate::tm::config::MAX_QUEUES, ..Default::default() };
    crate::tm::TmConfig::parse(&v, &base)
        .map(|_| ())
        .map_err(|e| ConfigError::new_err(e.to_string()))
}

/// Checks a BMv2 JSON document; raises LoadError if the engine cannot run it.
#[pyfunction]
fn check_json(json: &str) -> PyResult<()> {
    guard(|| crate::json::load(json).map(|_| ()).map_err(|e| to_py(CoreError::Load(e))))
}

/// `SOURCE_HASH` of the engine's sources in `crate_dir` (the folder of
/// dataplane/Cargo.toml) as they are now.
#[pyfunction]
fn source_hash(crate_dir: &str) -> String {
    crate::source_hash::source_hash(std::path::Path::new(crate_dir))
}

#[pymodule]
fn p4scope_dataplane(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Engine>()?;
    m.add_class::<fabric::Fabric>()?;
    m.add_class::<rt::RtWaiter>()?;
    m.add_class::<writes::WriteCodec>()?;
    m.add_function(wrap_pyfunction!(check_json, m)?)?;
    m.add_function(wrap_pyfunction!(tm_config_check, m)?)?;
    m.add_function(wrap_pyfunction!(pcap_read, m)?)?;
    m.add_function(wrap_pyfunction!(pcap_write, m)?)?;
    m.add_function(wrap_pyfunction!(source_hash, m)?)?;
    m.add("ConfigError", m.py().get_type_bound::<ConfigError>())?;
    m.add("EngineError", m.py().get_type_bound::<EngineError>())?;
    m.add("LoadError", m.py().get_type_bound::<LoadError>())?;
    m.add("TableError", m.py().get_type_bound::<TableError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("SOURCE_HASH", env!("P4SCOPE_SOURCE_HASH"))?;
    Ok(())
}
