//! The real-time loop's Python face: ports bound to interfaces, the loop
//! in a Rust thread (no GIL), events (packet-ins, digests) for Python.

use super::{Core, Engine, EngineError};
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
    d.set_item("handed_over", c.handed_over)?;
    d.set_item("behind_rounds", c.behind_rounds)?;
    Ok(d)
}

#[pymethods]
impl Engine {
    /// Binds switch port `port` to Linux interface `iface` (AF_PACKET; needs
    /// CAP_NET_RAW). Works before or while the loop runs. pcap_in/pcap_out:
    /// files that get every frame received / sent on the port.
    #[pyo3(signature = (port, iface, pcap_in=None, pcap_out=None))]
    fn rt_add_port(&mut self, port: u32, iface: &str, pcap_in: Option<&str>, pcap_out: Option<&str>) -> PyResult<()> {
        let p = crate::io::rt::PortIo::open(port, iface, pcap_in, pcap_out)
            .map_err(|e| EngineError::new_err(format!("port {port}@{iface}: {e}")))?;
        self.rt()?.shared.add_port(p);
        Ok(())
    }

    /// Unbinds a port; returns whether it was bound.
    fn rt_remove_port(&mut self, port: u32) -> PyResult<bool> {
        Ok(self.rt()?.shared.remove_port(port))
    }

    /// {port: interface} of the bound ports.
    fn rt_ports(&mut self) -> PyResult<std::collections::BTreeMap<u32, String>> {
        Ok(self.rt()?.shared.ifaces.lock().map(|m| m.clone()).unwrap_or_default())
    }

    /// Starts the real-time loop in a Rust thread. Packets the switch sends
    /// to `cpu_port` become ("packet_in", ...) events instead of frames.
    /// `priority`: the loop thread's SCHED_FIFO priority (1-99) while it
    /// keeps up (normal scheduling after 0.5 s busy without a pause, until
    /// it pauses); 0 or a process without CAP_SYS_NICE: normal scheduling.
    /// rt_stats() says which ("priority", "demotions").
    #[pyo3(signature = (cpu_port=None, priority=1))]
    fn rt_start(&mut self, cpu_port: Option<u32>, priority: i32) -> PyResult<()> {
        if !(0..=99).contains(&priority) {
            return Err(pyo3::exceptions::PyValueError::new_err(format!("priority {priority}: give 0..99")));
        }
        let core = self.core.clone();
        let r = self.rt()?;
        r.shared.priority.store(priority, std::sync::atomic::Ordering::Relaxed);
        *r.shared.cpu_port.lock().unwrap_or_else(|e| e.into_inner()) = cpu_port;
        r.start(core).map_err(|e| EngineError::new_err(format!("real time: {e}")))
    }

    /// Stops the loop (ports stay bound for a restart). GIL released.
    fn rt_stop(&mut self, py: Python<'_>) {
        if let Some(r) = self.rt.as_mut() {
            py.allow_threads(|| r.stop());
        }
    }

    #[getter]
    fn rt_running(&self) -> bool {
        self.rt.as_ref().map(|r| r.running()).unwrap_or(false)
    }

    /// A frame entering the switch on `port` at the current wall-clock time
    /// (a packet-out: the CPU port).
    fn rt_inject(&mut self, port: u32, data: Vec<u8>) -> PyResult<()> {
        self.rt()?.shared.inject(port, data);
        Ok(())
    }

    /// Up to `max` events, waiting up to `timeout` seconds for the first
    /// (GIL released): ("packet_in", port, bytes, time_ns) and
    /// ("digest", learn list name, [field bytes], time_ns).
    #[pyo3(signature = (max=1024, timeout=0.0))]
    fn rt_take_events(&mut self, py: Python<'_>, max: usize, timeout: f64) -> PyResult<PyObject> {
        let sh = self.rt()?.shared.clone();
        let t = std::time::Duration::from_secs_f64(timeout.clamp(0.0, 3600.0));
        let evs = py.allow_threads(move || sh.take_events(max, t));
        Ok(events(py, &self.core, evs)?.into())
    }

    /// A waiter for this engine's loop events and trace records that does
    /// not hold the engine while it waits (see RtWaiter.wait).
    fn rt_waiter(&mut self) -> PyResult<RtWaiter> {
        Ok(RtWaiter::new(self.rt()?.shared.clone()))
    }

    /// What the loop records per packet from now on (BMv2's --log-console
    /// traces): `packets`: arrival, drops, departures, digests of every
    /// packet; `log`: log_msg lines and run-time warnings (under packet id 0
    /// without `packets`); `dump_bytes`: how much of each frame the arrival
    /// and departure records keep. All off (the default) costs the loop
    /// nothing. Works before or while the loop runs.
    #[pyo3(signature = (packets=true, log=true, dump_bytes=0))]
    fn rt_trace(&mut self, packets: bool, log: bool, dump_bytes: usize) -> PyResult<()> {
        let cfg = crate::io::trace::TraceCfg { packets, log, dump: dump_bytes };
        self.rt()?.shared.set_trace(cfg);
        Ok(())
    }

    /// Up to `max` trace records, oldest first, without waiting (tuples:
    /// see the rt module's `traces`; e.g. ("sent", id, time_ns, copy,
    /// port, size, bytes)).
    #[pyo3(signature = (max=4096))]
    fn rt_take_traces(&mut self, py: Python<'_>, max: usize) -> PyResult<PyObject> {
        let recs = self.rt()?.shared.take_traces(max);
        Ok(traces(py, &self.core, recs)?.into())
    }

    /// Per-port frame counters of the loop, frames for ports without an
    /// interface (no_port), dropped events and trace records, frames the
    /// loop handed to its sending thread (handed_over), rounds that ended
    /// with frames to send while frames waited in a ring (behind_rounds).
    fn rt_stats(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let sh = self.rt()?.shared.clone();
        Ok(stats(py, &sh)?.into())
    }
}
