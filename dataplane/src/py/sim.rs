//! The virtual-time tester's Python face: streams from keyword arguments,
//! results as dicts and columns.

use super::conv::array;
use super::{guard, lock, ConfigError, Core, Engine, EngineError};
use crate::engine::Switch;
use crate::sim::capture::Block;
use crate::sim::frame::{udp_template, FrameBuilder, Vary};
use crate::sim::stream::{Burst, Rate, Sizes, StreamCfg};
use crate::sim::Tester;
use pyo3::prelude::*;
use pyo3::types::{PyBytes, PyDict, PyList};

const KEYS: &[&str] = &[
    "name",
    "rate_pct",
    "rate_bps",
    "rate_fps",
    "line_rate_bps",
    "size",
    "sizes",
    "imix",
    "weights",
    "burst",
    "burst_gap_ns",
    "bursts",
    "start_ns",
    "duration_ns",
    "frames",
    "template",
    "dst_mac",
    "src_mac",
    "src_ip",
    "dst_ip",
    "sport",
    "dport",
    "dscp",
    "macs",
    "vary",
    "tag",
    "priority",
    "obey_pause",
    "ifg_bits",
    "bad_fcs",
];

fn bad(msg: impl Into<String>) -> PyErr {
    ConfigError::new_err(msg.into())
}

fn get<'py, T: FromPyObject<'py>>(kw: &Bound<'py, PyDict>, k: &str) -> PyResult<Option<T>> {
    match kw.get_item(k)? {
        Some(v) if !v.is_none() => v.extract().map(Some).map_err(|e| bad(format!("add_stream: {k}: {e}"))),
        _ => Ok(None),
    }
}

