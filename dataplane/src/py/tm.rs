//! The traffic manager's Python face: configuration, statistics, occupancy
//! and the ground-truth trace as dicts and array columns.

use super::conv::{array, parse_text, to_json};
use super::{guard, ConfigError, Engine, EngineError};
use crate::engine::Switch;
use crate::tm::config::TmConfig;
use crate::tm::trace::{Trace, TraceCfg};
use crate::tm::DROP_REASONS;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyString};
use serde_json::Value;

/// A configuration given as a dict, or as JSON or YAML text.
pub fn config_value(cfg: &Bound<'_, PyAny>) -> PyResult<Value> {
    if let Ok(s) = cfg.downcast::<PyString>() {
        return parse_text(s.to_str()?).map_err(|e| ConfigError::new_err(format!("traffic manager config: {e}")));
    }
    to_json(cfg)
}

/// Reads a .json, .yaml or .yml file.
pub fn config_file(path: &str) -> PyResult<Value> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| ConfigError::new_err(format!("traffic manager config: cannot read '{path}': {e}")))?;
    parse_text(&text).map_err(|e| ConfigError::new_err(format!("traffic manager config: {path}: {e}")))
}

/// Parses on top of the switch's current configuration.
pub fn parse(sw: &Switch, v: &Value) -> PyResult<TmConfig> {
    TmConfig::parse(v, &sw.tm.cfg).map_err(|e| ConfigError::new_err(e.to_string()))
}

pub fn apply(sw: &mut Switch, v: &Value) -> PyResult<()> {
    let cfg = parse(sw, v)?;
    sw.configure_tm(cfg).map_err(|e| ConfigError::new_err(e.to_string()))
}

/// One dict per queue that has seen traffic.
pub fn queue_stats<'py>(py: Python<'py>, sw: &Switch) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty_bound(py);
    let now = sw.now_ns();
    for (port, p) in sw.tm.ports() {
        for (qi, q) in p.queues.iter().enumerate() {
            let s = &q.stats;
            let d = PyDict::new_bound(py);
            d.set_item("port", port)?;
            d.set_item("queue", qi)?;
            d.set_item("pkts", q.pkts)?;
            d.set_item("bytes", q.bytes)?;
            d.set_item("enq_pkts", s.enq_pkts)?;
            d.set_item("enq_bytes", s.enq_bytes)?;
            d.set_item("deq_pkts", s.deq_pkts)?;
            d.set_item("deq_bytes", s.deq_bytes)?;
            d.set_item("drop_pkts", s.drop_pkts())?;
            d.set_item("drop_bytes", s.drop_bytes)?;
            let why = PyDict::new_bound(py);
            for (i, name) in DROP_REASONS.iter().enumerate() {
                if s.drops[i] != 0 {
                    why.set_item(*name, s.drops[i])?;
                }
            }
            d.set_item("drops", why)?;
            d.set_item("ecn_marked", s.ecn_marked)?;
            d.set_item("peak_pkts", s.peak_pkts)?;
            d.set_item("peak_bytes", s.peak_bytes)?;
            // time-weighted averages up to now
            let span = now.saturating_sub(s.since_ns);
            let extra = now.saturating_sub(s.last_ns) as u128;
            let ab = s.area_bytes_ns + q.bytes as u128 * extra;
            let ap = s.area_pkts_ns + q.pkts as u128 * extra;
            let (avg_b, avg_p) = if span > 0 { (ab as f64 / span as f64, ap as f64 / span as f64) } else { (0.0, 0.0) };
            d.set_item("avg_bytes", avg_b)?;
            d.set_item("avg_pkts", avg_p)?;
            out.append(d)?;
        }
    }
    Ok(out)
}

pub fn port_stats<'py>(py: Python<'py>, sw: &Switch) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty_bound(py);
    for (port, p) in sw.tm.ports() {
        let d = PyDict::new_bound(py);
        d.set_item("port", port)?;
        d.set_item("rate_bps", p.cfg.rate_bps)?;
        d.set_item("pkts", p.pkts)?;
        d.set_item("bytes", p.bytes)?;
        d.set_item("tx_pkts", p.tx_pkts)?;
        d.set_item("tx_bytes", p.tx_bytes)?;
        d.set_item("tx_wire_bytes", p.tx_wire_bytes)?;
        d.set_item("busy_ns", (p.busy_ps / 1000) as u64)?;
        out.append(d)?;
    }
    Ok(out)
}

/// What a queue (or all queues of a port) holds, per ingress port.
pub fn occupancy<'py>(py: Python<'py>, sw: &Switch, port: u32, queue: Option<usize>) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new_bound(py);
    let ing = PyDict::new_bound(py);
    let (mut pkts, mut bytes) = (0u64, 0u64);
    if let Some(p) = sw.tm.port(port) {
        for (qi, q) in p.queues.iter().enumerate() {
            if queue.map(|x| x != qi).unwrap_or(false) {
                continue;
            }
            pkts += q.pkts as u64;
            bytes += q.bytes;
            for o in &q.occ {
                if o.pkts == 0 {
                    continue;
                }
                let (a, b): (u64, u64) = match ing.get_item(o.port)? {
                    Some(t) => t.extract()?,
                    None => (0, 0),
                };
                ing.set_item(o.port, (a + o.pkts as u64, b + o.bytes))?;
            }
        }
    }
    d.set_item("pkts", pkts)?;
    d.set_item("bytes", bytes)?;
    d.set_item("ingress", ing)?;
    Ok(d)
}

