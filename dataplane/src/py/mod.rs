//! The Python extension module `p4scope_dataplane` — the only code that
//! knows about PyO3. Engine errors become Python exceptions here; panics
//! are caught at this boundary and reported as `EngineError`, never
//! propagated into Python. Batch calls release the GIL.

mod conv;
mod rt;
mod sim;
mod tm;

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

    /// Adds a table entry; returns its handle. `priority`: lower wins (BMv2).
    #[pyo3(signature = (table, action, key, args=None, priority=0))]
    fn table_add(
        &mut self,
        table: &str,
        action: &str,
        key: &Bound<'_, PyAny>,
        args: Option<&Bound<'_, PyAny>>,
        priority: i32,
    ) -> PyResult<u32> {
        let k = to_key(key)?;
        let a = vals(args)?;
        guard(|| self.lock().sw.table_add(table, &k, action, &a, priority).map_err(to_py))
    }

    #[pyo3(signature = (table, handle, action, args=None))]
    fn table_modify(&mut self, table: &str, handle: u32, action: &str, args: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let a = vals(args)?;
        guard(|| self.lock().sw.table_modify(table, handle, action, &a).map_err(to_py))
    }

    fn table_delete(&mut self, table: &str, handle: u32) -> PyResult<()> {
        guard(|| self.lock().sw.table_delete(table, handle).map_err(to_py))
    }

    fn table_clear(&mut self, table: &str) -> PyResult<()> {
        guard(|| self.lock().sw.table_clear(table).map_err(to_py))
    }

    /// Removes every entry of every table.
    fn clear_all_tables(&mut self) {
        self.lock().sw.clear_all_tables()
    }

    #[pyo3(signature = (table, action, args=None))]
    fn table_set_default(&mut self, table: &str, action: &str, args: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let a = vals(args)?;
        guard(|| self.lock().sw.table_set_default(table, action, &a).map_err(to_py))
    }

    fn table_entry_count(&mut self, table: &str) -> PyResult<usize> {
        guard(|| self.lock().sw.table_entry_count(table).map_err(to_py))
    }

    // ----- action profiles and selectors (BMv2's runtime names) ---------------

    /// A member of action profile `profile`: the action and its arguments.
    #[pyo3(signature = (profile, action, args=None))]
    fn act_prof_create_member(&mut self, profile: &str, action: &str, args: Option<&Bound<'_, PyAny>>) -> PyResult<u32> {
        let a = vals(args)?;
        guard(|| self.lock().sw.act_prof_create_member(profile, action, &a).map_err(to_py))
    }

    #[pyo3(signature = (profile, member, action, args=None))]
    fn act_prof_modify_member(&mut self, profile: &str, member: u32, action: &str, args: Option<&Bound<'_, PyAny>>) -> PyResult<()> {
        let a = vals(args)?;
        guard(|| self.lock().sw.act_prof_modify_member(profile, member, action, &a).map_err(to_py))
    }

    fn act_prof_delete_member(&mut self, profile: &str, member: u32) -> PyResult<()> {
        guard(|| self.lock().sw.act_prof_delete_member(profile, member).map_err(to_py))
    }

    fn act_prof_create_group(&mut self, profile: &str) -> PyResult<u32> {
        guard(|| self.lock().sw.act_prof_create_group(profile).map_err(to_py))
    }

    fn act_prof_delete_group(&mut self, profile: &str, group: u32) -> PyResult<()> {
        guard(|| self.lock().sw.act_prof_delete_group(profile, group).map_err(to_py))
    }

    /// Adds a member to a group; `weight` counts it that many times in the
    /// selection, `watch_port` leaves it out while that port is down.
    #[pyo3(signature = (profile, member, group, weight=1, watch_port=None))]
    fn act_prof_add_member_to_group(&mut self, profile: &str, member: u32, group: u32, weight: u32, watch_port: Option<u32>) -> PyResult<()> {
        guard(|| self.lock().sw.act_prof_add_member_to_group(profile, member, group, weight, watch_port).map_err(to_py))
    }

    fn act_prof_remove_member_from_group(&mut self, profile: &str, member: u32, group: u32) -> PyResult<()> {
        guard(|| self.lock().sw.act_prof_remove_member_from_group(profile, member, group).map_err(to_py))
    }

    /// Watch ports follow this; every port is up until said otherwise.
    fn set_port_status(&mut self, port: u32, up: bool) {
        self.lock().sw.set_port_status(port, up)
    }

    /// An entry of an indirect table running a member; returns its handle.
    #[pyo3(signature = (table, key, member, priority=0))]
    fn table_indirect_add(&mut self, table: &str, key: &Bound<'_, PyAny>, member: u32, priority: i32) -> PyResult<u32> {
        let k = to_key(key)?;
        guard(|| self.lock().sw.table_indirect_add(table, &k, member, priority).map_err(to_py))
    }

    /// An entry of an indirect table running a group (selector: hash % size).
    #[pyo3(signature = (table, key, group, priority=0))]
    fn table_indirect_add_with_group(&mut self, table: &str, key: &Bound<'_, PyAny>, group: u32, priority: i32) -> PyResult<u32> {
        let k = to_key(key)?;
        guard(|| self.lock().sw.table_indirect_add_with_group(table, &k, group, priority).map_err(to_py))
    }

    fn table_indirect_modify(&mut self, table: &str, handle: u32, member: u32) -> PyResult<()> {
        guard(|| self.lock().sw.table_indirect_modify(table, handle, member).map_err(to_py))
    }

    fn table_indirect_modify_with_group(&mut self, table: &str, handle: u32, group: u32) -> PyResult<()> {
        guard(|| self.lock().sw.table_indirect_modify_with_group(table, handle, group).map_err(to_py))
    }

    // ----- idle timeout --------------------------------------------------------

    /// An entry's idle timeout in ns (None: it never ages); its clock restarts.
    #[pyo3(signature = (table, handle, ttl_ns))]
    fn table_set_entry_ttl(&mut self, table: &str, handle: u32, ttl_ns: Option<u64>) -> PyResult<()> {
        guard(|| self.lock().sw.table_set_entry_ttl(table, handle, ttl_ns).map_err(to_py))
    }

    /// Nanoseconds since the entry was last hit (or added).
    fn table_entry_idle_ns(&mut self, table: &str, handle: u32) -> PyResult<u64> {
        guard(|| self.lock().sw.table_entry_idle_ns(table, handle).map_err(to_py))
    }

    /// Entries whose idle timeout expired (by the switch's time, or `now_ns`),
    /// each reported once until hit again: [(table, handle, idle_ns)].
    #[pyo3(signature = (now_ns=None))]
    fn idle_sweep(&mut self, now_ns: Option<u64>) -> Vec<(String, u32, u64)> {
        let mut c = self.lock();
        let now = now_ns.unwrap_or(c.sw.now_ns());
        c.sw.idle_sweep(now)
    }

    /// (bytes, packets) of an entry's direct counter.
    fn direct_counter_read(&self, table: &str, handle: u32) -> PyResult<(u64, u64)> {
        guard(|| self.lock().sw.direct_counter(table, handle).map_err(to_py))
    }

    /// The full names of the program's tables.
    fn table_names(&self) -> Vec<String> {
        self.lock().sw.prog.tables.iter().map(|t| t.name.clone()).collect()
    }

    /// For each table: (name, match_type, [(key name, match kind, width)], [action names]).
    fn table_info(&self, py: Python<'_>) -> PyObject {
        let list = PyList::empty_bound(py);
        let c = self.lock();
        for t in &c.sw.prog.tables {
            let keys: Vec<(String, String, u32)> =
                t.keys.iter().map(|k| (k.name.clone(), format!("{:?}", k.kind).to_lowercase(), k.width)).collect();
            let acts: Vec<String> = t.actions.iter().map(|a| c.sw.prog.actions[*a as usize].name.clone()).collect();
            let mt = format!("{:?}", t.match_type).to_lowercase();
            let _ = list.append((t.name.clone(), mt, keys, acts));
        }
        list.into()
    }

    /// For each action: (name, [(param name, width)]).
    fn action_info(&self) -> Vec<(String, Vec<(String, u32)>)> {
        self.lock()
            .sw
            .prog
            .actions
            .iter()
            .map(|a| (a.name.clone(), a.params.iter().map(|p| (p.name.clone(), p.width)).collect()))
            .collect()
    }

    fn counter_read(&self, name: &str, index: usize) -> PyResult<(u64, u64)> {
        guard(|| self.lock().sw.counter_read(name, index).map_err(to_py))
    }

    fn counter_write(&mut self, name: &str, index: usize, bytes: u64, packets: u64) -> PyResult<()> {
        guard(|| self.lock().sw.counter_write(name, index, bytes, packets).map_err(to_py))
    }

    fn register_read(&self, py: Python<'_>, name: &str, index: usize) -> PyResult<PyObject> {
        let v = guard(|| self.lock().sw.register_read(name, index).map_err(to_py))?;
        Ok(val_to_py(py, &v))
    }

    fn register_write(&mut self, name: &str, index: usize, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = to_val(value)?;
        guard(|| self.lock().sw.register_write(name, index, &v).map_err(to_py))
    }

    fn register_reset(&mut self, name: &str) -> PyResult<()> {
        guard(|| self.lock().sw.register_reset(name).map_err(to_py))
    }

    /// rates: [(committed units per us, burst), (peak units per us, burst)].
    #[pyo3(signature = (name, index, rates))]
    fn meter_set_rates(&mut self, name: &str, index: Option<usize>, rates: Vec<(f64, u64)>) -> PyResult<()> {
        if rates.len() != 2 {
            return Err(EngineError::new_err("a meter takes two (rate, burst) pairs"));
        }
        guard(|| self.lock().sw.meter_set_rates(name, index, [rates[0], rates[1]]).map_err(to_py))
    }

    fn vset_add(&mut self, name: &str, value: &Bound<'_, PyAny>) -> PyResult<()> {
        let b = to_bytes(value)?;
        guard(|| self.lock().sw.vset_add(name, &b).map_err(to_py))
    }

    #[pyo3(signature = (session, port=None, mgid=None))]
    fn mirroring_add(&mut self, session: u32, port: Option<u32>, mgid: Option<u32>) -> PyResult<()> {
        guard(|| self.lock().sw.mirroring_add(session, port, mgid).map_err(to_py))
    }

    fn mirroring_delete(&mut self, session: u32) {
        self.lock().sw.mirroring_delete(session)
    }

    fn mc_group_create(&mut self, mgid: u32) -> u32 {
        self.lock().sw.pre.group_create(mgid)
    }

    fn mc_group_destroy(&mut self, mgid: u32) {
        self.lock().sw.pre.group_destroy(mgid)
    }

    /// Creates an L1 node (rid, ports); returns its handle.
    fn mc_node_create(&mut self, rid: u32, ports: Vec<u32>) -> u32 {
        self.lock().sw.pre.node_create(rid, &ports)
    }

    fn mc_node_update(&mut self, node: u32, ports: Vec<u32>) -> PyResult<()> {
        if self.lock().sw.pre.node_update(node, &ports) {
            Ok(())
        } else {
            Err(EngineError::new_err(format!("no multicast node {node}")))
        }
    }

    fn mc_node_associate(&mut self, mgid: u32, node: u32) -> PyResult<()> {
        if self.lock().sw.pre.node_associate(mgid, node) {
            Ok(())
        } else {
            Err(EngineError::new_err(format!("no multicast group {mgid} or node {node}")))
        }
    }

    fn mc_node_dissociate(&mut self, mgid: u32, node: u32) -> PyResult<()> {
        if self.lock().sw.pre.node_dissociate(mgid, node) {
            Ok(())
        } else {
            Err(EngineError::new_err(format!("no multicast group {mgid}")))
        }
    }

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

    // ----- traffic manager ----------------------------------------------

    /// Configures the traffic manager: a dict, or JSON or YAML text (see
    /// the crate's tm::config for the keys). Settings not given keep their
    /// current values. Raises ConfigError naming the offending key.
    fn tm_configure(&mut self, config: &Bound<'_, PyAny>) -> PyResult<()> {
        let v = tm::config_value(config)?;
        guard(|| tm::apply(&mut self.lock().sw, &v))
    }

    /// tm_configure with a .json, .yaml or .yml file.
    fn tm_configure_file(&mut self, path: &str) -> PyResult<()> {
        let v = tm::config_file(path)?;
        guard(|| tm::apply(&mut self.lock().sw, &v))
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
        Ok(tm::queue_stats(py, &self.lock().sw)?.into())
    }

    /// One dict per egress port: transmitted packets/bytes/wire bytes and busy time.
    fn tm_port_stats(&self, py: Python<'_>) -> PyResult<PyObject> {
        Ok(tm::port_stats(py, &self.lock().sw)?.into())
    }

    /// {"pkts", "bytes", "ingress": {port: (pkts, bytes)}} of one queue or
    /// of all queues of a port.
    #[pyo3(signature = (port, queue=None))]
    fn tm_occupancy(&self, py: Python<'_>, port: u32, queue: Option<usize>) -> PyResult<PyObject> {
        Ok(tm::occupancy(py, &self.lock().sw, port, queue)?.into())
    }

    /// The shared buffer's state, or None without one.
    fn tm_buffer(&self, py: Python<'_>) -> PyResult<PyObject> {
        Ok(tm::buffer(py, &self.lock().sw)?.map(|d| d.into_py(py)).unwrap_or_else(|| py.None()))
    }

    /// Starts recording the ground-truth occupancy trace (every enqueue
    /// and dequeue; drops too when asked; only some egress ports if given).
    #[pyo3(signature = (drops=false, ports=None, max_records=0))]
    fn tm_trace_start(&mut self, drops: bool, ports: Option<Vec<u32>>, max_records: usize) {
        self.lock().sw.tm.trace_start(tm::trace_cfg(drops, ports, max_records))
    }

    /// The records since the last call, as columns (array.array): time_ns,
    /// port, queue, ingress, kind (0 enq, 1 deq, 2 drop), len, q_pkts,
    /// q_bytes, in_pkts, in_bytes (the packet's ingress port in that queue),
    /// buffer_bytes; and overflow (records not kept).
    fn tm_trace_take(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let t = self.lock().sw.tm.trace_take().ok_or_else(tm::no_trace)?;
        Ok(tm::trace_columns(py, &t)?.into())
    }

    /// Stops recording and returns what was left, as tm_trace_take.
    fn tm_trace_stop(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let t = self.lock().sw.tm.trace_stop().ok_or_else(tm::no_trace)?;
        Ok(tm::trace_columns(py, &t)?.into())
    }

    // ----- virtual time: streams and sinks --------------------------------

    /// Adds a traffic stream entering `port`; returns its id. Keywords:
    /// rate_pct (default 100) | rate_bps (layer 1) | rate_fps; line_rate_bps
    /// (default: the port's line rate); size (default 64) | sizes (cycled) |
    /// weights [(size, weight)] | imix=True (sizes include the FCS); burst
    /// (frames), burst_gap_ns, bursts (count); start_ns, duration_ns,
    /// frames; template (header bytes) or dst_mac, src_mac, src_ip, dst_ip,
    /// sport, dport, dscp for an Ethernet/IPv4/UDP header; macs (vary the
    /// source MAC over N values); vary [{offset, width, count, step, start}];
    /// tag (default True: stream, sequence and timestamp in the last 16
    /// bytes); name.
    #[pyo3(signature = (port, **kw))]
    fn add_stream(&mut self, py: Python<'_>, port: u32, kw: Option<&Bound<'_, PyDict>>) -> PyResult<u16> {
        let mut c = self.lock();
        let id = c.tester.sources.len();
        let cfg = sim::stream_cfg(py, &c.sw, port, kw, id)?;
        c.tester.add_stream(cfg).map_err(ConfigError::new_err)
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
    /// out_of_order, seq_gaps, latency min/avg/max and jitter (ns), rates.
    fn stream_stats(&self, py: Python<'_>) -> PyResult<PyObject> {
        Ok(sim::stream_stats(py, &self.lock().tester)?.into())
    }

    /// Per egress port: frames, bytes, untagged frames, first/last time.
    fn port_rx_stats(&self, py: Python<'_>) -> PyResult<PyObject> {
        Ok(sim::port_stats(py, &self.lock().tester)?.into())
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
        Ok(sim::records(py, &self.lock().tester)?.into())
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
            d.set_item("held", c.frames.len())?;
            d.set_item("kept", c.kept)?;
            d.set_item("not_kept", c.not_kept)?;
            out.set_item(port, d)?;
        }
        Ok(out)
    }

    // ----- real time: Linux interfaces ----------------------------------------

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
        Ok(rt::events(py, &self.core, evs)?.into())
    }

    /// A waiter for this engine's loop events and trace records that does
    /// not hold the engine while it waits (see RtWaiter.wait).
    fn rt_waiter(&mut self) -> PyResult<rt::RtWaiter> {
        Ok(rt::RtWaiter::new(self.rt()?.shared.clone()))
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
        Ok(rt::traces(py, &self.core, recs)?.into())
    }

    /// Per-port frame counters of the loop, frames for ports without an
    /// interface (no_port), dropped events and trace records.
    fn rt_stats(&mut self, py: Python<'_>) -> PyResult<PyObject> {
        let sh = self.rt()?.shared.clone();
        Ok(rt::stats(py, &sh)?.into())
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
#[pyfunction]
fn tm_config_check(config: &Bound<'_, PyAny>) -> PyResult<()> {
    let v = tm::config_value(config)?;
    crate::tm::TmConfig::parse(&v, &crate::tm::TmConfig::default())
        .map(|_| ())
        .map_err(|e| ConfigError::new_err(e.to_string()))
}

/// Checks a BMv2 JSON document; raises LoadError if the engine cannot run it.
#[pyfunction]
fn check_json(json: &str) -> PyResult<()> {
    guard(|| crate::json::load(json).map(|_| ()).map_err(|e| to_py(CoreError::Load(e))))
}

#[pymodule]
fn p4scope_dataplane(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Engine>()?;
    m.add_class::<rt::RtWaiter>()?;
    m.add_function(wrap_pyfunction!(check_json, m)?)?;
    m.add_function(wrap_pyfunction!(tm_config_check, m)?)?;
    m.add_function(wrap_pyfunction!(pcap_read, m)?)?;
    m.add_function(wrap_pyfunction!(pcap_write, m)?)?;
    m.add("ConfigError", m.py().get_type_bound::<ConfigError>())?;
    m.add("EngineError", m.py().get_type_bound::<EngineError>())?;
    m.add("LoadError", m.py().get_type_bound::<LoadError>())?;
    m.add("TableError", m.py().get_type_bound::<TableError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
