//! Link events: ports going down and up (at once or at a virtual time),
//! the port-status events a controller takes, and the frames down links
//! cost.

use super::*;

#[pymethods]
impl Engine {
    /// The port's link goes down (`up` False) or up at virtual time `at_ns`
    /// (not before the engine's time); `run` applies it when time gets
    /// there. While down, frames to and from the port are dropped and
    /// counted, and selector watch ports skip it.
    fn schedule_port_status(&mut self, port: u32, up: bool, at_ns: u64) -> PyResult<()> {
        guard(|| self.lock().sw.schedule_port_status(port, up, at_ns).map_err(to_py))
    }

    /// When the next scheduled port status change is due (None: none is).
    fn next_port_event_at(&self) -> Option<u64> {
        self.lock().sw.next_link_event_at()
    }

    /// The port status changes since the last call, in time order, as
    /// [(time_ns, port, up)].
    fn take_port_events(&mut self) -> Vec<(u64, u32, bool)> {
        self.lock().sw.take_port_events().into_iter().map(|e| (e.time_ns, e.port, e.up)).collect()
    }

    fn port_is_up(&self, port: u32) -> bool {
        self.lock().sw.port_is_up(port)
    }

    /// Frames lost to down links: {port: {"rx_down": arrived while down,
    /// "tx_down": would have left while down}} for the ports that lost any.
    fn link_drop_stats<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let out = PyDict::new_bound(py);
        for (port, d) in self.lock().sw.link_drops() {
            let x = PyDict::new_bound(py);
            x.set_item("rx_down", d.rx_down)?;
            x.set_item("tx_down", d.tx_down)?;
            out.set_item(port, x)?;
        }
        Ok(out)
    }
}
