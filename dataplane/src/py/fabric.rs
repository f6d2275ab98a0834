//! The fabric's Python face: several engines (each configured as a switch
//! alone, over P4Runtime or directly) joined by links and run as one in
//! virtual time with one tester.
//!
//! The Fabric holds the engines' cores: each switch's tables, traffic
//! manager, trace and counters stay readable through its own Engine.
//! The tester's results name ports as (switch index, port).

use super::sim::{records, stream_cfg, stream_stats};
use super::{guard, lock, ConfigError, Core, Engine, EngineError};
use crate::engine::Switch;
use crate::sim::fabric::Fabric as Core_;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};
use std::sync::{Arc, Mutex, MutexGuard};

/// Switches in one virtual-time run: `Fabric([engine, ...], seed)`.
#[pyclass(module = "p4scope_dataplane")]
pub struct Fabric {
    engines: Vec<Py<Engine>>,
    cores: Vec<Arc<Mutex<Core>>>,
    inner: Core_,
}

/// Every core locked, in address order (so two fabrics sharing engines
/// never wait on each other), handed back in the fabric's order.
fn lock_all(cores: &[Arc<Mutex<Core>>]) -> Vec<MutexGuard<'_, Core>> {
    let mut order: Vec<usize> = (0..cores.len()).collect();
    order.sort_by_key(|i| Arc::as_ptr(&cores[*i]) as usize);
    let mut held: Vec<Option<MutexGuard<'_, Core>>> = (0..cores.len()).map(|_| None).collect();
    for i in order {
        held[i] = Some(lock(&cores[i]));
    }
    held.into_iter().flatten().collect()
}