/// Builds a stream from `add_stream`'s keyword arguments.
pub fn stream_cfg(py: Python<'_>, sw: &Switch, port: u32, kw: Option<&Bound<'_, PyDict>>, id: usize) -> PyResult<StreamCfg> {
    let empty = PyDict::new_bound(py);
    let kw = kw.unwrap_or(&empty);
    for k in kw.keys() {
        let k: String = k.extract()?;
        if !KEYS.contains(&k.as_str()) {
            return Err(bad(format!("add_stream: unknown argument '{k}' (known: {})", KEYS.join(", "))));
        }
    }
    let rate = match (get::<f64>(kw, "rate_pct")?, get::<f64>(kw, "rate_bps")?, get::<f64>(kw, "rate_fps")?) {
        (Some(p), None, None) => Rate::Percent(p),
        (None, Some(b), None) => Rate::Bps(b),
        (None, None, Some(f)) => Rate::Fps(f),
        (None, None, None) => Rate::Percent(100.0),
        _ => return Err(bad("add_stream: give one of rate_pct, rate_bps, rate_fps")),
    };
    match rate {
        Rate::Percent(p) if !(p > 0.0 && p <= 100.0) => return Err(bad("add_stream: rate_pct must be in (0, 100]")),
        Rate::Bps(b) | Rate::Fps(b) if !(b > 0.0 && b.is_finite()) => {
            return Err(bad("add_stream: the rate must be positive"))
        }
        _ => {}
    }
    let line = match get::<f64>(kw, "line_rate_bps")? {
        Some(l) => l,
        None => match sw.tm.cfg.port(port).rate_bps {
            Some(r) => r as f64,
            None => {
                return Err(bad(format!(
                    "add_stream: port {port} has no line rate; set one (set_port_rate or tm_configure) or give line_rate_bps"
                )))
            }
        },
    };
    if !(line > 0.0) {
        return Err(bad("add_stream: line_rate_bps must be positive"));
    }
    let sizes = if get::<bool>(kw, "imix")?.unwrap_or(false) {
        Sizes::imix()
    } else if let Some(w) = get::<Vec<(u32, u32)>>(kw, "weights")? {
        if w.is_empty() || w.iter().all(|x| x.1 == 0) {
            return Err(bad("add_stream: weights must not be empty"));
        }
        Sizes::Weighted(w)
    } else if let Some(l) = get::<Vec<u32>>(kw, "sizes")? {
        if l.is_empty() {
            return Err(bad("add_stream: sizes must not be empty"));
        }
        Sizes::List(l)
    } else {
        Sizes::Fixed(get::<u32>(kw, "size")?.unwrap_or(64))
    };
    let burst = match get::<u64>(kw, "burst")? {
        Some(0) => return Err(bad("add_stream: burst must be positive")),
        Some(n) => Some(Burst {
            frames: n,
            gap_ns: get::<u64>(kw, "burst_gap_ns")?.unwrap_or(0),
            count: match get::<u64>(kw, "bursts")? {
                Some(c) => Some(c),
                None if get::<u64>(kw, "burst_gap_ns")?.is_none() => Some(1),
                None => None,
            },
        }),
        None => None,
    };
    let dst_mac = get::<u64>(kw, "dst_mac")?.unwrap_or(0x0200_0000_0000 | 0xff);
    let src_mac = get::<u64>(kw, "src_mac")?.unwrap_or(0x0200_0000_0000 | ((id as u64) << 8) | port as u64);
    let template = match kw.get_item("template")? {
        Some(t) if !t.is_none() => t.downcast::<PyBytes>().map_err(|_| bad("add_stream: template must be bytes"))?.as_bytes().to_vec(),
        _ => udp_template(
            dst_mac,
            src_mac,
            get::<u32>(kw, "src_ip")?.unwrap_or(0x0a00_0000 | ((port & 0xff) << 8) | 1),
            get::<u32>(kw, "dst_ip")?.unwrap_or(0x0a00_ff01),
            get::<u16>(kw, "sport")?.unwrap_or(1024 + id as u16),
            get::<u16>(kw, "dport")?.unwrap_or(5001),
            get::<u8>(kw, "dscp")?.unwrap_or(0) & 0x3f,
        ),
    };
    let mut vary = vec![];
    if let Some(n) = get::<u64>(kw, "macs")? {
        if n == 0 {
            return Err(bad("add_stream: macs must be positive"));
        }
        let start = template.get(6..12).map(|b| b.iter().fold(0u64, |a, x| (a << 8) | *x as u64)).unwrap_or(0);
        vary.push(Vary { offset: 6, width: 6, start, step: 1, count: n });
    }
    if let Some(list) = kw.get_item("vary")? {
        if !list.is_none() {
            for (i, v) in list.iter()?.enumerate() {
                let v = v?;
                let d = v.downcast::<PyDict>().map_err(|_| bad(format!("add_stream: vary[{i}] must be a dict")))?;
                let offset: usize = get(d, "offset")?.ok_or_else(|| bad(format!("add_stream: vary[{i}] needs offset")))?;
                let width: usize = get(d, "width")?.ok_or_else(|| bad(format!("add_stream: vary[{i}] needs width")))?;
                let start = match get::<u64>(d, "start")? {
                    Some(s) => s,
                    None => template
                        .get(offset..offset + width.min(8))
                        .map(|b| b.iter().fold(0u64, |a, x| (a << 8) | *x as u64))
                        .unwrap_or(0),
                };
                vary.push(Vary {
                    offset,
                    width,
                    start,
                    step: get(d, "step")?.unwrap_or(1),
                    count: get(d, "count")?.ok_or_else(|| bad(format!("add_stream: vary[{i}] needs count")))?,
                });
            }
        }
    }
    let builder = FrameBuilder::new(template, vary, get::<bool>(kw, "tag")?.unwrap_or(true))
        .map_err(|e| bad(format!("add_stream: {e}")))?;
    Ok(StreamCfg {
        name: get::<String>(kw, "name")?.unwrap_or_else(|| format!("stream{id}")),
        port,
        rate,
        line_rate_bps: line,
        sizes,
        burst,
        start_ns: get::<u64>(kw, "start_ns")?.unwrap_or(0),
        duration_ns: get::<u64>(kw, "duration_ns")?,
        frames: get::<u64>(kw, "frames")?,
        builder,
    })
}

/// The priority whose PFC pause frames a stream obeys (None: it ignores them).
pub(super) fn pause_priority(kw: Option<&Bound<'_, PyDict>>) -> PyResult<Option<u8>> {
    let Some(kw) = kw else { return Ok(Some(0)) };
    let prio = get::<u8>(kw, "priority")?.unwrap_or(0);
    if prio > 7 {
        return Err(bad(format!("add_stream: priority {prio} is out of range 0..7")));
    }
    Ok(get::<bool>(kw, "obey_pause")?.unwrap_or(true).then_some(prio))
}

