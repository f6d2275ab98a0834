//! The real-time loop's Python face: ports bound to interfaces, the loop
//! in a Rust thread (no GIL), events (packet-ins, digests) for Python.

use super::Core;
use crate::engine::Switch;
use crate::io::rt::{self, Event, Shared};
use crate::io::trace::{TraceEv, TraceKind};
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

impl rt::HostSwitch for Core {
    fn switch(&mut self) -> &mut Switch {
        &mut self.sw
    }
}

/// The loop of one engine.
pub struct Rt {
    pub shared: Arc<Shared>,
    pub thread: Option<JoinHandle<()>>,
}

impl Rt {
    pub fn new() -> std::io::Result<Rt> {
        Ok(Rt { shared: Shared::new()?, thread: None })
    }

    pub fn running(&self) -> bool {
        self.thread.as_ref().map(|t| !t.is_finished()).unwrap_or(false)
    }

    pub fn start(&mut self, core: Arc<Mutex<Core>>) -> std::io::Result<()> {
        if self.running() {
            return Ok(());
        }
        self.shared.reset_stop();
        let sh = self.shared.clone();
        let t = std::thread::Builder::new().name("p4scope-rt".into()).spawn(move || rt::run(core, sh))?;
        self.thread = Some(t);
        Ok(())
    }

    pub fn stop(&mut self) {
        self.shared.request_stop();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Rt {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Waits for the loop's events and trace records without holding the
/// engine: a thread blocks in `wait` (GIL released) while other threads
/// keep calling the engine, then takes what is waiting with the engine's
/// rt_take_events / rt_take_traces.
#[pyclass(module = "p4scope_dataplane", frozen)]
pub struct RtWaiter {
    shared: Arc<Shared>,
}

impl RtWaiter {
    pub fn new(shared: Arc<Shared>) -> RtWaiter {
        RtWaiter { shared }
    }
}

#[pymethods]
impl RtWaiter {
    /// Waits up to `timeout` seconds until the loop has events or trace
    /// records waiting; returns whether it has (False: timeout, or the
    /// loop was stopped).
    #[pyo3(signature = (timeout=0.2))]
    fn wait(&self, py: Python<'_>, timeout: f64) -> bool {
        let t = std::time::Duration::from_secs_f64(timeout.clamp(0.0, 3600.0));
        let sh = self.shared.clone();
        py.allow_threads(move || sh.wait_pending(t))
    }
}

/// Events as tuples: ("packet_in", port, bytes, time_ns) and
/// ("digest", learn list name, [field bytes], time_ns).
pub fn events<'py>(py: Python<'py>, core: &Mutex<Core>, evs: Vec<Event>) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty_bound(py);
    let names = learn_list_names(core);
    for e in evs {
        match e {
            Event::PacketIn { port, data, time_ns } => {
                out.append(("packet_in", port, PyBytes::new_bound(py, &data), time_ns))?;
            }
            Event::Digest { learn_id, values, time_ns } => {
                let vals: Vec<Bound<'_, PyBytes>> = values.iter().map(|v| PyBytes::new_bound(py, v)).collect();
                let name = names.get(learn_id as usize).cloned().unwrap_or_default();
                out.append(("digest", name, vals, time_ns))?;
            }
        }
    }
    Ok(out)
}

/// Trace records as tuples, kind first, then the packet id (0: none) and
/// the time (ns): ("received", id, t, port, size, bytes), ("log", id, t,
/// line), ("digest", id, t, learn list name), ("dropped", id, t, "ingress" |
/// "egress" | "queue", count), ("no_output", id, t) and ("sent", id, t,
/// copy, port, size, bytes); bytes are the first dump_bytes of the frame.
pub fn traces<'py>(py: Python<'py>, core: &Mutex<Core>, recs: Vec<TraceEv>) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty_bound(py);
    let mut names: Option<Vec<String>> = None;
    for r in recs {
        let (id, t) = (r.id, r.time_ns);
        match r.kind {
            TraceKind::Received { port, len, data } => {
                out.append(("received", id, t, port, len, PyBytes::new_bound(py, &data)))?
            }
            TraceKind::Log(line) => out.append(("log", id, t, line))?,
            TraceKind::Digest { learn_id } => {
                let names = names.get_or_insert_with(|| learn_list_names(core));
                let name = names.get(learn_id as usize).cloned().unwrap_or_default();
                out.append(("digest", id, t, name))?
            }
            TraceKind::Dropped { at, n } => out.append(("dropped", id, t, at.name(), n))?,
            TraceKind::NoOutput => out.append(("no_output", id, t))?,
            TraceKind::Sent { copy, port, len, data } => {
                out.append(("sent", id, t, copy, port, len, PyBytes::new_bound(py, &data)))?
            }
        }
    }
    Ok(out)
}

fn learn_list_names(core: &Mutex<Core>) -> Vec<String> {
    let c = super::lock(core);
    c.sw.prog.learn_lists.iter().map(|l| l.as_ref().map(|l| l.name.clone()).unwrap_or_default()).collect()
}

pub fn stats<'py>(py: Python<'py>, sh: &Shared) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new_bound(py);
    let ports = PyDict::new_bound(py);
    let ifaces = sh.ifaces.lock().map(|m| m.clone()).unwrap_or_default();
    for (p, s) in sh.stats.lock().map(|m| m.clone()).unwrap_or_default() {
        let x = PyDict::new_bound(py);
        x.set_item("iface", ifaces.get(&p).cloned())?;
        x.set_item("rx_frames", s.rx_frames)?;
        x.set_item("rx_bytes", s.rx_bytes)?;
        x.set_item("tx_frames", s.tx_frames)?;
        x.set_item("tx_bytes", s.tx_bytes)?;
        x.set_item("rx_truncated", s.rx_truncated)?;
        x.set_item("rx_dropped", s.rx_dropped)?;
        x.set_item("tx_errors", s.tx_errors)?;
        x.set_item("tx_blocked", s.tx_blocked)?;
        ports.set_item(p, x)?;
    }
    d.set_item("ports", ports)?;
    let c = sh.counters.lock().map(|c| *c).unwrap_or_default();
    d.set_item("no_port", c.no_port)?;
    d.set_item("events_dropped", c.events_dropped)?;
    d.set_item("traces_dropped", c.traces_dropped)?;
    d.set_item("wakeups", c.wakeups)?;
    d.set_item("priority", c.priority)?;
    d.set_item("demotions", c.demotions)?;
    Ok(d)
}
