//! Priority flow control's Python face: what each lossless (ingress port,
//! priority) holds and the pauses the switch sent.

use super::Engine;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};

#[pymethods]
impl Engine {
    /// One dict per lossless (ingress port, priority) that has seen
    /// traffic: port, priority, shared_bytes and headroom_bytes held now,
    /// peak_headroom_bytes, peak_bytes, paused (XOFF sent, no XON yet),
    /// xoff_frames, xon_frames, paused_ns (the pause time asked of the
    /// sender so far) and drops (its headroom overrun). Empty without PFC.
    fn tm_pfc_stats(&self, py: Python<'_>) -> PyResult<PyObject> {
        let c = self.lock();
        let now = c.sw.now_ns();
        let out = PyList::empty_bound(py);
        if let Some(pf) = &c.sw.tm.pfc {
            for (port, prio, g) in pf.groups() {
                let d = PyDict::new_bound(py);
                d.set_item("port", port)?;
                d.set_item("priority", prio)?;
                d.set_item("shared_bytes", g.shared)?;
                d.set_item("headroom_bytes", g.headroom)?;
                d.set_item("peak_headroom_bytes", g.peak_headroom)?;
                d.set_item("peak_bytes", g.peak_total)?;
                d.set_item("paused", g.paused)?;
                d.set_item("xoff_frames", g.xoff_frames)?;
                d.set_item("xon_frames", g.xon_frames)?;
                d.set_item("paused_ns", g.paused_ns(now))?;
                d.set_item("drops", g.drops)?;
                out.append(d)?;
            }
        }
        Ok(out.into())
    }
}