/// One row per (stream, egress port) that received frames, and one per
/// stream that received nothing.
pub fn stream_stats<'py>(py: Python<'py>, t: &Tester) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty_bound(py);
    for s in &t.sources {
        let window_ns = (s.last_end_ps / 1000).saturating_sub(s.first_tx_ns.unwrap_or(0)).max(1);
        let rows: Vec<_> = t.rx.range((s.id, 0)..=(s.id, u32::MAX)).collect();
        let total_rx: u64 = rows.iter().map(|(_, r)| r.frames).sum();
        let emit = |rx_port: Option<u32>, r: Option<&crate::sim::sink::RxStats>| -> PyResult<()> {
            let d = PyDict::new_bound(py);
            d.set_item("stream", s.id)?;
            d.set_item("name", &s.cfg.name)?;
            d.set_item("tx_port", s.cfg.port)?;
            d.set_item("rx_port", rx_port)?;
            d.set_item("tx_frames", s.tx_frames)?;
            d.set_item("tx_bytes", s.tx_bytes)?;
            let (frames, bytes) = r.map(|r| (r.frames, r.bytes)).unwrap_or((0, 0));
            d.set_item("rx_frames", frames)?;
            d.set_item("rx_bytes", bytes)?;
            let lost = s.tx_frames as i64 - total_rx as i64;
            d.set_item("lost", lost)?;
            d.set_item("loss_pct", if s.tx_frames > 0 { 100.0 * lost as f64 / s.tx_frames as f64 } else { 0.0 })?;
            d.set_item("out_of_order", r.map(|r| r.out_of_order).unwrap_or(0))?;
            d.set_item("seq_gaps", r.map(|r| r.seq_gaps).unwrap_or(0))?;
            d.set_item("lat_min_ns", r.filter(|r| r.frames > 0).map(|r| r.lat_min))?;
            d.set_item("lat_avg_ns", r.filter(|r| r.frames > 0).map(|r| r.lat_avg()))?;
            d.set_item("lat_max_ns", r.filter(|r| r.frames > 0).map(|r| r.lat_max))?;
            d.set_item("jitter_ns", r.filter(|r| r.frames > 1).map(|r| r.jitter()))?;
            let secs = window_ns as f64 / 1e9;
            d.set_item("window_ns", window_ns)?;
            d.set_item("tx_l1_bps", (s.tx_bytes + 20 * s.tx_frames) as f64 * 8.0 / secs)?;
            d.set_item("rx_l1_bps", (bytes + 20 * frames) as f64 * 8.0 / secs)?;
            d.set_item("rx_fps", frames as f64 / secs)?;
            d.set_item("first_tx_ns", s.first_tx_ns)?;
            d.set_item("first_rx_ns", r.and_then(|r| r.first_ns))?;
            d.set_item("last_rx_ns", r.filter(|r| r.frames > 0).map(|r| r.last_ns))?;
            d.set_item("pause_frames", s.pause.frames)?;
            d.set_item("paused_ns", s.pause.paused_ps(u64::MAX) / 1000)?;
            out.append(d)
        };
        if rows.is_empty() {
            emit(None, None)?;
        }
        for ((_, port), r) in rows {
            emit(Some(*port), Some(r))?;
        }
    }
    Ok(out)
}

pub fn port_stats<'py>(py: Python<'py>, t: &Tester) -> PyResult<Bound<'py, PyList>> {
    let out = PyList::empty_bound(py);
    for (port, p) in &t.ports {
        let d = PyDict::new_bound(py);
        d.set_item("port", port)?;
        d.set_item("rx_frames", p.frames)?;
        d.set_item("rx_bytes", p.bytes)?;
        d.set_item("untagged", p.untagged)?;
        d.set_item("first_ns", p.first_ns)?;
        d.set_item("last_ns", p.last_ns)?;
        d.set_item("min_gap_bits", t.gaps.get(port).and_then(|g| g.min_gap_bits))?;
        out.append(d)?;
    }
    Ok(out)
}

