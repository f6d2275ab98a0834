//! The ports' Ethernet MACs on the virtual wires, from Python: each port's
//! MTU and whether it passes errored frames, its receive counters, and the
//! sources' wire options (inter-frame gap, bad FCS).

use super::{ConfigError, Engine};
use crate::engine::MacCfg;
use crate::sim::wire::WireOpts;
use pyo3::prelude::*;
use pyo3::types::PyDict;

/// The largest inter-frame gap a source may keep (bits).
const MAX_IFG_BITS: u32 = 1_000_000;
/// A port's MTU: 46 (a 64-byte frame) ..= 65535 bytes.
const MTU_RANGE: std::ops::RangeInclusive<u32> = 46..=65_535;

/// The wire options among `add_stream`'s keywords: ifg_bits (default 96)
/// and bad_fcs (default False).
pub(super) fn wire_opts(kw: Option<&Bound<'_, PyDict>>) -> PyResult<WireOpts> {
    let mut w = WireOpts::default();
    let Some(kw) = kw else { return Ok(w) };
    if let Some(v) = kw.get_item("ifg_bits")?.filter(|v| !v.is_none()) {
        let bits: u32 = v.extract().map_err(|_| ConfigError::new_err(format!("add_stream: ifg_bits {v} is not a whole number of bits 0..{MAX_IFG_BITS}")))?;
        if bits > MAX_IFG_BITS {
            return Err(ConfigError::new_err(format!("add_stream: ifg_bits {bits} is out of range 0..{MAX_IFG_BITS}")));
        }
        w.ifg_bits = bits;
    }
    if let Some(v) = kw.get_item("bad_fcs")?.filter(|v| !v.is_none()) {
        w.bad_fcs = v.extract().map_err(|_| ConfigError::new_err(format!("add_stream: bad_fcs {v} is not True or False")))?;
    }
    Ok(w)
}

#[pymethods]
impl Engine {
    /// Configures `port`'s receive MAC for frames that come over a virtual
    /// wire (the tester's sources): `mtu` (bytes, 46..65535; the largest
    /// legal frame is mtu + 18, plus 4 per VLAN tag; default 9198) and
    /// `pass_errored` (default False: undersize, oversize and bad-FCS
    /// frames are counted and dropped before the parser; True: counted and
    /// passed on). What is not given stays.
    #[pyo3(signature = (port, mtu=None, pass_errored=None))]
    fn set_port_mac(&mut self, port: u32, mtu: Option<u32>, pass_errored: Option<bool>) -> PyResult<()> {
        if let Some(m) = mtu {
            if !MTU_RANGE.contains(&m) {
                return Err(ConfigError::new_err(format!("set_port_mac: mtu {m} is out of range {}..{}", MTU_RANGE.start(), MTU_RANGE.end())));
            }
        }
        let mut c = self.lock();
        let old = c.sw.port_mac(port);
        c.sw.set_port_mac(port, MacCfg { mtu: mtu.unwrap_or(old.mtu), pass_errored: pass_errored.unwrap_or(old.pass_errored) });
        Ok(())
    }

    /// `port`'s receive MAC: {"mtu", "pass_errored", "max_frame" (the
    /// largest legal untagged frame, FCS included)}.
    fn port_mac<'py>(&self, py: Python<'py>, port: u32) -> PyResult<Bound<'py, PyDict>> {
        let m = self.lock().sw.port_mac(port);
        let d = PyDict::new_bound(py);
        d.set_item("mtu", m.mtu)?;
        d.set_item("pass_errored", m.pass_errored)?;
        d.set_item("max_frame", crate::engine::mac_max_frame(m.mtu, &[]))?;
        Ok(d)
    }

    /// Per port that received a frame over a virtual wire, its MAC's
    /// counters (sizes with FCS, RMON's classes): frames_ok, undersize
    /// (< 64 B, good FCS), fragments (< 64 B, bad FCS), oversize (over the
    /// maximum frame, good FCS), jabbers (over it, bad FCS), fcs_errors (a
    /// legal length, bad FCS), passed_errored (errored frames the port
    /// passed to the parser) and dropped (errored frames it dropped).
    fn port_mac_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new_bound(py);
        for (port, s) in self.lock().sw.mac_stats() {
            let d = PyDict::new_bound(py);
            d.set_item("frames_ok", s.frames_ok)?;
            d.set_item("undersize", s.undersize)?;
            d.set_item("fragments", s.fragments)?;
            d.set_item("oversize", s.oversize)?;
            d.set_item("jabbers", s.jabbers)?;
            d.set_item("fcs_errors", s.fcs_errors)?;
            d.set_item("passed_errored", s.passed_errored)?;
            d.set_item("dropped", s.dropped())?;
            out.set_item(port, d)?;
        }
        Ok(out)
    }
}