pub fn buffer<'py>(py: Python<'py>, sw: &Switch) -> PyResult<Option<Bound<'py, PyDict>>> {
    let Some(b) = &sw.tm.buffer else { return Ok(None) };
    let d = PyDict::new_bound(py);
    d.set_item("size_bytes", b.cfg.size_bytes)?;
    d.set_item("shared_size", b.shared_size)?;
    d.set_item("used", b.used)?;
    d.set_item("shared_used", b.shared_used)?;
    d.set_item("peak_used", b.peak_used)?;
    d.set_item("cell_bytes", b.cfg.cell_bytes)?;
    Ok(Some(d))
}

pub fn trace_cfg(drops: bool, ports: Option<Vec<u32>>, max_records: usize) -> TraceCfg {
    TraceCfg { drops, ports: ports.unwrap_or_default(), max_records }
}

/// The trace's columns as `array.array`s (kind: 0 enqueue, 1 dequeue, 2 drop).
pub fn trace_columns<'py>(py: Python<'py>, t: &Trace) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new_bound(py);
    d.set_item("time_ns", array(py, &t.time_ns)?)?;
    d.set_item("port", array(py, &t.port)?)?;
    d.set_item("queue", array(py, &t.queue)?)?;
    d.set_item("ingress", array(py, &t.ingress)?)?;
    d.set_item("kind", array(py, &t.kind)?)?;
    d.set_item("len", array(py, &t.len)?)?;
    d.set_item("q_pkts", array(py, &t.q_pkts)?)?;
    d.set_item("q_bytes", array(py, &t.q_bytes)?)?;
    d.set_item("in_pkts", array(py, &t.in_pkts)?)?;
    d.set_item("in_bytes", array(py, &t.in_bytes)?)?;
    d.set_item("buffer_bytes", array(py, &t.buffer_bytes)?)?;
    d.set_item("overflow", t.overflow)?;
    Ok(d)
}

pub fn no_trace() -> PyErr {
    EngineError::new_err("no trace is being recorded (call tm_trace_start first)")
}

#[pymethods]
impl Engine {
    /// Configures the traffic manager: a dict, or JSON or YAML text (see
    /// the crate's config for the keys). Settings not given keep their
    /// current values. Raises ConfigError naming the offending key.
    fn tm_configure(&mut self, config: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = config_value(config)?;
        guard(|| apply(&mut self.lock().sw, &v))
    }

    /// tm_configure with a .json, .yaml or .yml file.
    fn tm_configure_file(&mut self, path: &str) -> PyResult<()> {
        let v = config_file(path)?;
        guard(|| apply(&mut self.lock().sw, &v))
    }

    /// A port's line rate in bit/s, the 20-byte preamble and gap (and the
    /// 4-byte FCS) counted; None: unlimited, as BMv2.
    #[pyo3(signature = (port, bps))]
    fn set_port_rate(&mut self, port: u32, bps: Option<u64>) {
        self.lock().sw.tm.set_port_rate(port, bps)
    }

    /// One dict per queue that has seen traffic: occupancy, counters,
    /// drops by reason, ECN marks, peaks and time-weighted averages.
    fn tm_queue_stats(&self, py: Python<'_>) -> PyResult<PyObject> {
        Ok(queue_stats(py, &self.lock().sw)?.into())
    }

    /// One dict per egress port: transmitted packets/bytes/wire bytes and busy time.
    fn tm_port_stats(&self, py: Python<'_>) -> PyResult<PyObject> {
        Ok(port_stats(py, &self.lock().sw)?.into())
    }

    /// {"pkts", "bytes", "ingress": {port: (pkts, bytes)}} of one queue or
    /// of all queues of a port.
    #[pyo3(signature = (port, queue=None))]
    fn tm_occupancy(&self, py: Python<'_>, port: u32, queue: Option<usize>) -> PyResult<PyObject> {
        Ok(occupancy(py, &self.lock().sw, port, queue)?.into())
    }

    /// The shared buffer's state, or None without one.
    fn tm_buffer(&self, py: Python<'_>) -> PyResult<PyObject> {
        Ok(buffer(py, &self.lock().sw)?.map(|d| d.into_py(py)).unwrap_or_else(|| py.None()))
    }

    /// Starts recording the ground-truth occupancy trace (every enqueue
    /// and dequeue; drops too when asked; only some egress ports if given).
    #[pyo3(signature = (drops=false, ports=None, max_records=0))]
    fn tm_trace_start(&mut self, drops: bool, ports: Option<Vec<u32>>, max_records: usize) {
        self.lock().sw.tm.trace_start(trace_cfg(drops, ports, max_records))
    }

    /// The records since the last call, as columns (array.array): time_ns,
    /// port, queue, ingress, kind (0 enq, 1 deq, 2 drop), len, q_pkts,
    /// q_bytes, in_pkts, in_bytes (the packet's ingress port in that queue),
    /// buffer_bytes; and overflow (records not kept).
    fn tm_trace_take(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let mut g = self.lock();
        let t = g.sw.tm.trace.as_mut().ok_or_else(no_trace)?;
        Ok(t.drain(|t| trace_columns(py, t))?.into())
    }

    /// Stops recording and returns what was left, as tm_trace_take.
    fn tm_trace_stop(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let t = self.lock().sw.tm.trace_stop().ok_or_else(no_trace)?;
        Ok(trace_columns(py, &t)?.into())
    }
}