pub fn records<'py>(py: Python<'py>, t: &Tester) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new_bound(py);
    let empty = Default::default();
    let r = t.record.as_ref().unwrap_or(&empty);
    d.set_item("stream", array(py, &r.stream)?)?;
    d.set_item("seq", array(py, &r.seq)?)?;
    d.set_item("port", array(py, &r.port)?)?;
    d.set_item("size", array(py, &r.size)?)?;
    d.set_item("tx_ns", array(py, &r.tx_ns)?)?;
    d.set_item("rx_ns", array(py, &r.rx_ns)?)?;
    Ok(d)
}

#[pymethods]
impl Engine {
    /// Adds a traffic stream entering `port`; returns its id. Keywords:
    /// rate_pct (default 100) | rate_bps (layer 1) | rate_fps; line_rate_bps
    /// (default: the port's line rate); size (default 64) | sizes (cycled) |
    /// weights [(size, weight)] | imix=True (sizes include the FCS); burst
    /// (frames), burst_gap_ns, bursts (count); start_ns, duration_ns,
    /// frames; template (header bytes) or dst_mac, src_mac, src_ip, dst_ip,
    /// sport, dport, dscp for an Ethernet/IPv4/UDP header; macs (vary the
    /// source MAC over N values); vary [{offset, width, count, step, start}];
    /// tag (default True: stream, sequence and timestamp in the last 16
    /// bytes); name; ifg_bits (default 96: the gap after each frame; less
    /// is RFC 2889's forward pressure) and bad_fcs (default False: every
    /// frame with a bad FCS, an errored frame for the port's MAC);
    /// priority (0..7, default 0: the class whose PFC pause frames the
    /// source obeys) and obey_pause (default True; False: a
    /// sender that ignores PFC).
    #[pyo3(signature = (port, **kw))]
    fn add_stream(&mut self, py: Python<'_>, port: u32, kw: Option<&Bound<'_, PyDict>>) -> PyResult<u16> {
        let mut c = self.lock();
        let id = c.tester.sources.len();
        let cfg = stream_cfg(py, &c.sw, port, kw, id)?;
        let pause = pause_priority(kw)?;
        let wire = super::mac::wire_opts(kw)?;
        let sid = c.tester.add_stream(cfg).map_err(ConfigError::new_err)?;
        c.tester.sources[sid as usize].pause.priority = pause;
        c.tester.sources[sid as usize].wire = wire;
        Ok(sid)
    }

    /// Removes every stream and its results.
    fn clear_streams(&mut self) {
        self.lock().tester.clear_streams()
    }

    /// Forgets the receive results (streams stay).
    fn reset_stats(&mut self) {
        self.lock().tester.reset_stats()
    }

    /// Runs virtual time for `duration_ns` (or until `until_ns`): frames of
    /// the streams arrive, the switch forwards them, sinks count what
    /// leaves. With `drain`, the switch then runs until idle. Returns the
    /// number of events processed. The GIL is released.
    #[pyo3(signature = (duration_ns=None, until_ns=None, drain=false))]
    fn run(&mut self, py: Python<'_>, duration_ns: Option<u64>, until_ns: Option<u64>, drain: bool) -> PyResult<u64> {
        self.check_not_real_time("run")?;
        let core = self.core.clone();
        py.allow_threads(move || {
            guard(|| {
                let c = &mut *lock(&core);
                let until = match (duration_ns, until_ns) {
                    (Some(d), None) => c.sw.now_ns().saturating_add(d),
                    (None, Some(u)) => u,
                    (None, None) => u64::MAX,
                    _ => return Err(EngineError::new_err("give duration_ns or until_ns, not both")),
                };
                if until == u64::MAX && c.tester.sources.iter().any(|s| s.cfg.duration_ns.is_none() && s.cfg.frames.is_none() && s.cfg.burst.and_then(|b| b.count).is_none()) {
                    return Err(EngineError::new_err("a stream without end: give duration_ns or until_ns"));
                }
                let before = c.tester.events;
                let Core { sw, tester } = c;
                tester.run(sw, until, drain);
                Ok(tester.events - before)
            })
        })
    }

    /// Per stream and egress port: tx/rx frames and bytes, lost, loss_pct,
    /// out_of_order, seq_gaps, latency min/avg/max and jitter (ns), rates,
    /// first_tx_ns, first_rx_ns and last_rx_ns (first bits), pause_frames
    /// and paused_ns (PFC: the pauses the stream obeyed).
    fn stream_stats(&self, py: Python<'_>) -> PyResult<PyObject> {
        Ok(stream_stats(py, &self.lock().tester)?.into())
    }