fn switches<'a>(guards: &'a mut [MutexGuard<'_, Core>]) -> Vec<&'a mut Switch> {
    guards.iter_mut().map(|g| &mut g.sw).collect()
}

impl Fabric {
    fn end(&self, switch: usize, port: u32) -> PyResult<(usize, u32)> {
        if switch >= self.cores.len() {
            return Err(ConfigError::new_err(format!(
                "switch {switch}: the fabric has switches 0..{}",
                self.cores.len() - 1
            )));
        }
        Ok((switch, port))
    }

    /// (switch, port) of an edge id.
    fn place(&self, edge: u32) -> (usize, u32) {
        self.inner.edge_ports.get(edge as usize).copied().unwrap_or((usize::MAX, edge))
    }

    /// Rewrites a tester row's edge id under `key` as the switch's port,
    /// with the switch's index under `switch_key`.
    fn name_port(&self, d: &Bound<'_, PyDict>, key: &str, switch_key: &str) -> PyResult<()> {
        match d.get_item(key)? {
            Some(v) if !v.is_none() => {
                let (sw, port) = self.place(v.extract()?);
                d.set_item(switch_key, sw)?;
                d.set_item(key, port)
            }
            _ => d.set_item(switch_key, Option::<usize>::None),
        }
    }
}

#[pymethods]
impl Fabric {
    /// A fabric of the engines, switch i being `engines[i]`; `seed` seeds
    /// the tester's sources (each engine keeps its own seed).
    #[new]
    #[pyo3(signature = (engines, seed=0))]
    fn new(py: Python<'_>, engines: Vec<Py<Engine>>, seed: u64) -> PyResult<Fabric> {
        if engines.is_empty() {
            return Err(ConfigError::new_err("a fabric needs at least one engine"));
        }
        let cores: Vec<Arc<Mutex<Core>>> = engines.iter().map(|e| e.borrow(py).core.clone()).collect();
        for (i, c) in cores.iter().enumerate() {
            if let Some(j) = cores[..i].iter().position(|d| Arc::ptr_eq(c, d)) {
                return Err(ConfigError::new_err(format!("engines {j} and {i} are the same engine")));
            }
        }
        let inner = Core_::new(cores.len(), seed);
        Ok(Fabric { engines, cores, inner })
    }

    /// Number of switches.
    fn __len__(&self) -> usize {
        self.cores.len()
    }

    /// Joins (switch, port) `a` and `b` with a full-duplex link of
    /// `delay_ns` propagation delay. With `rate_bps` both ports run at that
    /// line rate (the traffic manager's port rate); without, each must
    /// have one. A frame is at the far port when its last bit is: its
    /// first bit out + its bits at that rate (preamble, frame, FCS) +
    /// the delay.
    #[pyo3(signature = (a, b, rate_bps=None, delay_ns=0))]
    fn link(&mut self, a: (usize, u32), b: (usize, u32), rate_bps: Option<u64>, delay_ns: u64) -> PyResult<()> {
        let a = self.end(a.0, a.1)?;
        let b = self.end(b.0, b.1)?;
        let mut guards = lock_all(&self.cores);
        let mut sws = switches(&mut guards);
        self.inner.link(&mut sws, a, b, rate_bps, delay_ns).map_err(ConfigError::new_err)
    }

    /// One dict per link direction: from_switch, from_port, to_switch,
    /// to_port, rate_bps (the sending port's), delay_ns, frames, bytes.
    fn links<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let guards = lock_all(&self.cores);
        let out = PyList::empty_bound(py);
        for l in &self.inner.links {
            let d = PyDict::new_bound(py);
            d.set_item("from_switch", l.from.0)?;
            d.set_item("from_port", l.from.1)?;
            d.set_item("to_switch", l.to.0)?;
            d.set_item("to_port", l.to.1)?;
            d.set_item("rate_bps", guards[l.from.0].sw.tm.cfg.port(l.from.1).rate_bps)?;
            d.set_item("delay_ns", l.delay_ns)?;
            d.set_item("frames", l.frames)?;
            d.set_item("bytes", l.bytes)?;
            out.append(d)?;
        }
        Ok(out)
    }

    /// Adds a tester stream entering `switch` on `port` (not a linked
    /// port); returns its id. Keywords as Engine.add_stream (the line rate
    /// defaults to that port's).
    #[pyo3(signature = (switch, port, **kw))]
    fn add_stream(&mut self, py: Python<'_>, switch: usize, port: u32, kw: Option<&Bound<'_, PyDict>>) -> PyResult<u16> {
        let end = self.end(switch, port)?;
        let id = self.inner.tester.sources.len();
        let cfg = {
            let c = lock(&self.cores[switch]);
            stream_cfg(py, &c.sw, port, kw, id)?
        };
        let pause = super::sim::pause_priority(kw)?;
        let wire = super::mac::wire_opts(kw)?;
        let sid = self.inner.add_stream(end, cfg).map_err(ConfigError::new_err)?;
        self.inner.tester.sources[sid as usize].pause.priority = pause;
        self.inner.tester.sources[sid as usize].wire = wire;
        Ok(sid)
    }

    /// Removes every stream and its results.
    fn clear_streams(&mut self) {
        self.inner.clear_streams()
    }

    /// Forgets the receive results and the links' counters (streams stay).
    fn reset_stats(&mut self) {
        self.inner.reset_stats()
    }

    /// The fabric's virtual time: the furthest any switch's clock went.
    fn now_ns(&self) -> u64 {
        let mut guards = lock_all(&self.cores);
        Core_::now_ns(&switches(&mut guards))
    }

    /// Runs virtual time for `duration_ns` (or until `until_ns`): the
    /// streams' frames arrive, the switches forward them over the links,
    /// the sinks count what leaves the fabric. With `drain`, the switches
    /// and links then run until idle. Returns the number of events (source
    /// frames, link arrivals, switch events). The GIL is released; each
    /// engine is locked meanwhile.
    #[pyo3(signature = (duration_ns=None, until_ns=None, drain=false))]
    fn run(&mut self, py: Python<'_>, duration_ns: Option<u64>, until_ns: Option<u64>, drain: bool) -> PyResult<u64> {
        for e in &self.engines {
            let e = e.try_borrow(py).map_err(|_| EngineError::new_err("Fabric.run: an engine is in use"))?;
            e.check_not_real_time("Fabric.run")?;
        }
        let (cores, inner) = (&self.cores, &mut self.inner);
        py.allow_threads(move || {
            guard(|| {
                let mut guards = lock_all(cores);
                let mut sws = switches(&mut guards);
                let until = match (duration_ns, until_ns) {
                    (Some(d), None) => Core_::now_ns(&sws).saturating_add(d),
                    (None, Some(u)) => u,
                    (None, None) => u64::MAX,
                    _ => return Err(EngineError::new_err("give duration_ns or until_ns, not both")),
                };
                let endless = inner.tester.sources.iter().any(|s| {
                    s.cfg.duration_ns.is_none() && s.cfg.frames.is_none() && s.cfg.burst.and_then(|b| b.count).is_none()
                });
                if until == u64::MAX && endless {
                    return Err(EngineError::new_err("a stream without end: give duration_ns or until_ns"));
                }
                let before = inner.tester.events;
                inner.run(&mut sws, until, drain).map_err(EngineError::new_err)?;
                Ok(inner.tester.events - before)
            })
        })
    }

    /// Per stream and port it left the fabric on: as Engine.stream_stats,
    /// with tx_switch and rx_switch beside tx_port and rx_port.
    fn stream_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let rows = stream_stats(py, &self.inner.tester)?;
        for r in rows.iter() {
            let d = r.downcast::<PyDict>()?;
            self.name_port(d, "tx_port", "tx_switch")?;
            self.name_port(d, "rx_port", "rx_switch")?;
        }
        Ok(rows)
    }

    /// Per port frames left the fabric on: switch, port, frames, bytes,
    /// untagged frames, first/last time.
    fn port_rx_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyList>> {
        let rows = super::sim::port_stats(py, &self.inner.tester)?;
        for r in rows.iter() {
            self.name_port(r.downcast::<PyDict>()?, "port", "switch")?;
        }
        Ok(rows)
    }

    /// (bin edges in ns, counts) of a stream's latency, on one exit
    /// (switch, port) or all of them.
    #[pyo3(signature = (stream, switch=None, port=None))]
    fn latency_histogram(&self, stream: u16, switch: Option<usize>, port: Option<u32>) -> (Vec<u64>, Vec<u64>) {
        let t = &self.inner.tester;
        let mut counts = vec![0u64; t.edges.len()];
        for ((s, e), r) in &t.rx {
            let (sw, p) = self.place(*e);
            if *s == stream && switch.map_or(true, |x| x == sw) && port.map_or(true, |x| x == p) {
                for (a, b) in counts.iter_mut().zip(&r.hist) {
                    *a += b;
                }
            }
        }
        (t.edges.clone(), counts)
    }

    /// Keeps (or stops keeping) one record per received tagged frame.
    #[pyo3(signature = (enabled=true))]
    fn record_rx(&mut self, enabled: bool) {
        self.inner.tester.record = if enabled { Some(Default::default()) } else { None };
    }

    /// The received frames' records as columns (array.array): stream, seq,
    /// switch, port, size, tx_ns, rx_ns.
    fn rx_records<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = records(py, &self.inner.tester)?;
        let empty = Default::default();
        let r = self.inner.tester.record.as_ref().unwrap_or(&empty);
        let (sw, port): (Vec<u16>, Vec<u16>) = r.port.iter().map(|e| {
            let (s, p) = self.place(*e as u32);
            (s as u16, p as u16)
        }).unzip();
        d.set_item("switch", super::conv::array(py, &sw)?)?;
        d.set_item("port", super::conv::array(py, &port)?)?;
        Ok(d)
    }

    /// A hash of every frame that left any switch in virtual time (onto a
    /// link or out of the fabric: where, when, bytes): equal for two runs
    /// exactly when they agree.
    fn sim_digest(&self) -> String {
        format!("{:016x}", self.inner.tester.digest)
    }

    /// Keeps every frame that leaves the fabric on (switch, port), as
    /// Engine.capture_port.
    #[pyo3(signature = (switch, port, limit=None))]
    fn capture_port(&mut self, switch: usize, port: u32, limit: Option<usize>) -> PyResult<()> {
        let e = self.inner.edge(self.end(switch, port)?).map_err(ConfigError::new_err)?;
        self.inner.tester.captures.start(e, limit);
        Ok(())
    }

    /// The frames captured on (switch, port) since the last take, as
    /// [(time_ns, bytes)]; an empty list for a port not captured.
    fn take_captured<'py>(&mut self, py: Python<'py>, switch: usize, port: u32) -> PyResult<Bound<'py, PyList>> {
        let frames = match self.inner.edge_id((switch, port)).and_then(|e| self.inner.tester.captures.ports.get_mut(&e)) {
            Some(c) => c.take(),
            None => vec![],
        };
        let out = PyList::empty_bound(py);
        for (t, data) in frames {
            out.append((t, PyBytes::new_bound(py, &data)))?;
        }
        Ok(out)
    }

    /// Frames on the links now (sent, not yet arrived).
    fn in_flight(&self) -> usize {
        self.inner.in_flight()
    }
}
