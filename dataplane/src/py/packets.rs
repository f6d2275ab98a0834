//! Packets in and out without the tester: inject, run, process batches,
//! outputs, digests, the log and the engine's counters.

use super::*;

#[pymethods]
impl Engine {
    /// Queue depth in packets (all ports when port is None).
    #[pyo3(signature = (depth, port=None, priority=None))]
    fn set_queue_depth(&mut self, depth: usize, port: Option<u32>, priority: Option<usize>) {
        self.lock().sw.tm.set_queue_depth(port, priority, depth)
    }

    /// Queue rate in packets per second (0 or None: unlimited).
    #[pyo3(signature = (port, pps, priority=None))]
    fn set_queue_rate(&mut self, port: u32, pps: Option<u64>, priority: Option<usize>) {
        self.lock().sw.tm.set_queue_rate(port, priority, pps)
    }

    /// Queues one packet arriving on `port` at `time_ns` (default: now).
    #[pyo3(signature = (port, data, time_ns=None))]
    fn inject(&mut self, port: u32, data: &[u8], time_ns: Option<u64>) {
        let mut c = self.lock();
        let t = time_ns.unwrap_or(c.sw.now_ns());
        c.sw.inject(port, data.to_vec(), t)
    }

    /// Processes every pending event (GIL released).
    fn run_until_idle(&mut self, py: Python<'_>) -> PyResult<()> {
        let core = self.core.clone();
        py.allow_threads(move || guard(|| {
            let sw = &mut lock(&core).sw;
            sw.run_until_idle();
            Ok(())
        }))
    }

    /// Processes events up to `time_ns` (GIL released).
    fn advance(&mut self, py: Python<'_>, time_ns: u64) -> PyResult<()> {
        let core = self.core.clone();
        py.allow_threads(move || guard(|| {
            let sw = &mut lock(&core).sw;
            sw.advance(time_ns);
            Ok(())
        }))
    }

    /// Injects a batch of (port, bytes, time_ns), runs until idle and
    /// returns the outputs as (port, bytes, time_ns). One GIL release for
    /// the whole batch.
    fn process(&mut self, py: Python<'_>, batch: Vec<(u32, Vec<u8>, u64)>) -> PyResult<PyObject> {
        let core = self.core.clone();
        let outs = py.allow_threads(move || {
            guard(|| {
                let sw = &mut lock(&core).sw;
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
    /// 1 ns apart, in batches of 256 (delivered straight to the pipeline,
    /// outputs recycled), discarding the outputs; returns how many packets
    /// left the switch. The GIL is released throughout.
    fn process_repeat(&mut self, py: Python<'_>, packets: Vec<(u32, Vec<u8>)>, repeat: usize) -> PyResult<u64> {
        let core = self.core.clone();
        py.allow_threads(move || {
            guard(|| {
                let sw = &mut lock(&core).sw;
                let mut n = 0u64;
                let mut t = sw.now_ns();
                let mut pending = 0;
                let mut outs = Vec::with_capacity(512);
                let flush = |sw: &mut Switch, outs: &mut Vec<crate::engine::Output>| {
                    sw.run_until_idle();
                    sw.drain_outputs(outs);
                    let k = outs.len() as u64;
                    for o in outs.drain(..) {
                        sw.recycle(o.data);
                    }
                    k
                };
                for _ in 0..repeat {
                    for (port, data) in &packets {
                        t += 1;
                        sw.deliver(*port, t, data);
                        pending += 1;
                        if pending == 256 {
                            n += flush(sw, &mut outs);
                            pending = 0;
                        }
                    }
                }
                n += flush(sw, &mut outs);
                Ok(n)
            })
        })
    }

    /// Packets that left since the last call: [(port, bytes, time_ns)].
    fn take_outputs(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let list = PyList::empty_bound(py);
        for o in self.lock().sw.take_outputs() {
            list.append((o.port, PyBytes::new_bound(py, &o.data), o.time_ns))?;
        }
        Ok(list.into())
    }

    /// Digests since the last call: [(learn list name, [field bytes], time_ns)].
    fn take_digests(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let list = PyList::empty_bound(py);
        let mut c = self.lock();
        for d in c.sw.take_digests() {
            let name = c
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
        self.lock().sw.take_log()
    }

    /// Packet counters of the switch.
    fn stats(&self, py: Python<'_>) -> PyResult<PyObject> {
        let c = self.lock();
        let s = c.sw.stats;
        let d = PyDict::new_bound(py);
        d.set_item("received", s.received)?;
        d.set_item("transmitted", s.transmitted)?;
        d.set_item("dropped_ingress", s.dropped_ingress)?;
        d.set_item("dropped_egress", s.dropped_egress)?;
        d.set_item("dropped_queue", s.dropped_queue)?;
        d.set_item("ecn_marked", s.ecn_marked)?;
        d.set_item("assert_failures", c.sw.rt.assert_failures)?;
        Ok(d.into())
    }

    #[getter]
    fn now_ns(&self) -> u64 {
        self.lock().sw.now_ns()
    }

    /// When the switch's next pending event is due (None: nothing pending).
    fn next_event_at(&self) -> Option<u64> {
        self.lock().sw.next_event_at()
    }
}