    /// Per egress port: frames, bytes, untagged frames, first/last time,
    /// min_gap_bits (the smallest gap between two frames, from the end of
    /// one's FCS to the next one's preamble, at the port's line rate; None
    /// without a line rate or before two frames).
    fn port_rx_stats(&self, py: Python<'_>) -> PyResult<PyObject> {
        Ok(port_stats(py, &self.lock().tester)?.into())
    }

    /// (bin edges in ns, counts) of a stream's latency, on one egress port
    /// or all of them.
    #[pyo3(signature = (stream, port=None))]
    fn latency_histogram(&self, stream: u16, port: Option<u32>) -> (Vec<u64>, Vec<u64>) {
        let c = self.lock();
        let t = &c.tester;
        let mut counts = vec![0u64; t.edges.len()];
        for ((s, p), r) in &t.rx {
            if *s == stream && port.map(|x| x == *p).unwrap_or(true) {
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
        self.lock().tester.record = if enabled { Some(Default::default()) } else { None };
    }

    /// The received frames' records as columns (array.array): stream, seq,
    /// port, size, tx_ns, rx_ns.
    fn rx_records(&self, py: Python<'_>) -> PyResult<PyObject> {
        Ok(records(py, &self.lock().tester)?.into())
    }

    /// A hash of every frame that left the switch in virtual time (port,
    /// time, bytes): equal for two runs exactly when they agree.
    fn sim_digest(&self) -> String {
        format!("{:016x}", self.lock().tester.digest)
    }

    /// Keeps every frame that leaves `port` in virtual time (`run`), with
    /// its departure time (first bit out, ns), until `take_captured`. At
    /// most `limit` frames are held between two takes (default 1048576);
    /// later ones are counted in `capture_stats` as not kept. Called again,
    /// it changes the limit. Ports not captured cost nothing.
    #[pyo3(signature = (port, limit=None))]
    fn capture_port(&mut self, port: u32, limit: Option<usize>) {
        self.lock().tester.captures.start(port, limit)
    }

    /// The frames captured on `port` since the last take, as [(time_ns,
    /// bytes)] in departure order (bytes without FCS); the port stays
    /// captured. An empty list for a port not captured.
    fn take_captured<'py>(&mut self, py: Python<'py>, port: u32) -> PyResult<Bound<'py, PyList>> {
        let frames = match self.lock().tester.captures.ports.get_mut(&port) {
            Some(c) => c.take(),
            None => vec![],
        };
        let out = PyList::empty_bound(py);
        for (t, data) in frames {
            out.append((t, PyBytes::new_bound(py, &data)))?;
        }
        Ok(out)
    }

    /// `take_captured` as three columns: departure times (ns, `array` of
    /// u64), lengths (`array` of u32) and every frame's bytes one after the
    /// other (bytes): no Python object per frame, for captures of 10^5
    /// reports.
    fn take_captured_block<'py>(&mut self, py: Python<'py>, port: u32)
        -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>, Bound<'py, PyBytes>)> {
        let columns = |b: &Block| -> PyResult<_> {
            Ok((array(py, &b.times)?, array(py, &b.lengths)?, PyBytes::new_bound(py, &b.bytes)))
        };
        match self.lock().tester.captures.ports.get_mut(&port) {
            Some(c) => c.drain_block(columns),
            None => columns(&Block::default()),
        }
    }

    /// Stops capturing `port` (what it still held is dropped).
    fn capture_stop(&mut self, port: u32) {
        self.lock().tester.captures.stop(port);
    }

    /// Per captured port: {"limit", "held", "kept", "not_kept"} (kept and
    /// not_kept count since capture started or `reset_stats`).
    fn capture_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new_bound(py);
        for (port, c) in &self.lock().tester.captures.ports {
            let d = PyDict::new_bound(py);
            d.set_item("limit", c.limit)?;
            d.set_item("held", c.held())?;
            d.set_item("kept", c.kept)?;
            d.set_item("not_kept", c.not_kept)?;
            out.set_item(port, d)?;
        }
        Ok(out)
    }
}
